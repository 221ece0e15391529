import { CALL_PLAN_MIN_CALLS } from '../config/defaults.js';
import type { Planning } from '../config/schemas.js';
import { type AdaptiveRule, type CallRule, precisionOf } from './precision.js';
import type { Trial } from './stats.js';

export interface Plan {
  iterations_per_trial: number;
  warmups: number;
  trials: number;
  separate_processes: true;
  estimated_s: number;
  timeout_per_process_s: number;
  calibration_seconds_per_call: number;
  /** True when the per-operation budget forced fewer calls than the guide's minimum. */
  budget_limited: boolean;
  /**
   * An adaptive plan's stopping rule: `trials` is then the most it runs, and it stops earlier once
   * precisionOf says the rule is met. Absent on the fixed plan.
   */
  adaptive?: AdaptiveRule;
  /**
   * A plan stated in calls (planCalls): each trial is one call, `trials` the most it may run, and it
   * stops once precisionOf says the rule is met. Absent on the other plans.
   */
  calls?: CallRule;
  /** `kat`: the KAT's longest call sized the plan (calibration_seconds_per_call), and no calibration ran. */
  sized_by?: 'kat';
}

/**
 * Calls of the second calibration process, whose median per-call time plans the trials: one call
 * can mislead (a signature's rejection loop may end early or late; ML-DSA-44 sign took 118.7 µs
 * against a mean of 266 µs). Operations slower than a trial's target keep the single call.
 */
const CALIBRATION_CALLS = 5;

/** Seconds per call of a calibration trial: its median call, else its mean. */
export function calibrationSecondsPerCall(t: Trial): number {
  // A key-exchange step costs a whole exchange per call, though only the step is counted.
  if (t.loop_s !== undefined) return t.loop_s / t.measurements;
  const hz = t.cycles / t.seconds;
  return t.per_call_cycles && hz > 0 ? t.per_call_cycles.median / hz : t.seconds / t.measurements;
}

/**
 * Warm-up calls before a trial's timed loop: the planning's, except for an operation slower than a
 * trial's target, where one call already warms caches and pages, and three would triple the cost of
 * an operation that takes minutes.
 */
const warmupsFor = (secondsPerCall: number, trialTarget: number, warmups: number): number =>
  secondsPerCall >= trialTarget ? Math.min(warmups, 1) : warmups;

/**
 * Iterations per trial so that a trial lasts about trial_target_s, at least min_measurements
 * calls in total, and the whole operation within op_budget_s (the budget wins over the minimum).
 */
export function planTrials(secondsPerCall: number, p: Planning): Plan {
  if (p.adaptive?.enabled) return planAdaptive(secondsPerCall, p);
  const t = Math.max(secondsPerCall, 1e-9);
  const forTarget = Math.max(1, Math.round(p.trial_target_s / t));
  const forMinimum = Math.ceil(p.min_measurements / p.trials);
  let iterations = Math.max(forTarget, forMinimum);
  const budgetIterations = Math.max(1, Math.floor(p.op_budget_s / (p.trials * t)));
  const budget_limited = iterations > budgetIterations;
  iterations = Math.min(iterations, budgetIterations);
  const warmups = warmupsFor(t, p.trial_target_s, p.warmups);
  const perProcess = (iterations + warmups) * t;
  return {
    iterations_per_trial: iterations,
    warmups,
    trials: p.trials,
    separate_processes: true,
    estimated_s: p.trials * perProcess,
    // Generous: a trial is killed only when something is clearly wrong, never for noise.
    timeout_per_process_s: p.process_timeout_s + 3 * perProcess,
    calibration_seconds_per_call: secondsPerCall,
    budget_limited,
  };
}

/**
 * The adaptive plan: trials of adaptive.trial_target_s, as many as the rule needs up to max_trials.
 * Enough calls per trial that max_trials reach min_measurements, and few enough that min_trials fit
 * op_budget_s; the budget then caps the number of trials.
 */
