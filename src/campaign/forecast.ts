/**
 * How long a run will take (docs/campaign.md#plan-and-eta): every step of every instance gets an
 * expected duration from the previous run's evidence or the plan, the stages are laid out as the
 * scheduler runs them (preparation on a pool of workers, pinned work on the timing cores), and while
 * the run goes on the same layout of what is left, scaled by how the finished steps compared with
 * their forecast, gives the ETA. Pure functions over plain data.
 */
import { median } from 'simple-statistics';
import { listOf, startsNow, type Lane, type StageKind } from './dispatch.js';

/** Where an expected duration comes from. */
export type EstimateSource =
  /** The step's duration in the previous run that did its work (build.json `step_seconds`). */
  | 'previous'
  /** The plan: trials × trial target and the like, for a step never run on this system. */
  | 'plan'
  /** The evidence on disk holds: the step keeps it if the sources did not change. */
  | 'kept'
  /** Neither: the forecast takes the median of the same step's known figures, and says so. */
  | 'none';

export interface StepEstimate {
  seconds?: number;
  source: EstimateSource;
  /**
   * The estimate misses by what the machine does, not by what the category is: an adaptive plan
   * cannot know how many trials this machine's noise will take. Finished steps of any category then
   * correct it, as they do the previous run's figures.
   */
  machineBound?: boolean;
}

/** Predicted and actual seconds of one step kind over the run. */
export interface StepTotals {
  step: string;
  predicted: number;
  actual: number;
  /** How many instances' figures came from where. */
  sources: Partial<Record<EstimateSource, number>>;
  /** How many of them are machine-bound (StepEstimate.machineBound): an adaptive plan's least trials. */
  machine_bound?: number;
}

export interface RunForecastSummary {
  predicted_wall_s: number;
  /** From the run's start to its end, less `waited_s`: what the forecast is held to. */
  actual_wall_s: number;
  /** Wall seconds the run spent waiting for a core (another process held it) with no work of its own under way. */
  waited_s?: number;
  /** How many times it waited for a core. */
  waits?: number;
  workers: number;
  timing_cores: number;
  steps: StepTotals[];
}

/** One stage of one instance: consecutive steps that run together on a pool worker or a timing core. */
interface StageForecast {
  lane: Lane;
  /** What the stage needs on its lane (the scheduler serves the pool by it). */
  kind: StageKind;
  steps: Array<{ name: string; estimate: StepEstimate }>;
}

export interface UnitForecast {
  key: string;
  /** The candidate's category: steps of different categories are never compared (a hash's KAT is not a KEM's). */
  kind: string;
  stages: StageForecast[];
}

/**
 * Seconds to start and end one sandboxed driver process, beside the calls it times: what a plan's
 * estimate adds per trial, round or run. Measured on the 2-core development VM (benchmarks (n): the
 * example campaign's trial processes took 0.06 s each beyond their timed loops: bwrap, the driver's
 * start, the library's load, the warm-ups); the ETA corrects it by the run's own steps.
 */
export const PROCESS_START_S = 0.06;

/**
 * An operation's timing as planned, for one never timed on this system: the trials at their target
 * (an operation slower than the target takes one call a trial, and longer: the plan cannot know),
 * the two calibration processes, and a process start for each. An adaptive plan is expected to stop
 * at its first chance, min_trials: its cap, max_trials, is what a noisy operation costs.
 */
export function plannedOperationSeconds(p: {
  trials: number;
  trial_target_s: number;
  op_budget_s: number;
  adaptive?: { enabled: boolean; min_trials: number; trial_target_s: number };
}): number {
  const [trials, target] = p.adaptive?.enabled ? [p.adaptive.min_trials, p.adaptive.trial_target_s] : [p.trials, p.trial_target_s];
  return Math.min(p.op_budget_s, trials * target) + (trials + 2) * PROCESS_START_S;
}

/** Seconds a step is given when nothing is known of it nor of its kind. */
const UNKNOWN_STEP_S = 2;

