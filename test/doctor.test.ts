import { describe, expect, it } from 'vitest';
import { DISK_FAIL_BYTES, DISK_WARN_BYTES, type Finding, type HostFacts, readiness, readinessExit } from '../src/env/readiness.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { allowedCpus } from '../src/env/cpus.js';
import { systemCompiler } from '../src/env/toolchain.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

/** `ngcc-perf doctor` (docs/runners.md): each check's verdict on made-up hosts, then the real one. */

const TOOLS = ['gcc', 'clang', 'nm', 'objdump', 'prlimit', 'valgrind', 'gdb', 'bwrap', 'unshare'];

/** A host ready to time: bare metal, clock fixed, turbo and SMT off, an isolated core. */
const READY: HostFacts = {
  arch: 'x86_64',
  cpuFlags: 'fpu tsc constant_tsc nonstop_tsc rdtscp',
  virtualized: false,
  governor: 'performance',
  minKhz: '2400000',
  maxKhz: '2400000',
  noTurbo: '1',
  boost: null,
  smt: 'off',
  isolated: '3',
  nohzFull: '3',
  perfEventParanoid: '2',
  apparmorUserns: '0',
  tools: Object.fromEntries(TOOLS.map((t) => [t, `/usr/bin/${t}`])),
  sandbox: { mode: 'bwrap' },
  counter: { cpu: 3, source: 'rdtsc', hz: 2.4e9 },
  disk: [{ path: '/data', freeBytes: 100 * 2 ** 30 }],
  cache: { path: '/tmp/ngcc-perf-1000' },
  clangCoverage: [
    { compiler: 'clang-16', runtime: '/usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.profile-x86_64.a', present: true, named: true },
  ],
};

const verdictOf = (facts: Partial<HostFacts>, check: string): Finding => {
  const all = readiness({ ...READY, ...facts }).filter((f) => f.check === check);
  expect(all, check).toHaveLength(1);
  return all[0]!;
};

