import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { kernelInconsistency, SLACK_PRECISE_S, SLACK_TICKS_S, trialWindow } from '../src/measure/kernelCheck.js';
import { runTrial } from '../src/measure/trial.js';
import { runDriver } from '../src/sandbox/run.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * What a timing or profiling process checks that the library cannot foresee: spot checks of
 * randomly chosen calls (native/ops.c), and the parent's comparison of each trial's cycles with
 * the kernel's view (src/measure/kernelCheck.ts).
 */

const iccs = join(repoRoot, 'native', 'iccs');
const kemCommon = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1', 'common');
const toySig = join(repoRoot, 'test', 'fixtures', 'campaign', 'sign-1', 'toy-sig');

/**
 * The toy KEM or toy signature with one operation replaced by `body`, which may call the honest one
 * as `honest_<op>` (e.g. honest_kem_keygen).
 */
function variant(dir: string, name: string, type: 'kem' | 'sig', op: string, signature: string, body: string): string {
  const src = join(dir, `${name}.c`);
  const include = type === 'kem' ? `"${join(kemCommon, 'toy_kem.inc')}"` : `"${join(toySig, 'SIG_AlgorithmInstance.c')}"`;
  writeFileSync(
    src,
    `#include <string.h>\n#define ${op} honest_${op}\n#include ${include}\n#undef ${op}\nint ${op}(${signature}) {\n${body}\n}\n`,
  );
  const lib = join(dir, `lib${name}.so`);
  const headers = type === 'kem' ? join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1', 'good') : toySig;
  execFileSync('gcc', [
    '-std=gnu11',
    '-O2',
    '-fPIC',
    '-shared',
    `-I${iccs}`,
    `-I${kemCommon}`,
    `-I${headers}`,
    '-o',
    lib,
    src,
    join(iccs, 'auxfunc.c'),
    join(iccs, 'drng.c'),
  ]);
  return lib;
}

const KEYGEN = 'unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len';
const ENC =
  'unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len, unsigned char *ct, unsigned long long *ct_len';
const DEC =
  'unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len, unsigned char *ss, unsigned long long *ss_len';
const SIGN =
  'unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len, unsigned char *sn, unsigned long long *sn_len';
const VERIFY =
  'unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len, unsigned char *m, unsigned long long m_len';

/** Honest on its first call in a process, idle after: what a library that memoises "the benchmark" would do. */
const lazy = (call: string) => `static int calls; if (calls++ > 0) return 0; return ${call};`;

