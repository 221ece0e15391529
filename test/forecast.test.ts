import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InstanceContext, PhaseStep, StepCore } from '../src/campaign/context.js';
import { laneOf } from '../src/campaign/dispatch.js';
import {
  filledSeconds,
  layout,
  longestFirst,
  plannedOperationSeconds,
  remainingSeconds,
  shardByCost,
  type UnitForecast,
} from '../src/campaign/forecast.js';
import { runSchedule, stagesOf } from '../src/campaign/schedule.js';
import { outcomeLines, RunTracker, WaitClock } from '../src/campaign/tracker.js';

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

  it('keeps a stage under way on its lane from the start, whatever the order', () => {
    // The second instance's preparation is under way: it ends at 1 s and its timing follows, while
    // the first prepares; laid out afresh, the first's 4 s would go before it (15 s).
    const first = {
      stages: [
        { lane: 'pool' as const, seconds: 4 },
        { lane: 'timing' as const, seconds: 1 },
      ],
    };
    const second = {
      stages: [
        { lane: 'pool' as const, seconds: 1 },
        { lane: 'timing' as const, seconds: 10 },
      ],
    };
    expect(layout([first, { ...second, running: true }], 1, 1).total).toBe(12);
    expect(layout([first, second], 1, 1).total).toBe(15);
  });

  it('serves the pool by the scheduler’s rule: preparation before profile rounds, the timing core fed', () => {
    // One worker, one timing core; each instance prepares (pool), is timed, then profiled (exclusive,
    // on the worker's core). Seconds of A, B, C, D's stages, in the order served:
    const unit3 = (prep: number, timing: number, profile: number) => ({
      stages: [
        { lane: 'pool' as const, kind: 'pool' as const, seconds: prep },
        { lane: 'timing' as const, kind: 'timing' as const, seconds: timing },
        { lane: 'pool' as const, kind: 'exclusive' as const, seconds: profile },
      ],
    });
    // 0–5 A prep; 5–6 A timing, 5–6 B prep; 6–10 B timing, 6–8 C prep; at 8 C waits for the timing
    // core and A's profile rounds could start, but D's preparation goes first (8–9), then A's
    // profile (9–15); 10–11 C timing, 11–16 D timing; 15–16 B, 16–17 C, 17–23 D profile. Taking A's
    // profile rounds at 8 would leave the timing core idle from 11 until D is prepared at 15 (26 s).
    expect(layout([unit3(5, 1, 6), unit3(1, 4, 1), unit3(2, 1, 1), unit3(1, 5, 6)], 1, 1).total).toBe(23);
  });
});

