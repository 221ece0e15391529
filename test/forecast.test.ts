import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KAT_SECONDS } from '../src/campaign/prepare.js';
import { RELINK_SECONDS } from '../src/campaign/profile.js';
import type { BuildJson } from '../src/evidence/types.js';
import { formatSeconds } from '../src/report/format.js';
import { goodKemCampaign } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { filledSeconds, layout, longestFirst, plannedOperationSeconds, remainingSeconds, shardByCost } from '../src/campaign/forecast.js';

// The forecast's arithmetic (src/campaign/forecast.ts): the layout the scheduler follows, the order,
// the shards, the ETA's model of what is left.

describe('the layout of a run', () => {
  const unit = (prep: number, timing: number) => ({
    stages: [
      { lane: 'pool' as const, seconds: prep },
      { lane: 'timing' as const, seconds: timing },
    ],
  });

  it('overlaps the next instance’s preparation with the timing, and serialises the timing core', () => {
    // Three instances of 2 s preparation and 10 s timing on one worker and one timing core: 2 + 3 × 10.
    expect(layout([unit(2, 10), unit(2, 10), unit(2, 10)], 1, 1)).toEqual({ total: 32, timing: 30, pool: 6 });
    // Two timing cores halve the timing; the single worker prepares one after another.
    expect(layout([unit(2, 10), unit(2, 10)], 1, 2).total).toBe(14);
    // A pool that is the bottleneck: preparations of 10 s, timing of 2 s.
    expect(layout([unit(10, 2), unit(10, 2), unit(10, 2)], 1, 1).total).toBe(32);
  });

  it('has an instance’s stages in order: its timing never starts before its preparation ends', () => {
    expect(layout([unit(5, 1)], 4, 4).total).toBe(6);
  });
});

describe('order and shards', () => {
  it('serves the longest expected first, ties in campaign order', () => {
    expect(longestFirst(['a', 'b', 'c', 'd'], (x) => ({ a: 1, b: 5, c: 1, d: 3 })[x]!)).toEqual(['b', 'd', 'a', 'c']);
  });

  it('deals instances to shards by expected cost, each exactly once, the shards’ work close', () => {
    const costs = [100, 1, 1, 1, 1, 1, 50, 50, 2, 2];
    const items = costs.map((c, i) => ({ i, c }));
    const shards = [1, 2, 3].map((k) => shardByCost(items, (x) => x.c, k, 3));
    expect(
      shards
        .flat()
        .map((x) => x.i)
        .sort((a, b) => a - b),
    ).toEqual(costs.map((_, i) => i));
    const loads = shards.map((s) => s.reduce((a, x) => a + x.c, 0));
    // The 100 alone on one shard, the two 50s on the others with the small ones spread.
    expect(loads.sort((a, b) => a - b)).toEqual([54, 55, 100]);
    // By count (equal costs), the deal is the old modulo one: shard k has the k-th, (k+N)-th, …
    expect(shardByCost([0, 1, 2, 3, 4], () => 1, 2, 2)).toEqual([1, 3]);
  });
});

