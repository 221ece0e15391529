import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { firstErrorLine, flagsFor } from '../compile/compile.js';
import { checkedCalls, planCtOperation, predictedCtSeconds } from '../ct/budget.js';
import { processSeconds, scaledTimeoutS, type CallSeconds } from '../measure/cost.js';
import { buildCt, CT_COVERAGE_BUILD } from '../ct/build.js';
import { CT_COVERAGE_SLOWDOWN, CT_MAX_CALLS } from '../config/defaults.js';
import { countLines, coverageOf, pathsTaken, takenBeyond, UNTAKEN_SHOWN } from '../ct/coverage.js';
import { searchPaths, type CountLines, type PathSearch } from '../ct/pathSearch.js';
import { divisionSites, withDivisions, type DivisionSite } from '../ct/division.js';
import { runDivisionCheck } from '../ct/divisionCheck.js';
import { compilerVersion } from '../env/toolchain.js';
import { runCtOperation } from '../ct/runCtOperation.js';
import { errorMessage } from '../errors.js';
import { applySuppressions, CT_SUPPRESSIONS_FILE, loadCtSuppressions, type CtSuppression } from '../ct/suppressions.js';
import { ctDriver } from '../ct/tools.js';
import { statusOf, type CtBuildCheck, type CtEvidence, type CtOperation } from '../ct/findingKinds.js';
import type { FlagVariant } from '../compile/flags.js';
import type { TimingRecord } from '../evidence/fileTypes.js';
import { operationsOf } from '../measure/operation.js';
import { readJsonIfExists, sha256Hex, writeJsonAtomic } from '../util/fsx.js';
import { relativeTo } from '../evidence/layout.js';
import {
  buildRequest,
  katShown,
  libraryReplaced,
  preparedEntry,
  previousSeconds,
  type InstanceContext,
  type PhaseStep,
} from './context.js';
import { withCpus } from '../sandbox/runProcess.js';
import { ctSuppressionsShown } from './runPlan.js';
import { readPrevious } from './previous.js';

/** The tool named in every ct file: what produced the findings. */
const CT_TOOL = 'valgrind-memcheck';

/**
 * The constant-time check of an instance (docs/method.md#constant-time-check): the library relinked
 * with -g and its generators' output marked secret, each operation run a few times under memcheck,
 * the findings placed at their first frame in the library, suppressed where ct-suppressions.yml
 * says why the data is public. One file per instance, `ct/<id>/<label>.json`. A file of the same
 * library, calls and operations is kept: only its suppressions are applied again.
 */
export const ctBuild: PhaseStep = {
  name: 'ct-build',
  phase: 'ct',
  ticks: () => 0,
  expect: (_run, _unit, previous) => previousSeconds('ct-build', previous),
  async run(ctx) {
    const decided = decide(ctx);
    decisions.set(ctx, decided);
    if (decided.run !== 'check') return 'kept';
    decided.prepared = await prepareCheck(ctx, decided.operations);
    if (decided.prepared)
      for (const b of extraBuilds(ctx)) {
        const prepared = await prepareCheck(ctx, decided.operations, b);
        if (prepared) decided.prepared.extra.push({ build: b, prepared });
      }
  },
};

