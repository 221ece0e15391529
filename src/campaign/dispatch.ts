/**
 * The scheduler's rule for what starts next (docs/campaign.md#parallel-preparation). The scheduler
 * (schedule.ts) follows it as stages end, and the forecast (forecast.ts) follows it to lay out what
 * is left, so the printed plan and the ETA wait where the run will wait. Pure.
 */

/** What a stage needs: a pool worker, a timing core, or a core of its own (profile rounds, constant-time runs). */
export type StageKind = 'pool' | 'timing' | 'exclusive';
export type Lane = 'pool' | 'timing';

/** The lane a stage runs on: exclusive stages go to the pool when its workers own cores. */
export const laneOf = (kind: StageKind, poolOwnsCores: boolean): Lane =>
  kind === 'timing' || (kind === 'exclusive' && !poolOwnsCores) ? 'timing' : 'pool';

/**
 * The instances that may start their next stage now (not running one, stages left), by what that
 * stage needs, each list in the order the instances are served (longest expected first).
 */
export interface Waiting {
  /** Stages on the timing lane. */
  timing: readonly number[];
  /** Preparation: stages of kind `pool`. */
  pool: readonly number[];
  /** Exclusive stages on the pool's cores. */
  exclusive: readonly number[];
}

/** Which Waiting list a stage waits in: its lane, and on the pool its kind. */
export const listOf = (stage: { lane: Lane; kind?: StageKind }): keyof Waiting =>
  stage.lane === 'timing' ? 'timing' : stage.kind === 'exclusive' ? 'exclusive' : 'pool';

/** The Waiting lists of instances given each one's next stage (undefined: running one, or none left). */
export function waitingOf(next: ReadonlyArray<{ lane: Lane; kind: StageKind } | undefined>): Waiting {
  const waiting = { timing: [] as number[], pool: [] as number[], exclusive: [] as number[] };
  next.forEach((stage, u) => {
    if (stage) waiting[listOf(stage)].push(u);
  });
  return waiting;
}

/**
 * Which instances start their next stage now, given the free timing cores and pool workers: timing
 * first, to every free timing core in order. Then the pool takes preparation whenever there is any,
 * and the exclusive work of instances already timed when there is none: the timing cores are the
 * run's bottleneck, and an instance prepared ahead is what keeps them busy. Played forward over
 * three forced reruns of the 65-instance synthetic campaign (their own step seconds), this ends 7–9 %
 * sooner than preferring exclusive work while an instance already waits for timing (233 s for 251 s,
 * 241 s for 264 s, 347 s for 381 s; docs/benchmarks.md (m)); cold runs, whose pool is the
 * bottleneck, end the same.
 */
export function startsNow(waiting: Waiting, free: { timing: number; workers: number }): { timing: number[]; pool: number[] } {
  // The first of each list: what starts always heads its list, which the forecast relies on.
  const workers = Math.max(0, free.workers);
  const pool = waiting.pool.slice(0, workers);
  if (pool.length < workers) pool.push(...waiting.exclusive.slice(0, workers - pool.length));
  return { timing: waiting.timing.slice(0, Math.max(0, free.timing)), pool };
}
