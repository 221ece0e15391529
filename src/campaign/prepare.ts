import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { displayFlags, type BuildResult, type FlagSet } from '../compile/compile.js';
import { nistEntryPrefix } from '../compile/nistShim.js';
import type { Candidate } from '../config/campaign.js';
import { declaredSecurity } from '../config/schemas.js';
import { compilerVersion } from '../env/toolchain.js';
import { relativeTo } from '../evidence/layout.js';
import type { BuildEntry, BuildJson } from '../evidence/fileTypes.js';
import { formatKatLog, katBody } from '../kat/log.js';
import { type ManifestEntry, readManifest } from '../config/katManifest.js';
import { runKat, type KatOutcome } from '../kat/runKat.js';
import { runHashKat } from '../kat/hashKat.js';
import { confinedCpus, withCpus } from '../sandbox/runProcess.js';
import { elfSizes } from '../util/elf.js';
import { readJsonIfExists, sha256File, sha256Hex, writeFileAtomic, writeJsonAtomic } from '../util/fsx.js';
import { buildUnit, forcedRerunSeconds, previousSeconds, type PhaseStep, type RunContext } from './context.js';
import type { Unit } from './runPlan.js';

/** build.json `step_seconds` key of the part of `prepare` spent in the KAT driver. */
export const KAT_SECONDS = 'prepare-kat';

/** Builds and KAT-checks an instance (or keeps what still holds): sets the entry every later step reads. */
export const prepare: PhaseStep = {
  name: 'prepare',
  // The instance's status line is printed once the stale step knows what it removed.
  ticks: () => 0,
  expect: (plan, unit, previous) => {
    // An entry whose library and KAT log are on disk is kept when the sources did not change.
    const held =
      !plan.force &&
      previous?.library !== undefined &&
      existsSync(resolve(plan.campaignDir, previous.library)) &&
      existsSync(plan.paths.katLog(unit.candidate.id, unit.instance.label));
    if (held) return { seconds: 0, source: 'kept' };
    // A forced rerun builds from disk and runs only the KAT again.
    return forcedRerunSeconds(plan, previous, 'prepare', KAT_SECONDS, 'part') ?? previousSeconds('prepare', previous);
  },
  async run(ctx) {
    const { entry, kept, katSeconds } = await prepareInstance(ctx.run, ctx.unit);
    if (katSeconds !== undefined) ctx.parts = { ...ctx.parts, [KAT_SECONDS]: katSeconds };
    ctx.entry = entry;
    ctx.summary.kat = entry.kat;
    ctx.summary.detail = entry.kat_detail;
    if (entry.forged) ctx.summary.forged = entry.forged;
    if (entry.flags === 'harness-default' && entry.guide_result && entry.kat !== 'BUILDFAIL')
      ctx.summary.fellBack = entry.guide_error ?? entry.guide_result;
    return kept ? 'kept' : undefined;
  },
};

/** The library fields of a build.json entry. */
type LibraryFields = Required<Pick<BuildEntry, 'library' | 'library_sha256' | 'elf_load_bytes' | 'elf_sections'>>;

function libraryFields(campaignDir: string, b: BuildResult): LibraryFields {
  const elf = elfSizes(b.library);
  return {
    library: relative(campaignDir, b.library),
    library_sha256: sha256File(b.library),
    elf_load_bytes: elf.loadBytes,
    elf_sections: { text: elf.text, data: elf.data, bss: elf.bss },
  };
}

/** What an instance is now, to hold against its previous build.json entry. */
interface PresentState {
  /** The flag set of the first library that built (guide, else harness-default). */
  flagSet: FlagSet;
  librarySha256: string;
  /**
   * The harness-default library, built only when the previous entry fell back to it after a KAT
   * under the guide flags (undefined when not built, or when it failed to build).
   */
  fallbackSha256?: string;
  manifestSha256: string;
  /** The harness whose KAT driver would judge the library now: a new driver may check more. */
  harnessVersion: string;
  /** The KAT log on disk (undefined when there is none). */
  katLogSha256?: string;
}