/** The constant-time runs under memcheck, holding a core (valgrind is a long, CPU-bound process). */
export const ct: PhaseStep = {
  name: 'ct',
  phase: 'ct',
  core: 'exclusive',
  ticks: () => 1,
  // Kept results are only rewritten with today's suppressions: no valgrind run, no core.
  needsCore: (ctx) => (decisions.get(ctx)?.run ?? 'check') === 'check',
  expect: (_run, _unit, previous) => previousSeconds('ct', previous),
  async run(ctx) {
    const decided = decisions.get(ctx);
    decisions.delete(ctx);
    if (!decided) throw new Error(`the ct runs of ${ctx.unit.key} ran before the ct build`);
    if (decided.run === 'no') {
      ctx.tick(decided.line);
      return 'kept';
    }
    const { plan } = ctx.run;
    const { candidate, instance } = ctx.unit;
    const { operations, suppressions, suppressionsSha } = decided;
    const results: Record<string, CtOperation> = {};
    let head: Omit<CtEvidence, 'operations'>;
    const reusable = decided.run === 'keep';
    let builds: CtBuildCheck[] = [];
    if (decided.run === 'keep') {
      const { operations: old, builds: kept, ...rest } = decided.previous;
      head = rest;
      for (const op of operations) results[op] = old[op]!;
      builds = kept ?? [];
    } else {
      head = {
        schema: 1,
        tool: CT_TOOL,
        library_sha256: decided.librarySha256,
        candidate: candidate.id,
        label: instance.label,
        harness_version: ctx.run.tools.version,
        ...(publicSkBytes(ctx.unit) ? { public_sk_bytes: publicSkBytes(ctx.unit) } : {}),
      };
      if (candidate.type === 'hash') {
        for (const op of operations)
          results[op] = { status: 'skipped', calls: 0, findings: [], reason: 'a hash has no secret input: nothing to mark secret' };
      } else {
        head = { ...head, ...decided.prepared!.head };
        const { slowdown, calls } = await checkOperations(ctx, operations, results, decided.prepared!);
        if (slowdown) head = { ...head, slowdown };
        for (const { build, prepared } of decided.prepared!.extra) builds.push(await checkBuild(ctx, operations, build, prepared, calls));
      }
    }
    for (const op of operations) results[op] = suppressed(results[op]!, suppressions, op);
    builds = builds.map((b) => withSuppressions(b, operations, suppressions));
    const { suppressions_sha256: _, division_sites: sites, divisions: __, ...base } = head;
    const checked: CtEvidence = {
      ...base,
      ...(suppressionsSha ? { suppressions_sha256: suppressionsSha } : {}),
      operations: results,
      ...(builds.length > 0 ? { builds } : {}),
    };
    // After the suppressions: only an unsuppressed finding shows a division's operands tainted.
    const evidence = sites ? { ...withDivisions(checked, sites), division_sites: sites } : checked;
    writeJsonAtomic(plan.paths.ct(candidate.id, instance.label), evidence);
    const each = operations.map((op) => shown(results[op]!));
    const line =
      new Set(each).size === 1 && each.length > 1
        ? `all ${each.length} operations ${each[0]}`
        : operations.map((op, i) => `${op} ${each[i]}`).join(', ');
    ctx.tick(`ct ${line}${reusable ? ' (kept)' : ''}${unbuiltLine(builds)}`);
    return reusable ? 'kept' : undefined;
  },
};

