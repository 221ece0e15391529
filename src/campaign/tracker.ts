import type { BuildEntry, BuildJson } from '../evidence/fileTypes.js';
import { formatSeconds } from '../text/format.js';
import { readJsonIfExists } from '../util/fsx.js';
import type { PhaseStep } from './context.js';
import { previousSeconds } from './context.js';
import {
  type DoneStep,
  filledSeconds,
  layout,
  longestFirst,
  remainingSeconds,
  type EstimateSource,
  type RunForecastSummary,
  type StepEstimate,
  type StepTotals,
  type UnitForecast,
  unitCost,
} from './forecast.js';
import type { RunPlan, Unit } from './runPlan.js';
import { laneOf } from './dispatch.js';
import type { Stage } from './schedule.js';

/**
 * The run's forecast and its bookkeeping (docs/campaign.md#plan-and-eta): what every step of every
 * instance is expected to take, what each took, the ETA from what is left, and the plan and the
 * end's comparison as lines for the console and the job summary.
 */

interface UnitState {
  forecast: UnitForecast;
  /** Index of the next stage, or of the stage under way. */
  stage: number;
  /** When the step under way started (its stage's start or its last step's end); undefined while none is. */
  stepSince?: number;
  /** Steps of the stage under way already done. */
  doneInStage: number;
}

/** Every unit's stages with each step's estimate, from the steps' `expect` and the previous build.json. */
export function forecastUnits(plan: RunPlan, units: readonly Unit[], stages: readonly Stage[], poolOwnsCores: boolean): UnitForecast[] {
  const previous = readJsonIfExists<BuildJson>(plan.paths.build)?.instances ?? {};
  return units.map((unit) => {
    const entry: BuildEntry | undefined = previous[unit.key];
    return {
      key: unit.key,
      kind: unit.candidate.type,
      stages: stages.map((stage) => ({
        lane: laneOf(stage.kind, poolOwnsCores),
        kind: stage.kind,
        steps: stage.steps.map((step: PhaseStep) => ({
          name: step.name,
          estimate: expected(step, plan, unit, entry),
        })),
      })),
    };
  });
}

/**
 * A step's estimate; an evidence file it cannot read makes it say nothing: the step itself meets
 * the file and says what is wrong with it.
 */
function expected(step: PhaseStep, plan: RunPlan, unit: Unit, entry: BuildEntry | undefined): StepEstimate {
  if (!step.expect) return previousSeconds(step.name, entry);
  try {
    return step.expect(plan, unit, entry);
  } catch {
    return previousSeconds(step.name, entry);
  }
}

/**
 * The run's waits for a core, counted apart from its work: wall time while some stage waits for a
 * core another process holds and no stage of the run is under way. A wait beside running work costs
 * the run nothing the forecast did not already count.
 */
export class WaitClock {
  private waiting = 0;
  private working = 0;
  private idleSince: number | undefined;
  idle_s = 0;
  waits = 0;

  waitStarted(): void {
    this.waiting++;
    this.waits++;
    this.update();
  }

  waitEnded(): void {
    this.waiting--;
    this.update();
  }

  workStarted(): void {
    this.working++;
    this.update();
  }

  workEnded(): void {
    this.working--;
    this.update();
  }

  /** Idle waiting so far, the one under way included. */
  idleSeconds(now = Date.now()): number {
    return this.idle_s + (this.idleSince === undefined ? 0 : (now - this.idleSince) / 1000);
  }

  private update(now = Date.now()): void {
    const idle = this.waiting > 0 && this.working === 0;
    if (idle && this.idleSince === undefined) this.idleSince = now;
    if (!idle && this.idleSince !== undefined) {
      this.idle_s += (now - this.idleSince) / 1000;
      this.idleSince = undefined;
    }
  }
}

export class RunTracker {
  private readonly states = new Map<string, UnitState>();
  /** The instances in the order the scheduler serves them (longest expected first), for the layout. */
  private readonly served: UnitState[];
  private readonly seconds: (step: string, e: StepEstimate) => number;
  private readonly done: DoneStep[] = [];
  private readonly totals = new Map<string, StepTotals>();
  readonly predictedWall: number;

