import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { cacheRoot, harnessTools } from '../compile/harnessTools.js';
import { errorMessage } from '../errors.js';
import { hostEnvironment } from '../env/host.js';
import { type HostFacts, readiness, type Finding } from '../env/readiness.js';
import { probeSandbox, resolveSandbox } from '../env/sandboxProbe.js';
import { systemCompiler } from '../env/toolchain.js';
import { CoreBusy, type CoreLease, lockCore } from '../env/cpuLock.js';
import type { SandboxSetting } from '../sandbox/bwrap.js';
import { runProcess } from '../sandbox/runProcess.js';
import { freeBytes } from '../util/fsx.js';

/** `ngcc-perf doctor`: the host's facts as a run would meet them, and the verdicts on them (env/readiness.ts). */

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
};

const DOCTOR_TOOLS = ['gcc', 'clang', 'nm', 'objdump', 'prlimit', 'valgrind', 'gdb', 'bwrap', 'unshare'] as const;

/** The counter a driver gets pinned to `cpu`, from the harness's own probe (no submission code). */
async function counterOn(probe: string, cpu: number): Promise<HostFacts['counter']> {
  const r = await runProcess([probe, String(cpu)], { timeoutMs: 30_000 });
  const field = (tag: string) =>
    r.stdout
      .split('\n')
      .find((l) => l.startsWith(`${tag}\t`))
      ?.split('\t');
  const counter = field('COUNTER');
  const rate = Number(field('RATE')?.[1]);
  if (r.exitCode !== 0 || !counter)
    return {
      cpu,
      problem: field('PIN') ? `cannot pin to CPU ${cpu}` : r.stdout.split('\n')[0] || r.stderr.split('\n')[0] || `exit ${r.exitCode}`,
    };
  return { cpu, source: counter[1], ...(rate > 0 ? { hz: rate } : {}) };
}

/**
 * Whether a run could make its sandbox here, as its start check does (unpinned: no core is taken),
 * in the mode ngcc-perf.yml's `sandbox` gives; the check's own reason when it could not.
 */
async function sandboxOf(probe: string, setting: SandboxSetting): Promise<HostFacts['sandbox']> {
  const mode = resolveSandbox(setting);
  if (mode === 'none') return { mode };
  try {
    await probeSandbox({ mode, probeTool: probe, cpu: -1 });
    return { mode };
  } catch (e) {
    return { mode, problem: errorMessage(e) };
  }
}

/**
 * The counter on the timing core, probed only while the doctor holds that core's host-wide lock, as
 * every pinned process of a run does: a core another run is timing on is left alone and said so.
 */
async function counterWithLock(probe: string, cpu: number): Promise<HostFacts['counter']> {
  let lease: CoreLease;
  try {
    lease = await lockCore([cpu], { what: 'ngcc-perf doctor: counter probe', noWait: true });
  } catch (e) {
    if (e instanceof CoreBusy) return { cpu, busy: e.message };
    // The lock folder unusable, flock missing: the counter's problem, said as such, not the sandbox's.
    return { cpu, problem: `its host-wide lock could not be taken: ${errorMessage(e)}` };
  }
  try {
    return await counterOn(probe, cpu);
  } finally {
    lease.release();
  }
}

function cacheOf(): HostFacts['cache'] {
  try {
    return { path: cacheRoot() };
  } catch (e) {
    return { problem: errorMessage(e) };
  }
}

/**
 * Where each clang's coverage runtime must be: beside its compiler-rt builtins, as the compiler itself
 * names them. `named`: the campaign names that compiler (else the default clang, when installed).
 */
async function clangCoverageOf(named: readonly string[]): Promise<HostFacts['clangCoverage']> {
  const clangs = named.length > 0 ? named.filter((c) => /clang/.test(c)) : systemCompiler('clang') ? ['clang'] : [];
  const out: HostFacts['clangCoverage'] = [];
  for (const compiler of [...new Set(clangs)]) {
    const path = systemCompiler(compiler);
    if (!path) continue; // the tools line says it is missing
    const r = await runProcess([path, '-print-libgcc-file-name', '--rtlib=compiler-rt'], { timeoutMs: 30_000 });
    const builtins = r.stdout.trim();
    if (r.exitCode !== 0 || !builtins.includes('libclang_rt.builtins')) continue;
    const runtime = builtins.replace('libclang_rt.builtins', 'libclang_rt.profile');
    out.push({ compiler, runtime, present: existsSync(runtime), named: named.length > 0 });
  }
  return out;
}

/** Every fact the checks read, on timing core `cpu`, for evidence written under `outDir`, with ngcc-perf.yml's `sandbox`. */
async function gatherHostFacts(
  cpu: number,
  outDir: string,
  sandboxSetting: SandboxSetting = 'auto',
  compilers: readonly string[] = [],
): Promise<HostFacts> {
  const env = hostEnvironment(cpu);
  const tools = Object.fromEntries(DOCTOR_TOOLS.map((t) => [t, systemCompiler(t)]));
  const cache = cacheOf();
  let sandbox: HostFacts['sandbox'] = { mode: 'none', problem: 'the harness drivers could not be built (gcc)' };
  let counter: HostFacts['counter'] = { cpu, problem: 'the harness drivers could not be built (gcc)' };
  if (tools.gcc && !cache.problem) {
    try {
      const probe = (await harnessTools()).probe;
      // One after the other: two probes at once would share the machine and halve a rate.
      sandbox = await sandboxOf(probe, sandboxSetting);
      counter = await counterWithLock(probe, cpu);
    } catch (e) {
      const problem = `the harness drivers could not be built: ${errorMessage(e)}`;
      sandbox = { mode: 'none', problem };
      counter = { cpu, problem };
    }
  }
  const disk = [...new Set([resolve(outDir), tmpdir()])].flatMap((path) => {
    const free = freeBytes(path);
    return free === undefined ? [] : [{ path, freeBytes: free }];
  });
  return {
    arch: env.architecture,
    cpuFlags: /^flags\s*:\s*(.*)$/m.exec(read('/proc/cpuinfo') ?? '')?.[1] ?? '',
    virtualized: env.virtualized,
    governor: env.cpufreq_governor,
    minKhz: env.cpufreq_min_khz,
    maxKhz: env.cpufreq_max_khz,
    noTurbo: env.intel_pstate_no_turbo,
    boost: env.cpufreq_boost,
    smt: env.smt_control,
    isolated: read('/sys/devices/system/cpu/isolated'),
    nohzFull: read('/sys/devices/system/cpu/nohz_full'),
    perfEventParanoid: env.perf_event_paranoid,
    apparmorUserns: read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
    tools,
    sandbox,
    counter,
    disk,
    cache,
    clangCoverage: await clangCoverageOf(compilers),
  };
}

/** What the doctor checks against: the timing core, where evidence goes, and a campaign's settings when given. */
export interface DoctorTarget {
  cpu: number;
  outDir: string;
  /** ngcc-perf.yml's `sandbox` (default auto). */
  sandbox?: SandboxSetting;
  /** The compilers the campaign names (`compiler`, `ct.compilers`): each clang's coverage runtime is checked. */
  compilers?: readonly string[];
}

/** The doctor's findings. */
export async function doctor(t: DoctorTarget): Promise<Finding[]> {
  return readiness(await gatherHostFacts(t.cpu, t.outDir, t.sandbox ?? 'auto', t.compilers ?? []));
}
