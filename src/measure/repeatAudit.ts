import { type TrialProcess, type TrialRequest, trialOnceMore } from './trial.js';

/**
 * The repeated-input audit (MLPerf's TEST04) for verify, the one operation whose inputs are costly
 * to make fresh for every call: its trials reuse a pool of 16 signed messages (native/core/calls.h
 * VERIFY_POOL), so a library that remembers its answers would find them there. After the trials, a
 * process verifies a pool of distinct messages, one per call, beside one on the 16 repeated ones, and
 * their per-call medians are compared: a verify much faster on repeated inputs than on distinct ones
 * answered from memory. Cache effects make distinct inputs only a little slower (docs/benchmarks.md (s)).
 */

/**
 * How much slower distinct inputs may verify than repeated ones before the gap is not cache effects:
 * honest PQClean verifies measured 0.74–1.35 on this VM (Falcon's 1.24–1.35 every run: a branch
 * predictor that learns 16 inputs), a cache of answers many times more (docs/benchmarks.md (s)).
 */
export const REPEAT_GAP = 2;
/** Fewest distinct inputs that make the audit's median worth comparing. */
const AUDIT_MIN_CALLS = 32;
/** Most entries the driver's pool holds (native/core/calls.h MAX_VERIFY_POOL). */
const AUDIT_MAX_CALLS = 4096;

export interface RepeatAudit {
  /** Distinct inputs verified, one call each. */
  calls: number;
  /** Per-call median cycles of the last pair's processes: repeated inputs (16) and distinct ones. */
  repeated_cycles: number;
  distinct_cycles: number;
  /** distinct ÷ repeated of each pair, in order; `ratio` is the least of them. */
  ratios: number[];
  ratio: number;
  outcome: 'agrees' | 'differs' | 'failed';
  detail?: string;
  wall_s: number;
  /** Audit processes refused for what a loaded host can also cause and run once more, with why: a refusal is never lost. */
  retried?: Array<{ started_utc: string; wall_s: number; disturbed: string }>;
}

/** What the audit needs of the operation: its trial request, its complete trials (their pool's signing time) and the budget for signing. */
export interface AuditInput {
  base: Omit<TrialRequest, 'iterations' | 'warmups' | 'timeoutMs'>;
  complete: TrialProcess[];
  iterations: number;
  warmups: number;
  /** The timeout of a process of this many calls on as many distinct inputs (their signing included). */
  timeoutMs: (calls: number) => number;
  /** Seconds the audit may spend signing its pool (the trial's target). */
  signBudgetS: number;
}

/** How many distinct inputs fit the signing budget, or why the audit cannot be made. */
export function auditCalls(input: Pick<AuditInput, 'complete' | 'iterations' | 'signBudgetS'>): number | string {
  const meta = input.complete[0]?.meta ?? {};
  const entries = Number(meta.verify_pool);
  const signS = Number(meta.verify_pool_sign_s);
  if (!(entries > 0) || !(signS >= 0)) return 'the trials did not say how long signing their pool took';
  const perSign = signS / entries;
  const affordable = perSign > 0 ? Math.floor(input.signBudgetS / perSign) : AUDIT_MAX_CALLS;
  const calls = Math.min(input.iterations, AUDIT_MAX_CALLS, affordable);
  if (calls < AUDIT_MIN_CALLS)
    return input.iterations < AUDIT_MIN_CALLS
      ? `a trial makes ${input.iterations} calls, fewer than the ${AUDIT_MIN_CALLS} distinct inputs the audit compares`
      : `signing ${AUDIT_MIN_CALLS} distinct inputs would take ${(AUDIT_MIN_CALLS * perSign).toFixed(1)} s, over the ${input.signBudgetS} s a trial is planned for`;
  return calls;
}

/** The audit's verdict from the two medians. */
export function judgeRepeat(repeated: number, distinct: number, calls: number): Pick<RepeatAudit, 'ratio' | 'outcome' | 'detail'> {
  const ratio = distinct / repeated;
  if (ratio <= REPEAT_GAP) return { ratio, outcome: 'agrees' };
  return {
    ratio,
    outcome: 'differs',
    detail: `verify took ${ratio.toFixed(1)}× as long per call on ${calls} distinct inputs as on 16 repeated ones (cache effects allow ${REPEAT_GAP}×)`,
  };
}

/**
 * Pairs of processes at most: a gap must show in each before the audit says it differs. A host's
 * neighbour can slow one process of a pair by half (docs/benchmarks.md (s)); a cache of answers
 * slows every distinct-input process many times over.
 */
const AUDIT_PAIRS = 3;

/** Runs the audit; a reason instead when it cannot be made. */
export async function repeatedInputAudit(input: AuditInput): Promise<RepeatAudit | { skipped: string }> {
  const calls = auditCalls(input);
  if (typeof calls === 'string') return { skipped: calls };
  // An audit process refused for what a loaded host can also cause runs once more, as a trial does.
  const trial = (verifyPool?: number) =>
    trialOnceMore({
      ...input.base,
      iterations: calls,
      warmups: input.warmups,
      timeoutMs: input.timeoutMs(calls),
      ...(verifyPool ? { verifyPool } : {}),
    });
  const ratios: number[] = [];
  let wall_s = 0;
  const retried: NonNullable<RepeatAudit['retried']> = [];
  const kept = (p: TrialProcess) => {
    for (const r of p.retried ?? []) {
      retried.push(r);
      wall_s += r.wall_s;
    }
    wall_s += p.wall_s;
  };
  let last: Omit<RepeatAudit, 'ratios' | 'wall_s'> | undefined;
  // Each pair: distinct inputs (a pool of one per call) and the trials' 16 repeated ones, side by
  // side in time, in alternating order; another pair only while the gap shows.
  for (let k = 0; k < AUDIT_PAIRS; k++) {
    const pair = k % 2 === 0 ? [await trial(calls), await trial()] : [await trial(), await trial(calls)].reverse();
    const [distinct, repeated] = pair as [TrialProcess, TrialProcess];
    kept(distinct);
    kept(repeated);
    const [d, r] = [distinct.trials[0]?.per_call_cycles?.median, repeated.trials[0]?.per_call_cycles?.median];
    if (d === undefined || r === undefined) {
      const why = (d === undefined ? distinct : repeated).failure ?? 'no figures';
      return {
        calls,
        repeated_cycles: r ?? 0,
        distinct_cycles: d ?? 0,
        ratio: 0,
        ratios,
        outcome: 'failed',
        detail: `an audit process gave no trial (${why})`,
        wall_s,
        ...(retried.length > 0 ? { retried } : {}),
      };
    }
    last = { calls, repeated_cycles: r, distinct_cycles: d, ...judgeRepeat(r, d, calls) };
    ratios.push(last.ratio);
    if (last.outcome === 'agrees') break;
  }
  const ratio = Math.min(...ratios);
  const detail =
    last!.outcome === 'differs'
      ? `verify took ${ratio.toFixed(1)}× or more as long per call on ${calls} distinct inputs as on 16 repeated ones, in each of ${ratios.length} pairs of processes (cache effects allow ${REPEAT_GAP}×): it answers repeated inputs from memory`
      : undefined;
  return { ...last!, ratio, ratios, wall_s, ...(detail ? { detail } : {}), ...(retried.length > 0 ? { retried } : {}) };
}
