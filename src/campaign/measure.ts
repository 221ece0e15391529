import { resolve } from 'node:path';
import { appendTrials, buildRecord } from '../evidence/record.js';
import type { TimingRecord } from '../evidence/fileTypes.js';
import { forgeryShown, measurable, type Forgery } from '../kat/status.js';
import { measureOperations, operationsOf, type OperationRequest, type OperationResult } from '../measure/operation.js';
import { deriveStatistics, NOISY_TRIAL_SPREAD, trialSpread } from '../measure/stats.js';
import { precisionOf } from '../measure/precision.js';
import type { BuildEntry, BuildJson } from '../evidence/fileTypes.js';
import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import { saveEntry } from './prepare.js';
import {
  driverRngOf,
  driverTypeOf,
  katShown,
  libraryReplaced,
  preparedEntry,
  previousSeconds,
  type InstanceContext,
  type InstanceSummary,
  type PhaseStep,
  type RunContext,
} from './context.js';
import { plannedOperationSeconds } from './forecast.js';
import { readPrevious } from './previous.js';
import { UNSEEN_CHECK } from '../kat/unseen.js';
import { measuredSideBySide } from './sideBySide.js';

/** A kept record `--remeasure noisy` measures again: its trials spread NOISY_TRIAL_SPREAD or more. */
function remeasuredNoisy(plan: { remeasure: ReadonlySet<string> }, r: TimingRecord): boolean {
  if (!plan.remeasure.has('noisy') || !r.trials?.length) return false;
  return (trialSpread(deriveStatistics(r.trials), r.trials.length) ?? 0) >= NOISY_TRIAL_SPREAD;
}

/**
 * What a paired side's record becomes: the new one, or in extra rounds (RunPlan.extraRounds) the
 * first rounds' record with the new trials appended.
 */
function appendedTo(extra: boolean) {
  return (path: string, record: TimingRecord): TimingRecord => {
    const first = extra ? readJsonIfExists<TimingRecord>(path) : undefined;
    return first?.paired === true ? { ...appendTrials(first, record), paired: true } : record;
  };
}

/** A record's plan was adaptive (measure/plan.ts: only an adaptive plan has a stopping rule). */
const isAdaptivePlan = (p: unknown): boolean => typeof p === 'object' && p !== null && 'adaptive' in p;