/** A relink log's first compiler error: its command lines (`$ …`) and notes (`# …`) left out, the candidate's folder cut, at most 200 characters. */
function compilerError(log: string, candidateFolder: string): string {
  const said = log
    .split('\n')
    .filter((l) => !l.startsWith('$ ') && !l.startsWith('# '))
    .join('\n');
  const line = (firstErrorLine(said) ?? 'no error line (a timeout or a signal: see the log)').replaceAll(`${candidateFolder}/`, '');
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** "; 2 of 6 ct builds failed to build: clang-16 performance, clang-16 resource (see build.log)", or ''. */
function unbuiltLine(builds: readonly CtBuildCheck[]): string {
  const failed = builds.filter((b) => b.failure);
  if (failed.length === 0) return '';
  return `; ${failed.length} of ${builds.length + 1} ct builds failed to build: ${failed.map((b) => b.name).join(', ')} (see build.log)`;
}

/** What the ct build found to do: nothing (and why), keep the previous file's results, or check. */
type CtDecision =
  | { run: 'no'; line: string }
  | ({ operations: readonly string[]; suppressions: readonly CtSuppression[]; suppressionsSha?: string } & (
      | { run: 'keep'; previous: CtEvidence }
      | { run: 'check'; librarySha256: string; prepared?: CtPrepared }
    ));

const decisions = new WeakMap<InstanceContext, CtDecision>();

/** The secret key's public header bytes: the instance's `ct.public_sk_bytes`, else the candidate's, else none. */
const publicSkBytes = (unit: InstanceContext['unit']): number =>
  unit.instance.ct?.public_sk_bytes ?? unit.candidate.ct?.public_sk_bytes ?? 0;

function decide(ctx: InstanceContext): CtDecision {
  const entry = preparedEntry(ctx, 'ct');
  const { plan } = ctx.run;
  const { candidate, instance } = ctx.unit;
  if (!entry.library || entry.kat === 'BUILDFAIL' || !entry.library_sha256)
    return { run: 'no', line: `ct: not run (${katShown(entry.kat)})` };
  const replaced = libraryReplaced(ctx.run, entry);
  if (replaced) return { run: 'no', line: `ct: not run (${replaced})` };
  // Checked by planRun before anything ran: read again here, the file is the candidate's.
  const suppressions = loadCtSuppressions(candidate.folder, ctSuppressionsShown(candidate.id));
  const suppressionsFile = join(candidate.folder, CT_SUPPRESSIONS_FILE);
  const suppressionsSha = existsSync(suppressionsFile) ? sha256Hex(readFileSync(suppressionsFile)) : undefined;
  const operations = operationsOf(candidate.type, entry.sizes?.kex_passes);
  const { calls, path_calls } = plan.settings.ct;
  const searched = path_calls > calls ? path_calls : 0;
  const previous = readPrevious<CtEvidence>(plan.paths.ct(candidate.id, instance.label), plan.force);
  // A file checked before the KAT gave call seconds, or before each build recorded its own slowdown,
  // had its budgets assumed: redone once a slowdown can be measured.
  const calibrated = (p: CtEvidence) =>
    !entry.call_seconds ||
    candidate.type === 'hash' ||
    !calibrationOperation(operations, candidate.type, entry.call_seconds) ||
    (p.slowdown !== undefined && (p.builds ?? []).every((b) => b.slowdown !== undefined || b.failure !== undefined));
  // Another driver or wrapper (a new harness version) marks secrets anew: its results are redone.
  const reusable =
    previous?.library_sha256 === entry.library_sha256 &&
    calibrated(previous) &&
    previous.harness_version === ctx.run.tools.version &&
    (previous.public_sk_bytes ?? 0) === publicSkBytes(ctx.unit) &&
    // The same other builds, each checked: another ct.variants or ct.compilers is another check.
    (previous.builds ?? []).map((b) => b.name).join(',') ===
      extraBuilds(ctx)
        .map((b) => b.name)
        .join(',') &&
    operations.every((op) => {
      const o = previous.operations[op];
      // A file from before coverage was counted, or counted in the optimised build (no untaken
      // lines), is redone: every checked operation says what it covered.
      const counted = o?.coverage !== undefined && ('failure' in o.coverage || o.coverage.untaken !== undefined);
      // The same path search (ct.path_calls) and at least the check's calls; without coverage, no search ran.
      const sameCalls =
        o?.coverage !== undefined && !('failure' in o.coverage)
          ? o.calls >= calls && (o.coverage.paths?.asked ?? 0) === searched
          : o?.calls === calls;
      return o !== undefined && (o.status === 'skipped' || (o.status !== 'failed' && sameCalls && counted));
    });
  const common = { operations, suppressions, ...(suppressionsSha ? { suppressionsSha } : {}) };
  return reusable ? { ...common, run: 'keep', previous } : { ...common, run: 'check', librarySha256: entry.library_sha256 };
}

/** How an operation's result reads in the progress line. */
function shown(o: CtOperation): string {
  if (o.status === 'flagged' || o.status === 'clean') {
    const open = o.findings.filter((f) => !f.suppressed).length;
    const quiet = o.findings.length - open;
    return `${o.status}${open > 0 ? ` (${open} site${open === 1 ? '' : 's'})` : ''}${quiet > 0 ? ` (${quiet} suppressed)` : ''}`;
  }
  return `${o.status}${o.reason ? ` (${o.reason})` : ''}`;
}

/** The operation's findings with the candidate's suppressions, and the status they give. */
function suppressed(o: CtOperation, suppressions: readonly CtSuppression[], operation: string): CtOperation {
  if (o.status === 'skipped' || o.status === 'failed') return o;
  const findings = applySuppressions(o.findings, suppressions, operation);
  return { ...o, findings, status: statusOf(findings) };
}

/** The ct build and the division sites it reaches: what the runs under memcheck need. */
interface CtPrepared {
  built: Awaited<ReturnType<typeof buildCt>>;
  head: Partial<CtEvidence>;
  /** The coverage build (CT_COVERAGE_BUILD) and the folder its runs leave their counters in: the measured build's only. */
  coverage?: { built: Awaited<ReturnType<typeof buildCt>>; scratch: string };
  /** The other builds to check (extraBuilds), each prepared the same way. */
  extra: Array<{ build: OtherBuild; prepared: CtPrepared }>;
}

async function prepareCheck(ctx: InstanceContext, operations: readonly string[], other?: OtherBuild): Promise<CtPrepared | undefined> {
  if (ctx.unit.candidate.type === 'hash' || operations.length === 0) return undefined;
  const { run, unit } = ctx;
  const entry = preparedEntry(ctx, 'ct');
  const measured = buildRequest(run, unit, entry.flags);
  // Another build lives in its own folder under the instance's build folder.
  const request = other
    ? {
        ...buildRequest(run, unit, 'guide'),
        variant: other.variant,
        compiler: other.compiler,
        outDir: join(measured.outDir, 'ct-builds', other.name.replace(' ', '-')),
      }
    : measured;
  const built = await buildCt(request, flagsFor(request));
  const head: Partial<CtEvidence> = {
    flags: built.flags,
    compiler: compilerVersion(request.compiler),
    secret_generators: built.wrapped,
    build_name: `${request.compiler} ${entry.flags === 'guide' || other ? request.variant : entry.flags}`,
  };
  if (!built.ok) return { built, head, extra: [] };
  if (built.librarySha256) head.ct_library_sha256 = built.librarySha256;
  // Division instructions the API reaches, from the -g build (file and line): held against
  // memcheck's findings below (withDivisions). A finder that cannot run leaves them out, said so.
  const sites = await divisionSites(built.library, { sandbox: run.plan.sandbox }).catch((e: unknown) => {
    head.divisions_failure = errorMessage(e);
    return undefined;
  });
  if (sites) head.division_sites = sites;
  if (other) return { built, head, extra: [] };
  const coverage = await buildCt(request, flagsFor(request), CT_COVERAGE_BUILD);
  return { built, head, coverage: { built: coverage, scratch: join(request.outDir, CT_COVERAGE_BUILD.dir, 'counters') }, extra: [] };
}

/** One of the other builds ct.variants × ct.compilers name. */
interface OtherBuild {
  name: string;
  variant: FlagVariant;
  compiler: string;
}

/**
 * The builds checked besides the measured one: every flag set of ct.variants with every compiler of
 * ct.compilers (none named: the campaign's compiler), less the measured build itself.
 */
function extraBuilds(ctx: Pick<InstanceContext, 'run' | 'entry'>): OtherBuild[] {
  const { settings } = ctx.run.plan;
  const compilers = settings.ct.compilers.length > 0 ? settings.ct.compilers : [settings.compiler];
  const measuredGuide = ctx.entry?.flags !== 'harness-default';
  return compilers.flatMap((compiler) =>
    settings.ct.variants
      .filter((variant) => !(measuredGuide && variant === settings.flags.variant && compiler === settings.compiler))
      .map((variant) => ({ name: `${compiler} ${variant}`, variant, compiler })),
  );
}

/** Another build's operations under memcheck, as the measured build's, with as many calls (without coverage). */
async function checkBuild(
  ctx: InstanceContext,
  operations: readonly string[],
  build: OtherBuild,
  prepared: CtPrepared,
  calls: Readonly<Record<string, number>>,
): Promise<CtBuildCheck> {
  const results: Record<string, CtOperation> = {};
  const { slowdown } = await checkOperations(ctx, operations, results, prepared, calls);
  const { head } = prepared;
  return {
    name: build.name,
    compiler: head.compiler ?? compilerVersion(build.compiler),
    variant: build.variant,
    ...(head.flags ? { flags: head.flags } : {}),
    ...(head.ct_library_sha256 ? { ct_library_sha256: head.ct_library_sha256 } : {}),
    operations: results,
    ...(head.division_sites ? { division_sites: head.division_sites } : {}),
    ...(prepared.built.ok
      ? {}
      : {
          failure: `its ct build failed: ${compilerError(prepared.built.log, ctx.unit.candidate.folder)} (see ${relativeTo(ctx.run.plan.systemDir, join(dirname(prepared.built.library), 'build.log'))})`,
        }),
    ...(build.compiler === ctx.run.plan.settings.compiler && build.variant === ctx.run.plan.settings.flags.variant
      ? { campaign_build: true }
      : {}),
    ...(slowdown ? { slowdown } : {}),
  };
}

/** Another build with the candidate's suppressions applied, and its divisions judged after them. */
function withSuppressions(b: CtBuildCheck, operations: readonly string[], suppressions: readonly CtSuppression[]): CtBuildCheck {
  const ops = Object.fromEntries(operations.map((op) => [op, suppressed(b.operations[op]!, suppressions, op)]));
  if (!b.division_sites) return { ...b, operations: ops };
  const { divisions: _, ...rest } = b;
  const judged = withDivisions({ schema: 1, tool: CT_TOOL, library_sha256: '', operations: ops }, b.division_sites as DivisionSite[]);
  return { ...rest, operations: judged.operations, ...(judged.divisions ? { divisions: judged.divisions } : {}) };
}

/** What the measured build's checks leave for the other builds: the slowdown, and each operation's calls. */
interface Checked {
  slowdown: CtEvidence['slowdown'];
  /** Calls each checked operation ran: the other builds run as many (the measured build's path search found them). */
  calls: Record<string, number>;
}

async function checkOperations(
  ctx: InstanceContext,
  operations: readonly string[],
  results: Record<string, CtOperation>,
  prepared: CtPrepared,
  callsFor?: Readonly<Record<string, number>>,
): Promise<Checked> {
  const checked: Checked = { slowdown: undefined, calls: {} };
  if (!prepared.built.ok) {
    for (const op of operations)
      results[op] = {
        status: 'failed',
        calls: 0,
        findings: [],
        reason: 'the ct build (-g, -fno-lto, generator wrappers) failed: see its build.log',
      };
    return checked;
  }
  const runners = await ctRunners(ctx, prepared);
  const { ct } = ctx.run.plan.settings;
  const cs = preparedEntry(ctx, 'ct').call_seconds;
  const slowdown = cs ? await measureSlowdown(operations, ctx.unit.candidate.type, cs, ct, runners.runOp) : undefined;
  checked.slowdown = slowdown;
  const factor = slowdown && 'factor' in slowdown ? slowdown.factor : undefined;
  const check: OperationCheck = { ctx, prepared, results, checked, runners, cs, factor, callsFor };
  for (const operation of operations) {
    if (slowdown && 'failure' in slowdown) {
      results[operation] = { status: 'skipped', calls: 0, findings: [], reason: slowdown.failure };
      continue;
    }
    await checkOperation(check, operation);
  }
  return checked;
}

/** The runs of one build's operations: under memcheck, at the division sites, and natively with gcov's counters. */
async function ctRunners(ctx: InstanceContext, prepared: CtPrepared) {
  const { run, unit } = ctx;
  const { plan } = run;
  const { built } = prepared;
  const driver = await ctDriver(run.tools);
  const floorS = plan.settings.planning.process_timeout_s;
  // What every run under valgrind of this library shares; valgrind does not pin itself: it stays on the core this step holds.
  const base = {
    driver,
    library: built.library,
    sourceRoots: built.sourceRoots,
    type: unit.candidate.type,
    rng: unit.candidate.katRng,
    ...(publicSkBytes(unit) ? { publicSkBytes: publicSkBytes(unit) } : {}),
    sandbox: plan.sandbox,
  };
  const runOp = (operation: string, calls: number, timeoutS: number, budgetS?: number) =>
    withCpus([plan.cpu], () =>
      runCtOperation({ ...base, operation, calls, timeoutMs: timeoutS * 1000, ...(budgetS !== undefined ? { budgetS } : {}) }),
    );
  // The division sites read at the instruction (ct/divisionCheck.ts): gdb's breakpoints and valgrind's
  // precise registers slow the run, which gets twice the memcheck run's timeout.
  const checkDivisions = (operation: string, calls: number, sites: readonly DivisionSite[], timeoutS: number) =>
    withCpus([plan.cpu], () => runDivisionCheck({ ...base, operation, calls, sites, timeoutMs: 2 * timeoutS * 1000 }));
  // The operation's calls, natively, in the build with gcov's counters: what the verdict covers.
  const counter = (operation: string, perCall: number | undefined): CountLines | undefined => {
    const cov = prepared.coverage;
    if (!cov?.built.ok || !cov.built.objDir) return undefined;
    const { library: _, ...shared } = base;
    return (calls) =>
      withCpus([plan.cpu], () =>
        countLines({
          ...shared,
          library: cov.built.library,
          objDir: cov.built.objDir!,
          operation,
          calls,
          timeoutMs: scaledTimeoutS(floorS, perCall === undefined ? undefined : perCall * calls * CT_COVERAGE_SLOWDOWN) * 1000,
          scratch: join(cov.scratch, operation),
        }),
      );
  };
  return { runOp, checkDivisions, counter };
}

type CtRunners = Awaited<ReturnType<typeof ctRunners>>;

/** What the checks of one build's operations share. */
interface OperationCheck {
  ctx: InstanceContext;
  prepared: CtPrepared;
  results: Record<string, CtOperation>;
  checked: Checked;
  runners: CtRunners;
  /** The KAT's seconds per call, when it gave them. */
  cs: CallSeconds | undefined;
  /** The measured slowdown under memcheck, when it was measured. */
  factor: number | undefined;
  /** The calls each operation ran in the measured build, when this is another build. */
  callsFor: Readonly<Record<string, number>> | undefined;
}

/** One operation of a build under memcheck, as many calls as its budget allows, its divisions and coverage after. */
async function checkOperation(check: OperationCheck, operation: string): Promise<void> {
  const { ctx, prepared, results, checked, runners, cs, factor, callsFor } = check;
  const { plan } = ctx.run;
  const { ct } = plan.settings;
  const floorS = plan.settings.planning.process_timeout_s;
  const type = ctx.unit.candidate.type;
  // Native seconds of the process's calls and their inputs (the KAT's figures), else the timing record's mean per call.
  const nativeS = cs ? processSeconds(type, operation, cs, ct.calls) : undefined;
  const record = readJsonIfExists<TimingRecord>(plan.paths.record(ctx.unit.candidate.id, ctx.unit.instance.label, operation));
  const perCall = nativeS !== undefined ? nativeS / ct.calls : typeof record?.mean_seconds === 'number' ? record.mean_seconds : undefined;
  const budget = {
    calls: ct.calls,
    valgrindFactor: factor ?? ct.valgrind_factor,
    factorMeasured: factor !== undefined,
    startupSeconds: ct.startup_s,
    opBudgetSeconds: ct.op_budget_s,
  };
  const decision = planCtOperation(perCall, budget);
  if (!decision.run) {
    results[operation] = { status: 'skipped', calls: 0, findings: [], reason: decision.reason };
    return;
  }
  const count = runners.counter(operation, perCall);
  // The measured build looks for the operation's rarely taken paths first (natively, cheap): the
  // calls that take them all are checked, as many as the budget allows. The other builds run as many.
  const search = callsFor === undefined && count ? await findPaths(count, ct, perCall) : undefined;
  // Another build wants the measured build's count, but its own slowdown may afford fewer.
  const wanted = callsFor?.[operation] ?? (search && !('failure' in search.found) ? search.found.needed : ct.calls);
  const calls = checkedCalls(wanted, perCall, budget, CT_MAX_CALLS);
  checked.calls[operation] = calls;
  const predictedS = perCall === undefined ? decision.predictedSeconds : predictedCtSeconds(perCall, calls, budget);
  // Twice the budget at most: an operation memcheck slows far more than the cheapest one (McEliece's
  // keygen against its enc) is stopped there and skipped with the budget named, never a TIMEOUT.
  const timeoutS = Math.min(scaledTimeoutS(floorS, predictedS), 2 * ct.op_budget_s + ct.startup_s);
  results[operation] = await runners.runOp(operation, calls, timeoutS, ct.op_budget_s);
  const ran = results[operation]!.status === 'clean' || results[operation]!.status === 'flagged';
  const sites = prepared.head.division_sites ?? [];
  if (sites.length > 0 && ran) results[operation]!.division_check = await runners.checkDivisions(operation, calls, sites, timeoutS);
  if (ran && prepared.coverage) results[operation]!.coverage = await coverageOfCalls(count, calls, search, ct.path_calls);
}

/** The path search of one operation: how many calls it ran (`upTo`), and what it found. */
interface FoundPaths {
  upTo: number;
  found: PathSearch | { failure: string };
}

/**
 * The search for an operation's rarely taken paths (docs/method.md#rare-paths): ct.path_calls calls
 * natively, fewer when even the coverage build would take longer than the operation's budget with
 * them (CT_COVERAGE_SLOWDOWN), never more than the driver takes. None when it asks no more calls than
 * the check makes anyway; a search of only the check's calls when the budget allows no more.
 */
async function findPaths(
  count: CountLines,
  ct: { calls: number; path_calls: number; op_budget_s: number },
  perCall: number | undefined,
): Promise<FoundPaths | undefined> {
  const fitting = perCall === undefined || perCall <= 0 ? CT_MAX_CALLS : Math.floor(ct.op_budget_s / (perCall * CT_COVERAGE_SLOWDOWN));
  if (ct.path_calls <= ct.calls) return undefined;
  const upTo = Math.min(ct.path_calls, CT_MAX_CALLS, Math.max(ct.calls, fitting));
  return { upTo, found: await searchPaths(count, ct.calls, upTo) };
}

/**
 * What the checked calls covered: from the path search's run of as many calls when it made one,
 * else a run of its own; with the search's result, and the lines only later calls took when the
 * budget held the check to fewer calls than the paths needed.
 */
async function coverageOfCalls(
  count: CountLines | undefined,
  calls: number,
  search: FoundPaths | undefined,
  asked: number,
): Promise<NonNullable<CtOperation['coverage']>> {
  if (!count) return { failure: `the coverage build (--coverage) failed: see ${CT_COVERAGE_BUILD.dir}/build.log` };
  const found = search?.found;
  if (found && 'failure' in found) return found;
  const ran = found?.runs.get(calls);
  const counted = ran ? { files: ran } : await count(calls);
  if ('failure' in counted) return counted;
  const coverage = coverageOf(counted.files);
  if (!search || !found) return coverage;
  const { needed, runs } = found;
  const beyond = calls < needed ? takenBeyond(runs.get(search.upTo)!, pathsTaken(counted.files)) : undefined;
  return {
    ...coverage,
    paths: {
      asked,
      calls: search.upTo,
      needed,
      ...(beyond ? { beyond: beyond.ranges.slice(0, UNTAKEN_SHOWN), beyond_lines: beyond.lines } : {}),
    },
  };
}

/**
 * The least memcheck slows code down: the floor of valgrind's documented 10–50× (a volatile spin loop
 * measured 20×; crypto code 50× to 2000×).
 */
export const CT_SLOWDOWN_MIN = 10;

/** The operation one call of which measures the slowdown: the cheapest with its inputs, by the KAT's figures. */
function calibrationOperation(operations: readonly string[], type: string, cs: CallSeconds): { op: string; native: number } | undefined {
  return operations
    .map((op) => ({ op, native: processSeconds(type, op, cs, 1) }))
    .filter((x): x is { op: string; native: number } => x.native !== undefined && (cs[x.op] ?? 0) > 0)
    .sort((a, b) => a.native - b.native)[0];
}

/**
 * The slowdown under memcheck of this library, measured: one call of its cheapest operation (by the
 * KAT's figures) under memcheck, its calls' own seconds against the native call's. Undefined when no
 * operation has a figure; a failure when even the cheapest could not fit the budget, which then
 * skips every operation with that reason.
 */
async function measureSlowdown(
  operations: readonly string[],
  type: string,
  cs: CallSeconds,
  ct: { op_budget_s: number; startup_s: number },
  runOp: (operation: string, calls: number, timeoutS: number) => Promise<CtOperation>,
): Promise<CtEvidence['slowdown']> {
  const cheapest = calibrationOperation(operations, type, cs);
  if (!cheapest) return undefined;
  const budget = `the budget of ${ct.op_budget_s} s (ct.op_budget_s)`;
  const least = ct.startup_s + CT_SLOWDOWN_MIN * cheapest.native;
  if (least > ct.op_budget_s)
    return {
      failure: `one ${cheapest.op} call takes ${cheapest.native.toPrecision(3)} s natively with its inputs: under memcheck, at least ${CT_SLOWDOWN_MIN}× that, ${least.toPrecision(3)} s, over ${budget}`,
    };
  // Killed at the budget: a calibration that takes longer tells that every operation would.
  const r = await runOp(cheapest.op, 1, ct.op_budget_s + ct.startup_s);
  const nativeCall = cs[cheapest.op]!;
  if (r.status === 'failed' || r.calls_s === undefined)
    return {
      failure: `one ${cheapest.op} call under memcheck, to measure the slowdown, did not finish within ${budget}${r.reason ? ` (${r.reason})` : ''}`,
    };
  return { operation: cheapest.op, factor: Math.max(1, r.calls_s / nativeCall), calls_s: r.calls_s, native_s: nativeCall };
}
