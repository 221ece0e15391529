import type { UnseenTruth } from '../kat/unseen.js';
import { resolveSandbox } from '../env/sandboxProbe.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { join, relative, resolve } from 'node:path';
import type { BuildCache } from '../compile/compile.js';
import { wrapCatalog } from '../compile/profileBuild.js';
import { cacheRoot } from '../compile/harnessTools.js';
import type { Where } from '../config/arguments.js';
import { type Candidate, type InvalidCandidate, loadCampaign } from '../config/campaign.js';
import type { CampaignSettings, InstanceSpec } from '../config/schemas.js';
import { allowedCpus, checkCpuAllowed, formatCpuList } from '../env/cpus.js';
import { defaultCpu } from '../env/host.js';
import { InputError, isInputError } from '../errors.js';
import { systemCompiler } from '../env/toolchain.js';
import { evidencePaths, instanceKey, type EvidencePaths } from '../evidence/layout.js';
import { readBuildJson } from '../evidence/dataset.js';
import { externalSizesPath } from '../catalogs/catalogs.js';
import { existsSync } from 'node:fs';
import type { Progress } from './progress.js';
import { shardByCost } from './forecast.js';
import { loadCtSuppressions } from '../ct/suppressions.js';
import { PAIRED_TRIALS } from '../config/defaults.js';

/** Every compiler ngcc-perf.yml names is one of the system's, before any of them runs (env/toolchain.ts). */
function checkSystemCompilers(settings: CampaignSettings, ymlShown: string): void {
  const named: Array<[string, string]> = [
    ['compiler', settings.compiler],
    ...settings.ct.compilers.map((c, i): [string, string] => [`ct.compilers[${i}]`, c]),
  ];
  for (const [field, name] of named)
    if (systemCompiler(name) === undefined)
      throw new InputError(
        ymlShown,
        field,
        `'${name}' is not a compiler of this system: no executable of that name on PATH lives under /usr, /bin or /sbin (install it, e.g. apt-get install ${name.replace(/-[0-9.]+$/, '')})`,
      );
}

/** A candidate's ct-suppressions.yml, as its errors name it. */
export const ctSuppressionsShown = (candidateId: string): string => `${candidateId}/ct-suppressions.yml`;

/** The phases a run does when it is not told which (`--phases`). */
export const PHASES = ['build', 'kat', 'measure', 'profile'] as const;
/** Phases only `--phases` turns on: the constant-time check runs every operation under valgrind (docs/cli.md). */
const OPT_IN_PHASES = ['ct'] as const;
/** Every phase `--phases` accepts. */
export const KNOWN_PHASES = [...PHASES, ...OPT_IN_PHASES] as const;
/** What `--remeasure` may name (CampaignOptions.remeasure). */
export const REMEASURE = ['noisy', 'failed'] as const;
export type Remeasure = (typeof REMEASURE)[number];
export type Phase = (typeof KNOWN_PHASES)[number];
/**
 * The phases of a run that also takes those its campaign turns on (CampaignOptions.campaignPhases):
 * ngcc-perf.yml's `ct.enabled` adds the constant-time check, so that a campaign's owner, not each
 * workflow, decides whether its runs pay for valgrind.
 */
function withCampaignPhases(phases: ReadonlySet<Phase>, settings: Pick<CampaignSettings, 'ct'>): ReadonlySet<Phase> {
  return settings.ct.enabled ? new Set<Phase>([...phases, 'ct']) : phases;
}