describe('estimates', () => {
  it('plans the fixed plan at its trials, an adaptive one at its first chance to stop', () => {
    const fixed = { trials: 5, trial_target_s: 1, op_budget_s: 60 };
    expect(plannedOperationSeconds(fixed)).toBeCloseTo(5 + 7 * 0.06, 9);
    expect(plannedOperationSeconds({ ...fixed, adaptive: { enabled: true, min_trials: 5, trial_target_s: 0.1 } })).toBeCloseTo(
      0.5 + 7 * 0.06,
      9,
    );
    expect(plannedOperationSeconds({ ...fixed, op_budget_s: 2 })).toBeCloseTo(2 + 7 * 0.06, 9);
  });

  it('fills a step with no estimate from its kind’s known figures, never from another kind', () => {
    const seconds = filledSeconds([
      {
        key: 'a',
        kind: 'kem',
        stages: [
          {
            lane: 'pool',
            steps: [
              { name: 'prepare', estimate: { seconds: 4, source: 'previous' } },
              { name: 'measure', estimate: { seconds: 100, source: 'plan' } },
            ],
          },
        ],
      },
    ]);
    expect(seconds('prepare', { source: 'none' })).toBe(4);
    expect(seconds('ct', { source: 'none' })).toBe(2);
    expect(seconds('measure', { seconds: 0, source: 'kept' })).toBe(0);
  });

  it('scales what is left by how its own step and category went, and replaces a guess by what was seen', () => {
    const left = remainingSeconds([
      { step: 'measure', kind: 'hash', source: 'plan', expected: 10, actual: 20 },
      { step: 'measure', kind: 'hash', source: 'plan', expected: 10, actual: 20 },
      { step: 'prepare', kind: 'hash', source: 'none', expected: 2, actual: 11 },
      { step: 'prepare', kind: 'hash', source: 'none', expected: 2, actual: 9 },
      { step: 'prepare', kind: 'hash', source: 'none', expected: 2, actual: 30 },
    ]);
    // A hash's measure ran twice its plan: the rest of the hashes' too. The builds' 5× says nothing of profiles.
    expect(left('measure', { seconds: 5, source: 'plan' }, 5, 'hash')).toBe(10);
    expect(left('profile', { seconds: 3, source: 'plan' }, 3, 'hash')).toBe(3);
    // Nor the hashes of the KEMs, which keep their plan and their guess until some are seen.
    expect(left('measure', { seconds: 5, source: 'plan' }, 5, 'kem')).toBe(5);
    expect(left('prepare', { source: 'none' }, 2, 'kem')).toBe(2);
    // A hash's build with no estimate takes the median of those seen.
    expect(left('prepare', { source: 'none' }, 2, 'hash')).toBe(11);
    // What the previous run's figures say carries over: a run that rebuilds nothing builds every category fast.
    const rerun = remainingSeconds([{ step: 'prepare', kind: 'hash', source: 'previous', expected: 20, actual: 5 }]);
    expect(rerun('prepare', { seconds: 8, source: 'previous' }, 8, 'kem')).toBe(2);
    expect(rerun('prepare', { seconds: 8, source: 'plan' }, 8, 'kem')).toBe(8);
    // An adaptive plan's trials are as many as this machine's noise wants, in every category: the
    // hashes' 4× carries to the KEMs' adaptive measure, not to a fixed plan's, nor to the previous run's figures.
    const noisy = remainingSeconds([{ step: 'measure', kind: 'hash', source: 'plan', machineBound: true, expected: 10, actual: 40 }]);
    expect(noisy('measure', { seconds: 6, source: 'plan', machineBound: true }, 6, 'kem')).toBe(24);
    expect(noisy('measure', { seconds: 6, source: 'plan' }, 6, 'kem')).toBe(6);
    expect(noisy('measure', { seconds: 6, source: 'previous' }, 6, 'kem')).toBe(6);
    expect(rerun('measure', { seconds: 6, source: 'plan', machineBound: true }, 6, 'kem')).toBe(6);
    // A step with little behind it is scaled only part of the way.
    const early = remainingSeconds([{ step: 'profile', kind: 'kem', source: 'plan', expected: 1, actual: 3 }]);
    expect(early('profile', { seconds: 1, source: 'plan' }, 1, 'kem')).toBeCloseTo(1 + 0.1 * 2, 9);
  });
});

describe('the plan of a run from the previous run', () => {
  it('plans a forced rerun of unchanged sources without the compiles it finds on disk; an unchanged run keeps its evidence', async () => {
    const campaign = goodKemCampaign(['a'], 'planning:\n  trials: 3\n  trial_target_s: 0.01\nprofile:\n  target_s: 0.02\n  rounds: 2\n');
    const data = tempDir();
    const run = (...extra: string[]) =>
      runCli(['run', campaign, '--system', 's', '--out', data, '--phases', 'build,kat,profile', ...extra]);
    const planLine = (progress: string, step: string) =>
      progress.split('\n').find((l) => new RegExp(` {2}${step} +\\S`).test(l) && !l.includes('→'));
    const shown = (s: number) => formatSeconds(s).replace('.', '\\.');
    expect((await run()).code).toBe(0);
    const seconds = () =>
      (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/a']!.step_seconds!;
    const first = seconds();
    // The KAT is part of the preparation, the wrapped relink part of the profile's preparation.
    expect(first[KAT_SECONDS]).toBeGreaterThan(0);
    expect(first[KAT_SECONDS]).toBeLessThanOrEqual(first.prepare!);
    expect(first[RELINK_SECONDS]).toBeGreaterThan(0);
    expect(first[RELINK_SECONDS]).toBeLessThanOrEqual(first['profile-build']!);
    // --force finds the library and the relink on disk: the KAT again, and the survey without the relink.
    const forced = await run('--force');
    expect(forced.code).toBe(0);
    expect(planLine(forced.progress, 'prepare')).toMatch(new RegExp(` ${shown(first[KAT_SECONDS]!)} +\\(1 previous run\\)`));
    const rest = Math.max(0, first['profile-build']! - first[RELINK_SECONDS]!);
    expect(planLine(forced.progress, 'profile-build')).toMatch(new RegExp(` ${shown(rest)} +\\(1 previous run\\)`));
    // Without --force, the unchanged instance keeps its evidence.
    expect(planLine((await run()).progress, 'prepare')).toMatch(/\(1 kept if unchanged\)/);
  });
});