function planAdaptive(secondsPerCall: number, p: Planning): Plan {
  const a = p.adaptive;
  const t = Math.max(secondsPerCall, 1e-9);
  const forTarget = Math.max(1, Math.round(a.trial_target_s / t));
  const forMinimum = Math.ceil(p.min_measurements / a.max_trials);
  const budgetIterations = Math.max(1, Math.floor(p.op_budget_s / (a.min_trials * t)));
  const iterations = Math.min(Math.max(forTarget, forMinimum), budgetIterations);
  const trials = Math.max(1, Math.min(a.max_trials, Math.floor(p.op_budget_s / (iterations * t))));
  const warmups = warmupsFor(t, a.trial_target_s, p.warmups);
  const perProcess = (iterations + warmups) * t;
  return {
    iterations_per_trial: iterations,
    warmups,
    trials,
    separate_processes: true,
    estimated_s: trials * perProcess,
    timeout_per_process_s: p.process_timeout_s + 3 * perProcess,
    calibration_seconds_per_call: secondsPerCall,
    budget_limited: iterations * trials < p.min_measurements,
    adaptive: { ci_target: a.ci_target, min_trials: a.min_trials, max_trials: a.max_trials, min_calls: p.min_measurements },
  };
}

/** Whether an operation whose call takes `secondsPerCall` is planned in calls (planning.call_plan_s). */
export const plannedInCalls = (secondsPerCall: number, p: Planning): boolean => secondsPerCall >= p.call_plan_s;

/**
 * The plan of an operation whose call takes call_plan_s or more, stated in calls: one call a trial
 * process (after the one warm-up of a slow call), as few as the adaptive rule's ±ci_target needs,
 * CALL_PLAN_MIN_CALLS at least, and at most as many as op_budget_s holds. The floor wins over the
 * budget: fewer calls would state no interval at all.
 */
export function planCalls(secondsPerCall: number, p: Planning): Plan {
  const t = secondsPerCall;
  // A slow call's one warm-up (warmupsFor): its first call in a process pays for pages and caches once.
  const warmups = Math.min(p.warmups, 1);
  const perProcess = (1 + warmups) * t;
  // The budget holds the processes' warm-ups too.
  const most = Math.max(CALL_PLAN_MIN_CALLS, Math.floor(p.op_budget_s / perProcess));
  return {
    iterations_per_trial: 1,
    warmups,
    trials: most,
    separate_processes: true,
    estimated_s: most * perProcess,
    timeout_per_process_s: p.process_timeout_s + 3 * perProcess,
    calibration_seconds_per_call: secondsPerCall,
    budget_limited: most < p.min_measurements,
    calls: { ci_target: p.adaptive.ci_target, min_calls: CALL_PLAN_MIN_CALLS, max_calls: most },
  };
}

/**
 * How an operation's plan is sized before its trials: by the KAT's longest call when that reaches
 * call_plan_s, with no calibration call (the plan in calls needs only to know the call is slow, and
 * its budget how slow); else by a calibration process of one call, after a warm-up only where the
 * KAT's longest call was below call_plan_s: without its figure, a warm-up could be a second slow call.
 */
export function planSizing(katSecondsPerCall: number | undefined, p: Planning): { kat: number } | { warmups: 0 | 1 } {
  if (katSecondsPerCall !== undefined && katSecondsPerCall > 0 && plannedInCalls(katSecondsPerCall, p)) return { kat: katSecondsPerCall };
  return { warmups: katSecondsPerCall === undefined ? 0 : 1 };
}

/**
 * The calls of a second, warm calibration process after the first's one call, or 0. None for a call
 * of call_plan_s or more: a slow call runs once. CALIBRATION_CALLS for a call shorter than a trial's
 * target, as before call plans. One warm call after a cold first one (no KAT figure said the call was
 * fast): a first call in a fresh process pays for its pages, and would size a fast operation's trials
 * too short.
 */
export function secondCalibration(onceSeconds: number, trialTargetS: number, p: Planning, firstWasCold: boolean): number {
  if (onceSeconds >= p.call_plan_s) return 0;
  if (onceSeconds < trialTargetS) return CALIBRATION_CALLS;
  return firstWasCold ? 1 : 0;
}

/**
 * A plan in calls stands while its calls are slow. A call measured under half of call_plan_s (the
 * KAT's figure or the calibration overstated it: a cold first call, or a library that spun where it
 * was not timed) would sit in a window of its own, where the trusted half's 0.2 ms of slack per
 * window is a large part of it: the operation is planned in trials from that call instead.
 */
export const callPlanStands = (trial: Trial, p: Planning): boolean => calibrationSecondsPerCall(trial) >= p.call_plan_s / 2;

/**
 * An operation under `plan` needs no further trial after `ran` trial processes that gave `trials`:
 * it ran the most its plan allows, or (adaptive, or in calls) its stopping rule holds.
 */
export function planDone(plan: Plan, ran: number, trials: readonly Trial[]): boolean {
  if (ran >= plan.trials) return true;
  if (!plan.adaptive && !plan.calls) return false;
  return precisionOf(trials, plan).met === true;
}