/** Every step's seconds, with the unknown ones filled from the median of their kind's known ones. */
export function filledSeconds(units: readonly UnitForecast[]): (step: string, e: StepEstimate) => number {
  const known = new Map<string, number[]>();
  for (const u of units)
    for (const s of u.stages)
      for (const { name, estimate } of s.steps)
        if (estimate.source !== 'none' && estimate.source !== 'kept' && estimate.seconds !== undefined)
          known.set(name, [...(known.get(name) ?? []), estimate.seconds]);
  const fill = new Map([...known].map(([k, xs]) => [k, median(xs)]));
  return (step, e) => e.seconds ?? (e.source === 'kept' ? 0 : (fill.get(step) ?? UNKNOWN_STEP_S));
}

/** A stage's expected seconds. */
const stageSeconds = (stage: StageForecast, seconds: (step: string, e: StepEstimate) => number): number =>
  stage.steps.reduce((a, s) => a + seconds(s.name, s.estimate), 0);

/** An instance's expected cost: all its stages, what the order and the shards balance on. */
export function unitCost(u: UnitForecast, seconds: (step: string, e: StepEstimate) => number): number {
  return u.stages.reduce((a, s) => a + stageSeconds(s, seconds), 0);
}

/**
 * Longest expected first (LPT), ties in campaign order: the long instances start while there is
 * still work to put beside them, so the run does not end on one long instance alone.
 */
export function longestFirst<T>(items: readonly T[], cost: (t: T) => number): T[] {
  return items
    .map((item, i) => ({ item, i, c: cost(item) }))
    .sort((a, b) => b.c - a.c || a.i - b.i)
    .map((x) => x.item);
}

/**
 * Shard `index` of `count` (1-based): instances dealt out longest first, each to the shard with the
 * least expected work so far (ties to the lower shard), so that shards end together. Every instance
 * goes to exactly one shard, and the deal depends only on the costs and the campaign order.
 */
export function shardByCost<T>(items: readonly T[], cost: (t: T) => number, index: number, count: number): T[] {
  const load = Array.from({ length: count }, () => 0);
  const mine = new Set<number>();
  const order = items.map((item, i) => ({ i, c: cost(item) })).sort((a, b) => b.c - a.c || a.i - b.i);
  for (const { i, c } of order) {
    let best = 0;
    for (let k = 1; k < count; k++) if (load[k]! < load[best]!) best = k;
    load[best]! += c;
    if (best === index - 1) mine.add(i);
  }
  return items.filter((_, i) => mine.has(i));
}

/** The layout of a run: when each stage would start and end, as the scheduler runs them. */
export interface Layout {
  /** Seconds from now until the last stage ends. */
  total: number;
  /** Seconds of the timing cores' stages, and of the pool's. */
  timing: number;
  pool: number;
}

/** A stage as the layout sees it: its lane, what it needs there (dispatch.ts), its seconds. */
export interface LaidStage {
  lane: Lane;
  /** Default: what the lane implies (`timing`, or `pool` preparation). */
  kind?: StageKind;
  seconds: number;
}

/**
 * Lays the stages out as the scheduler runs them: it plays the run forward, starting stages by the
 * scheduler's own rule (dispatch.ts `startsNow`) whenever a lane comes free, instances in the order
 * given (the order they are served). `running`: the instance's first stage is under way and holds
 * its lane from the start.
 */
export function layout(units: ReadonlyArray<{ stages: readonly LaidStage[]; running?: boolean }>, workers: number, cores: number): Layout {
  const lanes = { timing: Math.max(1, cores), pool: Math.max(1, workers) };
  const busy = { timing: 0, pool: 0 };
  const next = units.map(() => 0);
  // The instances that may start a stage, by what it needs, in the order served; the stages under way.
  const waiting = { timing: [] as number[], pool: [] as number[], exclusive: [] as number[] };
  const running: Array<{ unit: number; ends: number }> = [];
  const sums = { timing: 0, pool: 0 };
  let now = 0;
  const wait = (u: number) => {
    const stage = units[u]!.stages[next[u]!];
    if (!stage) return;
    const list = waiting[listOf(stage)];
    let at = list.length;
    while (at > 0 && list[at - 1]! > u) at--;
    list.splice(at, 0, u);
  };
  const begin = (u: number) => {
    const stage = units[u]!.stages[next[u]!]!;
    running.push({ unit: u, ends: now + stage.seconds });
    busy[stage.lane]++;
    sums[stage.lane] += stage.seconds;
  };
  units.forEach((x, u) => {
    if (x.running && x.stages.length > 0) begin(u);
    else wait(u);
  });
  for (;;) {
    const starts = startsNow(waiting, { timing: lanes.timing - busy.timing, workers: lanes.pool - busy.pool });
    // What starts heads its lists (dispatch.ts).
    waiting.timing.splice(0, starts.timing.length);
    const fromPool = Math.min(starts.pool.length, waiting.pool.length);
    waiting.pool.splice(0, fromPool);
    waiting.exclusive.splice(0, starts.pool.length - fromPool);
    for (const u of [...starts.timing, ...starts.pool]) begin(u);
    if (running.length === 0) break;
    let first = 0;
    for (let k = 1; k < running.length; k++) if (running[k]!.ends < running[first]!.ends) first = k;
    const [{ unit, ends }] = running.splice(first, 1) as [{ unit: number; ends: number }];
    now = ends;
    busy[units[unit]!.stages[next[unit]!]!.lane]--;
    next[unit]!++;
    wait(unit);
  }
  return { total: now, timing: sums.timing, pool: sums.pool };
}

