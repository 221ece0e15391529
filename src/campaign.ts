import { existsSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { buildInstance, displayFlags, type BuildCache, type BuildRequest, type BuildResult, type FlagSet } from './compile/compile.js';
import { harnessTools, type HarnessTools } from './compile/harnessTools.js';
import { ccVersion } from './env/toolchain.js';
import { loadCampaign, type Candidate } from './config/campaign.js';
import type { CampaignSettings, InstanceSpec } from './config/schemas.js';
import { defaultCpu, hostEnvironment, hostProblems, type HostEnvironment } from './env/host.js';
import { evidencePaths, relativeTo } from './evidence/layout.js';
import { buildRecord } from './evidence/record.js';
import type { BuildEntry, BuildJson, HashProfile, TimingRecord } from './evidence/types.js';
import { formatShare } from './report/format.js';
import { formatKatLog, katBody } from './kat/log.js';
import { readManifest } from './config/katManifest.js';
import { runKat, type KatOutcome } from './kat/run.js';
import { measurable, type KatStatus } from './kat/status.js';
import { measureOperations, OPERATIONS, type OperationRequest } from './measure/operation.js';
import { NOISY_TRIAL_SPREAD, trialSpread } from './measure/stats.js';
import { elfSizes } from './util/elf.js';
import { SURVEY_VERSION, surveyLibrary } from './profile/survey.js';
import { profileInstance } from './profile/run.js';
import { wrapCatalog } from './compile/profileBuild.js';
import { errorMessage, InputError, isInputError } from './errors.js';
import { lockSystem } from './evidence/lock.js';
import { readJsonIfExists, sha256File, sha256Hex, writeFileAtomic, writeJsonAtomic } from './util/fsx.js';
import type { Where } from './config/arguments.js';
import { allowedCpus, checkCpuAllowed, formatCpuList } from './env/cpus.js';
import { externalSizesPath } from './report/catalogs.js';
import type { Progress } from './progress.js';

export const PHASES = ['build', 'kat', 'measure', 'profile'] as const;
export type Phase = (typeof PHASES)[number];

export interface CampaignOptions {
  campaignDir: string;
  system: string;
  dataDir: string;
  only?: RegExp;
  phases: ReadonlySet<Phase>;
  trialTarget?: number;
  opBudget?: number;
  cpu?: number;
  shard?: { index: number; count: number };
  force?: boolean;
  progress?: Progress;
  buildCache?: BuildCache;
  /**
   * How the caller spells its options, for messages. Naming `only` also makes a filter that
   * selects no instance an error: on the command line that is a typo, while the action's
   * computed filter may rightly select nothing (a pull request that deletes a candidate).
   */
  argumentNames?: { only?: Where; cpu?: Where };
}

export interface InstanceSummary {
  key: string;
  /** Undefined when the library was built but its KAT was not run (not checked, not a failure). */
  kat?: KatStatus;
  detail?: string;
  operations: Array<{ operation: string; status: string; mean_cycles?: number; skipped: boolean; failure?: string; spread?: number }>;
}

/** How a KAT status reads in progress lines and summaries; no status means the KAT was not run. */
export const katShown = (kat: KatStatus | undefined): string => kat ?? 'not checked';

export interface CampaignSummary {
  systemDir: string;
  instances: InstanceSummary[];
}


interface Unit {
  candidate: Candidate;
  instance: InstanceSpec;
  index: number;
}

function units(candidates: Candidate[], shard?: { index: number; count: number }): Unit[] {
  const all = candidates.flatMap((candidate) =>
    candidate.instances.map((instance) => ({ candidate, instance, index: candidate.labels.indexOf(instance.label) })),
  );
  return shard ? all.filter((_, i) => i % shard.count === shard.index - 1) : all;
}

export async function runCampaign(opts: CampaignOptions): Promise<CampaignSummary> {
  const campaignDir = resolve(opts.campaignDir);
  const campaign = loadCampaign(campaignDir, opts.only);
  if (opts.only && campaign.candidates.every((c) => c.instances.length === 0)) {
    const all = loadCampaign(campaignDir).candidates.flatMap((c) => c.instances.map((i) => `${c.id}/${i.label}`));
    const shown = all.length === 0 ? 'the campaign has none' : `instances: ${all.slice(0, 6).join(', ')}${all.length > 6 ? `, … (${all.length} in all)` : ''}`;
    const [file, field] = opts.argumentNames?.only ?? ['only', ''];
    // RegExp.source escapes '/'; show the expression as it was given.
    throw new InputError(file, field, `'${opts.only.source.replace(/\\\//g, '/')}' matches no instance (${shown})`);
  }
  const settings = withOverrides(campaign.settings, opts);
  const systemDir = resolve(opts.dataDir, opts.system);
  const paths = evidencePaths(systemDir);
  const ymlShown = relative(process.cwd(), join(campaignDir, 'ngcc-perf.yml'));
  const catalog = wrapCatalog('wrap_nist.c');
  const unknown = (settings.profile.nist_symbols ?? []).filter((x) => !catalog.includes(x));
  if (unknown.length > 0)
    throw new InputError(ymlShown, 'profile.nist_symbols', `not in the wrapper catalog (native/hashprof/wrap_nist.c): ${unknown.join(', ')}`);
  // The report reads the catalog much later; a wrong name is cheaper to hear about before the run.
  externalSizesPath(campaignDir, settings.catalogs.external_sizes);
  const cpu = trialCpu(opts, settings, ymlShown);
  // build.json holds every instance's state: a broken one is not replaced silently, even with --force.
  try {
    readJsonIfExists<BuildJson>(paths.build);
  } catch (e) {
    if (!isInputError(e)) throw e;
    throw new InputError(paths.build, '', `${e.problem}; restore it (e.g. from git) or delete it, after which every instance is rebuilt and KAT-checked again`);
  }
  const release = lockSystem(systemDir);
  try {
    return await runLocked(opts, campaignDir, campaign.candidates, settings, systemDir, paths, cpu);
  } finally {
    release();
  }
}

/**
 * The core the trials are pinned to, checked before anything runs: a CPU this process may not
 * use fails every measurement alone, which would otherwise surface only as failed records.
 */
function trialCpu(opts: CampaignOptions, settings: CampaignSettings, ymlShown: string): number {
  const allowed = allowedCpus();
  if (opts.cpu !== undefined) return checkCpuAllowed(opts.cpu, opts.argumentNames?.cpu ?? ['cpu', ''], allowed);
  const configured = settings.systems[opts.system]?.cpu;
  if (configured !== undefined) return checkCpuAllowed(configured, [ymlShown, `systems.${opts.system}.cpu`], allowed);
  const fallback = defaultCpu();
  if (!allowed || allowed.includes(fallback)) return fallback;
  // The last online CPU may lie outside a container's or taskset's mask: take the mask's last.
  const last = allowed[allowed.length - 1];
  if (last === undefined) throw new InputError('cpu', '', `this process may run on no CPU (allowed: ${formatCpuList(allowed)})`);
  return last;
}

async function runLocked(
  opts: CampaignOptions,
  campaignDir: string,
  candidates: Candidate[],
  settings: CampaignSettings,
  systemDir: string,
  paths: Paths,
  cpu: number,
): Promise<CampaignSummary> {
  const tools = await harnessTools();
  const sys = settings.systems[opts.system];
  const environment = hostEnvironment(cpu);

  const campaignJson = readJsonIfExists<Record<string, unknown>>(paths.campaign) ?? {};
  const hostChecks = (campaignJson.host_checks as unknown[] | undefined) ?? [];
  const started = (campaignJson.started_utc as string | undefined) ?? new Date().toISOString();
  hostChecks.push({ phase: [...opts.phases].join(','), cpu, utc: new Date().toISOString(), problems: hostProblems(environment), ...(opts.shard ? { shard: `${opts.shard.index}/${opts.shard.count}` } : {}) });
  const writeCampaign = (extra: Record<string, unknown>) =>
    writeJsonAtomic(paths.campaign, {
      schema: 2,
      system_id: opts.system,
      tool: 'ngcc-perf',
      harness_version: tools.version,
      ...campaignJson,
      started_utc: started,
      environment_at_start: campaignJson.environment_at_start ?? environment,
      environment_latest: environment,
      host_checks: hostChecks,
      planning: settings.planning,
      flags: settings.flags,
      fixed_clock_hz: sys?.fixed_clock_hz ?? null,
      ...extra,
    });
  writeCampaign({ ended_utc: null });

  const work = units(candidates, opts.shard);
  const opsPer = (u: Unit) => (opts.phases.has('measure') ? OPERATIONS[u.candidate.type].length : 0) + (opts.phases.has('profile') ? 1 : 0);
  opts.progress?.start(work.reduce((a, u) => a + 1 + opsPer(u), 0));
  const summary: InstanceSummary[] = [];
  let counter: string | undefined;
  const nistSymbols = settings.profile.nist_symbols ?? wrapCatalog('wrap_nist.c');
  for (const unit of work) {
    const key = `${unit.candidate.id}/${unit.instance.label}`;
    const entry = await prepareInstance(unit, { ...opts, campaignDir }, settings, tools, paths, systemDir);
    const dropped = dropStaleEvidence(unit, entry, paths, opts.force);
    opts.progress?.tick(`${key} ${katShown(entry.kat)}${entry.kat_detail ? ` (${entry.kat_detail})` : ''}${dropped > 0 ? `; removed ${dropped} evidence file(s) of a previous library` : ''}`);
    const inst: InstanceSummary = { key, kat: entry.kat, detail: entry.kat_detail, operations: [] };
    summary.push(inst);
    if (opts.phases.has('measure')) await measureInstance(unit, entry, { ...opts, campaignDir }, settings, tools, paths, cpu, environment, inst, (c) => (counter ??= c));
    if (!opts.phases.has('profile')) continue;
    if (!entry.library || entry.kat === 'BUILDFAIL') opts.progress?.tick(`${key} profile: not run (${katShown(entry.kat)})`);
    else {
      const surveyPath = paths.survey(unit.candidate.id, unit.instance.label);
      const previousSurvey = readPrevious<{ library_sha256?: string; survey_version?: number }>(surveyPath, opts.force);
      if (opts.force || previousSurvey?.library_sha256 !== entry.library_sha256 || previousSurvey?.survey_version !== SURVEY_VERSION) {
        const head = { schema: 1, candidate: unit.candidate.id, label: unit.instance.label, library_sha256: entry.library_sha256, survey_version: SURVEY_VERSION };
        // A survey that cannot run (objdump missing, an odd binary) is recorded, never fatal.
        const survey = await surveyLibrary(resolve(campaignDir, entry.library), unit.instance.label, unit.candidate.api === 'nist').catch((e: unknown) => ({ failure: errorMessage(e) }));
        writeJsonAtomic(surveyPath, { ...head, ...survey });
      }
      const surveyed = readJsonIfExists<{ verdict?: string; failure?: string }>(surveyPath);
      const verdict = `survey ${surveyed?.verdict ?? `failed (${surveyed?.failure ?? 'no result'})`}`;
      if (!measurable(entry.kat)) opts.progress?.tick(`${key} ${verdict}; not profiled (${katShown(entry.kat)})`);
      else {
        await profileInstance({
          request: buildRequest(unit, entry.flags, settings, tools, paths, opts.buildCache),
          entry,
          campaignDir,
          tools,
          paths,
          cpu,
          nistSymbols,
          targetSeconds: settings.profile.target_s,
          rounds: settings.profile.rounds,
          timeoutMs: settings.planning.process_timeout_s * 1000,
          force: opts.force,
        });
        const shares = OPERATIONS[unit.candidate.type].map((op) => {
          const p = readJsonIfExists<HashProfile>(paths.profile(unit.candidate.id, unit.instance.label, op));
          return `${op} ${p?.hash_share !== undefined ? formatShare(p.hash_share) : (p?.status ?? 'missing')}`;
        });
        opts.progress?.tick(`${key} ${verdict}; hash share ${shares.join(', ')}`);
      }
    }
  }
  writeCampaign({ ended_utc: new Date().toISOString(), ...(counter ? { counter_source: counter } : {}) });
  opts.progress?.done();
  return { systemDir, instances: summary };
}

/** Timing of every operation of one instance (kept when complete for the same library). */
async function measureInstance(
  unit: Unit,
  entry: BuildEntry,
  opts: CampaignOptions & { campaignDir: string },
  settings: CampaignSettings,
  tools: HarnessTools,
  paths: Paths,
  cpu: number,
  environment: HostEnvironment,
  inst: InstanceSummary,
  onCounter: (c: string) => void,
): Promise<void> {
  const key = `${unit.candidate.id}/${unit.instance.label}`;
  const campaignDir = opts.campaignDir;
  const sys = settings.systems[opts.system];
  const todo: OperationRequest[] = [];
  const replaced = new Set<string>();
  for (const operation of OPERATIONS[unit.candidate.type]) {
    if (!measurable(entry.kat) || !entry.library) {
      inst.operations.push({ operation, status: 'not measured', skipped: true });
      opts.progress?.tick(`${key} ${operation}: not measured (${katShown(entry.kat)})`);
      continue;
    }
    const recordPath = paths.record(unit.candidate.id, unit.instance.label, operation);
    const previous = readPrevious<TimingRecord>(recordPath, opts.force, () => replaced.add(operation));
    if (!opts.force && previous?.status === 'complete' && previous.library_sha256 === entry.library_sha256 && previous.kat === entry.kat) {
      inst.operations.push({ operation, status: 'complete', mean_cycles: previous.mean_cycles, skipped: true });
      opts.progress?.tick(`${key} ${operation}: unchanged, kept`);
      continue;
    }
    todo.push({
      timeTool: tools.time,
      library: resolve(campaignDir, entry.library),
      libraryShown: entry.library,
      type: unit.candidate.type,
      operation,
      cpu,
      rng: unit.candidate.katRng,
      planning: settings.planning,
      fixedClockHz: sys?.fixed_clock_hz,
    });
  }
  await measureOperations(todo, (i, result) => {
    const operation = todo[i]!.operation;
    if (result.meta.counter) onCounter(result.meta.counter);
    const record = buildRecord({ unit: { candidate: unit.candidate, label: unit.instance.label }, operation, entry, result, environment });
    writeJsonAtomic(paths.record(unit.candidate.id, unit.instance.label, operation), record);
    const spread = result.stats ? trialSpread(result.stats, result.trials.length) : undefined;
    inst.operations.push({ operation, status: result.status, mean_cycles: result.stats?.mean_cycles, skipped: false, ...(result.failure ? { failure: result.failure } : {}), ...(spread ? { spread } : {}) });
    const note = `${replaced.has(operation) ? '; replaced an unreadable record' : ''}${spread && spread >= NOISY_TRIAL_SPREAD ? `; noisy: trials spread ${spread.toFixed(2)}×` : ''}`;
    opts.progress?.tick(`${key} ${operation}: ${result.status}${result.stats ? ` ${Math.round(result.stats.mean_cycles)} cycles` : ` (${result.failure})`}${note}`);
  });
}

/**
 * Timing, profile, memory and survey files that no longer describe this instance's library: built
 * from another library (the sources changed), or left from before a build failure or a KAT that now
 * fails. Kept, they would sit on the pages beside the new status and compare as this code's numbers.
 * The previous versions stay in the data branch's history.
 */
function dropStaleEvidence(unit: Unit, entry: BuildEntry, paths: ReturnType<typeof evidencePaths>, force: boolean | undefined): number {
  const { id } = unit.candidate;
  const { label } = unit.instance;
  const notMeasured = !entry.library || (entry.kat !== undefined && !measurable(entry.kat));
  // A survey describes any built library, measured or not; the rest exist only for measured ones.
  const files = [
    ...OPERATIONS[unit.candidate.type].flatMap((op) => [paths.record(id, label, op), paths.profile(id, label, op), paths.memory(id, label, op)]).map((file) => ({ file, measuredOnly: true })),
    { file: paths.survey(id, label), measuredOnly: false },
  ];
  let dropped = 0;
  for (const { file, measuredOnly } of files) {
    if (!existsSync(file)) continue;
    const previous = readPrevious<{ library_sha256?: string }>(file, force);
    const otherLibrary = previous?.library_sha256 !== undefined && previous.library_sha256 !== entry.library_sha256;
    if (otherLibrary || !entry.library || (measuredOnly && notMeasured)) {
      rmSync(file, { force: true });
      dropped++;
    }
  }
  return dropped;
}

/**
 * An earlier evidence file that decides whether work is redone. A corrupt one (a run killed by
 * power loss, a bad merge) is replaced when the run redoes that work anyway (--force); without
 * --force the run stops and says how to get past it, rather than silently overwriting evidence.
 */
function readPrevious<T>(path: string, force: boolean | undefined, onReplaced?: () => void): T | undefined {
  try {
    return readJsonIfExists<T>(path);
  } catch (e) {
    if (!isInputError(e)) throw e;
    if (force) {
      onReplaced?.();
      return undefined;
    }
    throw new InputError(relative(process.cwd(), path) || path, '', `${e.problem}; run again with --force to redo and replace it, or delete the file`);
  }
}

function withOverrides(settings: CampaignSettings, opts: CampaignOptions): CampaignSettings {
  return {
    ...settings,
    planning: {
      ...settings.planning,
      ...(opts.trialTarget !== undefined ? { trial_target_s: opts.trialTarget } : {}),
      ...(opts.opBudget !== undefined ? { op_budget_s: opts.opBudget } : {}),
    },
  };
}

type Paths = ReturnType<typeof evidencePaths>;

function buildRequest(unit: Unit, flagSet: FlagSet, settings: CampaignSettings, tools: HarnessTools, paths: Paths, cache?: BuildCache): BuildRequest {
  return {
    candidate: unit.candidate,
    instance: unit.instance,
    index: unit.index,
    outDir: paths.buildDir(unit.candidate.id, unit.instance.label),
    flagSet,
    variant: settings.flags.variant,
    extraFlags: settings.flags.extra,
    harnessVersion: tools.version,
    timeoutMs: settings.planning.build_timeout_s * 1000,
    cache,
  };
}

/** Build (guide flags, else harness defaults) and KAT one instance; returns its build.json entry. */
async function prepareInstance(
  unit: Unit,
  opts: CampaignOptions & { campaignDir: string },
  settings: CampaignSettings,
  tools: HarnessTools,
  paths: Paths,
  systemDir: string,
): Promise<BuildEntry> {
  const { candidate, instance } = unit;
  const key = `${candidate.id}/${instance.label}`;
  const buildJson = readJsonIfExists<BuildJson>(paths.build) ?? { instances: {} };
  const previous = buildJson.instances[key];
  const manifestPath = join(candidate.folder, 'kat.sha256');
  const manifest = readManifest(manifestPath, `${candidate.id}/kat.sha256`);
  const manifestHash = existsSync(manifestPath) ? sha256File(manifestPath) : 'none';

  const build = (flagSet: FlagSet) => buildInstance(buildRequest(unit, flagSet, settings, tools, paths, opts.buildCache));
  const kat = (b: BuildResult) =>
    runKat({
      candidate,
      label: instance.label,
      nistPrefix: instance.nist_prefix,
      library: b.library,
      katTool: tools.kat,
      outDir: paths.katDir(candidate.id, instance.label),
      manifest,
      timeoutMs: settings.planning.kat_timeout_s * 1000,
      memoryLimitBytes: settings.planning.memory_limit_mb * 1024 * 1024,
    });

  let b = await build('guide');
  let guideResult: string | undefined;
  if (!b.ok) {
    guideResult = 'BUILDFAIL';
    b = await build('harness-default');
  }
  const base: BuildEntry = {
    candidate: candidate.id,
    label: instance.label,
    instance: instance.label,
    variant: settings.flags.variant,
    flags: b.flagSet,
    kat: 'BUILDFAIL',
    api: candidate.api,
    type: candidate.type,
    build_flags: displayFlags(b.flags),
    build_key: b.key,
    ...(guideResult ? { guide_result: guideResult } : {}),
  };
  if (!b.ok) {
    const entry: BuildEntry = { ...base, kat: 'BUILDFAIL', kat_detail: b.firstError, build_error: b.firstError };
    writeKatLog(entry, candidate, b, paths, systemDir, ['build failed:', ...b.log.split('\n').slice(0, 60)]);
    return saveEntry(paths, key, entry);
  }

  const libEntry = (r: BuildResult) => {
    const elf = elfSizes(r.library);
    return {
      library: relative(opts.campaignDir, r.library),
      library_sha256: sha256File(r.library),
      elf_load_bytes: elf.loadBytes,
      elf_sections: { text: elf.text, data: elf.data, bss: elf.bss },
    };
  };
  let lib = libEntry(b);
  // The previous entry still describes this instance when the library it judged is the one we
  // would judge now: the same first build, and — after a fallback — the same fallback build.
  const katLogPath = paths.katLog(candidate.id, instance.label);
  const sameLibrary = async (): Promise<boolean> => {
    if (!previous || previous.kat === 'BUILDFAIL') return false;
    if (previous.flags === b.flagSet) return previous.library_sha256 === lib.library_sha256;
    if (previous.guide_library_sha256 !== lib.library_sha256) return false;
    const fallback = await build('harness-default');
    return fallback.ok && sha256File(fallback.library) === previous.library_sha256;
  };
  const unchanged =
    (await sameLibrary()) &&
    previous!.kat_manifest_sha256 === manifestHash &&
    existsSync(katLogPath) &&
    previous!.kat_log_sha256 === sha256File(katLogPath);
  if (unchanged && (!opts.force || !opts.phases.has('kat'))) return previous!;
  if (!opts.phases.has('kat')) {
    // No status at all rather than NOKAT: NOKAT is a finding (no manifest line), this library was
    // simply not checked. Readers show "not checked", and it is neither timed nor a failure.
    const { kat: _none, ...unchecked } = base;
    return saveEntry(paths, key, { ...unchecked, ...lib, kat_detail: 'KAT not run for this library (run the kat phase)' } as BuildEntry);
  }

  let guideLibrary: string | undefined;
  let outcome: KatOutcome = await kat(b);
  if (b.flagSet === 'guide' && outcome.status !== 'PASS' && outcome.status !== 'NOKAT') {
    const fallback = await build('harness-default');
    if (fallback.ok) {
      guideResult = outcome.status;
      guideLibrary = lib.library_sha256;
      b = fallback;
      lib = libEntry(b);
      outcome = await kat(b);
    }
  }
  const entry: BuildEntry = {
    ...base,
    flags: b.flagSet,
    build_flags: displayFlags(b.flags),
    build_key: b.key,
    ...lib,
    kat: outcome.status,
    ...(outcome.detail ? { kat_detail: outcome.detail } : {}),
    ...(guideResult ? { guide_result: guideResult } : {}),
    ...(guideLibrary ? { guide_library_sha256: guideLibrary } : {}),
    ...(outcome.file ? { kat_file: relativeTo(systemDir, join(paths.katDir(candidate.id, instance.label), outcome.file)) } : {}),
    sizes: outcome.sizes,
    kat_manifest_sha256: manifestHash,
  };
  const body = katBody(outcome, entry.kat_file);
  writeKatLog(entry, candidate, b, paths, systemDir, body);
  return saveEntry(paths, key, entry);
}

function writeKatLog(entry: BuildEntry, candidate: Candidate, b: BuildResult, paths: Paths, systemDir: string, body: string[]): void {
  const logPath = paths.katLog(candidate.id, entry.label);
  const text = formatKatLog(
    {
      library: entry.library ?? '(not built)',
      id: candidate.id,
      type: candidate.type,
      algorithm: candidate.algorithm,
      instance: entry.label,
      api: candidate.api,
      kat_rng: candidate.katRng,
      compiler: ccVersion(),
      build_flags: displayFlags(b.flags),
      flags: b.flagSet,
    },
    body,
    entry.kat,
    entry.kat_detail,
  );
  writeFileAtomic(logPath, text);
  entry.kat_log = relativeTo(systemDir, logPath);
  entry.kat_log_sha256 = sha256Hex(text);
}

/**
 * build.json is re-read before each write so that entries of other instances are never lost; an
 * entry keeps its place, new ones are appended (the order of the candidate manifests).
 */
function saveEntry(paths: Paths, key: string, entry: BuildEntry): BuildEntry {
  const current = readJsonIfExists<BuildJson>(paths.build) ?? { instances: {} };
  current.instances[key] = entry;
  writeJsonAtomic(paths.build, current);
  return entry;
}
