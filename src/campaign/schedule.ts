import { withCpus } from '../sandbox/runProcess.js';
import type { InstanceContext, PhaseStep, RunContext, SideBySide } from './context.js';
import { type Lane, laneOf, startsNow, type StageKind, waitingOf } from './dispatch.js';

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
 * With `sideBySide`, a timing stage may also take the timing cores free when it asks for parts of its
 * work (InstanceContext.sideBySide): those cores are lanes it holds until its part there ends.
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
  /** Parts of a timing stage on the free timing cores beside its own (ngcc-perf.yml `side_by_side`). */
  sideBySide?: boolean;
  /** A timing core free now, its lock taken without waiting; undefined when none is. */
  spareCore?(ctx: InstanceContext, stage: Stage): Promise<SpareCore | undefined>;
}

/** A timing core held for a part of a stage beside the stage's own core. */
export interface SpareCore {
  /** The run pinned to that core. */
  run: RunContext;
  release(): void;
}

/** Runs a stage's steps in order, on `cpu` (a pool worker's core) or a timing core. */
async function runStage(
  ctx: InstanceContext,
  stage: Stage,
  opts: ScheduleOptions,
  workerCpu: number | undefined,
  sideBySide?: SideBySide,
): Promise<void> {
  // Without a library nothing can be timed or profiled, and a stage that keeps everything times
  // nothing: no need to wait for a core.
  const needsCore =
    stage.kind !== 'pool' && !(ctx.entry && !ctx.entry.library) && stage.steps.some((step) => step.needsCore?.(ctx) ?? true);
  // Parts beside the stage only while it holds a timing core of its own.
  const spread = needsCore && stage.kind === 'timing' ? sideBySide : undefined;
  const steps = async () => {
    ctx.sideBySide = spread;
    try {
      for (const step of stage.steps) await opts.runStep(ctx, step);
    } finally {
      ctx.sideBySide = undefined;
    }
  };
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
  await new Lanes(units, stages, opts).run();
}

/** The lanes of a run that is not serial: pool workers, timing cores, and who waits for which. */
class Lanes {
  private readonly lane: (s: Stage) => Lane;
  private readonly next: number[];
  private readonly running: boolean[];
  private readonly freeWorkers: number[];
  private readonly timingLanes: number;
  private timingBusy = 0;
  private inFlight = 0;
  private failure: { error: unknown } | undefined;
  private resolve: () => void = () => {};

  constructor(
    private readonly units: readonly InstanceContext[],
    private readonly stages: readonly Stage[],
    private readonly opts: ScheduleOptions,
  ) {
    const poolOwnsCores = (opts.poolCpus?.length ?? 0) > 0;
    this.lane = (s) => laneOf(s.kind, poolOwnsCores);
    this.next = units.map(() => 0);
    this.running = units.map(() => false);
    this.freeWorkers = Array.from({ length: Math.max(1, opts.workers) }, (_, k) => k);
    this.timingLanes = Math.max(1, opts.cores);
  }

  async run(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.resolve = resolve;
      this.dispatch();
    });
    if (this.failure) throw this.failure.error;
  }

  private done(): boolean {
    return this.next.every((s) => s >= this.stages.length);
  }

  private ready(u: number): boolean {
    return !this.running[u] && this.next[u]! < this.stages.length;
  }

  private start(u: number, workerCpu: number | undefined, release: () => void): void {
    this.running[u] = true;
    this.inFlight++;
    const ctx = this.units[u]!;
    const stage = this.stages[this.next[u]!]!;
    const spread = this.opts.sideBySide && stage.kind === 'timing' ? this.spread(ctx, stage) : undefined;
    runStage(ctx, stage, this.opts, workerCpu, spread)
      .then(() => {
        this.next[u]!++;
        if (this.next[u] === this.stages.length) this.opts.onUnitDone?.(ctx);
      })
      // A failed stage, or the bookkeeping after the last (onUnitDone): either stops the run.
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => {
        this.running[u] = false;
        release();
        this.inFlight--;
        this.dispatch();
      });
  }

  private dispatch(): void {
    if (this.failure || this.done()) {
      if (this.inFlight === 0) this.resolve();
      return;
    }
    const waiting = waitingOf(
      this.units.map((_, u) => {
        const stage = this.ready(u) ? this.stages[this.next[u]!]! : undefined;
        return stage && { lane: this.lane(stage), kind: stage.kind };
      }),
    );
    const starts = startsNow(waiting, { timing: this.timingLanes - this.timingBusy, workers: this.freeWorkers.length });
    for (const u of starts.timing) {
      this.timingBusy++;
      this.start(u, undefined, () => this.timingBusy--);
    }
    for (const u of starts.pool) {
      const worker = this.freeWorkers.shift()!;
      const cpus = this.opts.poolCpus;
      this.start(u, cpus && cpus.length > 0 ? cpus[worker % cpus.length] : undefined, () => this.freeWorkers.push(worker));
    }
    // Nothing runs and nothing may start: cannot happen with lanes ≥ 1, and must not end as if done.
    if (this.inFlight === 0 && !this.done()) {
      this.failure ??= { error: new Error('scheduler: stages are left but none can start') };
      this.resolve();
    }
  }

  /**
   * A timing stage's parts (SideBySide): the stage's own core takes the first bundle, and each timing
   * lane free now, whose core's lock is free too, one more; a spare core is given back when its
   * bundle ends. An error of one bundle is thrown once every bundle has ended.
   */
  private spread(ctx: InstanceContext, stage: Stage): SideBySide {
    return async (parts, work) => {
      const own = ctx.run;
      const free = this.failure ? 0 : Math.min(parts.length - 1, this.timingLanes - this.timingBusy);
      const spares = await this.spareCores(ctx, stage, free);
      const n = spares.length + 1;
      const bundles = Array.from({ length: n }, (_, k) => parts.filter((_, i) => i % n === k));
      const settled = await Promise.allSettled(
        bundles.map(async (bundle, k) => {
          if (k === 0) return work(bundle, own);
          const spare = spares[k - 1]!;
          try {
            await work(bundle, spare.run);
          } finally {
            spare.release();
            this.timingBusy--;
            this.dispatch();
          }
        }),
      );
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
    };
  }

  /** Up to `wanted` spare timing cores, their lanes counted busy from the first try on. */
  private async spareCores(ctx: InstanceContext, stage: Stage, wanted: number): Promise<SpareCore[]> {
    const spares: SpareCore[] = [];
    if (wanted <= 0 || !this.opts.spareCore) return spares;
    this.timingBusy += wanted;
    try {
      while (spares.length < wanted) {
        const spare = await this.opts.spareCore(ctx, stage);
        if (!spare) break;
        spares.push(spare);
      }
    } catch (e) {
      for (const s of spares) s.release();
      spares.length = 0;
      throw e;
    } finally {
      this.timingBusy -= wanted - spares.length;
      if (spares.length < wanted) this.dispatch();
    }
    return spares;
  }
}