describe('the layout against the scheduler', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A small deterministic generator (a linear congruential one): the same cases every run. */
  const random = (seed: number) => () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const PATTERNS: Array<Array<StepCore | undefined>> = [
    [undefined, 'timing', undefined, 'exclusive'],
    [undefined, 'timing', 'exclusive', undefined, 'exclusive'],
    [undefined, 'timing', undefined, 'exclusive', undefined],
  ];

  it('predicts the scheduler’s wall time exactly when every stage takes what it was expected to', async () => {
    const next = random(14);
    for (let c = 0; c < 24; c++) {
      const pattern = PATTERNS[c % PATTERNS.length]!;
      const unitCount = 2 + Math.floor(next() * 4);
      const [workers, cores] = [1 + Math.floor(next() * 2), 1 + Math.floor(next() * 2)];
      const steps = pattern.map((core, i) => ({ name: `s${i}`, ...(core ? { core } : {}) }) as PhaseStep);
      const stages = stagesOf(steps);
      // Distinct powers of two on top of whole units: no two stages can ever end at the same moment,
      // so the order in which simultaneous ends are seen cannot matter.
      let bit = 0;
      const ms = Array.from({ length: unitCount }, () => stages.map(() => 2 ** 16 * (1 + Math.floor(next() * 9)) + 2 ** bit++));
      const units = ms.map((_, u) => ({ unit: { key: `u${u}` } }) as unknown as InstanceContext);
      vi.useFakeTimers();
      const started = Date.now();
      const run = runSchedule(units, stages, {
        workers,
        poolCpus: [0],
        cores,
        serial: false,
        onCore: (_ctx, _stage, _cpu, work) => work(),
        runStep: (ctx, step) => {
          const u = units.indexOf(ctx);
          const s = stages.findIndex((st) => st.steps.includes(step));
          return new Promise((resolve) => setTimeout(resolve, ms[u]![s]!));
        },
      });
      await vi.runAllTimersAsync();
      await run;
      const actual = (Date.now() - started) / 1000;
      vi.useRealTimers();
      const laid = ms.map((row) => ({
        stages: row.map((t, s) => ({ lane: laneOf(stages[s]!.kind, true), kind: stages[s]!.kind, seconds: t / 1000 })),
      }));
      expect(layout(laid, workers, cores).total, `case ${c}: ${unitCount} instances, ${workers} worker(s), ${cores} core(s)`).toBeCloseTo(
        actual,
        6,
      );
    }
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
            kind: 'pool',
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
    // What the previous run's figures say carries over: a run that rebuilds nothing builds every
    // category fast. A previous figure is one measurement: one step moves the rest a third of the
    // way, three all the way.
    const first = remainingSeconds([{ step: 'prepare', kind: 'hash', source: 'previous', expected: 20, actual: 5 }]);
    expect(first('prepare', { seconds: 8, source: 'previous' }, 8, 'kem')).toBeCloseTo(8 * (0.25 / 3 + 2 / 3), 9);
    const rerun = remainingSeconds(
      [20, 12, 16].map((expected) => ({ step: 'prepare', kind: 'hash', source: 'previous' as const, expected, actual: expected / 4 })),
    );
    expect(rerun('prepare', { seconds: 8, source: 'previous' }, 8, 'kem')).toBe(2);
    expect(rerun('prepare', { seconds: 8, source: 'plan' }, 8, 'kem')).toBe(8);
    // An adaptive plan's trials are as many as this machine's noise wants, in every category: the
    // hashes' 4× carries to the KEMs' adaptive measure, not to a fixed plan's, nor to the previous run's figures.
    const noisy = remainingSeconds([{ step: 'measure', kind: 'hash', source: 'plan', machineBound: true, expected: 10, actual: 40 }]);
    expect(noisy('measure', { seconds: 6, source: 'plan', machineBound: true }, 6, 'kem')).toBe(24);
    expect(noisy('measure', { seconds: 6, source: 'plan' }, 6, 'kem')).toBe(6);
    expect(noisy('measure', { seconds: 6, source: 'previous' }, 6, 'kem')).toBe(6);
    expect(rerun('measure', { seconds: 6, source: 'plan', machineBound: true }, 6, 'kem')).toBe(6);
    // One step disturbed (in this run or the last) among the others does not scale them: the median does.
    const disturbed = remainingSeconds([
      { step: 'measure', kind: 'sig', source: 'previous', expected: 65, actual: 27.8 },
      ...[10, 12, 8].map((expected) => ({ step: 'measure', kind: 'sig', source: 'previous' as const, expected, actual: expected })),
    ]);
    expect(disturbed('measure', { seconds: 20, source: 'previous' }, 20, 'sig')).toBe(20);
    // What the machine decides stays machine-wide when a category's own first step agrees with it:
    // twenty adaptive timing steps at 3× elsewhere, then one KEM's at 3× too, leave a KEM's at 3×.
    const elsewhere = Array.from({ length: 20 }, () => ({
      step: 'measure',
      kind: 'hash',
      source: 'plan' as const,
      machineBound: true,
      expected: 5,
      actual: 15,
    }));
    const agreeing = remainingSeconds([...elsewhere, { ...elsewhere[0]!, kind: 'kem', expected: 2, actual: 6 }]);
    expect(agreeing('measure', { seconds: 2, source: 'plan', machineBound: true }, 2, 'kem')).toBe(6);
    // Figures from different sources are not mixed: a plan's 4× says nothing of the previous run's figures.
    const mixed = remainingSeconds([
      ...[10, 10].map((expected) => ({ step: 'prepare', kind: 'hash', source: 'plan' as const, expected, actual: 4 * expected })),
      ...[10, 10, 10].map((expected) => ({ step: 'prepare', kind: 'hash', source: 'previous' as const, expected, actual: expected })),
    ]);
    expect(mixed('prepare', { seconds: 10, source: 'previous' }, 10, 'hash')).toBe(10);
    expect(mixed('prepare', { seconds: 10, source: 'plan' }, 10, 'hash')).toBe(40);
    // A step with little behind it is scaled only part of the way.
    const early = remainingSeconds([{ step: 'profile', kind: 'kem', source: 'plan', expected: 1, actual: 3 }]);
    expect(early('profile', { seconds: 1, source: 'plan' }, 1, 'kem')).toBeCloseTo(1 + 0.1 * 2, 9);
  });
});

