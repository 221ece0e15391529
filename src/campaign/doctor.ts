import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { cacheRoot, harnessTools } from '../compile/harnessTools.js';
import { errorMessage } from '../errors.js';
import { hostEnvironment } from '../env/host.js';
import { type HostFacts, readiness, type Finding } from '../env/readiness.js';
import { probeSandbox, resolveSandbox } from '../env/sandboxProbe.js';
import { systemCompiler } from '../env/toolchain.js';
import { runProcess } from '../sandbox/run.js';
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

/** Whether a run could make its sandbox here, and the start checks' own reason when it could not. */
async function sandboxOf(probe: string, cpu: number): Promise<HostFacts['sandbox']> {
  const mode = resolveSandbox('auto');
  try {
    await probeSandbox({ mode, probeTool: probe, cpu });
    return { mode };
  } catch (e) {
    return { mode, problem: errorMessage(e) };
  }
}

function cacheOf(): HostFacts['cache'] {
  try {
    return { path: cacheRoot() };
  } catch (e) {
    return { problem: errorMessage(e) };
  }
}

/** Every fact the checks read, on timing core `cpu`, for evidence written under `outDir`. */
export async function gatherHostFacts(cpu: number, outDir: string): Promise<HostFacts> {
  const env = hostEnvironment(cpu);
  const tools = Object.fromEntries(DOCTOR_TOOLS.map((t) => [t, systemCompiler(t)]));
  const cache = cacheOf();
  let sandbox: HostFacts['sandbox'] = { mode: 'none', problem: 'the harness drivers could not be built (gcc)' };
  let counter: HostFacts['counter'] = { cpu, problem: 'the harness drivers could not be built (gcc)' };
  if (tools.gcc && !cache.problem) {
    try {
      const probe = (await harnessTools()).probe;
      [sandbox, counter] = await Promise.all([sandboxOf(probe, cpu), counterOn(probe, cpu)]);
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
  };
}

/** The doctor's findings for timing core `cpu`. */
export async function doctor(cpu: number, outDir: string): Promise<Finding[]> {
  return readiness(await gatherHostFacts(cpu, outDir));
}