export interface CampaignOptions {
  campaignDir: string;
  system: string;
  dataDir: string;
  only?: RegExp;
  phases: ReadonlySet<Phase>;
  /** Add the phases ngcc-perf.yml turns on (withCampaignPhases): the action's runs. */
  campaignPhases?: boolean;
  trialTarget?: number;
  opBudget?: number;
  /**
   * Plan trials adaptively (planning.adaptive): `always` for this run (the CLI's --adaptive),
   * `nightly` unless ngcc-perf.yml sets adaptive.nightly to false (the action's nightly runs).
   */
  adaptive?: 'always' | 'nightly';
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
  /** Each instance's expected seconds, in the order given: what `shard` balances on (campaign/forecast.ts). */
  shardCost?: (plan: RunPlan, units: readonly Unit[]) => number[];
  /** Called with the plan's lines once it is made, before anything is measured (the action's job summary). */
  onPlan?: (lines: string[]) => void | Promise<void>;
  /** Workers for the preparation beside timing (default: the allowed CPUs that are not timing cores, at least one). */
  jobs?: number;
  /** One instance at a time, nothing beside timing (the order of a run before the scheduler). */
  serial?: boolean;
  /** Replay every timing trial from its seed, not one drawn per operation (measure/replay.ts). */
  audit?: boolean;
  /**
   * What a re-run measures again though its inputs did not change: `noisy`, kept timing records whose
   * trials spread NOISY_TRIAL_SPREAD or more; `failed`, KATs that ended TIMEOUT or CRASH (a failed
   * measurement is measured again anyway). Everything else is kept.
   */
  remeasure?: ReadonlySet<Remeasure>;
  /** A filter that selects nothing is no error (the base side of a paired run may lack a new candidate). */
  onlyMayMatchNothing?: boolean;
  /**
   * Measure every timed operation also on the library built from another checkout of the campaign
   * (the pull request's base), with the trials of both interleaved in this run: drift between runs
   * then hits both sides alike. That side's build, KAT and timing records go to `dataDir`.
   */
  against?: {
    campaignDir: string;
    dataDir: string;
    /** Only the instances whose keys (`<candidate>/<label>`) it matches have a base side (a night pairs its rebuilt instances only). */
    only?: RegExp;
  };
  /** Trials per side of a paired run, at least (default PAIRED_TRIALS; the action's `pr-rounds`). */
  pairedTrials?: number;
  /**
   * A paired run's extra rounds (the action's `pr-extra-rounds`): only these operations
   * (`<candidate>/<label>/<operation>`) are measured, `pairs` more trials a side, and each side's
   * trials are appended to its record of the first rounds (evidence/record.ts appendTrials).
   */
  extraRounds?: ExtraRounds;
  /**
   * The ICCS helper baseline's run (campaign/iccsBaseline.ts): its reserved id is allowed, and it
   * adds its instances to a system folder without taking over the campaign's campaign.json fields.
   */
  iccsBaseline?: boolean;
  /**
   * The secret seed of the unseen-seed check (NGCC_UNSEEN_SEED, the action's `unseen-seed`): each
   * instance's answer to it is held to its predecessor's (campaign/unseen.ts). Never written anywhere.
   */
  unseenSeed?: Buffer;
  /**
   * The published evidence's answers to that seed (a nightly reads them from the data branch): what
   * each changed library is held to, before this folder's own build.json.
   */
  unseenTruth?: UnseenTruth;
}

/** CampaignOptions.extraRounds. */
interface ExtraRounds {
  pairs: number;
  operations: ReadonlySet<string>;
}

/** The other side of a paired run (CampaignOptions.against), resolved. */
interface AgainstPlan {
  campaignDir: string;
  systemDir: string;
  paths: EvidencePaths;
  /** Its instances by key: those the run also has are measured on both sides. */
  units: Map<string, Unit>;
}

/** One instance of one candidate: what every phase step works on. */
export interface Unit {
  candidate: Candidate;
  instance: InstanceSpec;
  /** The instance's place in its candidate.yml (errors name it even when others are filtered out). */
  index: number;
  /** `<candidate>/<label>` (instanceKey). */
  key: string;
}

