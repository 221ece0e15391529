import { gammaln } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import { callPlanStands, planCalls, planDone, plannedInCalls, planSizing, planTrials, secondCalibration } from '../src/measure/plan.js';
import { ci95Relative, precisionOf, tQuantile975 } from '../src/measure/precision.js';
import type { Trial } from '../src/measure/stats.js';
import { planSchema } from './helpers/planning.js';

/**
 * An independent t(0.975, df): Student's density integrated by Simpson's rule from 0, and the
 * point where the integral reaches 0.475 found by bisection.
 */
function tQuantileByIntegration(df: number): number {
  const logC = gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * Math.log(df * Math.PI);
  const pdf = (x: number) => Math.exp(logC - ((df + 1) / 2) * Math.log1p((x * x) / df));
  const cdfAbove0 = (t: number) => {
    const n = 4000;
    const h = t / n;
    let s = pdf(0) + pdf(t);
    for (let i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * pdf(i * h);
    return (s * h) / 3;
  };
  let [lo, hi] = [0, 20];
  for (let k = 0; k < 50; k++) {
    const mid = (lo + hi) / 2;
    if (cdfAbove0(mid) < 0.475) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

const trial = (seconds: number, extra: Partial<Trial> = {}): Trial => ({ measurements: 10, seconds: 10 * seconds, cycles: 0, ...extra });

describe('t(0.975, df)', () => {
  it('is the published critical value: t(0.975, 2) = 4.303, t(0.975, 9) = 2.262', () => {
    expect(tQuantile975(2)).toBe(4.303);
    expect(tQuantile975(9)).toBe(2.262);
  });

  it('matches the closed forms of one and two degrees of freedom', () => {
    // df 1 is Cauchy: tan(π(p − ½)); df 2: (2p − 1)·sqrt(2 / (4p(1 − p))).
    expect(tQuantile975(1)).toBeCloseTo(Math.tan(Math.PI * 0.475), 3);
    expect(tQuantile975(2)).toBeCloseTo(0.95 * Math.sqrt(2 / (4 * 0.975 * 0.025)), 3);
  });

  it('agrees with the integrated density at every df of the table and between its rows', () => {
    for (const df of [3, 4, 5, 7, 10, 15, 20, 29, 30, 35, 45, 55, 70, 90, 100, 150, 500, 10_000])
      expect(Math.abs(tQuantile975(df) - tQuantileByIntegration(df)), `df ${df}`).toBeLessThan(6e-4);
  });

  it('refuses a degree of freedom that is no positive integer', () => {
    expect(() => tQuantile975(0)).toThrow(RangeError);
    expect(() => tQuantile975(2.5)).toThrow(RangeError);
  });
});

describe('the 95 % interval of the mean per call', () => {
  it('is t·s/√n over the mean', () => {
    // 1, 2, 3: mean 2, s = 1, 4.303 / √3 / 2.
    expect(ci95Relative([1, 2, 3])).toBeCloseTo(4.303 / Math.sqrt(3) / 2, 12);
    expect(ci95Relative([5, 5, 5, 5])).toBe(0);
    expect(ci95Relative([5])).toBeUndefined();
  });

  it('reaches ±1 % in 5 trials where one trial varies by 0.8 %, and in 27 where it varies by 2.5 %', () => {
    // The fewest n with t(0.975, n − 1) · CV / √n ≤ 1 %.
    const trialsFor = (cv: number) => {
      let n = 2;
      while (tQuantile975(n - 1) * (cv / Math.sqrt(n)) > 0.01) n++;
      return n;
    };
    expect(trialsFor(0.008)).toBe(5);
    expect(trialsFor(0.025)).toBe(27);
    // The same with real trials: five whose per-call means vary by 0.8 % (sample sd over mean) meet ±1 %.
    const z = [-1.2649, -0.6325, 0, 0.6325, 1.2649]; // sample sd 1
    const five = z.map((x) => 1e-6 * (1 + 0.008 * x));
    expect(ci95Relative(five)).toBeLessThanOrEqual(0.01);
    expect(ci95Relative(five.slice(0, 4))).toBeGreaterThan(0.01);
  });

  it('leaves disturbed trials out, and an adaptive rule is met only with its trials, calls and target', () => {
    const rule = { ci_target: 0.01, min_trials: 3, max_trials: 30, min_calls: 30 };
    const tight = [trial(1e-6), trial(1.001e-6), trial(0.999e-6)];
    const met = precisionOf(tight, { adaptive: rule });
    expect(met).toMatchObject({ mode: 'adaptive', trials: 3, target: 0.01, met: true });
    expect(met.ci95_rel).toBeCloseTo(ci95Relative([1e-6, 1.001e-6, 0.999e-6])!, 12);
    // A disturbed trial twice as slow changes nothing; without it, two trials are too few.
    const disturbed = [...tight, trial(2e-6, { disturbed: 'clock 50 % of fixed' })];
    expect(precisionOf(disturbed, { adaptive: rule })).toEqual(met);
    expect(precisionOf(tight.slice(0, 2), { adaptive: rule }).met).toBe(false);
    // Too few calls (10 per trial, 40 wanted), then a target the spread cannot meet.
    expect(precisionOf(tight, { adaptive: { ...rule, min_calls: 40 } }).met).toBe(false);
    expect(precisionOf(tight, { adaptive: { ...rule, ci_target: 1e-4 } }).met).toBe(false);
    // A fixed plan records its precision without target or verdict.
    expect(precisionOf(tight, null)).toEqual({ mode: 'fixed', ci95_rel: met.ci95_rel, trials: 3 });
    expect(precisionOf([], undefined)).toEqual({ mode: 'fixed', ci95_rel: null, trials: 0 });
  });
});

describe('planning', () => {
  it('the fixed plan stays the guide’s trials × trial_target_s, with no adaptive rule', () => {
    const plan = planTrials(1e-4, planSchema({}));
    expect(plan).toMatchObject({ trials: 5, iterations_per_trial: 10_000, budget_limited: false });
    expect(plan.adaptive).toBeUndefined();
  });

  it('the adaptive plan: short trials up to max_trials, its rule kept; the budget caps the trials', () => {
    const adaptive = { enabled: true, nightly: true, ci_target: 0.01, min_trials: 5, max_trials: 30, trial_target_s: 0.1 };
    const plan = planTrials(1e-4, planSchema({ adaptive }));
    expect(plan).toMatchObject({ trials: 30, iterations_per_trial: 1000, budget_limited: false });
    expect(plan.adaptive).toEqual({ ci_target: 0.01, min_trials: 5, max_trials: 30, min_calls: 100 });
    // 10 ms a call: 10 calls fill a trial; 60 s of budget hold all 30 trials.
    expect(planTrials(0.01, planSchema({ adaptive }))).toMatchObject({ trials: 30, iterations_per_trial: 10 });
    // A 1 s budget: 5 trials of 0.1 s would fit twice over, but 30 would not.
    expect(planTrials(1e-4, planSchema({ adaptive, op_budget_s: 1 }))).toMatchObject({ trials: 10, iterations_per_trial: 1000 });
    // 0.5 s a call and 1 s of budget: 2 calls in all, below the guide's 100.
    expect(planTrials(0.5, planSchema({ adaptive, op_budget_s: 1 }))).toMatchObject({
      trials: 2,
      iterations_per_trial: 1,
      budget_limited: true,
    });
  });
});

describe('slow operations, planned in calls', () => {
  const defaults = planSchema({});
  /** One trial of one call of `s` seconds. */
  const call = (s: number, extra: Partial<Trial> = {}): Trial => ({ measurements: 1, seconds: s, cycles: 0, ...extra });
  /** How many calls the plan makes of these per-call figures: it stops where planDone says so. */
  const callsMade = (plan: ReturnType<typeof planCalls>, figures: number[]): number => {
    let n = 0;
    while (
      n < figures.length &&
      !planDone(
        plan,
        n,
        figures.slice(0, n).map((s) => call(s)),
      )
    )
      n++;
    return n;
  };
  /** The interval of these calls, worked out here: t(0.975, n − 1) · s / √n over the mean. */
  const interval = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
    return (tQuantile975(xs.length - 1) * sd) / Math.sqrt(xs.length) / m;
  };

  it('a 343-s keygen: three calls of one process each, the floor winning over the 60-s budget', () => {
    const plan = planCalls(343, defaults);
    expect(plan).toMatchObject({ iterations_per_trial: 1, warmups: 1, trials: 3, budget_limited: true });
    expect(plan.calls).toEqual({ ci_target: 0.01, min_calls: 3, max_calls: 3 });
    expect(plan.estimated_s).toBe(3 * 2 * 343);
    // Against the trial plans: the fixed one's 5 trials of a warm-up and a call, the adaptive one's single trial.
    expect(planTrials(343, defaults)).toMatchObject({ trials: 5, iterations_per_trial: 1, warmups: 1 });
    const adaptive = planSchema({
      adaptive: { enabled: true, nightly: true, ci_target: 0.01, min_trials: 5, max_trials: 30, trial_target_s: 0.1 },
    });
    expect(planTrials(343, adaptive)).toMatchObject({ trials: 1, iterations_per_trial: 1, warmups: 1 });
    // 2 s a call, each process a warm-up and a call: the 60-s budget holds 15 of them, a 20-s one 5;
    // a 10-s budget still the floor's 3.
    expect(planCalls(2, defaults).calls).toMatchObject({ max_calls: 15 });
    expect(planCalls(2, planSchema({ op_budget_s: 20 })).calls).toMatchObject({ max_calls: 5 });
    expect(planCalls(2, planSchema({ op_budget_s: 10 })).calls).toMatchObject({ max_calls: 3 });
    // Without warm-ups, the budget holds the calls alone.
    expect(planCalls(2, planSchema({ warmups: 0 }))).toMatchObject({ warmups: 0, calls: { max_calls: 30 } });
  });

  it('makes the fewest calls whose interval is within the target, never fewer than three', () => {
    const plan = planCalls(2, defaults);
    // Two calls that agree exactly: no stop before the floor.
    expect(callsMade(plan, [2, 2, 2, 2, 2])).toBe(3);
    // Calls that spread 1.5 % at first, then settle: the first n whose interval is within 1 %.
    const figures = [2, 2.03, 1.99, 2.01, 2.0, 2.005, 1.995, 2.0, 2.0, 2.0];
    const fewest = figures.findIndex((_, i) => i >= 2 && interval(figures.slice(0, i + 1)) <= 0.01) + 1;
    expect(fewest).toBeGreaterThan(3);
    expect(interval(figures.slice(0, fewest - 1))).toBeGreaterThan(0.01);
    expect(callsMade(plan, figures)).toBe(fewest);
    // Calls that never agree within 1 %: as many as the budget holds.
    const noisy = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 1.8 : 2.2));
    expect(callsMade(plan, noisy)).toBe(15);
  });

  it('states its precision in calls: disturbed calls left out, the floor and the target both needed', () => {
    const rule = planCalls(2, defaults);
    const three = [call(2), call(2.002), call(1.998)];
    expect(precisionOf(three, rule)).toMatchObject({ mode: 'calls', trials: 3, target: 0.01, met: true });
    expect(precisionOf([...three.slice(0, 2), call(4, { disturbed: 'off the CPU' })], rule).met).toBe(false);
    expect(precisionOf([call(2), call(2.2), call(1.8)], rule)).toMatchObject({ mode: 'calls', met: false });
  });

  it('is chosen from call_plan_s (1 s) on, and sized by the KAT’s figure with no calibration call', () => {
    expect(plannedInCalls(0.99, defaults)).toBe(false);
    expect(plannedInCalls(1, defaults)).toBe(true);
    // The KAT timed the call: it sizes the plan, and nothing is calibrated.
    expect(planSizing(343, defaults)).toEqual({ kat: 343 });
    expect(planSizing(1, defaults)).toEqual({ kat: 1 });
    // The KAT's longest call was fast: the calibration as before, its one call after one warm-up.
    expect(planSizing(1e-4, defaults)).toEqual({ warmups: 1 });
    // No figure: one call, without a warm-up that could be a second slow call.
    expect(planSizing(undefined, defaults)).toEqual({ warmups: 0 });
  });

  it('calibrates at most one slow call: a second, warm process only below call_plan_s', () => {
    // Shorter than a trial: five warm calls, as before call plans, whether the first call was cold or not.
    expect(secondCalibration(1e-4, 1, defaults, true)).toBe(5);
    expect(secondCalibration(1e-4, 1, defaults, false)).toBe(5);
    // A trial or more, not slow: one warm call after a cold one; none after a warm one.
    expect(secondCalibration(0.5, 0.1, defaults, true)).toBe(1);
    expect(secondCalibration(0.5, 0.1, defaults, false)).toBe(0);
    // Slow: none, whatever the trial target.
    expect(secondCalibration(343, 1, defaults, true)).toBe(0);
    expect(secondCalibration(0.5, 5, planSchema({ call_plan_s: 0.2 }), true)).toBe(0);
    expect(secondCalibration(0.1, 5, planSchema({ call_plan_s: 0.2 }), true)).toBe(5);
  });

  it('gives way to trials when a call it ran proves fast, under half of call_plan_s', () => {
    expect(callPlanStands(call(0.6), defaults)).toBe(true);
    expect(callPlanStands(call(0.4), defaults)).toBe(false);
    expect(callPlanStands(call(0.4), planSchema({ call_plan_s: 0.5 }))).toBe(true);
  });
});
