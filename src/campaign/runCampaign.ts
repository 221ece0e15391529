import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { sweepScratch } from '../util/scratch.js';
import { harnessTools } from '../compile/harnessTools.js';
import { CoreBusy, type CoreLease, lockCore } from '../env/cpuLock.js';
import { addCosts, type ProcessCost } from '../measure/processCost.js';
import { hostEnvironment, hostProblems, type HostEnvironment } from '../env/host.js';
import { probeSandbox } from '../env/sandboxProbe.js';
import { lockSystem } from '../evidence/lock.js';
import { formatSeconds } from '../text/format.js';
import { leftoverTempFiles, readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import { firstLineOf } from '../sandbox/runProcess.js';
import type { CampaignSummary, InstanceContext, InstanceSummary, PhaseStep, RunContext } from './context.js';
import { measure } from './measure.js';
import { unseen } from './unseen.js';
import { seedId } from '../kat/unseen.js';
import { againstOptions, planRun, type CampaignOptions, type RunPlan, type Unit } from './runPlan.js';
import { allowedCpus, withOwnThreadsOn } from '../env/cpus.js';
import type { BuildEntry, BuildJson } from '../evidence/fileTypes.js';
import { filledSeconds, unitCost } from './forecast.js';
import { runSchedule, type ScheduleOptions, type SpareCore, stagesOf } from './schedule.js';
import { forecastUnits, outcomeLines, planLines, RunTracker, WaitClock } from './tracker.js';
import type { Progress } from './progress.js';
import { prepare, saveEntry } from './prepare.js';
import { profile, profileBuild } from './profilePhase.js';
import { stale } from './stale.js';
import { ct, ctBuild } from './ctPhase.js';
import { CanaryReference } from '../measure/canary.js';
import { SIDE_BY_SIDE_TIMING } from '../config/defaults.js';

export { katShown, type CampaignSummary, type PhaseStep } from './context.js';
export {
  KNOWN_PHASES,
  PHASES,
  REMEASURE,
  type CampaignOptions,
  type Phase,
  type Remeasure,
} from './runPlan.js';

/**
 * What a run does for each instance, in order. A new phase is a file exporting a PhaseStep and
 * one entry here; a step that names a `phase` runs only when the run's phases include it.
 */
export const PHASE_STEPS: readonly PhaseStep[] = [prepare, stale, unseen, profileBuild, ctBuild, measure, profile, ct];

/**
 * One run of a campaign into DATA_DIR/<system>: checked in full before anything runs (planRun),
 * then, holding the folder's lock, every step of `steps` for each instance.
 */
export async function runCampaign(opts: CampaignOptions, steps: readonly PhaseStep[] = PHASE_STEPS): Promise<CampaignSummary> {
  const startedMs = Date.now();
  const plan = planRun({ ...opts, shardCost: opts.shardCost ?? expectedCosts(steps) });
  // What a run killed outright (kill -9) left in the temporary folder: dec's keys, gdb's scripts.
  const swept = sweepScratch();
  if (swept.length > 0)
    opts.progress?.note?.(`removed ${swept.length} scratch folder(s) of ended runs: ${swept.map((d) => basename(d)).join(', ')}`);
  // What needs no core is said at once: a typo in a candidate.yml is not held behind a lock.
  for (const c of plan.invalid) opts.progress?.note?.(`${c.id} INVALID (not built): ${c.problem}`);
  // Paired: the base side is built and KAT-checked first; its timing runs with this run's.
  if (plan.against) await runCampaign({ ...againstOptions(plan, opts), progress: sideProgress(opts.progress, 'base') }, steps);
  const release = lockSystem(plan.systemDir);
  const releaseBase = plan.against ? lockSystem(plan.against.systemDir) : undefined;
  try {
    return await runLocked(plan, opts, steps, startedMs);
  } finally {
    releaseBase?.();
    release();
  }
}

/** Each instance's expected seconds under these steps: what shards balance on. */
function expectedCosts(steps: readonly PhaseStep[]) {
  return (plan: RunPlan, units: readonly Unit[]): number[] => {
    const stages = stagesOf(steps.filter((s) => s.phase === undefined || plan.phases.has(s.phase)));
    const forecasts = forecastUnits(plan, units, stages, false);
    const seconds = filledSeconds(forecasts);
    return forecasts.map((f) => unitCost(f, seconds));
  };
}

/** The base side's progress: its lines as notes of the run's own progress, marked with the side. */
function sideProgress(progress: Progress | undefined, side: string): Progress | undefined {
  if (!progress?.note) return undefined;
  const note = progress.note.bind(progress);
  return { start: () => {}, tick: (m) => note(`${side}: ${m}`), note: (m) => note(`${side}: ${m}`), done: () => {} };
}

/** Under the lock, a temporary file in the evidence is a write that never finished (a kill, a full disk): gone, and said. */
function removeUnfinishedWrites(plan: RunPlan, progress: Progress | undefined): void {
  const leftover = leftoverTempFiles(plan.systemDir, true);
  if (leftover.length > 0) progress?.note?.(`removed ${leftover.length} unfinished write(s) of an earlier run: ${leftover.join(', ')}`);
}

async function runLocked(plan: RunPlan, opts: CampaignOptions, steps: readonly PhaseStep[], startedMs: number): Promise<CampaignSummary> {
  const { run, reported } = await runContextOf(plan, opts);
  removeUnfinishedWrites(plan, opts.progress);
  const writeCampaign = campaignWriter(run);
  writeCampaign({ ended_utc: null, cpu_holds: [] });
  // Written after every hold: a run killed midway still says where it pinned what.
  const waits = new WaitClock();
  const cores = coreHolds(run, waits, (holds) => writeCampaign({ ended_utc: null, cpu_holds: holds }));
  const active = steps.filter((s) => s.phase === undefined || plan.phases.has(s.phase));
  const stages = stagesOf(active);
  await probeAtStart(run);
  // A run whose candidates are all INVALID still leaves a dataset that report and validate read.
  if (!existsSync(plan.paths.build)) writeJsonAtomic(plan.paths.build, { instances: {} });

  const before = readJsonIfExists<BuildJson>(plan.paths.build)?.instances ?? {};
  const pool = poolOf(
    plan,
    opts,
    stages.some((s) => s.kind === 'timing'),
  );
  if (pool.capped) run.progress?.note?.(pool.capped);
  const poolCpus = pool.cpus;
  // A KAT's pieces spread over the pool's cores, a lent timing core included (each held by its lock).
  if (poolCpus && !opts.serial)
    run.borrowCores = (what, own) =>
      cores.borrow(
        what,
        own,
        poolCpus.filter((c) => !own.includes(c)),
      );
  if (pool.lent) run.progress?.note?.(pool.lent.note);
  const poolOwnsCores = !opts.serial && pool.cpus !== undefined;
  const forecasts = forecastUnits(plan, plan.units, stages, poolOwnsCores);
  // Serial: every stage after the last, as on one lane.
  if (opts.serial) for (const f of forecasts) for (const s of f.stages) s.lane = 'timing';
  const tracker = new RunTracker(forecasts, pool.workers, opts.serial ? 1 : plan.cpus.length, startedMs, waits);
  const forecast = tracker.summary();
  const planned = planLines(forecast, plan.units.length);
  for (const line of planned) run.progress?.note?.(line);
  await opts.onPlan?.(planned);
  run.progress?.start(
    plan.units.reduce((a, u) => a + active.reduce((n, s) => n + s.ticks(run, u), 0), 0),
    () => tracker.eta(),
  );
  const { instances, contexts } = instanceContexts(run);
  // Longest expected first, so that the long instances are not left to run alone at the end.
  const byKey = new Map(contexts.map((c) => [c.unit.key, c]));
  const order = opts.serial ? contexts : tracker.servedOrder().map((key) => byKey.get(key)!);
  const scheduled: Scheduled = { run, tracker, waits, cores, before, stepSeconds: new Map(), poolSpans: [] };
  // While anything is timed, this process answers marks from the cores beside the timing ones.
  const timing = stages.some((s) => s.kind === 'timing');
  await withOwnThreadsOn(timing && !opts.serial ? pool.cpus : undefined, () =>
    runSchedule(order, stages, scheduleOptions(scheduled, pool, opts.serial ?? false)),
  );
  const outcome = tracker.summary();
  const timingProcesses = addCosts(reported.costs);
  writeCampaign({
    ended_utc: new Date().toISOString(),
    cpu_holds: cores.holds,
    ...(reported.counter ? { counter_source: reported.counter } : {}),
    schedule: {
      workers: pool.workers,
      pool_cpus: pool.cpus ?? null,
      serial: opts.serial ?? false,
      side_by_side: sideBySideOn(plan, opts.serial ?? false),
      pool_spans: scheduled.poolSpans,
    },
    forecast: outcome,
    ...(timingProcesses ? { timing_processes: timingProcesses } : {}),
  });
  run.progress?.done();
  for (const line of outcomeLines(outcome)) run.progress?.note?.(line);
  return {
    systemDir: plan.systemDir,
    instances,
    invalid: plan.invalid,
    forecast: { planned: forecast, outcome },
    ...(timingProcesses ? { timingProcesses } : {}),
  };
}

/** The run's context, and what its processes report for campaign.json: the counter's source, the timing processes' costs. */
async function runContextOf(plan: RunPlan, opts: CampaignOptions) {
  const reported: { counter?: string; costs: ProcessCost[] } = { costs: [] };
  const run: RunContext = {
    plan,
    tools: await harnessTools(),
    environment: hostEnvironment(plan.cpu, plan.settings.compiler),
    progress: opts.progress,
    buildCache: opts.buildCache,
    onCounter: (c) => {
      reported.counter ??= c;
    },
    onProcessCost: (c) => void reported.costs.push(c),
  };
  return { run, reported };
}

/**
 * The start check runs unpinned, beside whatever holds the cores. The counter's rate is read where
 * the trials run, inside the first hold that times anything: a run with nothing to time never
 * waits for a core to probe it.
 */
async function probeAtStart(run: RunContext): Promise<void> {
  const { plan } = run;
  await probeSandbox({ mode: plan.sandbox, probeTool: run.tools.probe, cpu: -1 });
  run.counterRate = counterRateOnce(plan.sandbox);
  run.canary = canaryPerCore();
}

/** Each instance's context, and the summaries its steps fill in, in the plan's order. */
function instanceContexts(run: RunContext): { instances: InstanceSummary[]; contexts: InstanceContext[] } {
  const instances: InstanceSummary[] = [];
  const contexts = run.plan.units.map((unit): InstanceContext => {
    const summary: InstanceSummary = { key: unit.key, operations: [] };
    instances.push(summary);
    return { run, unit, summary, tick: (message) => run.progress?.tick(`${unit.key} ${message}`) };
  });
  return { instances, contexts };
}

/** What the schedule's hooks share. */
interface Scheduled {
  /** The run as it started, unpinned. */
  run: RunContext;
  tracker: RunTracker;
  waits: WaitClock;
  cores: ReturnType<typeof coreHolds>;
  /** The build.json entries as the run found them. */
  before: Record<string, BuildEntry>;
  /** The seconds of each instance's steps that did work. */
  stepSeconds: Map<string, Record<string, number>>;
  /** When and where the preparation ran beside the timing: campaign.json keeps it with the core holds. */
  poolSpans: Array<{ what: string; cpus: number[] | null; started_utc: string; ended_utc: string }>;
}

/** The schedule's hooks: a core's lock held around timing stages, pool stages and steps timed, each instance's seconds kept. */
function scheduleOptions(sched: Scheduled, pool: Pool, serial: boolean): ScheduleOptions {
  const { run, tracker, waits, cores } = sched;
  const { plan } = run;
  return {
    workers: pool.workers,
    ...(pool.cpus ? { poolCpus: pool.cpus } : {}),
    ...(pool.lent ? { lentCpus: pool.lent.cpus } : {}),
    cores: plan.cpus.length,
    serial,
    onCore: (ctx, stage, cpu, work) => {
      const what = `${ctx.unit.key} ${stage.steps.map((s) => s.name).join(',')}`;
      return cores.on(
        what,
        (line) => run.progress?.note?.(`${ctx.unit.key} ${line}`),
        async (pinned) => {
          ctx.run = pinned;
          tracker.stageStarted(ctx.unit.key);
          try {
            await work();
          } finally {
            ctx.run = run;
          }
        },
        cpu === undefined ? undefined : [cpu],
      );
    },
    async onPool(ctx, stage, cpus, work) {
      const started_utc = new Date().toISOString();
      tracker.stageStarted(ctx.unit.key);
      waits.workStarted();
      try {
        await work();
      } finally {
        waits.workEnded();
      }
      sched.poolSpans.push({
        what: `${ctx.unit.key} ${stage.steps.map((s) => s.name).join(',')}`,
        cpus: cpus ? [...cpus] : null,
        started_utc,
        ended_utc: new Date().toISOString(),
      });
    },
    runStep: (ctx, step) => runTimedStep(sched, ctx, step),
    onUnitDone: (ctx) => keepStepSeconds(plan, ctx.unit.key, sched.before[ctx.unit.key], sched.stepSeconds.get(ctx.unit.key)),
    ...(sideBySideOn(plan, serial)
      ? { sideBySide: true, spareCore: (ctx, stage) => cores.spare(`${ctx.unit.key} ${stage.steps.map((s) => s.name).join(',')}`) }
      : {}),
  };
}

/** Whether an instance's operations may be timed on several of the run's cores at once (ngcc-perf.yml `side_by_side`). */
function sideBySideOn(plan: RunPlan, serial: boolean): boolean {
  return !serial && plan.cpus.length > 1 && (plan.settings.systems[plan.system]?.side_by_side ?? SIDE_BY_SIDE_TIMING);
}

/** Runs a step and keeps its seconds, with its parts', when it did work. */
async function runTimedStep(sched: Scheduled, ctx: InstanceContext, step: PhaseStep): Promise<void> {
  const { tracker, stepSeconds } = sched;
  const started = performance.now();
  const outcome = await step.run(ctx);
  const seconds = (performance.now() - started) / 1000;
  tracker.stepDone(ctx.unit.key, step.name, seconds, outcome === 'kept');
  if (outcome !== 'kept') {
    const mine = stepSeconds.get(ctx.unit.key) ?? {};
    // Milliseconds are plenty for a plan, and keep build.json readable.
    for (const [name, s] of [[step.name, seconds] as const, ...Object.entries(ctx.parts ?? {})]) mine[name] = Math.round(s * 1000) / 1000;
    stepSeconds.set(ctx.unit.key, mine);
  }
  ctx.parts = undefined;
}

/** One canary reference per timing core, kept for the run. */
function canaryPerCore(): (pinned: RunContext) => CanaryReference {
  const byCore = new Map<number, CanaryReference>();
  return (pinned) => {
    const cpu = pinned.plan.cpu;
    if (!byCore.has(cpu)) byCore.set(cpu, new CanaryReference());
    return byCore.get(cpu)!;
  };
}

/** The counter's rate, probed once, on the core of the first pinned run that asks. */
function counterRateOnce(sandbox: RunPlan['sandbox']): (pinned: RunContext) => Promise<number | undefined> {
  let rate: Promise<number | undefined> | undefined;
  return (pinned) => {
    rate ??= probeSandbox({ mode: sandbox, probeTool: pinned.tools.probe, cpu: pinned.plan.cpu }).then((p) => p.counterHz);
    return rate;
  };
}

interface Pool {
  workers: number;
  /** The workers' cores, worker k on cpus[k mod n]; undefined: not confined (no core beside timing). */
  cpus?: number[];
  /** Why `--jobs` was lowered. */
  capped?: string;
  /** Timing cores lent to the pool by a run that times nothing: their stages hold the core's lock. */
  lent?: { cpus: number[]; note: string };
}

/**
 * The workers beside timing: one per allowed CPU that is not a timing core (at least one), their
 * processes confined to those CPUs; `--jobs` sets the count, at most one per such CPU: a profile
 * round holds its worker's core, and a second worker there would build beside it. A run that times
 * nothing (`--phases build,kat`) lends its timing cores to the pool too, after the others: a worker
 * there holds the core's host-wide lock while it works, so another run timing on that core is not
 * disturbed, it waits.
 */
function poolOf(plan: RunPlan, opts: CampaignOptions, timesAnything: boolean): Pool {
  const allowed = allowedCpus() ?? [];
  const beside = allowed.filter((c) => !plan.cpus.includes(c));
  // Timing cores with nothing to time: free to build on.
  const spare = timesAnything || opts.serial ? [] : allowed.filter((c) => plan.cpus.includes(c));
  const cpus = [...beside, ...spare];
  if (cpus.length === 0) return { workers: Math.max(1, opts.jobs ?? 0) };
  const workers = Math.min(cpus.length, Math.max(1, opts.jobs ?? cpus.length));
  const capped =
    opts.jobs !== undefined && opts.jobs > cpus.length
      ? `--jobs ${opts.jobs}: ${cpus.length} CPU(s) ${spare.length > 0 ? 'allowed' : 'beside timing'}, so ${workers} worker(s): profile rounds and ct runs need a core of their own`
      : undefined;
  const lentCpus = spare.filter((c) => cpus.indexOf(c) < workers);
  const lent =
    lentCpus.length > 0
      ? { cpus: lentCpus, note: `nothing is timed: CPU ${lentCpus.join(', ')} (timing) builds too, holding its lock while it does` }
      : undefined;
  return { workers, cpus, ...(capped ? { capped } : {}), ...(lent ? { lent } : {}) };
}

/** The seconds of the steps that did work, into the instance's build.json entry (the others keep theirs). */
function keepStepSeconds(plan: RunPlan, key: string, before: BuildEntry | undefined, seconds: Record<string, number> | undefined): void {
  if (!seconds) return;
  const entry = readJsonIfExists<BuildJson>(plan.paths.build)?.instances[key];
  // An entry rebuilt this run starts without the figures of steps that kept their evidence.
  if (entry) saveEntry({ plan }, key, { ...entry, step_seconds: { ...before?.step_seconds, ...entry.step_seconds, ...seconds } });
}

/** One hold of a core's host-wide lock, as campaign.json records it. */
interface CpuHold {
  cpu: number;
  /** The instance and steps (or `counter probe`) that ran on the core. */
  what: string;
  acquired_utc: string;
  released_utc: string;
  waited_s: number;
}

/**
 * Work on one of the run's cores (plan.cpus) while holding its host-wide lock (src/env/cpuLock.ts),
 * so that no other ngcc-perf process on this host, of any job or shard, pins anything to that core
 * meanwhile. The work gets the run with `plan.cpu` (and the environment) of the core it holds. Every
 * hold is kept, with times taken inside it, for campaign.json.
 */
function coreHolds(run: RunContext, waits: WaitClock, onHold: (holds: CpuHold[]) => void) {
  const { plan } = run;
  const environments = new Map<number, HostEnvironment>([[plan.cpu, run.environment]]);
  // What a waiter's line shows first is the step; the run and its folder, long, come last.
  const holder = `ngcc-perf, system ${plan.system}${plan.shard ? ` shard ${plan.shard.index}/${plan.shard.count}` : ''} into ${plan.systemDir}`;
  const holds: CpuHold[] = [];
  // The cores this run holds now: a spare core is one of the others.
  const mine = new Set<number>();
  const claims = new CoreClaims();
  /** The hold of a lease: the run pinned to its core, and its release, which notes the hold. */
  const held = (what: string, lease: CoreLease): SpareCore => {
    const cpu = lease.cpu;
    mine.add(cpu);
    if (!environments.has(cpu)) environments.set(cpu, hostEnvironment(cpu, plan.settings.compiler));
    const pinned: RunContext = cpu === plan.cpu ? run : { ...run, plan: { ...plan, cpu }, environment: environments.get(cpu)! };
    waits.workStarted();
    let released = false;
    return {
      run: pinned,
      release() {
        if (released) return;
        released = true;
        waits.workEnded();
        holds.push({ cpu, what, acquired_utc: lease.acquired_utc, released_utc: new Date().toISOString(), waited_s: lease.waited_s });
        mine.delete(cpu);
        lease.release();
        onHold(holds);
      },
    };
  };
  return {
    holds,
    async on<T>(
      what: string,
      say: (line: string) => void,
      work: (pinned: RunContext) => Promise<T>,
      cpus: readonly number[] = plan.cpus,
    ): Promise<T> {
      const one = cpus.length === 1 ? cpus[0]! : undefined;
      if (one === undefined) return holding(what, say, work, cpus);
      await claims.claim(one);
      try {
        return await holding(what, say, work, cpus);
      } finally {
        claims.give(one);
      }
    },
    /** One of `cpus` (the run's timing cores) that neither this run nor another process holds now, or undefined: it never waits. */
    spare,
    /**
     * Each of `cpus` that no step of this run and no other process holds now, held until `release`
     * (a KAT's pieces on the pool's cores): a step that wants one meanwhile waits for it. It never waits.
     */
    borrow: (what: string, own: readonly number[], cpus: readonly number[]) => borrowFree(claims, (cpu) => spare(what, [cpu]), own, cpus),
  };

  async function holding<T>(
    what: string,
    say: (line: string) => void,
    work: (pinned: RunContext) => Promise<T>,
    cpus: readonly number[],
  ): Promise<T> {
    let waited = false;
    const lease = await lockCore([...cpus], {
      what: `${what} — ${holder}`,
      onWait: (line) => {
        if (!waited) waits.waitStarted();
        waited = true;
        say(line);
        run.progress?.waiting?.(line);
      },
    });
    if (waited) {
      waits.waitEnded();
      run.progress?.waiting?.(undefined);
      say(`has CPU ${lease.cpu} after waiting ${formatSeconds(lease.waited_s)}`);
    }
    const hold = held(what, lease);
    try {
      return await work(hold.run);
    } finally {
      hold.release();
    }
  }

  async function spare(what: string, cpus: readonly number[] = plan.cpus): Promise<SpareCore | undefined> {
    const free = cpus.filter((c) => !mine.has(c));
    if (free.length === 0) return undefined;
    try {
      return held(what, await lockCore(free, { what: `${what} — ${holder}`, noWait: true }));
    } catch (e) {
      if (e instanceof CoreBusy) return undefined;
      throw e;
    }
  }
}

/**
 * Each of `cpus` no step has claimed and `take` can hold now, claimed and held until `release`; the
 * borrower's own core is claimed meanwhile too, so another KAT does not borrow it. On an error, what
 * it took is given back.
 */
async function borrowFree(
  claims: CoreClaims,
  take: (cpu: number) => Promise<SpareCore | undefined>,
  own: readonly number[],
  cpus: readonly number[],
): Promise<{ cpus: number[]; release(): void }> {
  const ownClaimed = own.filter((cpu) => claims.tryClaim(cpu));
  const got: Array<{ cpu: number; core: SpareCore }> = [];
  const release = () => {
    for (const { cpu, core } of got) {
      core.release();
      claims.give(cpu);
    }
    for (const cpu of ownClaimed) claims.give(cpu);
  };
  try {
    for (const cpu of cpus) {
      if (!claims.tryClaim(cpu)) continue;
      const core = await take(cpu).catch((e: unknown) => {
        claims.give(cpu);
        throw e;
      });
      if (core) got.push({ cpu, core });
      else claims.give(cpu);
    }
  } catch (e) {
    release();
    throw e;
  }
  return { cpus: got.map((g) => g.cpu), release };
}

/**
 * The cores steps of this run hold or are about to: lockCore refuses a core its own process holds,
 * so a step that wants one core (a profile round's, a ct run's) waits here while a KAT's pieces
 * have borrowed it, and a borrow passes over a core a step has.
 */
class CoreClaims {
  private readonly given = new Map<number, { done: Promise<void>; resolve: () => void }>();

  /** Claims `cpu` now; false when another step has it. */
  tryClaim(cpu: number): boolean {
    if (this.given.has(cpu)) return false;
    let resolve = () => {};
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    this.given.set(cpu, { done, resolve });
    return true;
  }

  async claim(cpu: number): Promise<void> {
    while (!this.tryClaim(cpu)) await this.given.get(cpu)!.done;
  }

  give(cpu: number): void {
    const claim = this.given.get(cpu);
    this.given.delete(cpu);
    claim?.resolve();
  }
}

/**
 * campaign.json: the start of the first run and the end of the last, the host as every run found
 * it (host_checks, one per run), the planning and flags in force.
 */
function campaignWriter(run: RunContext): (extra: Record<string, unknown>) => void {
  const { plan, environment } = run;
  const campaignJson = readJsonIfExists<Record<string, unknown>>(plan.paths.campaign) ?? {};
  const hostChecks = (campaignJson.host_checks as unknown[] | undefined) ?? [];
  const now = new Date().toISOString();
  const started = (campaignJson.started_utc as string | undefined) ?? now;
  // What names this run's night on the trend pages: a campaign.json may hold many runs (a resumed or
  // merged folder); the latest run's start, the tool and the campaign's commit are this run's own.
  const lastRun = {
    started_utc: now,
    harness_version: run.tools.version,
    campaign_commit: firstLineOf(['git', '-C', plan.campaignDir, 'rev-parse', 'HEAD']),
    // Which secret seed the unseen-seed check held this run's libraries to (campaign/unseen.ts): its id, never the seed; null when off.
    unseen_seed_id: plan.unseenSeed ? seedId(plan.unseenSeed) : null,
  };
  const changed =
    lastRun.campaign_commit !== null && Boolean(firstLineOf(['git', '-C', plan.campaignDir, 'status', '--porcelain', '--', '.']));
  if (changed) Object.assign(lastRun, { campaign_changed: true });
  hostChecks.push({
    phase: `${plan.iccsBaseline ? 'iccs-baseline: ' : ''}${[...plan.phases].join(',')}`,
    cpu: plan.cpu,
    utc: new Date().toISOString(),
    problems: hostProblems(environment),
    ...(plan.shard ? { shard: `${plan.shard.index}/${plan.shard.count}` } : {}),
  });
  const campaignWide = {
    planning: plan.settings.planning,
    flags: plan.settings.flags,
    fixed_clock_hz: plan.settings.systems[plan.system]?.fixed_clock_hz ?? null,
    // The cores this run could take; which one each hold took is in cpu_holds.
    cpus: plan.cpus,
    // The latest run's view: a candidate mended since is no longer listed.
    invalid_candidates: plan.invalid,
  };
  // The ICCS baseline adds instances to a campaign's folder: the campaign's own fields stay its own.
  const own = plan.iccsBaseline && campaignJson.planning !== undefined ? {} : campaignWide;
  return (extra) =>
    writeJsonAtomic(plan.paths.campaign, {
      schema: 2,
      system_id: plan.system,
      tool: 'ngcc-perf',
      harness_version: run.tools.version,
      ...campaignJson,
      started_utc: started,
      environment_at_start: campaignJson.environment_at_start ?? environment,
      environment_latest: environment,
      host_checks: hostChecks,
      ...own,
      last_run: lastRun,
      // One unsandboxed run makes the folder's evidence unsandboxed.
      sandbox: campaignJson.sandbox === 'none' ? 'none' : plan.sandbox,
      ...extra,
    });
}