/**
 * Whether the previous entry still describes the instance: it judged the library we would judge
 * now — the same first build and, after a fallback, the same fallback build — against the same
 * kat.sha256 with the same KAT driver (harness version), and its KAT log is the one on disk.
 */
function previousHolds(previous: BuildEntry | undefined, now: PresentState): previous is BuildEntry {
  if (!previous || previous.kat === 'BUILDFAIL') return false;
  const sameLibrary =
    previous.flags === now.flagSet
      ? previous.library_sha256 === now.librarySha256
      : previous.guide_library_sha256 === now.librarySha256 &&
        now.fallbackSha256 !== undefined &&
        now.fallbackSha256 === previous.library_sha256;
  return (
    sameLibrary &&
    previous.kat_manifest_sha256 === now.manifestSha256 &&
    previous.kat_harness_version === now.harnessVersion &&
    now.katLogSha256 !== undefined &&
    previous.kat_log_sha256 === now.katLogSha256
  );
}

/**
 * Whether the previous entry is a KAT fallback from this very guide library: then the library it
 * judged is the harness-default build, which has to be built to tell whether it is unchanged.
 */
const fellBackFrom = (previous: BuildEntry | undefined, flagSet: FlagSet, librarySha256: string): boolean =>
  previous !== undefined && previous.kat !== 'BUILDFAIL' && previous.flags !== flagSet && previous.guide_library_sha256 === librarySha256;

/** What preparing an instance gave: its build.json entry, whether it was kept as it was. */
interface PreparedInstance {
  entry: BuildEntry;
  kept: boolean;
  /** Seconds in the KAT driver, when it ran. */
  katSeconds?: number;
}

/** Build (guide flags, else harness defaults) and KAT one instance; returns its build.json entry. */
async function prepareInstance(run: RunContext, unit: Unit): Promise<PreparedInstance> {
  const { plan } = run;
  const { candidate, key } = unit;
  const previous = readJsonIfExists<BuildJson>(plan.paths.build)?.instances[key];
  const manifestPath = join(candidate.folder, 'kat.sha256');
  const manifest = readManifest(manifestPath, `${candidate.id}/kat.sha256`);
  const manifestHash = existsSync(manifestPath) ? sha256File(manifestPath) : 'none';
  const p: Preparing = { run, unit, previous, manifest, manifestHash, builds: new Map(), katSeconds: 0 };

  // 1. The first build: the guide's flags, else the harness defaults.
  const first = await firstBuild(p);
  const base = baseEntry(p, first);
  if (!first.b.ok) return buildFailed(p, base, first.b);
  const lib = libraryFields(plan.campaignDir, first.b);

  // 2. and 3.: the previous entry, when it still holds.
  const held = await heldEntry(p, first.b, lib);
  if (held) return held;
  if (!plan.phases.has('kat')) return uncheckedEntry(p, base, lib);

  // 4. The KAT; a fault under the guide flags is retried under the harness defaults.
  const checked = await katWithFallback(p, first, lib);
  const entry = katEntry(p, base, checked);
  writeKatLog(run, entry, candidate, checked.b, katBody(checked.outcome, entry.kat_file));
  return { entry: saveEntry(run, key, entry), kept: false, katSeconds: p.katSeconds };
}

/** What the steps of preparing one instance share. */
interface Preparing {
  run: RunContext;
  unit: Unit;
  /** The instance's entry in build.json before this run. */
  previous: BuildEntry | undefined;
  manifest: ManifestEntry[];
  manifestHash: string;
  /** Each flag set is built at most once here (a second build would come from disk anyway). */
  builds: Map<FlagSet, Promise<BuildResult>>;
  /** Seconds in the KAT driver so far. */
  katSeconds: number;
}

function buildOnce(p: Preparing, flagSet: FlagSet): Promise<BuildResult> {
  const known = p.builds.get(flagSet);
  if (known) return known;
  const started = buildUnit(p.run, p.unit, flagSet);
  p.builds.set(flagSet, started);
  return started;
}

