import { describe, expect, it } from 'vitest';
import { planSchema } from './helpers/planning.js';
import { planTrials } from '../src/measure/plan.js';
import { deriveStatistics } from '../src/measure/stats.js';
import { pairedMdePct, signedRankPValue } from '../src/compare/stats.js';
import { interquartileRange } from 'simple-statistics';

describe('derived statistics', () => {
  // The first golden ngcc-harness record (kem-09 Cheetah128 keygen) with its published results.
  const trials = [
    { measurements: 6050, seconds: 0.549541822, cycles: 1480856633 },
    { measurements: 6050, seconds: 0.545478906, cycles: 1469918770 },
    { measurements: 6050, seconds: 0.545641406, cycles: 1470439078 },
    { measurements: 6050, seconds: 0.545802187, cycles: 1470883672 },
    { measurements: 6050, seconds: 0.546199322, cycles: 1472136901 },
  ];

  it('reproduces the ngcc-harness numbers', () => {
    const s = deriveStatistics(trials);
    expect(s.measurements).toBe(30250);
    expect(s.mean_cycles).toBeCloseTo(243445.7869090909, 6);
    expect(s.median_trial_cycles).toBeCloseTo(243121.26809917355, 6);
    expect(s.mean_seconds).toBeCloseTo(9.033598819834711e-5, 15);
    expect(s.median_trial_seconds).toBeCloseTo(9.021523752066117e-5, 15);
    expect(s.operations_per_second).toBeCloseTo(11069.785363994028, 6);
    expect(s.guide_100_measurements_met).toBe(true);
    expect(s.per_call_cycles).toBeNull();
  });

  it('takes the median of per-call quartiles across trials', () => {
    const q = (m: number) => ({ n: 10, min: m - 5, q1: m - 1, median: m, q3: m + 1, max: m + 5 });
    const s = deriveStatistics([
      { ...trials[0]!, per_call_cycles: q(100) },
      { ...trials[1]!, per_call_cycles: q(300) },
      { ...trials[2]!, per_call_cycles: q(200) },
    ]);
    expect(s.per_call_cycles).toEqual({ q1: 199, median: 200, q3: 201 });
  });
});

describe('trial planning', () => {
  it('fills the trial target', () => {
    const p = planTrials(1e-4, planSchema({ trial_target_s: 1 }));
    expect(p.iterations_per_trial).toBe(10000);
    expect(p.estimated_s).toBeCloseTo(5 * 10003 * 1e-4, 6);
  });

  it('reaches the guide minimum of 100 calls for slow operations', () => {
    const p = planTrials(0.5, planSchema({ trial_target_s: 1, op_budget_s: 1000 }));
    expect(p.iterations_per_trial * p.trials).toBeGreaterThanOrEqual(100);
    expect(p.budget_limited).toBe(false);
  });

  it('lets the per-operation budget win over the minimum', () => {
    const p = planTrials(2, planSchema({ trial_target_s: 1, op_budget_s: 30 }));
    expect(p.iterations_per_trial).toBe(3);
    expect(p.budget_limited).toBe(true);
    const slowest = planTrials(100, planSchema({ op_budget_s: 30 }));
    expect(slowest.iterations_per_trial).toBe(1);
  });

  it('warms an operation slower than a trial up with one call, a faster one with the planned three', () => {
    const slow = planTrials(2, planSchema({ trial_target_s: 1, op_budget_s: 30 }));
    expect(slow.warmups).toBe(1);
    expect(slow.estimated_s).toBeCloseTo(5 * (3 + 1) * 2, 6);
    expect(planTrials(0.5, planSchema({ trial_target_s: 1, op_budget_s: 1000 })).warmups).toBe(3);
  });

  it('gives a timing process process_timeout_s plus three times its planned calls and warm-ups before it is killed', () => {
    const p = planTrials(1e-4, planSchema({ trial_target_s: 1, process_timeout_s: 300 }));
    expect(p.timeout_per_process_s).toBeCloseTo(300 + 3 * (p.iterations_per_trial + p.warmups) * 1e-4, 9);
    const slow = planTrials(2, planSchema({ trial_target_s: 1, op_budget_s: 30, process_timeout_s: 60 }));
    expect(slow.timeout_per_process_s).toBeCloseTo(60 + 3 * (3 + 1) * 2, 9);
  });
});

describe('the minimum detectable effect of trial pairs (compare/stats.ts pairedMdePct)', () => {
  const seeded = (seed: number) => {
    let s = seed >>> 0;
    return () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return (s + 0.5) / 2 ** 32;
    };
  };
  const normal = (rand: () => number) => Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
  /** n normal draws rescaled so that IQR / 1.349 is exactly `sd`. */
  const sampleWithSd = (rand: () => number, n: number, sd: number) => {
    const raw = Array.from({ length: n }, () => normal(rand));
    return raw.map((x) => (x * 1.349 * sd) / interquartileRange(raw));
  };

  it("is the paired t-test's (t₁₋α/₂ + t₀.₈) · sd / √n, widened by the signed-rank test's efficiency 3/π", () => {
    // t(0.995; 11) = 3.106 and t(0.80; 11) = 0.876 from a printed table of Student's t.
    const logRatios = sampleWithSd(seeded(3), 12, 0.02);
    const want = (Math.exp(((3.106 + 0.876) * 0.02) / Math.sqrt((12 * 3) / Math.PI)) - 1) * 100;
    expect(pairedMdePct(logRatios, 0.01)).toBeCloseTo(want, 1);
  });

  it('is undefined where the pairs cannot reach the significance level at all (2/2^n > alpha)', () => {
    expect(pairedMdePct([0.01, -0.01, 0.02, 0, 0.01, 0.03, -0.02], 0.01)).toBeUndefined();
    expect(pairedMdePct([0.01, -0.01, 0.02, 0, 0.01, 0.03, -0.02, 0.01], 0.01)).toBeDefined();
  });

  it('is the effect the signed-rank test then finds in about 80 % of samples of 16 pairs, where no effect is found in about 1 %', () => {
    const rand = seeded(7);
    const n = 16;
    const sd = 0.02;
    const effect = Math.log(1 + pairedMdePct(sampleWithSd(rand, n, sd), 0.01)! / 100);
    const runs = 400;
    let found = 0;
    let falseAlarms = 0;
    for (let i = 0; i < runs; i++) {
      const noise = Array.from({ length: n }, () => normal(rand) * sd);
      if (signedRankPValue(noise.map((x) => x + effect)) <= 0.01) found++;
      if (signedRankPValue(noise) <= 0.01) falseAlarms++;
    }
    expect(found / runs).toBeGreaterThan(0.7);
    expect(found / runs).toBeLessThan(0.9);
    expect(falseAlarms / runs).toBeLessThan(0.03);
  });
});