/** Timing of every operation of an instance (a complete record of the same library is kept). */
export const measure: PhaseStep = {
  name: 'measure',
  phase: 'measure',
  core: 'timing',
  // A key exchange's passes are known only after its KAT: the count assumes two, the usual number.
  ticks: (_run, unit) => operationsOf(unit.candidate.type, 2).length,
  needsCore: measuresAnything,
  expect: (plan, unit, previous) => {
    // A KAT that forbade timing will most likely forbid it again: nothing to time.
    if (previous?.kat !== undefined && !measurable(previous.kat)) return { seconds: 0, source: 'kept' };
    const ops = operationsOf(unit.candidate.type, previous?.sizes?.kex_passes);
    // Each operation's record on disk, read once: whether it is kept, and which kind of plan it had.
    const records = ops.map((op) => readJsonIfExists<TimingRecord>(plan.paths.record(unit.candidate.id, unit.instance.label, op)));
    // A FORGED record of the same library is kept as it is (below), like a complete one.
    const kept = (r: TimingRecord | undefined) =>
      r?.library_sha256 === previous?.library_sha256 &&
      ((r?.status === 'complete' && !remeasuredNoisy(plan, r)) || r?.forged !== undefined);
    if (!plan.force && !plan.against && previous?.library_sha256 && records.every(kept)) return { seconds: 0, source: 'kept' };
    const planning = plan.settings.planning;
    const known = previousSeconds('measure', previous);
    // The previous run's figure holds for the same kind of plan: a fixed run's 5 trials say nothing
    // of how many an adaptive one takes, nor the other way round.
    const before = records[0]?.plan;
    const samePlan = before === undefined || isAdaptivePlan(before) === planning.adaptive.enabled;
    if (known.source !== 'none' && samePlan) return known;
    return {
      seconds: ops.length * plannedOperationSeconds(planning),
      source: 'plan',
      ...(planning.adaptive.enabled ? { machineBound: true } : {}),
    };
  },
  async run(ctx) {
    const { unit, run } = ctx;
    const { plan } = run;
    const entry = preparedEntry(ctx, 'measure');
    // FORGED on unseen seeds (campaign/unseen.ts): no figure of this library stands.
    if (entry.forged?.operation === UNSEEN_CHECK) {
      unmeasured(
        ctx,
        operationsOf(unit.candidate.type, entry.sizes?.kex_passes),
        { status: 'failed', skipped: true, failure: entry.forged.detail },
        `not measured (${forgeryShown(entry.forged)})`,
      );
      return 'kept';
    }
    const replaced = new Set<string>();
    const todo = await operationRequests(ctx, entry, replaced);
    if (todo.length === 0) {
      noteForgery(ctx, entry);
      return 'kept';
    }
    const operations = todo.map((r) => r.operation);
    const replacedLibrary = libraryReplaced(run, entry);
    if (replacedLibrary) {
      unmeasured(ctx, operations, { status: 'failed', skipped: false, failure: replacedLibrary }, `failed (${replacedLibrary})`);
      return;
    }
    const base = pairedBase(ctx, todo);
    const extra = plan.extraRounds;
    const appended = appendedTo(extra !== undefined);
    // Extra rounds are pairs: without the base side they would only replace the first rounds' record.
    if (extra && !base) {
      unmeasured(ctx, operations, { status: 'complete', skipped: true }, 'no base side to pair with: no extra rounds');
      return 'kept';
    }
    if (base) ctx.run.progress?.note?.(`${unit.key}: measured alongside its base (${base.entry.library}), trials interleaved`);
    // Each bundle on the core it was given (campaign/sideBySide.ts): by default all of them, on this stage's.
    await measuredSideBySide(ctx, unit.candidate.type, todo, async (mine, pinned) => {
      // Paired, each operation's base side follows it: [head keygen, base keygen, head enc, …].
      const reqs = base ? pairedRequests(plan, entry, mine, base) : mine;
      const recording: Recording = { ctx, run: pinned, entry, todo: mine, base, appended, replaced };
      await measureOperations(reqs, (j, result) => recordResult(recording, j, result), {
        alternate: base !== undefined,
        pairs: base !== undefined,
      });
    });
    noteForgery(ctx, entry);
  },
};

/** The same row and progress line for each of `operations`, none of which this run measures. */
function unmeasured(ctx: InstanceContext, operations: readonly string[], row: Omit<OperationRow, 'operation'>, line: string): void {
  for (const operation of operations) {
    ctx.summary.operations.push({ operation, ...row });
    ctx.tick(`${operation}: ${line}`);
  }
}

/**
 * The timing request of each operation this run measures. The others get their row and line here;
 * `replaced` gets those whose unreadable record is replaced.
 */
async function operationRequests(ctx: InstanceContext, entry: BuildEntry, replaced: Set<string>): Promise<OperationRequest[]> {
  const { unit, run, summary } = ctx;
  const { plan } = run;
  const { id } = unit.candidate;
  const { label } = unit.instance;
  const todo: OperationRequest[] = [];
  const driverType = driverTypeOf(unit.candidate, unit.instance);
  for (const operation of operationsOf(unit.candidate.type, entry.sizes?.kex_passes)) {
    const previous = readPrevious<TimingRecord>(plan.paths.record(id, label, operation), plan.force, () => replaced.add(operation));
    const skip = skippedOperation(ctx, entry, operation, previous);
    if (skip) {
      summary.operations.push(skip.row);
      ctx.tick(`${operation}: ${skip.line}`);
      continue;
    }
    todo.push(await timingRequest(ctx, entry, operation, driverType));
  }
  return todo;
}

