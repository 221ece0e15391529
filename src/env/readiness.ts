import { parseCpuList } from './cpus.js';

/**
 * Whether a host is ready to time submissions (`ngcc-perf doctor`, docs/runners.md): each check's
 * verdict from facts gathered elsewhere (campaign/doctor.ts), so that every verdict can be tried on a
 * made-up host. A check says what it found and, when it is not ok, what to do.
 */

/** ok; info: worth knowing, no fault; warn: the numbers are less trustworthy; fail: a run cannot start. */
type Verdict = 'ok' | 'info' | 'warn' | 'fail';

export interface Finding {
  check: string;
  verdict: Verdict;
  found: string;
  /** What to do about it, when the verdict is warn or fail. */
  fix?: string;
}

/** What the doctor reads or tries on the host. Undefined or null: not readable here. */
export interface HostFacts {
  arch: string;
  /** /proc/cpuinfo `flags` (x86). */
  cpuFlags: string;
  virtualized: boolean;
  governor: string | null;
  minKhz: string | null;
  maxKhz: string | null;
  /** intel_pstate/no_turbo and cpufreq/boost. */
  noTurbo: string | null;
  boost: string | null;
  /** smt/control: on, off, forceoff, notsupported, notimplemented. */
  smt: string | null;
  /** /sys/devices/system/cpu/isolated and nohz_full. */
  isolated: string | null;
  nohzFull: string | null;
  perfEventParanoid: string | null;
  /** kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10 and later). */
  apparmorUserns: string | null;
  /** Each tool the doctor looks for: its path, or undefined when it is not on PATH. */
  tools: Record<string, string | undefined>;
  /** The sandbox a run would use, and why it cannot be made when it cannot. */
  sandbox: { mode: string; problem?: string };
  /** The cycle counter a driver gets on the timing core, or why it gets none; `busy`: another run holds the core, not probed. */
  counter: { cpu: number; source?: string; hz?: number; problem?: string; busy?: string };
  /** Free bytes where evidence and builds go. */
  disk: Array<{ path: string; freeBytes: number }>;
  /** The driver cache (NGCC_CACHE_DIR or $TMPDIR/ngcc-perf-<uid>), or why it cannot be used. */
  cache: { path?: string; problem?: string };
  /**
   * Each clang the campaign names (else the default clang, when there is one): where its coverage
   * runtime (libclang_rt.profile) is, or that it is missing. The ct check counts coverage with it.
   */
  clangCoverage: Array<{ compiler: string; runtime: string; present: boolean; named: boolean }>;
}

const MiB = 1 << 20;
/** Below this a run stops when a build or a record cannot be written; below the warning, long campaigns may. */
export const DISK_FAIL_BYTES = 512 * MiB;
export const DISK_WARN_BYTES = 4096 * MiB;

const found = (check: string, verdict: Verdict, what: string, fix?: string): Finding => ({
  check,
  verdict,
  found: what,
  ...(fix && verdict !== 'ok' ? { fix } : {}),
});

function sandboxFinding(f: HostFacts): Finding {
  if (f.sandbox.problem) {
    const apparmor =
      f.apparmorUserns === '1'
        ? ' AppArmor restricts unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns = 1): give /usr/bin/bwrap an AppArmor profile that allows userns, or set the sysctl to 0.'
        : '';
    return found('sandbox', 'fail', `${f.sandbox.mode}: cannot run submissions sandboxed`, `${f.sandbox.problem}${apparmor}`);
  }
  if (f.sandbox.mode === 'bwrap')
    return found('sandbox', 'ok', 'bubblewrap makes a sandbox; a driver inside pins itself and reads the counter');
  if (f.sandbox.mode === 'unshare')
    return found(
      'sandbox',
      'warn',
      'util-linux unshare makes the sandbox; bubblewrap is missing or cannot make one (the whole start costs about 20 ms more a process)',
      'install bubblewrap (apt-get install bubblewrap) and allow it user namespaces',
    );
  return found(
    'sandbox',
    'warn',
    'ngcc-perf.yml says sandbox: none: submissions run unsandboxed',
    'use a runner where bubblewrap works (see docs/security.md)',
  );
}

/** A tool a run needs (fail), or one only some campaigns need (info: the run that needs it says so). */
const TOOLS: ReadonlyArray<{ tool: string; need: 'fail' | 'info'; why: string; fix: string }> = [
  { tool: 'gcc', need: 'fail', why: 'builds the drivers and the submissions', fix: 'apt-get install gcc' },
  { tool: 'nm', need: 'fail', why: "reads a library's symbols (binutils)", fix: 'apt-get install binutils' },
  {
    tool: 'objdump',
    need: 'info',
    why: 'reads the machine code for the survey and the ct check (binutils)',
    fix: 'apt-get install binutils',
  },
  { tool: 'prlimit', need: 'fail', why: 'caps every driver’s memory (util-linux)', fix: 'apt-get install util-linux' },
  { tool: 'valgrind', need: 'info', why: 'the constant-time check (phase ct)', fix: 'apt-get install valgrind' },
  { tool: 'gdb', need: 'info', why: 'the ct check’s secret-path search', fix: 'apt-get install gdb' },
  {
    tool: 'clang',
    need: 'info',
    why: 'campaigns and ct matrices that name clang',
    fix: 'apt-get install clang (and clang-N for a version)',
  },
];