describe('the doctor on a made-up host', () => {
  it('finds a ready host ready: every check ok, exit 0', () => {
    const findings = readiness(READY);
    expect(findings.filter((f) => f.verdict !== 'ok')).toEqual([]);
    expect(readinessExit(findings)).toBe(0);
  });

  it('the sandbox: bubblewrap ok, unshare only a warning, none possible stops a run and names the AppArmor caveat', () => {
    expect(verdictOf({ sandbox: { mode: 'unshare' } }, 'sandbox')).toMatchObject({
      verdict: 'warn',
      fix: expect.stringContaining('bubblewrap'),
    });
    const refused = verdictOf(
      {
        sandbox: { mode: 'bwrap', problem: 'bwrap cannot create a sandbox here (setting up uid map: Permission denied)' },
        apparmorUserns: '1',
      },
      'sandbox',
    );
    expect(refused.verdict).toBe('fail');
    expect(refused.fix).toMatch(/^bwrap cannot create a sandbox here .* AppArmor restricts unprivileged user namespaces here/);
    expect(verdictOf({ sandbox: { mode: 'bwrap', problem: 'x' }, apparmorUserns: '0' }, 'sandbox').fix).not.toMatch(/AppArmor/);
    expect(readinessExit(readiness({ ...READY, sandbox: { mode: 'bwrap', problem: 'x' } }))).toBe(2);
  });

  it('the tools: a missing compiler, nm or prlimit stops a run; objdump, valgrind, gdb and clang only some phases need', () => {
    for (const tool of ['gcc', 'nm', 'prlimit']) {
      const f = verdictOf({ tools: { ...READY.tools, [tool]: undefined } }, tool);
      expect(f, tool).toMatchObject({ verdict: 'fail', fix: expect.stringMatching(/^apt-get install /) });
    }
    for (const tool of ['objdump', 'valgrind', 'gdb', 'clang']) {
      const facts = { ...READY, tools: { ...READY.tools, [tool]: undefined } };
      expect(verdictOf(facts, tool), tool).toMatchObject({ verdict: 'info', fix: expect.stringMatching(/^apt-get install /) });
      expect(readinessExit(readiness(facts)), tool).toBe(0);
    }
  });

  it('the counter: an invariant TSC is ok; a TSC that follows the clock, the nanosecond fallback and AArch64’s generic timer are warnings; none stops a run', () => {
    expect(verdictOf({}, 'counter').verdict).toBe('ok');
    expect(verdictOf({ cpuFlags: 'fpu tsc' }, 'counter')).toMatchObject({
      verdict: 'warn',
      found: expect.stringContaining('without constant_tsc and nonstop_tsc'),
    });
    expect(verdictOf({ counter: { cpu: 3, source: 'monotonic-ns' } }, 'counter').verdict).toBe('warn');
    const arm = verdictOf(
      { arch: 'aarch64', cpuFlags: '', perfEventParanoid: '3', counter: { cpu: 3, source: 'cntvct_el0', hz: 25e6 } },
      'counter',
    );
    expect(arm).toMatchObject({
      verdict: 'warn',
      found: expect.stringContaining('perf_event_paranoid is 3'),
      fix: expect.stringContaining('sysctl kernel.perf_event_paranoid=2'),
    });
    expect(verdictOf({ arch: 'aarch64', cpuFlags: '', counter: { cpu: 3, source: 'perf_event-cycles', hz: 2e9 } }, 'counter').verdict).toBe(
      'ok',
    );
    expect(verdictOf({ counter: { cpu: 7, problem: 'cannot pin to CPU 7' } }, 'counter')).toMatchObject({
      verdict: 'fail',
      found: expect.stringContaining('CPU 7'),
    });
    // perf_event allowed yet no cycle counter (a virtual machine without a PMU): no sysctl to suggest.
    const noPmu = verdictOf({ arch: 'aarch64', perfEventParanoid: '1', counter: { cpu: 3, source: 'cntvct_el0', hz: 25e6 } }, 'counter');
    expect(noPmu.fix).not.toMatch(/sysctl/);
    // Another run is timing on the core: left alone, said so, no fault.
    const busy = verdictOf({ counter: { cpu: 3, busy: 'CPU 3, held by ngcc-perf, system x86_1, pid 42' } }, 'counter');
    expect(busy).toMatchObject({
      verdict: 'info',
      found: 'not probed: another run is timing on CPU 3, held by ngcc-perf, system x86_1, pid 42',
    });
    expect(readinessExit(readiness({ ...READY, counter: { cpu: 3, busy: 'CPU 3' } }))).toBe(0);
  });

  it('the clock: governor, fixed clock, turbo, SMT, isolated cores and a hypervisor, each with what to do', () => {
    expect(verdictOf({ governor: 'powersave' }, 'governor')).toMatchObject({
      verdict: 'warn',
      fix: 'cpupower frequency-set -g performance',
    });
    expect(verdictOf({ governor: null }, 'governor').verdict).toBe('warn');
    expect(verdictOf({ minKhz: '800000' }, 'fixed clock')).toMatchObject({
      verdict: 'warn',
      found: expect.stringContaining('800000..2400000 kHz'),
    });
    expect(verdictOf({ noTurbo: '0' }, 'turbo')).toMatchObject({ verdict: 'warn', fix: expect.stringContaining('no_turbo') });
    expect(verdictOf({ noTurbo: null, boost: '1' }, 'turbo')).toMatchObject({
      verdict: 'warn',
      fix: expect.stringContaining('cpufreq/boost'),
    });
    expect(verdictOf({ noTurbo: null, boost: null }, 'turbo').verdict).toBe('info');
    expect(verdictOf({ smt: 'on' }, 'SMT')).toMatchObject({ verdict: 'warn', fix: expect.stringContaining('smt/control') });
    expect(verdictOf({ isolated: '' }, 'isolated cores').verdict).toBe('info');
    expect(verdictOf({}, 'isolated cores').found).toBe('3, nohz_full 3; the timing core 3 is one');
    expect(verdictOf({ isolated: '2,5-6' }, 'isolated cores')).toMatchObject({
      verdict: 'warn',
      found: expect.stringContaining('the timing core 3 is not one'),
    });
    // The fixed clock the fix names is the counter's rate, not the turbo maximum.
    expect(verdictOf({ minKhz: '800000', maxKhz: '3900000' }, 'fixed clock').fix).toMatch(/^cpupower frequency-set -d 2400MHz -u 2400MHz/);
    expect(readiness({ ...READY, virtualized: true }).find((f) => f.check === 'virtual machine')?.verdict).toBe('warn');
    expect(readinessExit(readiness({ ...READY, governor: 'powersave' }))).toBe(1);
  });

  it('a clang the campaign names without its coverage runtime is a warning naming the package; the default clang only says so', () => {
    const missing = (named: boolean) => ({
      clangCoverage: [
        { compiler: 'clang-16', runtime: '/usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.profile-x86_64.a', present: false, named },
      ],
    });
    expect(verdictOf(missing(true), 'clang-16 coverage')).toMatchObject({ verdict: 'warn', fix: 'apt-get install libclang-rt-16-dev' });
    expect(verdictOf(missing(false), 'clang-16 coverage').verdict).toBe('info');
    expect(verdictOf({}, 'clang-16 coverage').verdict).toBe('ok');
  });

  it('the disk and the driver cache: too little space or a cache another user owns', () => {
    const disk = (freeBytes: number) => verdictOf({ disk: [{ path: '/data', freeBytes }] }, 'disk').verdict;
    expect(disk(DISK_FAIL_BYTES - 1)).toBe('fail');
    expect(disk(DISK_WARN_BYTES - 1)).toBe('warn');
    expect(disk(DISK_WARN_BYTES)).toBe('ok');
    expect(verdictOf({ cache: { problem: '/tmp/ngcc-perf-0: owned by uid 0, not this user (1000)' } }, 'driver cache').verdict).toBe(
      'fail',
    );
  });
});

