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

/** An instance whose next stage may start now: not running one, stages left. */
export interface Waiting {
  lane: Lane;
  kind: StageKind;
}

/**
 * Which instances start their next stage now, given the free timing cores and pool workers.
 * `waiting` is in the order instances are served (longest expected first), undefined for one that
 * is running a stage or has none left. Timing first, to every free timing core in order. Then the
 * pool prefers preparation while fewer instances wait for a timing core than there are timing
 * cores, so that timing never starves, and otherwise the exclusive work of instances already timed.
 */
export function startsNow(
  waiting: ReadonlyArray<Waiting | undefined>,
  free: { timing: number; workers: number },
  timingLanes: number,
): { timing: number[]; pool: number[] } {
  const timing: number[] = [];
  for (let u = 0; u < waiting.length && timing.length < free.timing; u++) if (waiting[u]?.lane === 'timing') timing.push(u);
  const pool: number[] = [];
  if (free.workers <= 0) return { timing, pool };
  const startedTiming = new Set(timing);
  const waitingForTiming = waiting.filter((w, u) => w?.lane === 'timing' && !startedTiming.has(u)).length;
  const wanted: StageKind[] = waitingForTiming < timingLanes ? ['pool', 'exclusive'] : ['exclusive', 'pool'];
  const taken = new Set<number>();
  while (pool.length < free.workers) {
    let pick = -1;
    for (const kind of wanted) {
      pick = waiting.findIndex((w, u) => w?.lane === 'pool' && w.kind === kind && !taken.has(u));
      if (pick >= 0) break;
    }
    if (pick < 0) break;
    taken.add(pick);
    pool.push(pick);
  }
  return { timing, pool };
}