function toolFindings(f: HostFacts): Finding[] {
  return TOOLS.map(({ tool, need, why, fix }) =>
    f.tools[tool] ? found(tool, 'ok', `${f.tools[tool]}: ${why}`) : found(tool, need, `not on PATH: ${why}`, fix),
  );
}

function counterFinding(f: HostFacts): Finding[] {
  const c = f.counter;
  if (c.busy) return [found('counter', 'info', `not probed: another run is timing on ${c.busy}`)];
  if (c.problem || !c.source)
    return [
      found(
        'counter',
        'fail',
        `no cycle counter on CPU ${c.cpu}: ${c.problem ?? 'the probe said nothing'}`,
        'see docs/runners.md#the-counter',
      ),
    ];
  const rate = c.hz ? ` at ${(c.hz / 1e6).toFixed(1)} MHz` : '';
  if (c.source === 'monotonic-ns')
    return [
      found(
        'counter',
        'warn',
        `CPU ${c.cpu}: the portable fallback (nanoseconds), not a cycle counter`,
        'unset NGCC_COUNTER, or run on x86-64 or AArch64',
      ),
    ];
  if (c.source === 'cntvct_el0') {
    const paranoid = Number(f.perfEventParanoid ?? Number.NaN);
    const allowed = Number.isFinite(paranoid) && paranoid <= 2;
    return [
      found(
        'counter',
        'warn',
        `CPU ${c.cpu}: AArch64's generic timer (cntvct_el0${rate}), not core cycles: kernel.perf_event_paranoid is ${f.perfEventParanoid ?? 'not readable'}${allowed ? ', yet perf_event gave no cycle counter' : ''}`,
        allowed
          ? 'a host whose kernel exposes the core PMU to perf_event (a virtual machine often has none)'
          : 'sysctl kernel.perf_event_paranoid=2 (or lower) lets a driver count core cycles with perf_event',
      ),
    ];
  }
  if (c.source === 'rdtsc') {
    const flags = f.cpuFlags.split(/\s+/);
    const missing = ['constant_tsc', 'nonstop_tsc'].filter((x) => !flags.includes(x));
    if (missing.length > 0)
      return [
        found(
          'counter',
          'warn',
          `CPU ${c.cpu}: rdtsc${rate}, without ${missing.join(' and ')}: its ticks follow the clock or stop when idle`,
          'a host whose TSC is invariant (constant_tsc, nonstop_tsc)',
        ),
      ];
    return [
      found(
        'counter',
        'ok',
        `CPU ${c.cpu}: rdtsc${rate}, invariant (constant_tsc, nonstop_tsc): it counts at a fixed rate, not the core's clock`,
      ),
    ];
  }
  return [found('counter', 'ok', `CPU ${c.cpu}: ${c.source}${rate}`)];
}

function clockFindings(f: HostFacts): Finding[] {
  const out: Finding[] = [];
  if (f.governor === null)
    out.push(
      found(
        'governor',
        'warn',
        'cpufreq is not exposed (a virtual machine, or a kernel without it): the clock is the host’s to set',
        'on bare metal: cpupower frequency-set -g performance',
      ),
    );
  else if (f.governor !== 'performance')
    out.push(
      found('governor', 'warn', `'${f.governor}', not 'performance': the clock follows the load`, 'cpupower frequency-set -g performance'),
    );
  else out.push(found('governor', 'ok', 'performance'));
  if (f.minKhz !== null && f.maxKhz !== null && f.minKhz !== f.maxKhz)
    out.push(found('fixed clock', 'warn', `${f.minKhz}..${f.maxKhz} kHz: the clock may move between trials`, fixedClockFix(f)));
  else if (f.minKhz !== null) out.push(found('fixed clock', 'ok', `${f.minKhz} kHz`));
  if (f.noTurbo === '0')
    out.push(
      found(
        'turbo',
        'warn',
        'on (intel_pstate/no_turbo = 0): the clock rises above its base while it can',
        'echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo',
      ),
    );
  else if (f.boost === '1') out.push(found('turbo', 'warn', 'on (cpufreq/boost = 1)', 'echo 0 > /sys/devices/system/cpu/cpufreq/boost'));
  else if (f.noTurbo === null && f.boost === null) out.push(found('turbo', 'info', 'not exposed here'));
  else out.push(found('turbo', 'ok', 'off'));
  if (f.smt === 'on')
    out.push(
      found(
        'SMT',
        'warn',
        'on: a sibling thread can share a timing core',
        'echo off > /sys/devices/system/cpu/smt/control, or keep every timing core’s sibling out of all cpus lists',
      ),
    );
  else out.push(found('SMT', f.smt === null ? 'info' : 'ok', f.smt ?? 'not exposed here'));
  out.push(isolatedFinding(f));
  if (f.virtualized)
    out.push(
      found(
        'virtual machine',
        'warn',
        'a hypervisor shares the cores: the host can slow a trial without a sign',
        'a bare-metal runner for published figures; nights here are judged net of the host level',
      ),
    );
  return out;
}