/** The request that times `operation` of the instance's library; `driverType` is the drivers' TYPE (driverTypeOf). */
async function timingRequest(ctx: InstanceContext, entry: BuildEntry, operation: string, driverType: string): Promise<OperationRequest> {
  const { unit, run } = ctx;
  const { plan } = run;
  return {
    driver: run.tools.driver,
    // skippedOperation passed it: the entry has a library.
    library: resolve(plan.campaignDir, entry.library!),
    libraryShown: entry.library!,
    type: driverType,
    operation,
    cpu: plan.cpu,
    // A hash draws no randomness: seed whatever the library has, and need none.
    rng: driverRngOf(unit.candidate),
    planning: plan.settings.planning,
    fixedClockHz: plan.settings.systems[plan.system]?.fixed_clock_hz,
    sandbox: plan.sandbox,
    counterHz: await run.counterRate?.(run),
    ...(run.canary ? { canary: run.canary(run) } : {}),
    audit: plan.audit,
    ...(entry.kat_draws?.[operation] ? { katDraws: entry.kat_draws[operation] } : {}),
    ...(entry.call_seconds ? { callSeconds: entry.call_seconds } : {}),
    ...(entry.sizes ? { sizes: entry.sizes } : {}),
  };
}

type PairedBase = NonNullable<ReturnType<typeof pairedBase>>;

/** Each operation's request, then its base side's: the same trials of another library. */
function pairedRequests(plan: RunContext['plan'], entry: BuildEntry, todo: OperationRequest[], base: PairedBase): OperationRequest[] {
  const extra = plan.extraRounds;
  // Held to its base (campaign/unseen.ts): a segment of a trial is made again by the base's library, and dec's inputs come from it.
  const truth =
    entry.held_to?.against === 'base' && entry.held_to.base_library_sha256 === base.entry.library_sha256
      ? { truthLibrary: base.library }
      : {};
  return todo.flatMap((r) => {
    // Enough pairs for the signed-rank test to reach the comparison's alpha.
    // Extra rounds: exactly their pairs, appended to the first rounds' trials.
    const trials = extra ? extra.pairs : Math.max(r.planning.trials, plan.pairedTrials);
    const paired = { ...r, ...truth, planning: { ...r.planning, trials } };
    const baseDraws = base.entry.kat_draws?.[r.operation];
    // The base side is another library: held to its own KAT's draws and call times.
    const { katDraws: _draws, callSeconds: _seconds, truthLibrary: _truth, sizes: _sizes, ...shared } = paired;
    const baseSide = {
      ...shared,
      library: base.library,
      libraryShown: base.entry.library!,
      ...(baseDraws ? { katDraws: baseDraws } : {}),
      ...(base.entry.call_seconds ? { callSeconds: base.entry.call_seconds } : {}),
      ...(base.entry.sizes ? { sizes: base.entry.sizes } : {}),
    };
    return [paired, baseSide];
  });
}

/** What each measured result is recorded with. */
interface Recording {
  ctx: InstanceContext;
  /** The run the step started with. */
  run: RunContext;
  entry: BuildEntry;
  todo: OperationRequest[];
  base: PairedBase | undefined;
  appended: ReturnType<typeof appendedTo>;
  /** Operations whose unreadable record this run replaces. */
  replaced: ReadonlySet<string>;
}

/** The `j`th request's result: its record written, and its row and progress line (a base side's only its record and a note). */
function recordResult(rec: Recording, j: number, result: OperationResult): void {
  const { run, base } = rec;
  const i = base ? Math.floor(j / 2) : j;
  const operation = rec.todo[i]!.operation;
  for (const p of result.processes) if (p.cost) run.onProcessCost?.({ ...p.cost, ...(p.inputs_s ? { inputs_s: p.inputs_s } : {}) });
  if (base && j % 2 === 1) {
    recordBaseSide(rec, base, operation, result);
    return;
  }
  recordHeadSide(rec, operation, result);
}

function recordBaseSide(rec: Recording, base: PairedBase, operation: string, result: OperationResult): void {
  const { ctx, run } = rec;
  const { id } = ctx.unit.candidate;
  const { label } = ctx.unit.instance;
  const record = buildRecord({
    unit: { candidate: base.unit.candidate, label },
    operation,
    entry: base.entry,
    result,
    environment: run.environment,
  });
  writeJsonAtomic(
    base.paths.record(id, label, operation),
    rec.appended(base.paths.record(id, label, operation), { ...record, paired: true }),
  );
  ctx.run.progress?.note?.(`${ctx.unit.key} ${operation} (base side): ${baseSideLine(result)}`);
}