  constructor(
    forecasts: readonly UnitForecast[],
    readonly workers: number,
    readonly cores: number,
    /** When the run started (ms since the epoch): its wall time counts from there. */
    private readonly started = Date.now(),
    private readonly waits = new WaitClock(),
  ) {
    this.seconds = filledSeconds(forecasts);
    for (const f of forecasts) {
      this.states.set(f.key, { forecast: f, stage: 0, doneInStage: 0 });
      for (const s of f.stages)
        for (const { name, estimate } of s.steps) {
          const t = this.totals.get(name) ?? { step: name, predicted: 0, actual: 0, sources: {} };
          t.predicted += this.seconds(name, estimate);
          t.sources[estimate.source] = (t.sources[estimate.source] ?? 0) + 1;
          if (estimate.machineBound) t.machine_bound = (t.machine_bound ?? 0) + 1;
          this.totals.set(name, t);
        }
    }
    this.served = longestFirst([...this.states.values()], (s) => unitCost(s.forecast, this.seconds));
    this.predictedWall = this.layoutOfRemaining((_step, _e, filled) => filled);
  }

  /** The instances' keys longest expected first: the order the scheduler serves them in. */
  servedOrder(): string[] {
    return this.served.map((s) => s.forecast.key);
  }

  stageStarted(key: string): void {
    const s = this.states.get(key);
    if (s) {
      s.stepSince = Date.now();
      s.doneInStage = 0;
    }
  }

  stepDone(key: string, step: string, actualSeconds: number, kept: boolean): void {
    const s = this.states.get(key);
    if (!s) return;
    const stage = s.forecast.stages[s.stage];
    const planned = stage?.steps.find((x) => x.name === step);
    const expected = planned ? this.seconds(step, planned.estimate) : 0;
    const source = planned?.estimate.source ?? 'none';
    const machineBound = planned?.estimate.machineBound;
    const t = this.totals.get(step);
    if (t) t.actual += actualSeconds;
    if (!kept)
      this.done.push({ step, kind: s.forecast.kind, source, ...(machineBound ? { machineBound } : {}), expected, actual: actualSeconds });
    s.doneInStage++;
    s.stepSince = Date.now();
    if (stage && s.doneInStage >= stage.steps.length) {
      s.stage++;
      s.stepSince = undefined;
      s.doneInStage = 0;
    }
  }

  /**
   * Seconds until the run ends: what is left, laid out as the scheduler runs it, scaled by how the
   * done steps went. A step under way that has already run longer than its estimate counts as done
   * at its seconds so far: the first adaptive timing step of a cold run, say, tells how far the plan
   * is off before it ends, not only after.
   */
  eta(): number {
    const now = Date.now();
    const outrun: DoneStep[] = [];
    for (const s of this.states.values()) {
      const step = s.stepSince === undefined ? undefined : s.forecast.stages[s.stage]?.steps[s.doneInStage];
      if (!step || step.estimate.source === 'kept' || step.estimate.source === 'none') continue;
      const [expected, elapsed] = [this.seconds(step.name, step.estimate), (now - s.stepSince!) / 1000];
      if (elapsed > expected)
        outrun.push({
          step: step.name,
          kind: s.forecast.kind,
          source: step.estimate.source,
          ...(step.estimate.machineBound ? { machineBound: true } : {}),
          expected,
          actual: elapsed,
        });
    }
    return this.layoutOfRemaining(remainingSeconds([...this.done, ...outrun]), now);
  }

  private layoutOfRemaining(seconds: (step: string, e: StepEstimate, filled: number, kind: string) => number, now = Date.now()): number {
    const units = this.served.map((s) => ({
      running: s.stepSince !== undefined,
      stages: s.forecast.stages.slice(s.stage).map((stage, i) => {
        const steps = i === 0 ? stage.steps.slice(s.doneInStage) : stage.steps;
        const left = steps.map((x) => seconds(x.name, x.estimate, this.seconds(x.name, x.estimate), s.forecast.kind));
        // The step under way has run a while already (the stage's steps before it are done).
        if (i === 0 && s.stepSince !== undefined && left.length > 0) left[0] = Math.max(0, left[0]! - (now - s.stepSince) / 1000);
        return { lane: stage.lane, kind: stage.kind, seconds: left.reduce((a, x) => a + x, 0) };
      }),
    }));
    return layout(units, this.workers, this.cores).total;
  }

