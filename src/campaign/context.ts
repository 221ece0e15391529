import { buildInstance, type BuildCache, type BuildRequest, type BuildResult, type FlagSet } from '../compile/compile.js';
import type { HarnessTools } from '../compile/harnessTools.js';
import type { HostEnvironment } from '../env/host.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BuildEntry } from '../evidence/fileTypes.js';
import { sha256File } from '../util/fsx.js';
import type { Candidate, InvalidCandidate } from '../config/campaign.js';
import { digestBitsOf } from '../config/hashInstance.js';
import type { InstanceSpec } from '../config/schemas.js';
import { hashDriverType } from '../measure/hashOperations.js';
import type { Forgery, InstanceStatus, KatStatus } from '../kat/status.js';
import type { CanaryReference } from '../measure/canary.js';
import type { ProcessCost } from '../measure/processCost.js';
import type { RunForecastSummary, StepEstimate } from './forecast.js';
import type { Phase, RunPlan, Unit } from './runPlan.js';
import type { Progress } from './progress.js';

/** The kind of core a step holds while it runs (PhaseStep.core). */
export type StepCore = 'timing' | 'exclusive';

/** What every phase step of a run shares. */
export interface RunContext {
  plan: RunPlan;
  /** The native drivers (ngcc_driver, ngcc_mem, ngcc_probe) and the harness version. */
  tools: HarnessTools;
  /**
   * The cycle counter's rate, probed on the pinned run's core the first time a step asks (trials are
   * checked against the kernel's view with it): asked inside a core's hold, so that a run with
   * nothing to time never waits for a core to probe it.
   */
  counterRate?(pinned: RunContext): Promise<number | undefined>;
  /** The host's recent canaries on the pinned run's core (measure/canary.ts): one reference per core for the run. */
  canary?(pinned: RunContext): CanaryReference;
  /**
   * The pool's cores besides `own` (the borrower's, which no other KAT borrows meanwhile) that no
   * process holds now, each held by its host-wide lock (kept in campaign.json's cpu_holds) until
   * `release`: where a KAT's pieces spread without sharing a core with a profile round or a ct run,
   * which hold theirs. It never waits.
   */
  borrowCores?(what: string, own: readonly number[]): Promise<{ cpus: number[]; release(): void }>;
  /** The host as the run found it (written into each timing record). */
  environment: HostEnvironment;
  progress?: Progress;
  buildCache?: BuildCache;
  /** Notes the cycle counter a measurement used (the run writes the first one into campaign.json). */
  onCounter(source: string): void;
  /** Notes where a timing process's wall time went (the run adds them up into campaign.json). */
  onProcessCost?(cost: ProcessCost): void;
}

export interface InstanceSummary {
  key: string;
  /** Undefined when the library was built but its KAT was not run (not checked, not a failure). */
  kat?: KatStatus;
  detail?: string;
  /** Set when a replay disagreed with a trial of the instance: its status is FORGED (kat/status.ts). */
  forged?: Forgery;
  /** Set when the guide build failed (to build, or its KAT) and the harness defaults were measured: why (build.json guide_error). */
  fellBack?: string;
  operations: Array<{ operation: string; status: string; mean_cycles?: number; skipped: boolean; failure?: string; spread?: number }>;
}

export interface CampaignSummary {
  systemDir: string;
  instances: InstanceSummary[];
  /** The plan printed before the run, and how it went (campaign/tracker.ts). */
  forecast?: { planned: RunForecastSummary; outcome: RunForecastSummary };
  /** Candidates not built because their candidate.yml or kat.sha256 is wrong (status INVALID). */
  invalid: InvalidCandidate[];
  /** The timing processes' wall time, part by part (measure/processCost.ts), when any ran. */
  timingProcesses?: ProcessCost & { processes: number };
}

/** What the phase steps of one instance share; each step reads what the earlier ones left. */
export interface InstanceContext {
  run: RunContext;
  unit: Unit;
  /** The instance's build.json entry: set by the prepare step, read by the later ones. */
  entry?: BuildEntry;
  /** The instance's row of the run's summary (its operations are added by the measure step). */
  summary: InstanceSummary;
  /** One progress line about this instance (prefixed with its key). */
  tick(message: string): void;
  /**
   * Seconds of the parts of the current step that a forced rerun finds on disk or does again (the
   * KAT of `prepare`, the relink of `profile-build`): kept in build.json `step_seconds` beside the
   * step's own, for the next run's plan.
   */
  parts?: Record<string, number>;
  /**
   * Set while a timing stage holds its core with side-by-side timing on (campaign/schedule.ts):
   * runs `work` on bundles of `parts` at once, each bundle on a timing core of its own.
   */
  sideBySide?: SideBySide;
}

/**
 * Deals `parts` into as many bundles as there are timing cores free now (the stage's own and the
 * others, each held by its lock while its bundle runs) and runs `work` on each bundle with the run
 * pinned to its core; one bundle of them all on the stage's own core when no other is free. Every
 * part stays in one bundle, so all of a part's processes run on one core.
 */
export type SideBySide = <T>(parts: readonly T[], work: (bundle: T[], pinned: RunContext) => Promise<void>) => Promise<void>;

/**
 * One phase of the work on an instance. The run calls every step of its list, in order, for each
 * instance; a step depends only on the context (and on the build.json entry of the prepare step).
 */
