import type { CanaryTicks } from './canary.js';
import type { OsView } from './disturbance.js';
import { median } from 'simple-statistics';

/** The guide's minimum number of timed calls per operation (what guide_100_measurements_met means). */
export const GUIDE_MINIMUM = 100;

export interface Trial {
  measurements: number;
  seconds: number;
  cycles: number;
  /** Per-call cycle quantiles of this trial (one counter read per call boundary). */
  per_call_cycles?: { n: number; min: number; q1: number; median: number; q3: number; max: number };
  /** cycles / seconds as measured: below the fixed clock means the core was slowed. */
  clock_hz?: number;
  /** Key exchange: counter ticks and seconds of the whole loop of exchanges, of which `cycles` counts one span (measure/kexOperations.ts). */
  loop_cycles?: number;
  loop_s?: number;
  /** CPU seconds the kernel charged the driver's processes during the trial, read by the parent (measure/kernelCheck.ts). */
  kernel_cpu_s?: number;
  /** Seconds on the parent's clock between the driver's marks around the trial. */
  window_s?: number;
  /** Counter ticks the trusted half counted in the trial's windows (measure/trustedClock.ts). */
  trusted_cycles?: number;
  /** Seconds other processes held the core inside those windows, by the kernel's account (measure/trustedClock.ts). */
  trusted_wait_s?: number;
  /** What the OS said about the driver's thread over the loop (measure/disturbance.ts). */
  os?: OsView;
  /** Why the trial was disturbed, when it still was after its re-runs (kept, marked and counted). */
  disturbed?: string;
  /** The canary's counter ticks before the trial's first window and after its last (measure/canary.ts). */
  canary_cycles?: CanaryTicks;
}

/**
 * Slowest over fastest trial (per-call seconds) from which a measurement is called noisy: a quiet,
 * pinned core keeps trials within a few percent; more means something else ran on it.
 */
export const NOISY_TRIAL_SPREAD = 1.25;

/** max/min of the per-call time of the trials, or undefined with fewer than two trials. */
export function trialSpread(stats: { min_trial_seconds: number; max_trial_seconds: number }, trials: number): number | undefined {
  return trials >= 2 && stats.min_trial_seconds > 0 ? stats.max_trial_seconds / stats.min_trial_seconds : undefined;
}

/**
 * Every derived number of a record, from its raw trials: the one definition `validate` checks.
 * `guide_100_measurements_met` is the guide's fixed minimum, whatever a campaign plans.
 */
export function deriveStatistics(trials: Trial[]) {
  const measurements = trials.reduce((a, t) => a + t.measurements, 0);
  const seconds = trials.reduce((a, t) => a + t.seconds, 0);
  const cycles = trials.reduce((a, t) => a + t.cycles, 0);
  const perTrialSeconds = trials.map((t) => t.seconds / t.measurements);
  const perTrialCycles = trials.map((t) => t.cycles / t.measurements);
  const mean_seconds = seconds / measurements;
  const withCalls = trials.filter((t) => t.per_call_cycles);
  return {
    measurements,
    guide_100_measurements_met: measurements >= GUIDE_MINIMUM,
    mean_seconds,
    median_trial_seconds: median(perTrialSeconds),
    min_trial_seconds: Math.min(...perTrialSeconds),
    max_trial_seconds: Math.max(...perTrialSeconds),
    mean_cycles: cycles / measurements,
    median_trial_cycles: median(perTrialCycles),
    operations_per_second: 1 / mean_seconds,
    per_call_cycles:
      withCalls.length > 0
        ? {
            q1: median(withCalls.map((t) => t.per_call_cycles!.q1)),
            median: median(withCalls.map((t) => t.per_call_cycles!.median)),
            q3: median(withCalls.map((t) => t.per_call_cycles!.q3)),
          }
        : null,
  };
}

/**
 * How far an operation's trials spread, read from its record's raw trials (never from the run that
 * wrote it): a record kept by a later run shows the same spread and the same mark.
 */
export function recordSpread(r: { trials?: Trial[] | null }): number | undefined {
  if (!r.trials || r.trials.length < 2) return undefined;
  return trialSpread(deriveStatistics(r.trials), r.trials.length);
}