/** The KAT of a build, its seconds added up: a hash instance's KAT is several files, each its own driver run (kat/hashKat.ts). */
async function timedKat(p: Preparing, b: BuildResult): Promise<KatOutcome> {
  const started = performance.now();
  try {
    return await katOf(p, b);
  } finally {
    p.katSeconds += (performance.now() - started) / 1000;
  }
}

/**
 * The KAT of a pool stage, in pieces (docs/campaign.md#parallel-preparation): one on its worker's own
 * core and one on each other pool core no process holds now, held while the pieces run, so that no
 * piece shares a core with a profile round or a ct run. A stage not confined to a core of its own,
 * or with no other core free, runs its KAT as one process.
 */
async function katOf(p: Preparing, b: BuildResult): Promise<KatOutcome> {
  const own = confinedCpus();
  if (!own || !p.run.borrowCores) return katOn(p, b, 1);
  const borrowed = await p.run.borrowCores(`${p.unit.key} kat`, own);
  try {
    const cores = [...own, ...borrowed.cpus];
    return cores.length < 2 ? await katOn(p, b, 1) : await withCpus(cores, () => katOn(p, b, cores.length));
  } finally {
    borrowed.release();
  }
}

function katOn(p: Preparing, b: BuildResult, pieces: number): Promise<KatOutcome> {
  const { run, unit, manifest } = p;
  const { plan } = run;
  const { candidate, instance } = unit;
  return (candidate.type === 'hash' ? runHashKat : runKat)({
    pieces,
    candidate,
    label: instance.label,
    nistPrefix: nistEntryPrefix(instance),
    library: b.library,
    driver: run.tools.driver,
    outDir: plan.paths.katDir(candidate.id, instance.label),
    manifest,
    timeoutMs: plan.settings.planning.kat_timeout_s * 1000,
    memoryLimitBytes: plan.settings.planning.memory_limit_mb * 1024 * 1024,
    sandbox: plan.sandbox,
  });
}

/** The first library that built, and why the guide's flags gave none when they did not. */
interface FirstBuild {
  b: BuildResult;
  guideResult?: string;
  guideError?: string;
}

async function firstBuild(p: Preparing): Promise<FirstBuild> {
  const b = await buildOnce(p, 'guide');
  if (b.ok) return { b };
  return { guideResult: 'BUILDFAIL', guideError: b.firstError ?? 'the guide build failed', b: await buildOnce(p, 'harness-default') };
}

/** The entry's fields known from the first build alone (`kat` BUILDFAIL until a KAT says otherwise). */
function baseEntry(p: Preparing, { b, guideResult, guideError }: FirstBuild): BuildEntry {
  const { candidate, instance } = p.unit;
  return {
    candidate: candidate.id,
    label: instance.label,
    instance: instance.label,
    variant: p.run.plan.settings.flags.variant,
    flags: b.flagSet,
    kat: 'BUILDFAIL',
    api: candidate.api,
    type: candidate.type,
    ...claimOf(instance),
    build_flags: displayFlags(b.flags),
    build_key: b.key,
    ...(guideResult ? { guide_result: guideResult } : {}),
    ...(guideError ? { guide_error: guideError } : {}),
  };
}

function buildFailed(p: Preparing, base: BuildEntry, b: BuildResult): PreparedInstance {
  const entry: BuildEntry = { ...base, kat: 'BUILDFAIL', kat_detail: b.firstError, build_error: b.firstError };
  writeKatLog(p.run, entry, p.unit.candidate, b, ['build failed:', ...b.log.split('\n').slice(0, 60)]);
  return { entry: saveEntry(p.run, p.unit.key, entry), kept: false };
}

