import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Phase, runCampaign } from '../src/campaign/runCampaign.js';
import type { CtEvidence } from '../src/ct/findingKinds.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import type { HashProfile, MemoryRecord } from '../src/profile/profileRecords.js';
import { goodKemCampaign } from './helpers/campaigns.js';
import { tempDir } from './helpers/tmp.js';

/**
 * A slow scheme at a scale CI affords (src/measure/cost.ts): the toy KEM with a keygen that spins
 * 3·10^8 iterations and then until 0.2 s have passed since it began, under timeout floors lowered far
 * below one keygen's share of each phase. The iterations give memcheck its slowdown; the wall-clock
 * floor makes the KAT's work outlast its floor on a host of any speed (a fast CI host ran the
 * iterations alone in 0.08 s, and 12 records then fell short of twice the floor).
 * Every timeout follows what the KAT measured of its calls, so every phase completes; with the floors
 * alone, the KAT, the calibration, the profile round and every memcheck run would be killed.
 */
const SPIN_KEYGEN = `#include "KEM_AlgorithmInstance.h"
#include <time.h>
#define kem_keygen honest_kem_keygen
#include "../common/toy_kem.inc"
#undef kem_keygen
static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
  double began = seconds_now();
  volatile unsigned long long spin = 0;
  for (unsigned long long i = 0; i < 300000000ull; i++) spin += i;
  do spin += 1; while (seconds_now() - began < 0.2);
  return honest_kem_keygen(pk, pk_len, sk, sk_len);
}
`;

/**
 * Floors: the KAT 0.8 s, every other process 0.05 s. The KAT's floor must let its first record
 * finish (a process's start, 0.1 s, and a keygen of 0.2 s or more): its mark then moves the deadline.
 */
const SETTINGS = `planning:
  trials: 2
  trial_target_s: 0.01
  op_budget_s: 5
  min_measurements: 2
  warmups: 1
  process_timeout_s: 0.05
  kat_timeout_s: 0.8
profile:
  target_s: 0.01
  rounds: 1
ct:
  calls: 1
  op_budget_s: 120
  variants: [] # the measured build alone: the other builds are test/ct-builds.test.ts's
`;

describe('a slow keygen, with timeouts that follow its cost', () => {
  const data = tempDir();
  const system = join(data, 's');
  const read = <T>(...path: string[]) => JSON.parse(readFileSync(join(system, ...path), 'utf8')) as T;

  beforeAll(async () => {
    const root = goodKemCampaign(['slow'], SETTINGS);
    cpSync(join(root, 'kem-1', 'good'), join(root, 'kem-1', 'spin'), { recursive: true });
    writeFileSync(join(root, 'kem-1', 'spin', 'KEM_AlgorithmInstance.c'), SPIN_KEYGEN);
    const yml = join(root, 'kem-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace('dir: good', 'dir: spin'));
    await runCampaign({
      campaignDir: root,
      system: 's',
      dataDir: data,
      phases: new Set<Phase>(['build', 'kat', 'measure', 'profile', 'ct']),
    });
  }, 600_000);

  it('the KAT passes, though its records take many times its floor, and says what each call took', () => {
    const e = read<BuildJson>('build.json').instances['kem-1/slow']!;
    expect([e.kat, e.kat_detail]).toEqual(['PASS', undefined]);
    // Ten records and the fresh ones, each a keygen of 0.2 s or more: past twice the 0.8-s floor.
    expect(e.call_seconds!.keygen! * 12).toBeGreaterThan(0.8 * 2);
    expect(e.call_seconds!.enc).toBeLessThan(e.call_seconds!.keygen! / 10);
  });

  it('every operation is timed: the calibration and the trials outlast the 0.05-s floor', () => {
    const e = read<BuildJson>('build.json').instances['kem-1/slow']!;
    expect(e.call_seconds!.keygen! * 2).toBeGreaterThan(0.05);
    for (const op of ['keygen', 'enc', 'dec']) {
      const r = read<TimingRecord>('records', 'kem-1', `slow__${op}.json`);
      expect([op, r.status, r.failure]).toEqual([op, 'complete', undefined]);
    }
  });

  it('the profile round and the memory run of each operation complete', () => {
    for (const op of ['keygen', 'enc', 'dec']) {
      expect([op, read<HashProfile>('profile', 'kem-1', `slow__${op}.json`).status]).toEqual([op, 'complete']);
      expect([op, read<MemoryRecord>('memory', 'kem-1', `slow__${op}.json`).status]).toEqual([op, 'complete']);
    }
  });

  it('the ct phase measures the slowdown under memcheck on one keygen, and checks every operation', () => {
    const ct = read<CtEvidence>('ct', 'kem-1', 'slow.json');
    expect(ct.slowdown).toMatchObject({ operation: 'keygen' });
    const s = ct.slowdown as { factor: number; calls_s: number; native_s: number };
    expect(s.factor).toBeCloseTo(s.calls_s / s.native_s, 6);
    expect(s.factor).toBeGreaterThan(1);
    for (const op of ['keygen', 'enc', 'dec'])
      expect([op, ct.operations[op]!.status]).toEqual([op, expect.stringMatching(/^(clean|flagged)$/)]);
  });
});
