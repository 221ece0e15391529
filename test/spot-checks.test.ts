import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { kernelInconsistency, SLACK_PRECISE_S, SLACK_TICKS_S, trialWindow } from '../src/measure/kernelCheck.js';
import { drawsFailure, runTrial, type TrialRequest } from '../src/measure/trial.js';
import { processTree, treeAtRest } from '../src/sandbox/cpuTime.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import { repoRoot, tempDir } from './helpers/tmp.js';
import { DEC, ENC, KEYGEN, SIGN, toyHash, VERIFY, variant, variants } from './helpers/toyVariant.js';

/**
 * What a timing process checks that the library cannot foresee: every call's outputs in its own
 * slot, spot checks of calls drawn after the batch that ran them (native/core/calls.c), and the parent's
 * comparison of each trial's cycles with the kernel's view (src/measure/kernelCheck.ts).
 */

/** Honest on its first call in a process, idle after: what a library that memoises "the benchmark" would do. */
const lazy = (call: string) => `static int calls; if (calls++ > 0) return 0; return ${call};`;

describe('spot checks of randomly chosen calls', () => {
  const dir = tempDir();
  let tools: HarnessTools;
  const time = async (lib: string, type: 'kem' | 'sig', op: string, spots?: number) => {
    const job = ['time', type, op, '200', '2', '-1', 'iccs-drng', ...(spots === undefined ? [] : [String(spots)])];
    const seed = randomBytes(48).toString('hex');
    return (await runDriver([tools.driver, lib], job, { timeoutMs: 20_000, markAnswers: { seed } })).output;
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

  it('catch operations that stop working after the first call in every call, and a verify that accepts anything', async () => {
    const cases: Array<[string, 'kem' | 'sig', string, string, string, RegExp]> = [
      ['kem_keygen', 'kem', 'keygen', KEYGEN, lazy('honest_kem_keygen(pk, pk_len, sk, sk_len)'), /^call 0: keygen did not write its pk$/],
      ['kem_enc', 'kem', 'enc', ENC, lazy('honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len)'), /^call 0: enc did not write its ct$/],
      ['kem_dec', 'kem', 'dec', DEC, lazy('honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len)'), /^call 0: dec did not write its ss$/],
      [
        'sig_sign',
        'sig',
        'sign',
        SIGN,
        lazy('honest_sig_sign(sk, sk_len, m, m_len, sn, sn_len)'),
        /^call 0: sign did not write its signature$/,
      ],
      [
        'sig_verify',
        'sig',
        'verify',
        VERIFY,
        '(void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len; return 0;',
        /^call 1: sig_verify accepted a signature for an altered message$/,
      ],
    ];
    for (const [fn, type, op, signature, body, why] of cases) {
      const lib = variant(dir, `lazy-${fn}`, type, fn, signature, body);
      // Checked in every call, whatever the number of spot checks: the warm-ups (and, for enc
      // and dec, the key pair) take the honest first call, so call 0 of the loop is already idle.
      for (const spots of [undefined, 0]) {
        const out = await time(lib, type, op, spots);
        expect([out.status, out.statusDetail], `${fn} with ${spots ?? 'default'} spot checks`).toEqual([
          'CRYPTOFAIL',
          expect.stringMatching(why),
        ]);
      }
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
    // Every call's secret is wrong: which one the spot check names is its draw.
    const lib = variant(
      dir,
      'enc-always-wrong',
      'kem',
      'kem_enc',
      ENC,
      'int rc = honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len); ss[0] ^= 1; return rc;',
    );
    const calls = new Set<string>();
    for (let i = 0; i < 6; i++) calls.add(/call (\d+)/.exec((await time(lib, 'kem', 'enc', 1)).statusDetail ?? '')?.[1] ?? '');
    expect(calls.size).toBeGreaterThan(1);
  });

  it('catch a verify that rejects the genuine signatures, in every call', async () => {
    const lib = variant(
      dir,
      'verify-rejects',
      'sig',
      'sig_verify',
      VERIFY,
      '(void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len; return -1;',
    );
    const out = await time(lib, 'sig', 'verify', 0);
    expect([out.status, out.statusDetail]).toEqual(['CRYPTOFAIL', 'call 0: sig_verify rejected a genuine signature (-1)']);
  });

  it('catch in a drawn call a key pair or a signature that does not work, and a verify that accepts a message with one flipped bit', async () => {
    // Every keygen's public key is off by one bit: written, well-formed, and useless.
    const keygen = variant(
      dir,
      'keygen-broken-pk',
      'kem',
      'kem_keygen',
      KEYGEN,
      'int rc = honest_kem_keygen(pk, pk_len, sk, sk_len); pk[0] ^= 1; return rc;',
    );
    const k = await time(keygen, 'kem', 'keygen');
    expect([k.status, k.statusDetail]).toEqual([
      'CRYPTOFAIL',
      expect.stringMatching(/^spot check of call \d+: kem_dec of a ciphertext to its public key did not give enc's shared secret$/),
    ]);
    const sigKeygen = variant(
      dir,
      'sig-keygen-broken-pk',
      'sig',
      'sig_keygen',
      KEYGEN,
      'int rc = honest_sig_keygen(pk, pk_len, sk, sk_len); pk[0] ^= 1; return rc;',
    );
    const g = await time(sigKeygen, 'sig', 'keygen');
    expect([g.status, g.statusDetail]).toEqual([
      'CRYPTOFAIL',
      expect.stringMatching(/^spot check of call \d+: sig_verify rejected a signature with its keys \(-1\)$/),
    ]);
    // Every signature off by one bit, and written: only a drawn call's verification tells.
    const badSign = variant(
      dir,
      'sign-broken',
      'sig',
      'sig_sign',
      SIGN,
      'int rc = honest_sig_sign(sk, sk_len, m, m_len, sn, sn_len); sn[0] ^= 1; return rc;',
    );
    const b = await time(badSign, 'sig', 'sign');
    expect([b.status, b.statusDetail]).toEqual([
      'CRYPTOFAIL',
      expect.stringMatching(/^spot check of call \d+: sig_verify rejected its signature \(-1\)$/),
    ]);
    // The signer is honest; the verify it is checked with accepts anything (sign's trial verifies no call but the drawn ones).
    const sign = variant(
      dir,
      'verify-accepts',
      'sig',
      'sig_verify',
      VERIFY,
      '(void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len; return 0;',
    );
    const s = await time(sign, 'sig', 'sign');
    expect([s.status, s.statusDetail]).toEqual([
      'CRYPTOFAIL',
      expect.stringMatching(/^spot check of call \d+: sig_verify accepted its signature for a message with one flipped bit$/),
    ]);
  });
});

describe("the KAT's records from fresh seeds (native/jobs/kat.c)", () => {
  // After the official records, two more from seeds the library cannot know: outputs that a table
  // of the official answers, or a library that ignores its inputs, cannot give.
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });
  const kat = async (lib: string, type: 'kem' | 'sig') =>
    (await runDriver([tools.driver, lib], ['kat', type, 'iccs', '3'], { timeoutMs: 20_000 })).output;

  it('pass the honest toy KEM and toy signature', async () => {
    const kem = variant(dir, 'kem-honest', 'kem', 'kem_keygen', KEYGEN, 'return honest_kem_keygen(pk, pk_len, sk, sk_len);');
    const sig = variant(dir, 'sig-honest', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    expect((await kat(kem, 'kem')).status).toBe('PASS');
    expect((await kat(sig, 'sig')).status).toBe('PASS');
  });

  it('are CRYPTOFAIL for a dec that ignores the ciphertext, a keygen that ignores the seed, and a verify that ignores the message', async () => {
    const cases: Array<[string, 'kem' | 'sig', Array<[string, string, string]>, RegExp]> = [
      [
        // enc and dec agree on a secret that depends on the key alone: a flipped ciphertext bit changes nothing.
        'dec-ignores-ct',
        'kem',
        [
          ['kem_enc', ENC, 'int rc = honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len); memcpy(ss, pk, 32); return rc;'],
          ['kem_dec', DEC, 'int rc = honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len); memcpy(ss, sk + 32, 32); return rc;'],
        ],
        /^fresh seed 0: dec of a ciphertext with one flipped bit gave the same shared secret$/,
      ],
      [
        // Its first key pair again and again: every key works, and two fresh seeds give one public key.
        'keygen-same-key',
        'kem',
        [
          [
            'kem_keygen',
            KEYGEN,
            'static unsigned char kpk[64], ksk[96]; static int kept; if (!kept++) { int rc = honest_kem_keygen(kpk, pk_len, ksk, sk_len); if (rc) return rc; } memcpy(pk, kpk, 64); memcpy(sk, ksk, 96); *pk_len = 64; *sk_len = 96; return 0;',
          ],
        ],
        /^fresh seed 1: the same public key as from another fresh seed$/,
      ],
      [
        'verify-accepts',
        'sig',
        [['sig_verify', VERIFY, '(void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len; return 0;']],
        /^fresh seed 0: sig_verify accepted a message with one flipped bit$/,
      ],
    ];
    for (const [name, type, replaced, why] of cases) {
      const out = await kat(variants(dir, name, type, replaced), type);
      expect([out.status, out.statusDetail], name).toEqual(['CRYPTOFAIL', expect.stringMatching(why)]);
    }
  });

  it('are preceded by the official records, where a non-zero return or a rejected signature is CRYPTOFAIL', async () => {
    const failing = variant(dir, 'keygen-fails', 'kem', 'kem_keygen', KEYGEN, '(void)pk; (void)pk_len; (void)sk; (void)sk_len; return -1;');
    expect(await kat(failing, 'kem')).toMatchObject({ status: 'CRYPTOFAIL', statusDetail: 'record 0: kem_keygen returned -1' });
    const rejecting = variant(
      dir,
      'verify-rejects',
      'sig',
      'sig_verify',
      VERIFY,
      '(void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len; return -1;',
    );
    expect(await kat(rejecting, 'sig')).toMatchObject({
      status: 'CRYPTOFAIL',
      statusDetail: 'record 0: sig_verify rejected a fresh signature (-1)',
    });
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
say $'META\\tpk_bytes\\t32'; say $'META\\tsk_bytes\\t32'
say $'META\\tcalls_per_batch\\t100'; say $'META\\tcalls_per_segment\\t16'
say $'MARK\\tseed'; read -r go seed <&3
say "META"$'\\t'"seed"$'\\t'"$seed"
say $'MARK\\tbegin'; read -r go <&3
${loop}
say $'MARK\\tend'; read -r go <&3
say $'TRIAL\\t100\\t0.3\\t${cycles}'
say $'TRANSCRIPT\\t1\\t0\\t${Array(100).fill('0123456789abcdef').join('\\t')}'
say $'STATUS\\tcomplete'
say $'HELD\\t00112233445566778899aabbccddeeff\\tkem-keygen\\t704\\t100\\t16\\t1\\t100\\t0\\t32\\t32\\t0\\t0'
say $'CLOCK\\trdtsc\\t1\\t${cycles}\\t0'
say $'END\\t0'
`,
    );
    chmodSync(file, 0o755);
    return file;
  };
  const trial = (driver: string, extra: Partial<TrialRequest> = {}) =>
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
      ...extra,
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
    expect((await trial(file)).failure).toBe('inconsistent trial: the driver did not mark its seed and the timed batches');
  });

  it("holds no calibration to the kernel's view: its call, or few, only size the plan", async () => {
    const forged = standIn('calibration-forged-low', 'busy', 1000);
    expect((await trial(forged)).status).toBe('failed');
    const p = await trial(forged, { calibration: true });
    expect([p.status, p.failure]).toEqual(['complete', undefined]);
  });

  it("judges the count before the kernel's view", async () => {
    // Cycles forged low and a count ten times the parent's: the count is named.
    const file = standIn('count-first', 'busy', 1000);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('TRIAL\\t100\\t', () => 'TRIAL\\t1000\\t'),
    );
    expect((await trial(file)).failure).toBe('inconsistent trial: the driver reported 1000 calls, the parent asked for 100');
  });

  it('rejects a trial whose count, or whose per-call samples, are more than the calls the parent asked for', async () => {
    // The honest stand-in's lines, with the count claimed ten times, or a CALLS line of 101 samples for 100 calls.
    const honest = readFileSync(standIn('count-honest', 'asleep', 3e8), 'utf8');
    const edited = (name: string, from: string, to: string) => {
      const file = join(dir, name);
      expect(honest).toContain(from);
      writeFileSync(
        file,
        honest.replace(from, () => to),
      );
      chmodSync(file, 0o755);
      return file;
    };
    const tenfold = await trial(edited('count-x10', 'TRIAL\\t100\\t', 'TRIAL\\t1000\\t'));
    expect([tenfold.status, tenfold.failure]).toEqual([
      'failed',
      'inconsistent trial: the driver reported 1000 calls, the parent asked for 100',
    ]);
    expect(tenfold.trials).toEqual([]);
    const samples = await trial(edited('samples-101', "say $'TRANSCRIPT", "say $'CALLS\\t101\\t1\\t2\\t3\\t4\\t5'\nsay $'TRANSCRIPT"));
    expect([samples.status, samples.failure]).toEqual(['failed', 'inconsistent trial: 101 per-call samples for 100 calls']);
    // The trusted half's transcript covers every call: one of fewer blocks, or of another trial's
    // calls, is not its own (a child's lines relayed before it knew it held the trial).
    const short = await trial(edited('transcript-short', "say $'TRANSCRIPT\\t1\\t0\\t", "say $'TRANSCRIPT\\t1\\t0\\t0123456789abcdef'\n#"));
    expect([short.status, short.failure]).toEqual([
      'failed',
      'inconsistent trial: the transcript has 1 block(s) from block 0; the trusted half folds 100',
    ]);
    const fewer = await trial(
      edited('held-fewer-calls', '\\tkem-keygen\\t704\\t100\\t16\\t1\\t100\\t', '\\tkem-keygen\\t704\\t100\\t16\\t1\\t50\\t'),
    );
    expect(fewer.failure).toMatch(
      /^inconsistent trial: the trusted half read 50 calls of kem-keygen in slots of 704 bytes .* the job and the sizes give 100 calls of kem-keygen/,
    );
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
    ).toEqual({ kernel_cpu_s: 1.5, window_s: 2, windows: 1 });
    // A trial's batches: the sums of their windows, after the seed; anything else is no window.
    const seed = { name: 'seed', wall_s: 0.5, cpu_s: 0.1 };
    const batches = [
      { name: 'begin', wall_s: 1, cpu_s: 0.5 },
      { name: 'end', wall_s: 2, cpu_s: 1.5 },
      { name: 'begin', wall_s: 2.5, cpu_s: 1.6 },
      { name: 'end', wall_s: 3, cpu_s: 2 },
    ];
    expect(trialWindow([seed, ...batches], true)).toEqual({ kernel_cpu_s: 1.4, window_s: 1.5, windows: 2 });
    // A window opens when the driver resumes (the answer to begin), not when begin arrived: the
    // parent's reading of /proc in between is time the driver waited.
    const answered = batches.map((m) => (m.name === 'begin' ? { ...m, resumed_s: m.wall_s + 0.1 } : m));
    const opened = trialWindow([seed, ...answered], true)!;
    expect(opened.window_s).toBeCloseTo(1.3, 9);
    expect(opened).toMatchObject({ kernel_cpu_s: 1.4, windows: 2 });
    expect(trialWindow(batches, true)).toBeUndefined();
    expect(trialWindow([seed, ...batches.slice(0, 3)], true)).toBeUndefined();
    expect(trialWindow([seed, batches[1]!, batches[0]!], true)).toBeUndefined();
    // Slack grows with the windows (each pair of marks is a few system calls): 0.1 ms a further window.
    const under = (windows: number, kernel: number) =>
      kernelInconsistency(1e9, 'rdtsc', 1e9, { kernel_cpu_s: kernel, window_s: 2, windows }, SLACK_PRECISE_S);
    expect(under(1, 1.04 + 0.0009)).toBeUndefined();
    expect(under(1, 1.04 + 0.0011)).toMatch(/kernel charged/);
    expect(under(11, 1.04 + 0.0019)).toBeUndefined();
    expect(under(11, 1.04 + 0.0021)).toMatch(/kernel charged/);
    // 70 windows (a 1-s trial of a fast hash): a 5 % under-report still shows.
    expect(under(70, 1 / 0.95)).toMatch(/kernel charged/);
  });
});

describe('reading the CPU time at a mark', () => {
  it('waits for a process tree at rest: one that sleeps is, one that spins is not', async () => {
    const { spawn } = await import('node:child_process');
    const sleeper = spawn('sh', ['-c', 'sleep 5'], { detached: true });
    const spinner = spawn('sh', ['-c', 'while :; do :; done'], { detached: true });
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(treeAtRest(processTree(sleeper.pid!))).toBe(true);
      expect(treeAtRest(processTree(spinner.pid!))).toBe(false);
    } finally {
      sleeper.kill('SIGKILL');
      spinner.kill('SIGKILL');
    }
  });
});

describe("the draw count against the KAT's", () => {
  const req = (katDraws: number) => ({ operation: 'enc', katDraws }) as TrialRequest;

  it('holds each call to one draw, not to the KAT’s fewest: a sampler that retries draws a varying number of times', () => {
    // The PQClean catalogue's mceliece6960119 enc: at least 2 draws in every KAT record, 1 in a one-call calibration.
    expect(drawsFailure('1', 1, req(2))).toBeUndefined();
    expect(drawsFailure('2', 1, req(6))).toBeUndefined();
    expect(drawsFailure('999', 1000, req(1))).toMatch(
      /^inconsistent trial: 1000 enc calls drew 999 times from the generator; each drew at least 1 in the KAT$/,
    );
    expect(drawsFailure('0', 1, req(2))).toMatch(/1 enc calls drew 0 times/);
    expect(drawsFailure(undefined, 10, req(1))).toMatch(/no count of the generator's draws/);
    // An operation that drew nothing in the KAT (verify, or a generator without a count) is not held.
    expect(drawsFailure('0', 10, req(0))).toBeUndefined();
  });
});

describe('the physical floor, end to end', () => {
  // A KEM that claims a public key of 1 MiB and writes one byte of it: every output written (not the
  // slot's fill), its enc and dec agreeing on a secret for the spot checks, its cycles true, and a
  // keygen faster than 1 MiB can be written. The trial's other checks pass it; the floor does not.
  // (A do-nothing CryptHash of 64 KiB messages is not caught on this VM: the driver's loop around
  // each call took 90-160 ns, above the 79 ns its 65568 bytes set.)
  const THIN = `
#include "auxfunc.h"
#include "drng.h"
#define PK (1ull << 20)
unsigned long long kem_get_pk_len_bytes(void) { return PK; }
unsigned long long kem_get_sk_len_bytes(void) { return 32; }
unsigned long long kem_get_ct_len_bytes(void) { return 32; }
unsigned long long kem_get_ss_len_bytes(void) { return 32; }
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
  pk[0] = 1;
  for (int i = 0; i < 32; i++) sk[i] = (unsigned char)i;
  *pk_len = PK; *sk_len = 32;
  return 0;
}
int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len, unsigned char *ct, unsigned long long *ct_len) {
  (void)pk; (void)pk_len;
  for (int i = 0; i < 32; i++) ct[i] = ss[i] = (unsigned char)i;
  *ss_len = *ct_len = 32;
  return 0;
}
int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len, unsigned char *ss, unsigned long long *ss_len) {
  (void)sk; (void)sk_len; (void)ct; (void)ct_len;
  for (int i = 0; i < 32; i++) ss[i] = (unsigned char)i;
  *ss_len = 32;
  return 0;
}
`;
  const dir = tempDir();
  const iccs = join(repoRoot, 'native', 'iccs');
  const toy = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });
  // With the ICCS helper library, the generator's entry points included, as a campaign's build links it.
  const build = (name: string, source: string, includes: string[] = []) => {
    const lib = join(dir, `lib${name}.so`);
    const helpers = [join(iccs, 'auxfunc.c'), join(iccs, 'drng.c')];
    execFileSync('gcc', ['-O2', '-fPIC', '-shared', `-I${iccs}`, ...includes.map((i) => `-I${i}`), '-o', lib, source, ...helpers]);
    return lib;
  };
  const keygen = (library: string) =>
    runTrial({
      driver: tools.driver,
      library,
      type: 'kem',
      operation: 'keygen',
      iterations: 200,
      warmups: 1,
      cpu: -1,
      rng: 'iccs-drng',
      timeoutMs: 60_000,
      sandbox: 'bwrap',
    });

  it('rejects a trial whose calls could not have written their outputs, and keeps an honest one', async () => {
    writeFileSync(join(dir, 'thin.c'), THIN);
    const thin = await keygen(build('thin', join(dir, 'thin.c')));
    expect(thin.status).toBe('failed');
    expect(thin.failure).toMatch(
      /^inconsistent trial: below the physical floor: \d\S* ns per keygen call, where moving its 1048608 bytes takes at least 1\.26e\+3 ns \(128 bytes a cycle at 6\.5 GHz\)$/,
    );
    expect(thin.trials).toEqual([]);
    const good = await keygen(build('good', join(toy, 'good', 'KEM_AlgorithmInstance.c'), [join(toy, 'good'), join(toy, 'common')]));
    expect([good.status, good.failure]).toEqual(['complete', undefined]);
  });
});

// A hash's timing job checks its calls too (its KAT's fresh messages are test/hash-kat.test.ts's).
describe("a hash's spot checks, which no table of the official answers passes", () => {
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });
  const time = async (lib: string) =>
    (
      await runDriver([tools.driver, lib], ['time', 'hash:256', 'hash_32', '200', '2', '-1', 'auto'], {
        timeoutMs: 20_000,
        markAnswers: { seed: randomBytes(48).toString('hex') },
      })
    ).output;

  it('pass an honest hash', async () => {
    expect((await time(toyHash(dir, 'honest', ''))).status).toBe('complete');
  });

  it('timing: a drawn call hashed again must give its digest: else CRYPTOFAIL', async () => {
    const out = await time(toyHash(dir, 'counting-timed', 'counting'));
    expect([out.status, out.statusDetail]).toEqual([
      'CRYPTOFAIL',
      expect.stringMatching(/^spot check of call \d+: CryptHash gave another digest for the same message$/),
    ]);
  });
});