function recordHeadSide(rec: Recording, operation: string, result: OperationResult): void {
  const { ctx, run, entry, base } = rec;
  const { unit } = ctx;
  const { id } = unit.candidate;
  const { label } = unit.instance;
  if (result.meta.counter) run.onCounter(result.meta.counter);
  const record = buildRecord({ unit: { candidate: unit.candidate, label }, operation, entry, result, environment: run.environment });
  const path = run.plan.paths.record(id, label, operation);
  writeJsonAtomic(path, base ? rec.appended(path, { ...record, paired: true }) : record);
  const spread = result.stats ? trialSpread(result.stats, result.trials.length) : undefined;
  ctx.summary.operations.push({
    operation,
    status: result.status,
    mean_cycles: result.stats?.mean_cycles,
    skipped: false,
    ...(result.failure ? { failure: result.failure } : {}),
    ...(spread ? { spread } : {}),
  });
  const note = resultNote(result, spread, rec.replaced.has(operation));
  ctx.tick(
    `${operation}: ${result.status}${result.stats ? ` ${Math.round(result.stats.mean_cycles)} cycles` : ` (${result.failure})`}${note}`,
  );
}

/** What the progress line adds to a result: a replaced record, noisy or disturbed trials, an adaptive plan's precision. */
function resultNote(result: OperationResult, spread: number | undefined, replacedRecord: boolean): string {
  const disturbed = result.trials.filter((t) => t.disturbed).length;
  const precision = result.plan?.adaptive || result.plan?.calls ? precisionOf(result.trials, result.plan) : undefined;
  // Adaptive or in calls: how far the trials got, so that a log shows which operations needed more of them.
  const adaptive = precision
    ? `; ${result.trials.length} ${result.plan?.calls ? 'calls' : 'trials'}, ±${((precision.ci95_rel ?? Number.NaN) * 100).toFixed(1)}% (target ±${(precision.target! * 100).toFixed(1)}% ${precision.met ? 'met' : 'not met'})`
    : '';
  return `${replacedRecord ? '; replaced an unreadable record' : ''}${spread && spread >= NOISY_TRIAL_SPREAD ? `; noisy: trials spread ${spread.toFixed(2)}×` : ''}${disturbed > 0 ? `; ${disturbed} disturbed trial${disturbed === 1 ? '' : 's'} kept after ${result.disturbed_retries} re-run${result.disturbed_retries === 1 ? '' : 's'}` : ''}${adaptive}`;
}

type OperationRow = InstanceSummary['operations'][number];

/** A base side's outcome, for the log: the comparison reads its record, and a row without base trials says why here. */
function baseSideLine(result: OperationResult): string {
  const failed = result.processes.filter((p) => p.failure);
  const reasons = [...new Set(failed.map((p) => p.failure!))].slice(0, 3);
  return [
    `${result.status}${result.failure ? ` (${result.failure})` : ''}, ${result.trials.length} trial${result.trials.length === 1 ? '' : 's'}`,
    ...(failed.length > 0 ? [`${failed.length} process${failed.length === 1 ? '' : 'es'} failed: ${reasons.join('; ')}`] : []),
  ].join('; ');
}

/**
 * Why an operation is not measured in this run, with its summary row and progress line; undefined
 * when it is. `previous` is its record on disk (none when the run is forced).
 */
