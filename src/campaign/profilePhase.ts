import { resolve } from 'node:path';
import type { BuildEntry, HashProfile, MemoryRecord, TimingRecord } from '../evidence/fileTypes.js';
import { errorMessage } from '../errors.js';
import { instanceStatus, measurable } from '../kat/status.js';
import { profiledOperationsOf } from '../measure/operation.js';
import { buildProfiledFor, profileInstance, profileSymbols } from '../profile/profileInstance.js';
import type { ProfileBuildResult } from '../compile/profileBuild.js';
import { PROCESS_START_S } from './forecast.js';
import type { RunPlan, Unit } from './runPlan.js';
import { SURVEY_VERSION, surveyLibrary } from '../profile/survey.js';
import { formatShare } from '../text/format.js';
import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import {
  buildRequest,
  driverRngOf,
  driverTypeOf,
  forcedRerunSeconds,
  katShown,
  libraryReplaced,
  preparedEntry,
  previousSeconds,
  type InstanceContext,
  type PhaseStep,
} from './context.js';
import { readPrevious } from './previous.js';

/**
 * What the profile's preparation decided for an instance, for its pinned rounds: not to profile
 * (and why), or the operations to profile and the relink to profile them with.
 */
type ProfilePlan =
  | { run: false; line: string }
  | { run: true; verdict: string; entry: BuiltEntry; operations: string[]; relinked?: ProfileBuildResult };

const plans = new WeakMap<InstanceContext, ProfilePlan>();

/** build.json `step_seconds` key of the part of `profile-build` spent relinking with the wrappers. */
export const RELINK_SECONDS = 'profile-build-relink';

/**
 * The profile's preparation, beside other instances' timing: the survey of a built library (what
 * its API reaches), which operations need a new profile or memory file, and the wrapped relink
 * they are profiled with. Files of the same library are kept.
 */
export const profileBuild: PhaseStep = {
  name: 'profile-build',
  phase: 'profile',
  ticks: () => 0,
  expect: (plan, unit, previous) =>
    profilesHold(plan, unit, previous)
      ? { seconds: 0, source: 'kept' }
      : // A forced rerun finds the wrapped relink on disk (keyed by the same sources): the survey again, not the compile.
        (forcedRerunSeconds(plan, previous, 'profile-build', RELINK_SECONDS, 'rest') ?? previousSeconds('profile-build', previous)),
  async run(ctx) {
    const entry = preparedEntry(ctx, 'profile');
    if (!entry.library || entry.kat === 'BUILDFAIL') {
      plans.set(ctx, { run: false, line: `profile: not run (${katShown(entry.kat)})` });
      return 'kept';
    }
    const replaced = libraryReplaced(ctx.run, entry);
    if (replaced) {
      plans.set(ctx, { run: false, line: `profile: not run (${replaced})` });
      return 'kept';
    }
    const built = { ...entry, library: entry.library };
    const verdict = await survey(ctx, built);
    if (!measurable(instanceStatus(entry))) {
      plans.set(ctx, { run: false, line: `${verdict}; not profiled (${katShown(instanceStatus(entry))})` });
      return;
    }
    const operations = staleOperations(ctx.run.plan, ctx.unit, built);
    const { run, unit } = ctx;
    const started = performance.now();
    const relinked = operations.length > 0 ? await buildProfiledFor(buildRequest(run, unit, entry.flags), run.plan.nistSymbols) : undefined;
    if (relinked) ctx.parts = { ...ctx.parts, [RELINK_SECONDS]: (performance.now() - started) / 1000 };
    plans.set(ctx, { run: true, verdict, entry: built, operations, ...(relinked ? { relinked } : {}) });
    return operations.length > 0 ? undefined : 'kept';
  },
};

/**
 * The profile's rounds and memory runs, holding the timing core: the hash/DRNG share and the memory
 * of each operation the preparation found stale.
 */
export const profile: PhaseStep = {
  name: 'profile',
  phase: 'profile',
  core: 'exclusive',
  ticks: () => 1,
  needsCore: (ctx) => {
    const plan = plans.get(ctx);
    return plan === undefined || (plan.run && plan.operations.length > 0);
  },
  expect: (plan, unit, previous) => {
    if (profilesHold(plan, unit, previous)) return { seconds: 0, source: 'kept' };
    const known = previousSeconds('profile', previous);
    if (known.source !== 'none') return known;
    // Never profiled here: the calls it is planned to make, and a process per round and per memory run.
    const { target_s, rounds } = plan.settings.profile;
    const ops = profiledOperationsOf(unit.candidate.type).length;
    return { seconds: ops * (target_s + rounds * PROCESS_START_S + PROCESS_START_S), source: 'plan' };
  },
  async run(ctx) {
    const plan = plans.get(ctx);
    plans.delete(ctx);
    if (!plan) throw new Error(`the profile rounds of ${ctx.unit.key} ran before the profile's preparation`);
    if (!plan.run) {
      ctx.tick(plan.line);
      return 'kept';
    }
    // The measure step, between the preparation and this, may have found the library FORGED.
    const now = preparedEntry(ctx, 'profile');
    if (!measurable(instanceStatus(now))) {
      ctx.tick(`${plan.verdict}; not profiled (${katShown(instanceStatus(now))})`);
      return 'kept';
    }
    const replaced = libraryReplaced(ctx.run, plan.entry);
    if (replaced) {
      ctx.tick(`profile: not run (${replaced})`);
      return 'kept';
    }
    await profileOperations(ctx, plan.entry, plan.operations, plan.relinked);
    const { paths } = ctx.run.plan;
    const { candidate, instance } = ctx.unit;
    const shares = profiledOperationsOf(candidate.type).map((op) => {
      const p = readJsonIfExists<HashProfile>(paths.profile(candidate.id, instance.label, op));
      const left = p?.left_out_rounds?.length ?? 0;
      const note = `${left > 0 ? ` (${left} disturbed round${left === 1 ? '' : 's'} left out)` : ''}${p?.disturbed_rounds ? ` (every round disturbed)` : ''}`;
      return `${op} ${p?.hash_share !== undefined ? formatShare(p.hash_share) : (p?.status ?? 'missing')}${note}`;
    });
    ctx.tick(`${plan.verdict}; hash share ${shares.join(', ')}`);
    return plan.operations.length > 0 ? undefined : 'kept';
  },
};