/** A finished step that did its work: what it was expected to take (and from where), what it took. */
export interface DoneStep {
  step: string;
  /** The instance's category (UnitForecast.kind). */
  kind: string;
  source: EstimateSource;
  /** StepEstimate.machineBound of its estimate. */
  machineBound?: boolean;
  expected: number;
  actual: number;
}

/**
 * What is left of a step, from how the finished ones went (the ETA's model):
 * - a step with an estimate is scaled by the median of actual over expected seconds of the finished
 *   steps of its name whose estimate came from the same source; fully once they sum to 10 expected
 *   seconds, less before (the first short steps say little). The median, not the ratio of the sums:
 *   one step disturbed in this run or the last (27.8 s for the previous run's 65 s, nine trials run
 *   again) would otherwise scale every other (the ETA of a forced rerun read −24 % at a quarter of
 *   the run; benchmarks (m)). A previous run's figure is one measurement, so its ratio counts fully
 *   only from the third step on.
 * - which finished steps: those of the same category of instance for a plan's figure, as a fixed
 *   plan's misfit (a hash's eight operations of many short processes) says nothing about a KEM's;
 *   those of every category for what the machine decides: that this run rebuilds nothing, say, holds
 *   for every category's builds (the previous run's figures), and an adaptive plan's trials run as
 *   long as this machine's noise wants in every category (a machine-bound estimate).
 * - a step with none takes the median of the finished steps of its name and category, once there is
 *   one (a guess, a hash's KAT loop, says nothing about a KEM's), else keeps its guess.
 * Nothing is carried across steps: a build taking 5× its guess says nothing about the trials.
 */
export function remainingSeconds(done: readonly DoneStep[]): (step: string, e: StepEstimate, filled: number, kind: string) => number {
  const keyOf = (step: string, e: { source: EstimateSource; machineBound?: boolean }, kind: string) =>
    e.source === 'previous' || e.machineBound ? `${step}|${e.source}|machine` : `${step}|${e.source}|${kind}`;
  const ratios = new Map<string, { expected: number; ratios: number[] }>();
  const observed = new Map<string, number[]>();
  for (const d of done) {
    const seen = `${d.step}|${d.kind}`;
    observed.set(seen, observed.get(seen) ?? []);
    observed.get(seen)!.push(d.actual);
    if (d.source === 'none' || d.expected <= 0) continue;
    const key = keyOf(d.step, d, d.kind);
    const r = ratios.get(key) ?? { expected: 0, ratios: [] };
    r.expected += d.expected;
    r.ratios.push(d.actual / d.expected);
    ratios.set(key, r);
  }
  // Each median once: the ETA asks for every step left on every progress line.
  const medians = new Map<string, number>();
  const medianOf = (key: string, xs: number[]) => medians.get(key) ?? medians.set(key, median(xs)).get(key)!;
  return (step, e, filled, kind) => {
    if (e.source === 'kept') return filled;
    if (e.source === 'none') {
      const key = `${step}|${kind}`;
      const seen = observed.get(key);
      return seen && seen.length > 0 ? medianOf(key, seen) : filled;
    }
    const key = keyOf(step, e, kind);
    const r = ratios.get(key);
    if (!r || r.expected <= 0) return filled;
    const w = Math.min(1, r.expected / 10, e.source === 'previous' ? r.ratios.length / 3 : 1);
    return filled * (w * medianOf(key, r.ratios) + (1 - w));
  };
}