  summary(): RunForecastSummary {
    const now = Date.now();
    const waited = this.waits.idleSeconds(now);
    return {
      predicted_wall_s: this.predictedWall,
      actual_wall_s: Math.max(0, (now - this.started) / 1000 - waited),
      ...(this.waits.waits > 0 ? { waited_s: waited, waits: this.waits.waits } : {}),
      workers: this.workers,
      timing_cores: this.cores,
      steps: [...this.totals.values()],
    };
  }
}

const SOURCE_WORDS: Record<EstimateSource, string> = {
  previous: 'previous run',
  plan: 'plan',
  kept: 'kept if unchanged',
  none: 'no estimate',
};

/** "3 previous run, 2 plan": where a step's figures came from. */
const sourcesShown = (t: StepTotals) =>
  [
    ...(Object.entries(t.sources) as Array<[EstimateSource, number]>).map(([k, n]) => `${n} ${SOURCE_WORDS[k]}`),
    // An adaptive plan is counted at its least trials: the machine's noise may take up to max_trials.
    ...(t.machine_bound ? [`${t.machine_bound} adaptive, at the fewest trials: more on a noisy machine`] : []),
  ].join(', ');

/** The plan, before anything runs: expected seconds per step kind and in all, and where they come from. */
export function planLines(f: RunForecastSummary, units: number): string[] {
  const unknown = f.steps.some((t) => (t.sources.none ?? 0) > 0);
  return [
    `plan: ${units} instance(s); preparation on ${f.workers} worker(s) beside ${f.timing_cores} timing core(s)`,
    ...f.steps
      // A step that costs nothing by plan (the stale-evidence sweep) is no line of the plan.
      .filter((t) => t.predicted > 0 || Object.keys(t.sources).some((k) => k !== 'plan'))
      .map((t) => `  ${t.step.padEnd(14)} ${formatSeconds(t.predicted).padStart(9)}  (${sourcesShown(t)})`),
    `  expected wall time ${formatSeconds(f.predicted_wall_s)}${unknown ? ' — steps with no estimate counted at the median of their kind' : ''}`,
  ];
}

/** Where the actual seconds start on an outcome line: after "  wall time      ", the predicted figure and " → ". */
const ACTUAL_COLUMN = 17 + 9 + 3;

/** The end: predicted against actual seconds per step kind, and the wall time. */
export function outcomeLines(f: RunForecastSummary): string[] {
  const ratio = (a: number, p: number) => (p > 0 ? ` (${(a / p).toFixed(2)}×)` : '');
  return [
    'predicted → actual:',
    ...f.steps
      .filter((t) => t.predicted > 0 || t.actual > 0.05)
      .map(
        (t) =>
          `  ${t.step.padEnd(14)} ${formatSeconds(t.predicted).padStart(9)} → ${formatSeconds(t.actual).padStart(9)}${ratio(t.actual, t.predicted)}`,
      ),
    `  wall time      ${formatSeconds(f.predicted_wall_s).padStart(9)} → ${formatSeconds(f.actual_wall_s).padStart(9)}${ratio(f.actual_wall_s, f.predicted_wall_s)}${f.waits ? ', waits apart' : ''}`,
    ...(f.waits
      ? [
          `${'  waits for a core'.padEnd(ACTUAL_COLUMN)}${formatSeconds(f.waited_s ?? 0).padStart(9)} (${f.waits} wait${f.waits === 1 ? '' : 's'}: another process held the core; not forecast)`,
          `${'  in all'.padEnd(ACTUAL_COLUMN)}${formatSeconds(f.actual_wall_s + (f.waited_s ?? 0)).padStart(9)}`,
        ]
      : []),
  ];
}
