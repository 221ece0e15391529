import type { Trial } from './stats.js';

/**
 * Two-sided 95 % critical values of Student's t, t(0.975, df), from the NIST/SEMATECH e-Handbook of
 * Statistical Methods, section 1.3.6.7.2 "Critical Values of the Student's t Distribution"
 * (https://www.itl.nist.gov/div898/handbook/eda/section3/eda3672.htm), three decimals as printed
 * there. Every df up to 30, then the rows between which 1/df is interpolated.
 */
const T975: ReadonlyArray<readonly [number, number]> = [
  [1, 12.706],
  [2, 4.303],
  [3, 3.182],
  [4, 2.776],
  [5, 2.571],
  [6, 2.447],
  [7, 2.365],
  [8, 2.306],
  [9, 2.262],
  [10, 2.228],
  [11, 2.201],
  [12, 2.179],
  [13, 2.16],
  [14, 2.145],
  [15, 2.131],
  [16, 2.12],
  [17, 2.11],
  [18, 2.101],
  [19, 2.093],
  [20, 2.086],
  [21, 2.08],
  [22, 2.074],
  [23, 2.069],
  [24, 2.064],
  [25, 2.06],
  [26, 2.056],
  [27, 2.052],
  [28, 2.048],
  [29, 2.045],
  [30, 2.042],
  [40, 2.021],
  [50, 2.009],
  [60, 2.0],
  [80, 1.99],
  [100, 1.984],
];
/** The normal quantile, the limit as df grows. */
const Z975 = 1.96;

/**
 * t(0.975, df). Between the table's rows the quantile is close to linear in 1/df (the first term of
 * its expansion about the normal), so interpolating in 1/df stays within the table's rounding.
 */
export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`degrees of freedom must be a positive integer, not ${df}`);
  const exact = T975.find(([d]) => d === df);
  if (exact) return exact[1];
  const upper = T975.findIndex(([d]) => d > df);
  const [d0, t0] = T975[upper === -1 ? T975.length - 1 : upper - 1]!;
  const [d1, t1] = upper === -1 ? [Number.POSITIVE_INFINITY, Z975] : T975[upper]!;
  const [x0, x1, x] = [1 / d0, 1 / d1, 1 / df];
  return t0 + ((t1 - t0) * (x - x0)) / (x1 - x0);
}

/**
 * Half-width of the 95 % confidence interval of the mean of `xs` relative to that mean (Student t
 * with n − 1 degrees of freedom): 0.01 means the interval is the mean ± 1 %. Undefined below two
 * values or with a mean of zero.
 */
export function ci95Relative(xs: readonly number[]): number | undefined {
  const n = xs.length;
  if (n < 2) return undefined;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (!(mean > 0)) return undefined;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
  return (tQuantile975(n - 1) * Math.sqrt(variance / n)) / mean;
}

/** The stopping rule of an adaptive plan, as its record keeps it (Plan.adaptive). */
export interface AdaptiveRule {
  /** Half-width of the 95 % interval of the mean per call, relative to the mean, at which trials stop. */
  ci_target: number;
  /** Undisturbed trials needed before the rule may stop. */
  min_trials: number;
  /** Trials at most (the plan's `trials`, unless the budget allows fewer). */
  max_trials: number;
  /** Undisturbed timed calls needed before the rule may stop (planning.min_measurements, the guide's 100). */
  min_calls: number;
}

/**
 * The stopping rule of a plan stated in calls (Plan.calls, measure/plan.ts planCalls): each trial is
 * one call, and calls run until the adaptive rule's interval is within ci_target.
 */
export interface CallRule {
  /** Half-width of the 95 % interval of the mean per call, relative to the mean, at which calls stop. */
  ci_target: number;
  /** Undisturbed calls needed before the rule may stop (CALL_PLAN_MIN_CALLS). */
  min_calls: number;
  /** Calls at most: as many as op_budget_s holds, never fewer than min_calls (the plan's `trials`). */
  max_calls: number;
}

/** A record's `precision`: what the trials say about the mean, and for an adaptive plan or one in calls whether its target was met. */
export interface Precision {
  mode: 'fixed' | 'adaptive' | 'calls';
  /** ci95Relative of the per-call seconds of the undisturbed trials; null below two of them. */
  ci95_rel: number | null;
  /** The undisturbed trials it was computed from. */
  trials: number;
  /** Adaptive or in calls: the rule's ci_target. */
  target?: number;
  /** Adaptive or in calls: the rule's stop condition held on these trials. */
  met?: boolean;
}

/**
 * The precision of an operation's trials under its plan: the one definition the adaptive stop,
 * the record and `validate` share. A disturbed trial (kept after its re-runs) says how the core was
 * shared, not how long the code takes: it counts towards neither the interval nor the minimums.
 */
export function precisionOf(trials: readonly Trial[], plan: { adaptive?: AdaptiveRule; calls?: CallRule } | null | undefined): Precision {
  const counted = trials.filter((t) => !t.disturbed && t.measurements > 0);
  const rel = ci95Relative(counted.map((t) => t.seconds / t.measurements)) ?? null;
  const inCalls = plan?.calls;
  if (inCalls) {
    // One call a trial: the undisturbed trials are the calls counted.
    const met = rel !== null && rel <= inCalls.ci_target && counted.length >= inCalls.min_calls;
    return { mode: 'calls', ci95_rel: rel, trials: counted.length, target: inCalls.ci_target, met };
  }
  const rule = plan?.adaptive;
  if (!rule) return { mode: 'fixed', ci95_rel: rel, trials: counted.length };
  const calls = counted.reduce((a, t) => a + t.measurements, 0);
  const met = rel !== null && rel <= rule.ci_target && counted.length >= rule.min_trials && calls >= rule.min_calls;
  return { mode: 'adaptive', ci95_rel: rel, trials: counted.length, target: rule.ci_target, met };
}