describe('spot checks of randomly chosen calls', () => {
  const dir = tempDir();
  let tools: HarnessTools;
  const time = async (lib: string, type: 'kem' | 'sig', op: string, spots?: number) => {
    const job = ['time', type, op, '200', '2', '-1', 'iccs-drng', ...(spots === undefined ? [] : [String(spots)])];
    return (await runDriver([tools.driver, lib], job, { timeoutMs: 20_000 })).output;
  };

  beforeAll(async () => {
    tools = await harnessTools();
  });

  it('pass honest operations of both kinds', async () => {
    const kem = variant(dir, 'kem-honest', 'kem', 'kem_keygen', KEYGEN, 'return honest_kem_keygen(pk, pk_len, sk, sk_len);');
    const sig = variant(dir, 'sig-honest', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    for (const op of ['keygen', 'enc', 'dec']) expect((await time(kem, 'kem', op, 8)).status, op).toBe('complete');
    for (const op of ['keygen', 'sign', 'verify']) expect((await time(sig, 'sig', op, 8)).status, op).toBe('complete');
  });

  it('catch operations that stop working after the first call, and a verify that accepts anything', async () => {
    const cases: Array<[string, 'kem' | 'sig', string, string, string, RegExp]> = [
      ['kem_keygen', 'kem', 'keygen', KEYGEN, lazy('honest_kem_keygen(pk, pk_len, sk, sk_len)'), /keygen did not write its pk/],
      ['kem_enc', 'kem', 'enc', ENC, lazy('honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len)'), /enc did not write its ct/],
      ['kem_dec', 'kem', 'dec', DEC, lazy('honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len)'), /dec did not write its ss/],
      ['sig_sign', 'sig', 'sign', SIGN, lazy('honest_sig_sign(sk, sk_len, m, m_len, sn, sn_len)'), /sign did not write its signature/],
      [
        'sig_verify',
        'sig',
        'verify',
        VERIFY,
        '(void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len; return 0;',
        /sig_verify accepted the signature for a message with one flipped bit/,
      ],
    ];
    for (const [fn, type, op, signature, body, why] of cases) {
      const lib = variant(dir, `lazy-${fn}`, type, fn, signature, body);
      const out = await time(lib, type, op);
      expect([out.status, out.statusDetail], fn).toEqual(['CRYPTOFAIL', expect.stringMatching(/^spot check of call \d+: /)]);
      expect(out.statusDetail, fn).toMatch(why);
      // The same library with the checks off: the loop itself notices nothing.
      expect((await time(lib, type, op, 0)).status, `${fn} unchecked`).toBe('complete');
    }
  });

  it('catch a consistent-looking output that does not work: enc whose secret dec never gives', async () => {
    const lib = variant(
      dir,
      'enc-wrong-secret',
      'kem',
      'kem_enc',
      ENC,
      'static int calls; int rc = honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len); if (calls++ > 0) ss[0] ^= 1; return rc;',
    );
    const out = await time(lib, 'kem', 'enc');
    expect([out.status, out.statusDetail]).toEqual([
      'CRYPTOFAIL',
      expect.stringMatching(/kem_dec of its ciphertext did not give enc's shared secret$/),
    ]);
  });

  it('choose other calls in every process', async () => {
    const lib = variant(dir, 'lazy-again', 'kem', 'kem_keygen', KEYGEN, lazy('honest_kem_keygen(pk, pk_len, sk, sk_len)'));
    const calls = new Set<string>();
    for (let i = 0; i < 6; i++) calls.add(/call (\d+)/.exec((await time(lib, 'kem', 'keygen', 1)).statusDetail ?? '')?.[1] ?? '');
    expect(calls.size).toBeGreaterThan(1);
  });
});

describe("each trial against the kernel's view", () => {
  const dir = tempDir();
  /**
   * A stand-in timing driver in shell that marks its loop as ngcc_driver does, spends the loop
   * `how` (busy: on the CPU, or asleep), and reports `cycles`.
   */
  const standIn = (name: string, how: 'busy' | 'asleep', cycles: number) => {
    const file = join(dir, name);
    const loop = how === 'busy' ? 'for ((i = 0; i < 200000; i++)); do :; done' : 'sleep 0.3';
    writeFileSync(
      file,
      `#!/bin/bash
read -r s <&3; read -r job <&3
say() { printf '%s\\t%s\\n' "$s" "$1" >&3; }
say $'META\\tcounter\\trdtsc'
say $'MARK\\tbegin'; read -r go <&3
${loop}
say $'MARK\\tend'; read -r go <&3
say $'TRIAL\\t100\\t0.3\\t${cycles}'
say $'STATUS\\tcomplete'
say $'END\\t0'
`,
    );
    chmodSync(file, 0o755);
    return file;
  };
  const trial = (driver: string) =>
    runTrial({
      driver,
      library: '/nonexistent.so',
      type: 'kem',
      operation: 'keygen',
      iterations: 100,
      warmups: 1,
      cpu: -1,
      rng: 'iccs-drng',
      timeoutMs: 20_000,
      sandbox: 'none',
      counterHz: 1e9,
    });

  it('rejects cycles that leave out CPU time the kernel charged', async () => {
    const p = await trial(standIn('forged-low', 'busy', 1000));
    expect(p.status).toBe('failed');
    const m =
      /^inconsistent trial: its cycles say 1\.00e-6 s, but the kernel charged the process (\d+\.\d{3}) s of CPU during the trial$/.exec(
        p.failure ?? '',
      );
    expect(m, p.failure).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(0.05);
    expect(p.trials).toEqual([]);
  });

  it('rejects cycles that claim more time than passed', async () => {
    const p = await trial(standIn('forged-high', 'asleep', 5e9));
    expect(p.failure).toMatch(/^inconsistent trial: its cycles say 5\.000 s, but only 0\.[3-9]\d\d s passed during the trial$/);
  });

  it('keeps a consistent trial, with what the kernel saw', async () => {
    const p = await trial(standIn('honest', 'asleep', 3e8));
    expect([p.status, p.failure]).toEqual(['complete', undefined]);
    expect(p.trials[0]!.window_s).toBeGreaterThanOrEqual(0.29);
    expect(p.trials[0]!.kernel_cpu_s).toBeLessThan(0.1);
  });

  it('rejects a trial without its marks', async () => {
    const file = join(dir, 'unmarked');
    writeFileSync(
      file,
      `#!/bin/bash\nread -r s <&3; read -r job <&3\nsay() { printf '%s\\t%s\\n' "$s" "$1" >&3; }\nsay $'TRIAL\\t100\\t0.3\\t300'\nsay $'STATUS\\tcomplete'\nsay $'END\\t0'\n`,
    );
    chmodSync(file, 0o755);
    expect((await trial(file)).failure).toBe('inconsistent trial: the driver did not mark the timed loop once');
  });

  it('the rule: CPU beyond the cycles, or cycles beyond the time that passed, with a wider margin for core-cycle counters', () => {
    const w = { kernel_cpu_s: 1, window_s: 1.01 };
    expect(kernelInconsistency(1e9, 'rdtsc', 1e9, w)).toBeUndefined();
    expect(kernelInconsistency(0.7e9, 'rdtsc', 1e9, w)).toMatch(/kernel charged/);
    expect(kernelInconsistency(0.7e9, 'perf_event-cycles', 1e9, w)).toBeUndefined();
    expect(kernelInconsistency(1.4e9, 'rdtsc', 1e9, w)).toMatch(/only 1\.010 s passed/);
    // A descheduled trial: less CPU than its cycles say, within the time that passed. Not a forgery.
    expect(kernelInconsistency(1e9, 'rdtsc', 1e9, { kernel_cpu_s: 0.3, window_s: 1.01 })).toBeUndefined();
    // An under-report: cycles 5 % (10 %) below the work the kernel charged. With nanosecond CPU
    // accounting a 1-s trial shows 5 %, a 0.05-s trial 10 %; the uncounted work of an honest trial
    // (at most 1.008× in the example campaign) passes.
    const charged = (s: number) => ({ kernel_cpu_s: s, window_s: s * 1.01 });
    expect(kernelInconsistency(0.95e9, 'rdtsc', 1e9, charged(1), SLACK_PRECISE_S)).toMatch(/kernel charged/);
    expect(kernelInconsistency(0.9 * 0.05e9, 'rdtsc', 1e9, charged(0.05), SLACK_PRECISE_S)).toMatch(/kernel charged/);
    expect(kernelInconsistency(1e9 / 1.01, 'rdtsc', 1e9, charged(1), SLACK_PRECISE_S)).toBeUndefined();
    expect(kernelInconsistency(0.05e9 / 1.01, 'rdtsc', 1e9, charged(0.05), SLACK_PRECISE_S)).toBeUndefined();
    // Tick-granular accounting (no schedstat) needs its 20 ms: 5 % of 0.05 s is inside it.
    expect(kernelInconsistency(0.95 * 0.05e9, 'rdtsc', 1e9, charged(0.05), SLACK_TICKS_S)).toBeUndefined();
    expect(trialWindow([{ name: 'begin', wall_s: 1, cpu_s: 0.5 }])).toBeUndefined();
    expect(
      trialWindow([
        { name: 'begin', wall_s: 1, cpu_s: 0.5 },
        { name: 'end', wall_s: 3, cpu_s: 2 },
      ]),
    ).toEqual({ kernel_cpu_s: 1.5, window_s: 2 });
  });
});
