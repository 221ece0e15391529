import { describe, expect, it } from 'vitest';
import { planSchema } from './helpers/planning.js';
import { planTrials } from '../src/measure/plan.js';
import { deriveStatistics } from '../src/measure/stats.js';

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
});