/** The previous entry, kept, when it still describes the instance and no KAT is to run again; else undefined. */
async function heldEntry(p: Preparing, b: BuildResult, lib: LibraryFields): Promise<PreparedInstance | undefined> {
  const { run, unit, previous } = p;
  const { plan } = run;
  // 2. After a fallback, the library the previous entry judged: the harness-default build.
  let fallbackSha256: string | undefined;
  if (fellBackFrom(previous, b.flagSet, lib.library_sha256)) {
    const fallback = await buildOnce(p, 'harness-default');
    if (fallback.ok) fallbackSha256 = sha256File(fallback.library);
  }

  // 3. Whether the previous entry still holds, from what is known now.
  const katLogPath = plan.paths.katLog(unit.candidate.id, unit.instance.label);
  const now: PresentState = {
    flagSet: b.flagSet,
    librarySha256: lib.library_sha256,
    fallbackSha256,
    manifestSha256: p.manifestHash,
    harnessVersion: run.tools.version,
    katLogSha256: existsSync(katLogPath) ? sha256File(katLogPath) : undefined,
  };
  // `--remeasure failed`: a KAT that ran out of time or crashed may have met a busy host; it runs again.
  const retried = plan.remeasure.has('failed') && (previous?.kat === 'TIMEOUT' || previous?.kat === 'CRASH') && plan.phases.has('kat');
  if (previousHolds(previous, now) && (!plan.force || !plan.phases.has('kat')) && !retried) {
    // A claimed level is no part of the library: a changed one is taken without building again.
    const { security: was, ...rest } = previous;
    const claimed = claimOf(unit.instance);
    if (JSON.stringify(was) === JSON.stringify(claimed.security)) return { entry: previous, kept: true };
    return { entry: saveEntry(run, unit.key, { ...rest, ...claimed }), kept: true };
  }
  return undefined;
}

function uncheckedEntry(p: Preparing, base: BuildEntry, lib: LibraryFields): PreparedInstance {
  // No status at all rather than NOKAT: NOKAT is a finding (no manifest line), this library was
  // simply not checked. Readers show "not checked", and it is neither timed nor a failure.
  const { kat: _none, ...unchecked } = base;
  const entry = {
    ...unchecked,
    ...lib,
    kat_detail: 'KAT not run for this library (run the kat phase)',
    ...forgeryKept(p.run.plan, p.previous, lib.library_sha256),
    ...unseenKept(p.previous),
  } as BuildEntry;
  return { entry: saveEntry(p.run, p.unit.key, entry), kept: false };
}

/** The library the KAT judged, its outcome, and why the guide's library was set aside when it was. */
interface KatChecked extends FirstBuild {
  lib: LibraryFields;
  outcome: KatOutcome;
  /** The guide library whose KAT failed, when the harness-default one was checked instead. */
  guideLibrary?: string;
}

async function katWithFallback(p: Preparing, first: FirstBuild, lib: LibraryFields): Promise<KatChecked> {
  const outcome = await timedKat(p, first.b);
  if (first.b.flagSet === 'guide' && outcome.status !== 'PASS' && outcome.status !== 'NOKAT') {
    const fallback = await buildOnce(p, 'harness-default');
    if (fallback.ok)
      return {
        guideResult: outcome.status,
        guideError: `KAT ${outcome.status}${outcome.detail ? `: ${outcome.detail}` : ''}`,
        guideLibrary: lib.library_sha256,
        b: fallback,
        lib: libraryFields(p.run.plan.campaignDir, fallback),
        outcome: await timedKat(p, fallback),
      };
  }
  return { ...first, lib, outcome };
}

function katEntry(p: Preparing, base: BuildEntry, checked: KatChecked): BuildEntry {
  const { run, unit, previous } = p;
  const { plan } = run;
  const { b, lib, outcome, guideResult, guideError, guideLibrary } = checked;
  return {
    ...base,
    flags: b.flagSet,
    build_flags: displayFlags(b.flags),
    build_key: b.key,
    ...lib,
    kat: outcome.status,
    ...(outcome.detail ? { kat_detail: outcome.detail } : {}),
    ...(guideResult ? { guide_result: guideResult } : {}),
    ...(guideError ? { guide_error: guideError } : {}),
    ...(guideLibrary ? { guide_library_sha256: guideLibrary } : {}),
    ...(outcome.file
      ? { kat_file: relativeTo(plan.systemDir, join(plan.paths.katDir(unit.candidate.id, unit.instance.label), outcome.file)) }
      : {}),
    sizes: outcome.sizes,
    ...(outcome.draws ? { kat_draws: outcome.draws } : {}),
    ...(outcome.callSeconds ? { call_seconds: outcome.callSeconds } : {}),
    ...loopCut(outcome),
    kat_manifest_sha256: p.manifestHash,
    ...recordedOf(p.manifest, unit.instance.label),
    kat_harness_version: run.tools.version,
    ...forgeryKept(plan, previous, lib.library_sha256),
    ...unseenKept(previous),
  };
}