describe('the ETA while steps run', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const planned = (name: string, seconds: number, machineBound = false) => ({
    name,
    estimate: { seconds, source: 'plan' as const, ...(machineBound ? { machineBound } : {}) },
  });
  const unitOf = (key: string, stages: UnitForecast['stages']): UnitForecast => ({ key, kind: 'kem', stages });

  it('counts only the step under way as partly done, not the stage’s finished steps again', () => {
    vi.useFakeTimers({ now: 0 });
    const tracker = new RunTracker(
      [
        unitOf('a', [
          { lane: 'pool', kind: 'pool', steps: [planned('prepare', 5), planned('profile-build', 5)] },
          { lane: 'timing', kind: 'timing', steps: [planned('measure', 10)] },
        ]),
      ],
      1,
      1,
    );
    expect(tracker.predictedWall).toBe(20);
    tracker.stageStarted('a');
    vi.advanceTimersByTime(5000);
    tracker.stepDone('a', 'prepare', 5, false);
    vi.advanceTimersByTime(2000);
    // 3 s of the survey left, then the timing.
    expect(tracker.eta()).toBeCloseTo(13, 6);
  });

  it('learns from a step that has outrun its estimate before it ends', () => {
    vi.useFakeTimers({ now: 0 });
    // Three instances with an adaptive timing plan of 10 s each (the fewest trials); the first one's
    // is still running after 30 s.
    const unit = (key: string) =>
      unitOf(key, [
        { lane: 'pool', kind: 'pool', steps: [planned('prepare', 1)] },
        { lane: 'timing', kind: 'timing', steps: [planned('measure', 10, true)] },
      ]);
    const tracker = new RunTracker([unit('a'), unit('b'), unit('c')], 1, 1);
    tracker.stageStarted('a');
    vi.advanceTimersByTime(1000);
    tracker.stepDone('a', 'prepare', 1, false);
    tracker.stageStarted('a');
    vi.advanceTimersByTime(5000);
    // Within its estimate, nothing is learnt yet: b and c prepare and time as planned after a's 5 s left.
    expect(tracker.eta()).toBeCloseTo(25, 6);
    vi.advanceTimersByTime(25_000);
    // 3× its estimate so far: a's own timing is taken to end now, b's and c's at 3× theirs.
    expect(tracker.eta()).toBeCloseTo(61, 6);
  });

  it('counts waits for a core apart: only a wait with no work of its own under way, and the forecast held to the rest', () => {
    vi.useFakeTimers({ now: 0 });
    const waits = new WaitClock();
    const tracker = new RunTracker(
      [
        unitOf('a', [{ lane: 'pool', kind: 'pool', steps: [planned('prepare', 2)] }]),
        unitOf('b', [{ lane: 'timing', kind: 'timing', steps: [planned('measure', 4)] }]),
      ],
      1,
      1,
      0,
      waits,
    );
    // b waits for the timing core while a prepares (2 s): that wait costs nothing.
    waits.waitStarted();
    waits.workStarted();
    vi.advanceTimersByTime(2000);
    waits.workEnded();
    // Then 50 s with nothing under way but the wait.
    vi.advanceTimersByTime(50_000);
    waits.waitEnded();
    waits.workStarted();
    vi.advanceTimersByTime(4000);
    waits.workEnded();
    const summary = tracker.summary();
    expect(summary).toMatchObject({ waits: 1, waited_s: 50, actual_wall_s: 6 });
    const lines = outcomeLines(summary);
    expect(lines.at(-3)).toMatch(/^ {2}wall time +4 s → +6 s \(1\.50×\), waits apart$/);
    expect(lines.at(-2)).toMatch(/^ {2}waits for a core +50 s \(1 wait: another process held the core; not forecast\)$/);
    expect(lines.at(-1)).toMatch(/^ {2}in all +56 s$/);
  });
});