/** Pin the clock at the counter's rate: on x86-64 rdtsc ticks at the TSC's, and only there are its ticks core cycles. */
function fixedClockFix(f: HostFacts): string {
  const at = f.counter.source === 'rdtsc' && f.counter.hz ? `${Math.round(f.counter.hz / 1e6)}MHz` : `${f.minKhz}kHz`;
  return `cpupower frequency-set -d ${at} -u ${at} (the counter's rate, where the core allows it), and fixed_clock_hz in ngcc-perf.yml`;
}

/** Isolated cores, and whether the timing core is one of them. */
function isolatedFinding(f: HostFacts): Finding {
  const isolated = f.isolated?.trim();
  if (!isolated)
    return found('isolated cores', 'info', 'none (isolcpus= and nohz_full= on the kernel command line keep other work off timing cores)');
  const nohz = f.nohzFull?.trim() ? `, nohz_full ${f.nohzFull.trim()}` : '';
  if (parseCpuList(isolated).includes(f.counter.cpu))
    return found('isolated cores', 'ok', `${isolated}${nohz}; the timing core ${f.counter.cpu} is one`);
  return found(
    'isolated cores',
    'warn',
    `${isolated}${nohz}, but the timing core ${f.counter.cpu} is not one of them`,
    "time on an isolated core: --cpu, or the system's cpus in ngcc-perf.yml",
  );
}

function diskFindings(f: HostFacts): Finding[] {
  const out = f.disk.map(({ path, freeBytes }) => {
    const free = `${(freeBytes / (1 << 30)).toFixed(1)} GiB free in ${path}`;
    if (freeBytes < DISK_FAIL_BYTES)
      return found('disk', 'fail', free, 'free space: builds, KAT files and records need some hundreds of MiB');
    if (freeBytes < DISK_WARN_BYTES) return found('disk', 'warn', free, 'a Round-1 campaign writes some GiB of builds and KAT files');
    return found('disk', 'ok', free);
  });
  out.push(
    f.cache.problem
      ? found('driver cache', 'fail', f.cache.problem, 'remove it, or set NGCC_CACHE_DIR to a folder of this user')
      : found('driver cache', 'ok', f.cache.path ?? ''),
  );
  return out;
}

/** A clang's coverage runtime: without it `--coverage` does not link, and the ct page says "not counted". */
function clangCoverageFindings(f: HostFacts): Finding[] {
  return f.clangCoverage.map(({ compiler, runtime, present, named }) => {
    const version = /clang-(\d+)/.exec(compiler)?.[1] ?? /\/clang\/(\d+)/.exec(runtime)?.[1];
    return present
      ? found(`${compiler} coverage`, 'ok', runtime)
      : found(
          `${compiler} coverage`,
          named ? 'warn' : 'info',
          `no ${runtime}: the ct check's coverage of ${compiler} builds cannot be counted`,
          `apt-get install libclang-rt-${version ?? 'N'}-dev`,
        );
  });
}

/** Every check's finding, in the order the doctor prints them. */
export function readiness(f: HostFacts): Finding[] {
  return [
    sandboxFinding(f),
    ...toolFindings(f),
    ...clangCoverageFindings(f),
    ...counterFinding(f),
    ...clockFindings(f),
    ...diskFindings(f),
  ];
}

/** 0 ready, 1 something makes the numbers less trustworthy, 2 something stops a run. */
export function readinessExit(findings: readonly Finding[]): 0 | 1 | 2 {
  if (findings.some((x) => x.verdict === 'fail')) return 2;
  return findings.some((x) => x.verdict === 'warn') ? 1 : 0;
}

const MARK: Record<Verdict, string> = { ok: 'ok  ', info: 'info', warn: 'warn', fail: 'FAIL' };

/** One line per check, "warn governor: 'powersave', …; do: cpupower …". */
export function readinessLines(findings: readonly Finding[]): string[] {
  const width = Math.max(...findings.map((x) => x.check.length));
  return findings.map((x) => `${MARK[x.verdict]} ${x.check.padEnd(width)}  ${x.found}${x.fix ? `; do: ${x.fix}` : ''}`);
}