/** A run resolved and checked before anything runs: nothing here changes while it runs. */
export interface RunPlan {
  campaignDir: string;
  system: string;
  systemDir: string;
  paths: EvidencePaths;
  candidates: Candidate[];
  /** Candidates whose candidate.yml or kat.sha256 is wrong: recorded as INVALID, not built. */
  invalid: InvalidCandidate[];
  /** ngcc-perf.yml with the command line's overrides applied. */
  settings: CampaignSettings;
  /** The sandbox every process of submission code runs in: ngcc-perf.yml's `sandbox`, with `auto` decided for this host. */
  sandbox: SandboxMode;
  /**
   * The core the trials and profiles are pinned to: the first of `cpus` for the run as a whole (its
   * host checks and environment), the core held while an instance's pinned phases run.
   */
  cpu: number;
  /**
   * The cores this run may pin to, in order of preference: `--cpu`, else the system's `cpus` or
   * `cpu` in ngcc-perf.yml, else one default. Each pinned phase of an instance holds one of them
   * (its host-wide lock, src/env/cpuLock.ts) and waits while all are held.
   */
  cpus: number[];
  /** The instances this run (or shard) does, in campaign order. */
  units: Unit[];
  phases: ReadonlySet<Phase>;
  force: boolean;
  /** CampaignOptions.audit. */
  audit: boolean;
  /** CampaignOptions.remeasure. */
  remeasure: ReadonlySet<Remeasure>;
  shard?: { index: number; count: number };
  /** Symbols the profile wraps for NIST-API code: profile.nist_symbols, else the whole catalog. */
  nistSymbols: string[];
  /** Paired run: the base side, measured alongside (CampaignOptions.against). */
  against?: AgainstPlan;
  /** Trials per side of a paired run, at least (CampaignOptions.pairedTrials). */
  pairedTrials: number;
  /** CampaignOptions.extraRounds. */
  extraRounds?: ExtraRounds;
  /** The ICCS helper baseline's run (CampaignOptions.iccsBaseline). */
  iccsBaseline?: boolean;
  /** CampaignOptions.unseenSeed. */
  unseenSeed?: Buffer;
  /** CampaignOptions.unseenTruth. */
  unseenTruth?: UnseenTruth;
}

/** The candidates and instances `--only` selects: it is a search on `<id>` and `<id>/<label>`. */
function selected(candidates: Candidate[], only: RegExp | undefined): Candidate[] {
  if (!only) return candidates;
  return candidates
    .map((c) => (only.test(c.id) ? c : { ...c, instances: c.instances.filter((i) => only.test(instanceKey(c.id, i.label))) }))
    .filter((c) => c.instances.length > 0);
}

/**
 * Whether `--only` may have meant an invalid candidate, whose labels are unknown (its candidate.yml
 * could not be read): the expression finds its id or `<id>/`, or names the id whole (`kem-1` is not
 * named by `^kem-12/`). The run then goes on
 * to print why the candidate is invalid, rather than stop at "matches no instance".
 */
function mayHaveMatched(only: RegExp, id: string): boolean {
  const named: string[] = only.source.replace(/\\/g, '').match(/[a-z]+-[0-9]+/g) ?? [];
  return only.test(id) || only.test(`${id}/`) || named.includes(id);
}

/**
 * Resolves a run and makes every check that can fail before anything is built or written: a
 * `--only` that selects nothing, unknown wrapped symbols, a missing size catalog, a CPU this
 * process may not use, a broken build.json.
 */