export interface PhaseStep {
  name: string;
  /** The --phases name that turns this step on; a step without one always runs. */
  phase?: Phase;
  /**
   * The core it needs (campaign/schedule.ts): `timing` for timed trials (a timing core),
   * `exclusive` for work that must not share its core but times nothing (profile rounds,
   * constant-time runs). Without one, it runs on the pool beside them (builds, KATs, surveys).
   */
  core?: StepCore;
  /** The progress lines the step prints for an instance (the run's total is their sum). */
  ticks(run: RunContext, unit: Unit): number;
  /**
   * How long the step will take for this instance (campaign/forecast.ts): `previous` is the
   * instance's build.json entry before the run. Without it, the step's previous duration, if any.
   */
  expect?(plan: RunPlan, unit: Unit, previous: BuildEntry | undefined): StepEstimate;
  /**
   * Whether the step has work for a core for this instance (default: it has). A stage none of whose
   * steps has any runs without taking a core's lock: a run that keeps everything waits for no core.
   */
  needsCore?(ctx: InstanceContext): boolean;
  /** Resolves to 'kept' when the step kept what was there and did no work (its time forecasts nothing). */
  // biome-ignore lint/suspicious/noConfusingVoidType: a step that returns nothing (async, no return) did its work
  run(ctx: InstanceContext): Promise<void | 'kept'>;
}

/**
 * A forced rerun's estimate of a step whose `part` it finds on disk (builds and relinks are keyed by
 * their sources, so an instance whose library is still there is rebuilt from disk): the previous
 * run's figure without that part, or, with `keep`, that part alone. Undefined when it is not such a
 * rerun or a figure is missing.
 */
export function forcedRerunSeconds(
  plan: Pick<RunPlan, 'force' | 'campaignDir'>,
  previous: BuildEntry | undefined,
  step: string,
  part: string,
  keep: 'part' | 'rest',
): StepEstimate | undefined {
  const [whole, some] = [previous?.step_seconds?.[step], previous?.step_seconds?.[part]];
  if (!plan.force || !previous?.library || !existsSync(resolve(plan.campaignDir, previous.library))) return undefined;
  if (typeof whole !== 'number' || typeof some !== 'number') return undefined;
  return { seconds: keep === 'part' ? some : Math.max(0, whole - some), source: 'previous' };
}

/** The step's seconds in the previous run that did its work, as the forecast's default. */
export function previousSeconds(step: string, previous: BuildEntry | undefined): StepEstimate {
  const s = previous?.step_seconds?.[step];
  return typeof s === 'number' ? { seconds: s, source: 'previous' } : { source: 'none' };
}

/** How an instance's status reads in progress lines and summaries; no status means the KAT was not run. */
export const katShown = (status: InstanceStatus | undefined): string => status ?? 'not checked';

/** The build.json entry of an instance, which the prepare step sets before any other step runs. */
export function preparedEntry(ctx: InstanceContext, step: string): BuildEntry {
  if (!ctx.entry) throw new Error(`the ${step} step of ${ctx.unit.key} ran before the prepare step`);
  return ctx.entry;
}

/** The build of an instance under a flag set (shared by the plain build and the profiling relink). */
export function buildRequest(run: RunContext, unit: Unit, flagSet: FlagSet): BuildRequest {
  const { settings, paths } = run.plan;
  return {
    candidate: unit.candidate,
    instance: unit.instance,
    index: unit.index,
    outDir: paths.buildDir(unit.candidate.id, unit.instance.label),
    flagSet,
    variant: settings.flags.variant,
    extraFlags: settings.flags.extra,
    harnessVersion: run.tools.version,
    timeoutMs: settings.planning.build_timeout_s * 1000,
    memoryLimitBytes: settings.planning.memory_limit_mb * 1024 * 1024,
    cache: run.buildCache,
    sandbox: run.plan.sandbox,
    compiler: settings.compiler,
  };
}

/** Builds an instance under a flag set (an unchanged build is taken from disk or the cache). */
export const buildUnit = (run: RunContext, unit: Unit, flagSet: FlagSet): Promise<BuildResult> =>
  buildInstance(buildRequest(run, unit, flagSet));

/**
 * Why the library on disk is no longer the one the prepare step built and KAT-checked (another
 * process replaced it between the phases), or undefined when it is the same. Timing a replaced
 * library would publish its numbers under the checked library's name.
 */
export function libraryReplaced(run: RunContext, entry: BuildEntry): string | undefined {
  if (!entry.library || !entry.library_sha256) return undefined;
  const path = resolve(run.plan.campaignDir, entry.library);
  if (!existsSync(path)) return `the library ${entry.library} is gone since its build`;
  const now = sha256File(path);
  return now === entry.library_sha256
    ? undefined
    : `the library ${entry.library} changed since its build and KAT (sha256 ${now.slice(0, 12)}…, built ${entry.library_sha256.slice(0, 12)}…)`;
}

/** The driver's TYPE: a hash instance's carries its digest length (its KAT found it, or failed). */
export function driverTypeOf(candidate: Candidate, instance: InstanceSpec): string {
  if (candidate.type !== 'hash') return candidate.type;
  const index = candidate.instances.indexOf(instance);
  const digest = digestBitsOf(candidate.folder, instance, index);
  return hashDriverType('bits' in digest ? digest.bits : 0);
}

/** The drivers' RNG argument: a hash draws no randomness, so it needs no generator of its own. */
export const driverRngOf = (candidate: Candidate): string => (candidate.type === 'hash' ? 'auto' : candidate.katRng);