function skippedOperation(
  ctx: InstanceContext,
  entry: BuildEntry,
  operation: string,
  previous: TimingRecord | undefined,
): { row: OperationRow; line: string } | undefined {
  const { plan } = ctx.run;
  const extra = plan.extraRounds;
  // Extra rounds measure the rows the first rounds left undecided, and nothing else.
  if (extra && !extra.operations.has(`${ctx.unit.key}/${operation}`))
    return { row: { operation, status: 'complete', skipped: true }, line: 'decided in the first rounds' };
  if (!measurable(entry.kat) || !entry.library)
    return { row: { operation, status: 'not measured', skipped: true }, line: `not measured (${katShown(entry.kat)})` };
  // FORGED holds for the library that earned it: measuring it again would give it another draw.
  if (!plan.force && !plan.against && previous?.forged && previous.library_sha256 === entry.library_sha256)
    return {
      row: { operation, status: 'failed', skipped: true, failure: previous.forged },
      line: `${previous.forged} (kept for this library; --force measures it again)`,
    };
  if (
    // A paired run measures both sides now: a kept record was measured at another time.
    plan.force ||
    plan.against ||
    extra ||
    previous?.status !== 'complete' ||
    previous.library_sha256 !== entry.library_sha256 ||
    previous.kat !== entry.kat ||
    remeasuredNoisy(plan, previous)
  )
    return undefined;
  // The kept record's own trials say whether it was noisy: a later run must not turn it into a plain "ok".
  const kept = previous.trials?.length ? trialSpread(deriveStatistics(previous.trials), previous.trials.length) : undefined;
  return {
    row: { operation, status: 'complete', mean_cycles: previous.mean_cycles, skipped: true, ...(kept ? { spread: kept } : {}) },
    line: `unchanged, kept${kept && kept >= NOISY_TRIAL_SPREAD ? `; noisy: trials spread ${kept.toFixed(2)}×` : ''}`,
  };
}

/** Whether the measure step will time anything for this instance (it waits for a timing core only then). */
function measuresAnything(ctx: InstanceContext): boolean {
  const entry = ctx.entry;
  if (!entry) return true;
  if (entry.forged?.operation === UNSEEN_CHECK) return false;
  const { plan } = ctx.run;
  const { id } = ctx.unit.candidate;
  const { label } = ctx.unit.instance;
  return operationsOf(ctx.unit.candidate.type, entry.sizes?.kex_passes).some((operation) => {
    const previous = plan.force ? undefined : readJsonIfExists<TimingRecord>(plan.paths.record(id, label, operation));
    return skippedOperation(ctx, entry, operation, previous) === undefined;
  });
}

/**
 * build.json `forged` follows the instance's records of its current library: set by the first record
 * a replay disagreed with, cleared when a forced run measured every operation again without one.
 */
function noteForgery(ctx: InstanceContext, entry: BuildEntry): void {
  const { plan } = ctx.run;
  const { id } = ctx.unit.candidate;
  const { label } = ctx.unit.instance;
  const records = operationsOf(ctx.unit.candidate.type, entry.sizes?.kex_passes).map((op) => ({
    op,
    r: readJsonIfExists<TimingRecord>(plan.paths.record(id, label, op)),
  }));
  const found = records.find(({ r }) => r?.forged && r.library_sha256 === entry.library_sha256);
  // A forgery found on unseen seeds (campaign/unseen.ts) is no record's: it stays.
  const unseenForgery = entry.forged?.operation === UNSEEN_CHECK ? entry.forged : undefined;
  const forged: Forgery | undefined = found ? { operation: found.op, detail: found.r!.forged! } : unseenForgery;
  ctx.summary.forged = forged;
  if (JSON.stringify(forged) === JSON.stringify(entry.forged)) return;
  const { forged: _before, ...rest } = entry;
  ctx.entry = saveEntry(ctx.run, ctx.unit.key, forged ? { ...rest, forged } : rest);
  if (forged) ctx.run.progress?.note?.(`${ctx.unit.key}: FORGED (${forgeryShown(forged)})`);
}

/**
 * The base side of an instance in a paired run (RunPlan.against): its unit, build.json entry and
 * library, when that side built a library of the same type whose KAT allows timing it.
 */
function pairedBase(ctx: InstanceContext, todo: OperationRequest[]) {
  const against = ctx.run.plan.against;
  if (!against || todo.length === 0) return undefined;
  const unit = against.units.get(ctx.unit.key);
  const entry = readJsonIfExists<BuildJson>(against.paths.build)?.instances[ctx.unit.key];
  if (!unit || !entry?.library || !measurable(entry.kat) || unit.candidate.type !== ctx.unit.candidate.type) return undefined;
  const run = { ...ctx.run, plan: { ...ctx.run.plan, campaignDir: against.campaignDir } };
  const replaced = libraryReplaced(run, entry);
  if (replaced) {
    ctx.run.progress?.note?.(`${ctx.unit.key}: base side not measured: ${replaced}`);
    return undefined;
  }
  return { unit, entry, paths: against.paths, library: resolve(against.campaignDir, entry.library) };
}