describe('the doctor on this host', () => {
  it('checks every item, each on a line with its verdict, and never finds this kind of machine unable to run (exit 0 or 1)', async () => {
    const r = await runCli(['doctor']);
    expect(r.code === 0 || r.code === 1, r.out.join('\n')).toBe(true);
    const checks = r.out.slice(0, -1).map((l) => /^(ok {2}|info|warn|FAIL) (\S+(?: \S+)?)\s{2,}\S/.exec(l)?.[2]);
    for (const c of ['sandbox', 'gcc', 'counter', 'governor', 'SMT', 'isolated cores', 'disk', 'driver cache'])
      expect(checks, c).toContain(c);
    expect(r.out.at(-1)).toMatch(/^ready/);
    const json = await runCli(['doctor', '--format', 'json']);
    const parsed = JSON.parse(json.out.join('\n')) as { exit: number; findings: Finding[] };
    expect(parsed.exit).toBe(json.code);
    expect(parsed.findings.find((f) => f.check === 'sandbox')?.verdict).not.toBe('fail');
  });

  it("with a campaign, it checks the sandbox its ngcc-perf.yml sets and the system's core", async () => {
    const campaign = tempDir();
    writeFileSync(join(campaign, 'ngcc-perf.yml'), `sandbox: none\nsystems:\n  s:\n    cpu: ${allowedCpus()?.[0] ?? 0}\n`);
    const r = await runCli(['doctor', '--campaign', campaign, '--system', 's', '--format', 'json']);
    const parsed = JSON.parse(r.out.join('\n')) as { cpu: number; findings: Finding[] };
    expect(parsed.cpu).toBe(allowedCpus()?.[0] ?? 0);
    expect(parsed.findings.find((f) => f.check === 'sandbox')).toMatchObject({
      verdict: 'warn',
      found: expect.stringContaining('sandbox: none'),
    });
    expect(parsed.findings.find((f) => f.check === 'counter')?.found).toMatch(new RegExp(`^(CPU ${parsed.cpu}:|not probed)`));
    // Each clang the campaign names: its coverage runtime found where the compiler's own builtins are.
    // The campaign's compiler, when it runs the ct check: its coverage runtime found where the compiler's own builtins are.
    if (systemCompiler('clang-16')) {
      writeFileSync(join(campaign, 'ngcc-perf.yml'), 'compiler: clang-16\nct:\n  enabled: true\n');
      const clang = JSON.parse((await runCli(['doctor', '--campaign', campaign, '--format', 'json'])).out.join('\n')) as {
        findings: Finding[];
      };
      expect(clang.findings.find((f) => f.check === 'clang-16 coverage')).toMatchObject({
        verdict: 'ok',
        found: expect.stringMatching(/^\/\S+\/libclang_rt\.profile-[a-z0-9_]+\.a$/),
      });
    } else console.log('skipped: clang-16 is not installed (.ci/run installs it)');
    // A system the file does not name is an error that lists the ones it does.
    const typo = await runCli(['doctor', '--campaign', campaign, '--system', 'nope']);
    expect(typo.code).toBe(2);
    expect(typo.err.join('\n')).toMatch(/--system: 'nope' is no system of .*ngcc-perf\.yml \(it names none\)/);
  });

  it('a timing core this process may not use is an error naming the option', async () => {
    const r = await runCli(['doctor', '--cpu', '99999']);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(/^error: command line: --cpu: CPU 99999 is not one this process may run on/);
  });
});
