import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { planningSchema } from '../src/config/schemas.js';
import { measureOperations } from '../src/measure/operation.js';
import { firstDifference, KAT_CALLS, replayWarmupLimit, replayWarmups } from '../src/measure/replay.js';
import { heldOf } from '../src/measure/trustedClock.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import type { TimingRecord } from '../src/evidence/fileTypes.js';
import { goodKemCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { repoRoot, tempDir } from './helpers/tmp.js';
import { DEC, ENC, KEYGEN, SIGN, variant } from './helpers/toyVariant.js';

/**
 * Proof of work (src/measure/replay.ts, native/core/calls.c): every call of a trial has its own inputs
 * and outputs from the trial's seed, and a separate process makes the same calls again after the
 * trial. What differs is FORGED.
 */

/** Honest in one call of `every`, otherwise bytes from its own counter: a library that works only where it guesses it is checked. */
const guessing = (every: number, honest: string, outs: Array<[string, string]>) =>
  `static unsigned calls, junk = 12345; if (calls++ % ${every} == 0) return ${honest};
   ${outs.map(([out, len]) => `for (unsigned long long i = 0; i < ${len}; i++) ${out}[i] = (unsigned char)((junk = junk * 1103515245u + 12345u) >> 16);`).join('\n')}
   return 0;`;

/** A keygen that computes in one call of ten and hands out that key pair again in the nine after it. */
const KEYGEN_AGAIN = `static unsigned calls; static unsigned char kpk[4096], ksk[4096]; static unsigned long long lpk, lsk;
  if (calls++ % 10 == 0) { int rc = honest_kem_keygen(pk, pk_len, sk, sk_len); memcpy(kpk, pk, lpk = *pk_len); memcpy(ksk, sk, lsk = *sk_len); return rc; }
  memcpy(pk, kpk, *pk_len = lpk); memcpy(sk, ksk, *sk_len = lsk); return 0;`;

describe('the replay of a trial', () => {
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });

  const planning = planningSchema.parse({ trials: 3, trial_target_s: 0.02, op_budget_s: 5, min_measurements: 10, warmups: 1 });
  const measure = (lib: string, type: 'kem' | 'sig', operation: string, audit = false) =>
    measureOperations([
      {
        driver: tools.driver,
        library: lib,
        libraryShown: 'lib.so',
        type,
        operation,
        cpu: -1,
        rng: 'iccs-drng',
        sandbox: 'none',
        planning,
        audit,
      },
    ]).then((r) => r[0]!);

  it('gives the same transcript from the same seed, and another from another seed', async () => {
    const lib = variant(dir, 'honest', 'kem', 'kem_keygen', KEYGEN, 'return honest_kem_keygen(pk, pk_len, sk, sk_len);');
    let key = '';
    const run = async (job: string, seed: string, withKey = key) => {
      const fields = ['kem', 'enc', '300', '2', '-1', 'iccs-drng'];
      const args = job === 'replay' ? [...fields, '2', seed, '0', ...(withKey ? [withKey] : [])] : fields;
      const r = await runDriver([tools.driver, lib], [job, ...args], { timeoutMs: 20_000, markAnswers: { seed } });
      expect(r.output.status, job).toBe('complete');
      if (job === 'time') key = heldOf(r.output.lines)?.key ?? '';
      return r.output.lines.filter((f) => f[0] === 'TRANSCRIPT').flatMap((f) => f.slice(3));
    };
    const [a, b] = [randomBytes(48).toString('hex'), randomBytes(48).toString('hex')];
    const trial = await run('time', a);
    expect(trial.length).toBeGreaterThan(0);
    // The trusted half made each segment's seeds under a key of its own, told only once the trial ended.
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    // Batch 0 of the trial: its first blocks.
    const replayed = await run('replay', a);
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed).toEqual(trial.slice(0, replayed.length));
    expect(await run('replay', b)).not.toEqual(replayed);
    // Without the key, the trial's seed alone does not give its segments.
    expect(await run('replay', a, '')).not.toEqual(replayed);
  });

  it('agrees with honest operations, and says which trial it replayed', async () => {
    const kem = variant(dir, 'kem-honest', 'kem', 'kem_keygen', KEYGEN, 'return honest_kem_keygen(pk, pk_len, sk, sk_len);');
    const sig = variant(dir, 'sig-honest', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    for (const [lib, type, op] of [
      [kem, 'kem', 'keygen'],
      [kem, 'kem', 'enc'],
      [kem, 'kem', 'dec'],
      [sig, 'sig', 'keygen'],
      [sig, 'sig', 'sign'],
      [sig, 'sig', 'verify'],
    ] as const) {
      const r = await measure(lib, type, op);
      expect([r.status, r.failure], op).toEqual(['complete', undefined]);
      // dec: no replay; every trial against its inputs' transcript (test/dec-inputs.test.ts).
      if (op === 'dec') {
        expect(r.replays!.map((x) => [x.check, x.outcome])).toEqual(r.trials.map(() => ['inputs', 'agrees']));
        continue;
      }
      expect(r.replays, op).toHaveLength(1);
      expect(r.replays![0]!.outcome, op).toBe('agrees');
      expect(r.replays![0]!.trial).toBeLessThan(r.trials.length);
    }
    const audited = await measure(kem, 'kem', 'enc', true);
    expect(audited.replays!.map((x) => [x.trial, x.outcome])).toEqual(audited.trials.map((_, i) => [i, 'agrees']));
  });

  it('replays any segment of a trial alone, after other warm-ups', async () => {
    const lib = variant(dir, 'batches', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    const seed = randomBytes(48).toString('hex');
    // Enough calls for several batches of the toy signature's slots (32 MiB each), of several segments each.
    const calls = '300000';
    const trial = await runDriver([tools.driver, lib], ['time', 'sig', 'sign', calls, '3', '-1', 'iccs-drng'], {
      timeoutMs: 60_000,
      markAnswers: { seed },
    });
    expect(trial.output.status).toBe('complete');
    const key = heldOf(trial.output.lines)?.key;
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    const perBatch = Number(trial.output.meta.calls_per_batch);
    expect(perBatch).toBeLessThan(150_000);
    const blocks = trial.output.lines.filter((f) => f[0] === 'TRANSCRIPT').flatMap((f) => f.slice(3));
    for (const [batch, warmups] of [
      [1, 0],
      [Math.ceil(300_000 / perBatch) - 1, 7],
    ] as const) {
      const r = await runDriver(
        [tools.driver, lib],
        ['replay', 'sig', 'sign', calls, String(warmups), '-1', 'iccs-drng', '2', seed, String(batch), key!],
        {
          timeoutMs: 60_000,
        },
      );
      expect(r.output.status, `batch ${batch}`).toBe('complete');
      const lines = r.output.lines.filter((f) => f[0] === 'TRANSCRIPT');
      const first = Number(lines[0]![2]);
      expect(first).toBe((batch * perBatch) / Number(lines[0]![1]));
      const replayed = lines.flatMap((f) => f.slice(3));
      expect(replayed).toEqual(blocks.slice(first, first + replayed.length));
    }
  });

  it("replays verify's segments with the entries of the signed pool they had in the trial", async () => {
    const lib = variant(dir, 'verify-segments', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    const seed = randomBytes(48).toString('hex');
    // 600 calls: segments of 75 (whole blocks of 3), odd, so a segment's place shifts the pool's genuine and altered entries.
    const trial = await runDriver([tools.driver, lib], ['time', 'sig', 'verify', '600', '1', '-1', 'iccs-drng'], {
      timeoutMs: 60_000,
      markAnswers: { seed },
    });
    expect(trial.output.meta.calls_per_segment).toBe('75');
    const blocks = trial.output.lines.filter((f) => f[0] === 'TRANSCRIPT').flatMap((f) => f.slice(3));
    for (const segment of [1, 5]) {
      const r = await runDriver(
        [tools.driver, lib],
        ['replay', 'sig', 'verify', '600', '0', '-1', 'iccs-drng', '2', seed, String(segment)],
        {
          timeoutMs: 60_000,
        },
      );
      const lines = r.output.lines.filter((f) => f[0] === 'TRANSCRIPT');
      const first = Number(lines[0]![2]);
      const replayed = lines.flatMap((f) => f.slice(3));
      expect(replayed, `segment ${segment}`).toEqual(blocks.slice(first, first + replayed.length));
    }
  });

  it('finds a keygen that hands out its last key pair again in nine calls of ten: FORGED, though every key works', async () => {
    const lib = variant(dir, 'keygen-again', 'kem', 'kem_keygen', KEYGEN, KEYGEN_AGAIN);
    const r = await measure(lib, 'kem', 'keygen');
    expect(r.status).toBe('failed');
    expect(r.failure).toMatch(
      /^FORGED: trial [1-3], calls? \d+(–\d+)?: the outputs differ from those of its replay from the trial's seed$/,
    );
    expect(r.trials).toEqual([]);
    expect(r.replays!.map((x) => x.outcome)).toEqual(['differs']);
    // Every trial ran to its end: the spot checks' keys all worked.
    expect(r.processes.every((p) => p.status === 'complete')).toBe(true);
  });

  it('differs from that keygen at every replay warm-up count, even for a trial of one call', async () => {
    const lib = variant(dir, 'keygen-again-2', 'kem', 'kem_keygen', KEYGEN, KEYGEN_AGAIN);
    const blocks = (r: Awaited<ReturnType<typeof runDriver>>) =>
      r.output.lines.filter((f) => f[0] === 'TRANSCRIPT').flatMap((f) => f.slice(3));
    for (const calls of ['1', '40']) {
      const seed = randomBytes(48).toString('hex');
      const trial = await runDriver([tools.driver, lib], ['time', 'kem', 'keygen', calls, '1', '-1', 'iccs-drng'], {
        timeoutMs: 20_000,
        markAnswers: { seed },
      });
      expect(trial.output.status).toBe('complete');
      // The one call copies the warm-up's key: the replay's warm-ups are its own.
      for (let w = 0; w < 14; w++) {
        if (w === 1) continue;
        const replay = await runDriver(
          [tools.driver, lib],
          ['replay', 'kem', 'keygen', calls, String(w), '-1', 'iccs-drng', '2', seed, '0'],
          {
            timeoutMs: 20_000,
          },
        );
        const got = blocks(replay);
        expect(got.length, `${calls} calls, ${w} warm-ups`).toBeGreaterThan(0);
        expect(got, `${calls} calls, ${w} warm-ups`).not.toEqual(blocks(trial).slice(0, got.length));
      }
    }
  });

  it('finds a signer that works in one call of ten and writes well-formed junk elsewhere', async () => {
    const lib = variant(
      dir,
      'guessing-sign',
      'sig',
      'sig_sign',
      SIGN,
      guessing(10, 'honest_sig_sign(sk, sk_len, m, m_len, sn, sn_len)', [['sn', '*sn_len']]),
    );
    const r = await measure(lib, 'sig', 'sign');
    expect(r.status).toBe('failed');
    // A drawn spot check may find it first; else the replay does.
    expect(r.failure).toMatch(
      /^(calibration: )?CRYPTOFAIL: spot check of call \d+: sig_verify rejected its signature|^FORGED: trial [1-3], /,
    );
  });

  it('finds dec and enc that skip work in the calls themselves: CRYPTOFAIL from every call or a drawn spot check', async () => {
    const dec = variant(
      dir,
      'guessing-dec',
      'kem',
      'kem_dec',
      DEC,
      guessing(10, 'honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len)', [['ss', '32']]),
    );
    const r = await measure(dec, 'kem', 'dec');
    expect([r.status, r.failure]).toEqual([
      'failed',
      // Its transcript is not its inputs', in the calibration or in a trial.
      expect.stringMatching(/^FORGED: (trial [1-3]|the calibration), calls? \d+(–\d+)?: dec's secrets differ/),
    ]);
    const enc = variant(
      dir,
      'guessing-enc',
      'kem',
      'kem_enc',
      ENC,
      guessing(10, 'honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len)', [
        ['ct', '*ct_len'],
        ['ss', '*ss_len'],
      ]),
    );
    const e = await measure(enc, 'kem', 'enc');
    expect(e.status).toBe('failed');
    expect(e.failure).toMatch(/^(calibration: )?CRYPTOFAIL: spot check of call \d+: |^FORGED: /);
  });

  it('skips the replay of a library whose randomness the harness cannot seed, and the record says so', async () => {
    // A KEM that draws from the kernel (getrandom), with no generator entry point the harness could seed.
    const src = join(dir, 'own-randomness.c');
    writeFileSync(
      src,
      `#include <string.h>
#include <sys/random.h>
unsigned long long kem_get_pk_len_bytes(void) { return 32; }
unsigned long long kem_get_sk_len_bytes(void) { return 32; }
unsigned long long kem_get_ct_len_bytes(void) { return 32; }
unsigned long long kem_get_ss_len_bytes(void) { return 32; }
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
  if (getrandom(sk, 32, 0) != 32) return -1;
  memcpy(pk, sk, 32); *pk_len = *sk_len = 32; return 0;
}
int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len, unsigned char *ct, unsigned long long *ct_len) {
  (void)pk_len;
  if (getrandom(ss, 32, 0) != 32) return -1;
  for (int i = 0; i < 32; i++) ct[i] = ss[i] ^ pk[i];
  *ss_len = *ct_len = 32; return 0;
}
int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len, unsigned char *ss, unsigned long long *ss_len) {
  (void)sk_len; (void)ct_len;
  for (int i = 0; i < 32; i++) ss[i] = ct[i] ^ sk[i];
  *ss_len = 32; return 0;
}
`,
    );
    const lib = join(dir, 'libown-randomness.so');
    execFileSync('gcc', ['-std=gnu11', '-O2', '-fPIC', '-shared', '-o', lib, src]);
    const [r] = await measureOperations([
      {
        driver: tools.driver,
        library: lib,
        libraryShown: 'lib.so',
        type: 'kem',
        operation: 'keygen',
        cpu: -1,
        rng: 'auto',
        sandbox: 'none',
        planning,
      },
    ]);
    expect([r!.status, r!.failure]).toEqual(['complete', undefined]);
    expect(r!.processes.every((p) => p.meta.rng === 'none')).toBe(true);
    expect(r!.replays ?? []).toEqual([]);
    expect(r!.replay_skipped).toBe('the library draws no randomness from the harness, so its outputs cannot be made again');
  });

  it("draws a replay's warm-ups below a KAT's calls and unlike the trial's, and few for a slow call", () => {
    const drawn = (trial: number, most?: number) => new Set(Array.from({ length: 2000 }, () => replayWarmups(trial, most)));
    // A fast call: any count a KAT's calls do not reach, but the trial's.
    expect([...drawn(3)].sort((a, b) => a - b)).toEqual([...Array(KAT_CALLS).keys()].filter((w) => w !== 3));
    expect(replayWarmupLimit(3, 1e-5, 1)).toBe(KAT_CALLS - 1);
    // A 47-s keygen after one warm-up in a 1-s trial: 0 or 2, never 13 (ten minutes).
    expect(replayWarmupLimit(1, 47, 1)).toBe(2);
    expect([...drawn(1, 2)].sort()).toEqual([0, 2]);
    // A 0.3-s call in a 1-s trial: as many as fit the trial's target, and one more than the trial's.
    expect(replayWarmupLimit(1, 0.3, 1)).toBe(3);
  });

  it('names the first block that differs', () => {
    const t = (blocks: string[], per_block = 4) => ({ per_block, blocks, digest: '' });
    expect(firstDifference(t(['a', 'b', 'c']), t(['a', 'b', 'c']), 12)).toBeUndefined();
    expect(firstDifference(t(['a', 'x', 'c']), t(['a', 'b', 'c']), 12)).toBe('calls 4–7');
    expect(firstDifference(t(['a', 'b', 'x']), t(['a', 'b', 'c']), 10)).toBe('calls 8–9');
    expect(firstDifference(t(['a', 'b'], 1), t(['a', 'c'], 1), 2)).toBe('call 1');
    expect(firstDifference(t(['a', 'b']), t(['a', 'b', 'c']), 12)).toBe('calls 8–11');
    expect(firstDifference(t(['a'], 1), t(['a'], 2), 2)).toBe('the transcripts have different blocks');
    // A replay of one segment: its blocks are compared with the trial's at their place.
    expect(firstDifference(t(['a', 'b', 'c', 'd']), { ...t(['c', 'd']), first: 2 }, 16)).toBeUndefined();
    expect(firstDifference(t(['a', 'b', 'c', 'd']), { ...t(['c', 'x']), first: 2 }, 16)).toBe('calls 12–15');
  });
});

describe('run --audit', () => {
  it('replays every trial of every operation; without it, one trial of each (dec: all, against their inputs)', async () => {
    const root = goodKemCampaign(['good'], QUICK);
    const replayed = async (audit: boolean) => {
      const out = tempDir();
      const r = await runCli(['run', root, '--system', 's', '--out', out, '--phases', 'build,kat,measure', ...(audit ? ['--audit'] : [])]);
      expect(r.code, r.out.join('\n')).toBe(0);
      return ['keygen', 'enc', 'dec'].map((op) => {
        const rec = JSON.parse(readFileSync(join(out, 's', 'records', 'kem-1', `good__${op}.json`), 'utf8')) as TimingRecord;
        expect(
          rec.replays!.every((x) => x.outcome === 'agrees'),
          op,
        ).toBe(true);
        return [rec.replays!.map((x) => x.trial).sort(), rec.trials.length];
      });
    };
    // QUICK plans two trials an operation.
    for (const [trials, count] of await replayed(true)) expect(trials).toEqual([...Array(count).keys()]);
    // dec's every trial is checked against its inputs either way.
    for (const [i, [trials, count]] of (await replayed(false)).entries()) expect(trials).toHaveLength(i === 2 ? (count as number) : 1);
  }, 300_000);
});

describe("the corpus's cheats in a loop that repeats its inputs, as the timing loop did", () => {
  const dir = tempDir();
  const kem66 = join(repoRoot, 'test', 'fixtures', 'hostile', 'kem-66');
  const iccs = join(repoRoot, 'native', 'iccs');
  /** Runs keygen, enc and dec 100 times each past the KAT's calls, each on the same buffers and inputs, and returns stderr. */
  const repeat = (label: string) => {
    const main = join(dir, `${label}-loop.c`);
    writeFileSync(
      main,
      `#include "KEM_AlgorithmInstance.h"
#include "drng.h"
int main(void) {
    unsigned char seed[48] = {0}, pk[64], sk[96], ct[32], ss[32], ss2[32];
    unsigned long long a, b;
    init_random_number(&drng_algorithm, seed, 48);
    for (int i = 0; i < 120; i++) kem_keygen(pk, &a, sk, &b);
    for (int i = 0; i < 120; i++) kem_enc(pk, 64, ss, &a, ct, &b);
    for (int i = 0; i < 120; i++) kem_dec(sk, 96, ct, 32, ss2, &a);
    return 0;
}
`,
    );
    const bin = join(dir, `${label}-loop`);
    execFileSync('gcc', [
      '-std=gnu11',
      '-O2',
      `-I${join(kem66, label)}`,
      `-I${iccs}`,
      `-I${join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1', 'common')}`,
      '-o',
      bin,
      main,
      join(kem66, label, 'KEM_AlgorithmInstance.c'),
      join(iccs, 'auxfunc.c'),
      join(iccs, 'drng.c'),
    ]);
    return spawnSync(bin, { encoding: 'utf8' }).stderr;
  };

  it('memoise answers from memory there, and nowhere in the corpus run (test/hostile-corpus.test.ts)', () => {
    const n = Number(/NGCC-CANARY-memoise: (\d+) answers from memory/.exec(repeat('memoise'))?.[1]);
    // keygen and enc past their 14 KAT calls, every dec after the first.
    expect(n).toBeGreaterThanOrEqual(2 * (120 - 14) + 119 - 1);
  });

  it('checked-calls skips its work there, and nowhere in the corpus run', () => {
    const n = Number(/NGCC-CANARY-checked-calls: (\d+) calls skipped/.exec(repeat('checked-calls'))?.[1]);
    expect(n).toBeGreaterThanOrEqual(3 * (120 - 14) - 3);
  });
});