/** build.json's `kat_recorded`: the latest day a line of the instance was recorded by the harness. */
function recordedOf(manifest: readonly ManifestEntry[], label: string): Pick<BuildEntry, 'kat_recorded'> {
  const days = manifest.filter((e) => e.label === label && e.recorded).map((e) => e.recorded!);
  return days.length > 0 ? { kat_recorded: days.sort().at(-1)! } : {};
}

/** build.json's `security`, when candidate.yml claims one for the instance. */
function claimOf(instance: Unit['instance']): Pick<BuildEntry, 'security'> {
  const security = declaredSecurity(instance);
  return security ? { security } : {};
}

/**
 * A KAT run again (a new harness, a new manifest) judges the code's answers, not its timing: the same
 * library stays FORGED until a forced measure step finds otherwise (campaign/measure.ts).
 */
function forgeryKept(plan: RunContext['plan'], previous: BuildEntry | undefined, librarySha256: string): Pick<BuildEntry, 'forged'> {
  return !plan.force && previous?.forged && previous.library_sha256 === librarySha256 ? { forged: previous.forged } : {};
}

/**
 * The answer an earlier library gave to the secret unseen seed stays with the instance through a new
 * build: it is what the new library is held to (campaign/unseen.ts). What the earlier library was held to does not.
 */
const unseenKept = (previous: BuildEntry | undefined): Pick<BuildEntry, 'unseen'> => (previous?.unseen ? { unseen: previous.unseen } : {});

/** A hash KAT_Loop cut short by a kat.sha256 `:N`: the pages say so. */
function loopCut(outcome: KatOutcome): Pick<BuildEntry, 'kat_loop_iterations'> {
  const loop = outcome.files?.find((f) => f.file.startsWith('KAT_Loop_') && f.limit);
  return loop?.limit ? { kat_loop_iterations: loop.limit } : {};
}

/** Writes the instance's KAT log and names it (path and hash) in the entry. */
function writeKatLog(run: RunContext, entry: BuildEntry, candidate: Candidate, b: BuildResult, body: string[]): void {
  const logPath = run.plan.paths.katLog(candidate.id, entry.label);
  const text = formatKatLog(
    {
      library: entry.library ?? '(not built)',
      id: candidate.id,
      type: candidate.type,
      algorithm: candidate.algorithm,
      instance: entry.label,
      api: candidate.api,
      kat_rng: candidate.katRng,
      compiler: compilerVersion(run.plan.settings.compiler),
      build_flags: displayFlags(b.flags),
      flags: b.flagSet,
    },
    body,
    entry.kat,
    entry.kat_detail,
  );
  writeFileAtomic(logPath, text);
  entry.kat_log = relativeTo(run.plan.systemDir, logPath);
  entry.kat_log_sha256 = sha256Hex(text);
}

/**
 * build.json is re-read before each write so that entries of other instances are never lost; an
 * entry keeps its place, new ones are appended (the order of the candidate manifests).
 */
export function saveEntry(run: { plan: Pick<RunContext['plan'], 'paths'> }, key: string, entry: BuildEntry): BuildEntry {
  const { paths } = run.plan;
  const current = readJsonIfExists<BuildJson>(paths.build) ?? { instances: {} };
  current.instances[key] = entry;
  writeJsonAtomic(paths.build, current);
  return entry;
}