/** A build.json entry of a library that was built. */
type BuiltEntry = BuildEntry & { library: string };

/** Surveys the library unless its survey is current; returns the verdict as the progress line shows it. */
async function survey(ctx: InstanceContext, entry: BuiltEntry): Promise<string> {
  const { plan } = ctx.run;
  const { candidate, instance } = ctx.unit;
  const surveyPath = plan.paths.survey(candidate.id, instance.label);
  const previous = readPrevious<{ library_sha256?: string; survey_version?: number }>(surveyPath, plan.force);
  if (plan.force || previous?.library_sha256 !== entry.library_sha256 || previous?.survey_version !== SURVEY_VERSION) {
    const head = {
      schema: 1,
      candidate: candidate.id,
      label: instance.label,
      library_sha256: entry.library_sha256,
      survey_version: SURVEY_VERSION,
    };
    // A survey that cannot run (objdump missing, an odd binary) is recorded, never fatal.
    const library = resolve(plan.campaignDir, entry.library);
    const result = await surveyLibrary(library, instance.label, candidate.api === 'nist' && candidate.katRng, plan.sandbox).catch(
      (e: unknown) => ({
        failure: errorMessage(e),
      }),
    );
    writeJsonAtomic(surveyPath, { ...head, ...result });
  }
  const surveyed = readJsonIfExists<{ verdict?: string; failure?: string }>(surveyPath);
  return `survey ${surveyed?.verdict ?? `failed (${surveyed?.failure ?? 'no result'})`}`;
}

/** The operations whose profile or memory file does not describe this library and these symbols. */
function staleOperations(plan: RunPlan, unit: Unit, entry: { library_sha256?: string }): string[] {
  const { id } = unit.candidate;
  const { label } = unit.instance;
  const { digest } = profileSymbols(unit.candidate.api, plan.nistSymbols);
  return profiledOperationsOf(unit.candidate.type).filter((operation) => {
    const previous = readJsonIfExists<HashProfile>(plan.paths.profile(id, label, operation));
    const memory = readJsonIfExists<MemoryRecord>(plan.paths.memory(id, label, operation));
    return (
      plan.force ||
      previous?.library_sha256 !== entry.library_sha256 ||
      previous?.profile_symbols !== digest ||
      memory?.library_sha256 !== entry.library_sha256
    );
  });
}

/** Whether the profile files on disk would be kept, were the library unchanged: the forecast's guess. */
function profilesHold(plan: RunPlan, unit: Unit, previous: BuildEntry | undefined): boolean {
  // A KAT that forbade timing forbids the profile too, most likely again.
  if (previous?.kat !== undefined && !measurable(instanceStatus(previous))) return true;
  return !!previous?.library_sha256 && staleOperations(plan, unit, previous).length === 0;
}

/** Profiles `operations` with the relink the preparation built. */
async function profileOperations(
  ctx: InstanceContext,
  entry: BuiltEntry,
  operations: readonly string[],
  relinked: ProfileBuildResult | undefined,
): Promise<void> {
  const { run, unit } = ctx;
  const { plan } = run;
  const { id } = unit.candidate;
  const { label } = unit.instance;
  await profileInstance(
    {
      request: buildRequest(run, unit, entry.flags),
      library: resolve(plan.campaignDir, entry.library),
      librarySha256: entry.library_sha256!,
      campaignDir: plan.campaignDir,
      tools: run.tools,
      driverType: driverTypeOf(unit.candidate, unit.instance),
      driverRng: driverRngOf(unit.candidate),
      cpu: plan.cpu,
      nistSymbols: plan.nistSymbols,
      targetSeconds: plan.settings.profile.target_s,
      rounds: plan.settings.profile.rounds,
      disturbedRetries: plan.settings.planning.disturbed_retries,
      timeoutMs: plan.settings.planning.process_timeout_s * 1000,
      ...(entry.call_seconds ? { callSeconds: entry.call_seconds } : {}),
      perCallSeconds: (operation) => {
        const record = readJsonIfExists<TimingRecord>(plan.paths.record(id, label, operation));
        return typeof record?.mean_seconds === 'number' ? record.mean_seconds : undefined;
      },
    },
    operations,
    {
      profile: (operation, p) => writeJsonAtomic(plan.paths.profile(id, label, operation), p),
      memory: (operation, m) => writeJsonAtomic(plan.paths.memory(id, label, operation), m),
    },
    relinked,
  );
}
