import { withCpus } from '../sandbox/runProcess.js';
import type { InstanceContext, PhaseStep } from './context.js';
import { laneOf, startsNow, type StageKind, waitingOf } from './dispatch.js';

/**
 * The run's scheduler (docs/campaign.md#parallel-preparation). Every instance's steps, in order,
 * are cut into stages of consecutive steps of one kind:
 * - `pool`: builds, KATs, surveys, relinks; on a worker of the pool, each worker confined to a core
 *   the run does not time on;
 * - `timing`: the timed trials; holding a timing core (its host-wide lock);
 * - `exclusive`: profile rounds and constant-time runs, which must not share their core but are not
 *   timing; on a pool worker's core, holding that core's lock, so nothing else runs there meanwhile
 *   (on a timing core when the run has no other core).
 * An instance's next stage waits for its last; stages of different instances run side by side.
 */

export interface Stage {
  kind: StageKind;
  steps: PhaseStep[];
}

/** Consecutive steps of the same kind, in order: what one lane runs in one go. */
export function stagesOf(steps: readonly PhaseStep[]): Stage[] {
  const stages: Stage[] = [];
  for (const step of steps) {
    const kind: StageKind = step.core ?? 'pool';
    const last = stages[stages.length - 1];
    if (last?.kind === kind) last.steps.push(step);
    else stages.push({ kind, steps: [step] });
  }
  return stages;
}

export interface ScheduleOptions {
  /** Workers running pool stages side by side; worker k is confined to poolCpus[k mod n]. */
  workers: number;
  poolCpus?: readonly number[];
  /** Pool cores that are timing cores too (a run that times nothing lends them): their stages hold the core's lock. */
  lentCpus?: readonly number[];
  /** Timing stages that may run at once: one per timing core. */
  cores: number;
  /** One instance at a time, each stage after the last: nothing beside timing. */
  serial: boolean;
  /** Runs a stage holding a core's lock: a timing core (cpu undefined: any free one), or the pool worker's own. */
  onCore(ctx: InstanceContext, stage: Stage, cpu: number | undefined, work: () => Promise<void>): Promise<void>;
  /** Wraps a pool stage (the caller notes when and where it ran). */
  onPool?(ctx: InstanceContext, stage: Stage, cpus: readonly number[] | undefined, work: () => Promise<void>): Promise<void>;
  /** Runs one step (the caller times it). */
  runStep(ctx: InstanceContext, step: PhaseStep): Promise<void>;
  /** After an instance's last stage. */
  onUnitDone?(ctx: InstanceContext): void;
}

/** Runs a stage's steps in order, on `cpu` (a pool worker's core) or a timing core. */
async function runStage(ctx: InstanceContext, stage: Stage, opts: ScheduleOptions, workerCpu: number | undefined): Promise<void> {
  const steps = async () => {
    for (const step of stage.steps) await opts.runStep(ctx, step);
  };
  // Without a library nothing can be timed or profiled, and a stage that keeps everything times
  // nothing: no need to wait for a core.
  const needsCore =
    stage.kind !== 'pool' && !(ctx.entry && !ctx.entry.library) && stage.steps.some((step) => step.needsCore?.(ctx) ?? true);
  const cpus = workerCpu !== undefined ? [workerCpu] : undefined;
  const confined = () => withCpus(cpus, steps);
  const onLentCore = workerCpu !== undefined && (opts.lentCpus?.includes(workerCpu) ?? false);
  if (needsCore || onLentCore) return opts.onCore(ctx, stage, stage.kind === 'timing' ? undefined : workerCpu, confined);
  return opts.onPool ? opts.onPool(ctx, stage, cpus, confined) : confined();
}

/**
 * Runs every instance's stages (`units` in the order they are served: longest expected first), each
 * stage started by the rule of dispatch.ts as lanes come free.
 * The first error stops new work; stages under way finish; then it is thrown.
 */
export async function runSchedule(units: readonly InstanceContext[], stages: readonly Stage[], opts: ScheduleOptions): Promise<void> {
  if (opts.serial) {
    for (const ctx of units) {
      for (const stage of stages) await runStage(ctx, stage, opts, undefined);
      opts.onUnitDone?.(ctx);
    }
    return;
  }
  const poolOwnsCores = (opts.poolCpus?.length ?? 0) > 0;
  const lane = (s: Stage) => laneOf(s.kind, poolOwnsCores);
  const next = units.map(() => 0);
  const running = units.map(() => false);
  const freeWorkers = Array.from({ length: Math.max(1, opts.workers) }, (_, k) => k);
  let timingBusy = 0;
  const timingLanes = Math.max(1, opts.cores);
  let failure: { error: unknown } | undefined;
  let inFlight = 0;
  const done = () => next.every((s) => s >= stages.length);
  const ready = (u: number) => !running[u] && next[u]! < stages.length;

  await new Promise<void>((resolve) => {
    const start = (u: number, workerCpu: number | undefined, release: () => void) => {
      running[u] = true;
      inFlight++;
      const ctx = units[u]!;
      runStage(ctx, stages[next[u]!]!, opts, workerCpu)
        .then(() => {
          next[u]!++;
          if (next[u] === stages.length) opts.onUnitDone?.(ctx);
        })
        // A failed stage, or the bookkeeping after the last (onUnitDone): either stops the run.
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => {
          running[u] = false;
          release();
          inFlight--;
          dispatch();
        });
    };
    const dispatch = () => {
      if (failure || done()) {
        if (inFlight === 0) resolve();
        return;
      }
      const waiting = waitingOf(
        units.map((_, u) => {
          const stage = ready(u) ? stages[next[u]!]! : undefined;
          return stage && { lane: lane(stage), kind: stage.kind };
        }),
      );
      const starts = startsNow(waiting, { timing: timingLanes - timingBusy, workers: freeWorkers.length });
      for (const u of starts.timing) {
        timingBusy++;
        start(u, undefined, () => timingBusy--);
      }
      for (const u of starts.pool) {
        const worker = freeWorkers.shift()!;
        const cpus = opts.poolCpus;
        start(u, cpus && cpus.length > 0 ? cpus[worker % cpus.length] : undefined, () => freeWorkers.push(worker));
      }
      // Nothing runs and nothing may start: cannot happen with lanes ≥ 1, and must not end as if done.
      if (inFlight === 0 && !done()) {
        failure ??= { error: new Error('scheduler: stages are left but none can start') };
        resolve();
      }
    };
    dispatch();
  });
  if (failure) throw failure.error;
}
