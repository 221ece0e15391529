/** The ct phase's plan for one operation: run it, or skip it because memcheck would take too long. */
export interface CtBudget {
  calls: number;
  /** How many times slower an operation runs under memcheck than natively. */
  valgrindFactor: number;
  /** Whether the factor was measured on this library (campaign/ctPhase.ts), or is ct.valgrind_factor's assumption. */
  factorMeasured?: boolean;
  /** Seconds valgrind needs to start and end a process besides the calls. */
  startupSeconds: number;
  /** The most a run of one operation may be predicted to take. */
  opBudgetSeconds: number;
}

export type CtDecision = { run: true; predictedSeconds?: number } | { run: false; reason: string; predictedSeconds: number };

/**
 * The prediction: native seconds per call (the timing record's mean, when the operation was timed)
 * × calls × the valgrind factor + startup. Without a timing record the operation runs: its process
 * timeout still bounds it.
 */
export function planCtOperation(perCallSeconds: number | undefined, b: CtBudget): CtDecision {
  if (perCallSeconds === undefined || !Number.isFinite(perCallSeconds)) return { run: true };
  const predictedSeconds = predictedCtSeconds(perCallSeconds, b.calls, b);
  if (predictedSeconds <= b.opBudgetSeconds) return { run: true, predictedSeconds };
  return {
    run: false,
    predictedSeconds,
    reason: `predicted ${predictedSeconds.toPrecision(3)} s under memcheck (${perCallSeconds.toPrecision(3)} s per call natively × ${b.calls} calls × ${b.factorMeasured ? `${b.valgrindFactor.toPrecision(3)}, the slowdown measured on this library,` : b.valgrindFactor} + ${b.startupSeconds} s), over the budget of ${b.opBudgetSeconds} s (ct.op_budget_s)`,
  };
}

/** Seconds a run of `calls` calls is predicted to take under memcheck. */
export const predictedCtSeconds = (perCallSeconds: number, calls: number, b: CtBudget): number =>
  perCallSeconds * calls * b.valgrindFactor + b.startupSeconds;

/** The most calls memcheck can make within the operation's budget (the driver's cap without a figure). */
export function affordableCalls(perCallSeconds: number | undefined, b: CtBudget, cap: number): number {
  if (perCallSeconds === undefined || perCallSeconds <= 0) return cap;
  return Math.min(cap, Math.floor((b.opBudgetSeconds - b.startupSeconds) / (perCallSeconds * b.valgrindFactor)));
}

/**
 * The calls a build's memcheck run makes: the calls wanted (what the path search found the paths
 * need, or the measured build's count for another build), as many as this build's own slowdown
 * lets fit the budget, and never fewer than ct.calls.
 */
export const checkedCalls = (wanted: number, perCallSeconds: number | undefined, b: CtBudget, cap: number): number =>
  Math.max(b.calls, Math.min(wanted, affordableCalls(perCallSeconds, b, cap)));