export function planRun(opts: CampaignOptions): RunPlan {
  const campaignDir = resolve(opts.campaignDir);
  const loaded = loadCampaign(campaignDir, { checkSources: true, iccsBaseline: opts.iccsBaseline ?? false });
  const campaign = { ...loaded, candidates: selected(loaded.candidates, opts.only) };
  // Every invalid candidate is reported, whatever --only selects: each manifest was checked.
  const invalid = loaded.invalid;
  if (
    opts.only &&
    !opts.onlyMayMatchNothing &&
    campaign.candidates.length === 0 &&
    !invalid.some((i) => mayHaveMatched(opts.only!, i.id))
  ) {
    const all = loaded.candidates.flatMap((c) => c.instances.map((i) => instanceKey(c.id, i.label)));
    const shown =
      all.length === 0
        ? 'no candidate is valid'
        : `instances: ${all.slice(0, 6).join(', ')}${all.length > 6 ? `, … (${all.length} in all)` : ''}`;
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
    throw new InputError(
      ymlShown,
      'profile.nist_symbols',
      `not in the wrapper catalog (native/linked/hashprof/wrap_nist.c): ${unknown.join(', ')}`,
    );
  // The report reads the catalog much later; a wrong name is cheaper to hear about before the run.
  externalSizesPath(campaignDir, settings.catalogs.external_sizes);
  checkSystemCompilers(settings, ymlShown);
  // The drivers' folder: a host setting that is wrong is said before the evidence folder is made.
  cacheRoot();
  const cpus = trialCpus(opts, settings, ymlShown);
  const phases = opts.campaignPhases ? withCampaignPhases(opts.phases, settings) : opts.phases;
  // A suppression without its reason is the candidate author's input error: said before anything runs.
  if (phases.has('ct')) for (const c of campaign.candidates) loadCtSuppressions(c.folder, ctSuppressionsShown(c.id));
  // build.json holds every instance's state: a broken one is not replaced silently, even with --force.
  try {
    if (existsSync(paths.build)) readBuildJson(paths.build);
  } catch (e) {
    if (!isInputError(e)) throw e;
    throw new InputError(
      paths.build,
      '',
      `${e.problem}; restore it (e.g. from git) or delete it, after which every instance is rebuilt and KAT-checked again`,
    );
  }
  const plan: RunPlan = {
    campaignDir,
    system: opts.system,
    systemDir,
    paths,
    candidates: campaign.candidates,
    invalid,
    settings,
    sandbox: resolveSandbox(settings.sandbox),
    cpu: cpus[0]!,
    cpus,
    units: allUnits(campaign.candidates),
    phases,
    force: opts.force ?? false,
    audit: opts.audit ?? false,
    remeasure: opts.remeasure ?? new Set(),
    pairedTrials: opts.pairedTrials ?? PAIRED_TRIALS,
    ...(opts.extraRounds ? { extraRounds: opts.extraRounds } : {}),
    ...(opts.shard ? { shard: opts.shard } : {}),
    nistSymbols: settings.profile.nist_symbols ?? catalog,
    ...(opts.iccsBaseline ? { iccsBaseline: true } : {}),
    ...(opts.unseenSeed ? { unseenSeed: opts.unseenSeed } : {}),
    ...(opts.unseenTruth ? { unseenTruth: opts.unseenTruth } : {}),
  };
  const sharded = opts.shard ? { ...plan, units: shardOf(plan, opts.shard, opts.shardCost) } : plan;
  return opts.against ? { ...sharded, against: againstPlan(sharded, opts) } : sharded;
}

/**
 * The instances of shard K of N: balanced on their expected cost (CampaignOptions.shardCost), so
 * that the shards end together, or on their count without one. Every shard must see the same
 * costs (the same previous evidence, as the nightly's shards do) for the shards to partition the campaign.
 */
function shardOf(plan: RunPlan, shard: { index: number; count: number }, cost: CampaignOptions['shardCost']): Unit[] {
  const costs = cost ? cost(plan, plan.units) : plan.units.map(() => 1);
  const byUnit = new Map(plan.units.map((u, i) => [u, costs[i] ?? 1]));
  return shardByCost(plan.units, (u) => byUnit.get(u)!, shard.index, shard.count);
}

/** The options of the base side of a paired run: its build and KAT, with the same selection. */
export function againstOptions(plan: RunPlan, opts: CampaignOptions): CampaignOptions {
  // The base side is built and KAT-checked only: its ct evidence is the baseline's.
  // Nor is it held to a night: the head side is held to it.
  // Nor does its plan go to the job summary (onPlan): it is the base side's build and KAT only.
  const {
    against,
    progress: _,
    shard: __,
    campaignPhases: ___,
    extraRounds: ____,
    unseenSeed: _s,
    unseenTruth: _t,
    onPlan: _p,
    ...rest
  } = opts;
  if (!against) throw new Error('againstOptions of a run that is not paired');
  // Exactly the instances this run (or shard) does, by key.
  const keys = plan.units.filter((u) => !against.only || against.only.test(u.key)).map((u) => u.key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return {
    ...rest,
    campaignDir: against.campaignDir,
    dataDir: against.dataDir,
    only: new RegExp(`^(${keys.join('|') || '(?!)'})$`),
    phases: new Set<Phase>(['build', 'kat']),
    onlyMayMatchNothing: true,
  };
}

function againstPlan(plan: RunPlan, opts: CampaignOptions): AgainstPlan {
  const base = planRun(againstOptions(plan, opts));
  if (base.systemDir === plan.systemDir)
    throw new InputError('against', '', `the base side's evidence folder must differ from the run's own (${base.systemDir})`);
  return {
    campaignDir: base.campaignDir,
    systemDir: base.systemDir,
    paths: base.paths,
    units: new Map(base.units.map((u) => [u.key, u])),
  };
}

function allUnits(candidates: Candidate[]): Unit[] {
  return candidates.flatMap((candidate) =>
    candidate.instances.map((instance) => ({
      candidate,
      instance,
      index: candidate.labels.indexOf(instance.label),
      key: instanceKey(candidate.id, instance.label),
    })),
  );
}

function withOverrides(settings: CampaignSettings, opts: CampaignOptions): CampaignSettings {
  return {
    ...settings,
    planning: {
      ...settings.planning,
      ...(opts.trialTarget !== undefined ? { trial_target_s: opts.trialTarget } : {}),
      ...(opts.opBudget !== undefined ? { op_budget_s: opts.opBudget } : {}),
      adaptive: {
        ...settings.planning.adaptive,
        enabled: adaptiveEnabled(settings, opts.adaptive),
        // --trial-target sets the trials' length whichever plan runs.
        ...(opts.trialTarget !== undefined ? { trial_target_s: opts.trialTarget } : {}),
      },
    },
  };
}

/** Whether a run plans adaptively: ngcc-perf.yml's adaptive.enabled, or the caller's request (CampaignOptions.adaptive). */
function adaptiveEnabled(settings: CampaignSettings, requested: CampaignOptions['adaptive']): boolean {
  const a = settings.planning.adaptive;
  return a.enabled || requested === 'always' || (requested === 'nightly' && a.nightly);
}

/**
 * The cores the trials may be pinned to, checked before anything runs: a CPU this process may not
 * use fails every measurement alone, which would otherwise surface only as failed records.
 */
function trialCpus(opts: CampaignOptions, settings: CampaignSettings, ymlShown: string): number[] {
  const allowed = allowedCpus();
  if (opts.cpu !== undefined) return [checkCpuAllowed(opts.cpu, opts.argumentNames?.cpu ?? ['cpu', ''], allowed)];
  const system = settings.systems[opts.system];
  if (system?.cpus) return system.cpus.map((c, i) => checkCpuAllowed(c, [ymlShown, `systems.${opts.system}.cpus[${i}]`], allowed));
  if (system?.cpu !== undefined) return [checkCpuAllowed(system.cpu, [ymlShown, `systems.${opts.system}.cpu`], allowed)];
  return [defaultTrialCpu(allowed)];
}

/** The core trials go to when nothing names one: the last online CPU, away from where interrupts land. */
export function defaultTrialCpu(allowed: number[] | undefined = allowedCpus()): number {
  const fallback = defaultCpu();
  if (!allowed || allowed.includes(fallback)) return fallback;
  // The last online CPU may lie outside a container's or taskset's mask: take the mask's last.
  const last = allowed[allowed.length - 1];
  if (last === undefined) throw new InputError('cpu', '', `this process may run on no CPU (allowed: ${formatCpuList(allowed)})`);
  return last;
}
