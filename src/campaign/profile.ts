import { resolve } from 'node:path';
import type { BuildEntry, HashProfile, MemoryRecord, TimingRecord } from '../evidence/types.js';
import { errorMessage } from '../errors.js';
import { measurable } from '../kat/status.js';
import { profiledOperationsOf } from '../measure/operation.js';
import { profileInstance, profileSymbols } from '../profile/run.js';
import { SURVEY_VERSION, surveyLibrary } from '../profile/survey.js';
import { formatShare } from '../report/format.js';
import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import {
  buildRequest,
  driverRngOf,
  driverTypeOf,
  katShown,
  libraryReplaced,
  preparedEntry,
  type InstanceContext,
  type PhaseStep,
} from './context.js';
import { readPrevious } from './previous.js';

/**
 * The survey of a built library (what its API reaches), then — for a library that may be timed —
 * the hash/DRNG profile and the memory of each operation. Files of the same library are kept.
 */
export const profile: PhaseStep = {
  name: 'profile',
  phase: 'profile',
  ticks: () => 1,
  async run(ctx) {
    const entry = preparedEntry(ctx, 'profile');
    if (!entry.library || entry.kat === 'BUILDFAIL') {
      ctx.tick(`profile: not run (${katShown(entry.kat)})`);
      return;
    }
    const replaced = libraryReplaced(ctx.run, entry);
    if (replaced) {
      ctx.tick(`profile: not run (${replaced})`);
      return;
    }
    const built = { ...entry, library: entry.library };
    const verdict = await survey(ctx, built);
    if (!measurable(entry.kat)) {
      ctx.tick(`${verdict}; not profiled (${katShown(entry.kat)})`);
      return;
    }
    await profileOperations(ctx, built);
    const { paths } = ctx.run.plan;
    const { candidate, instance } = ctx.unit;
    const shares = profiledOperationsOf(candidate.type).map((op) => {
      const p = readJsonIfExists<HashProfile>(paths.profile(candidate.id, instance.label, op));
      const left = p?.left_out_rounds?.length ?? 0;
      const note = `${left > 0 ? ` (${left} disturbed round${left === 1 ? '' : 's'} left out)` : ''}${p?.disturbed_rounds ? ` (every round disturbed)` : ''}`;
      return `${op} ${p?.hash_share !== undefined ? formatShare(p.hash_share) : (p?.status ?? 'missing')}${note}`;
    });
    ctx.tick(`${verdict}; hash share ${shares.join(', ')}`);
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

/** Profiles the operations whose profile or memory file does not describe this library and these symbols. */
async function profileOperations(ctx: InstanceContext, entry: BuiltEntry): Promise<void> {
  const { run, unit } = ctx;
  const { plan } = run;
  const { id } = unit.candidate;
  const { label } = unit.instance;
  const { digest } = profileSymbols(unit.candidate.api, plan.nistSymbols);
  const stale = profiledOperationsOf(unit.candidate.type).filter((operation) => {
    const previous = readJsonIfExists<HashProfile>(plan.paths.profile(id, label, operation));
    const memory = readJsonIfExists<MemoryRecord>(plan.paths.memory(id, label, operation));
    return (
      plan.force ||
      previous?.library_sha256 !== entry.library_sha256 ||
      previous?.profile_symbols !== digest ||
      memory?.library_sha256 !== entry.library_sha256
    );
  });
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
      perCallSeconds: (operation) => {
        const record = readJsonIfExists<TimingRecord>(plan.paths.record(id, label, operation));
        return typeof record?.mean_seconds === 'number' ? record.mean_seconds : undefined;
      },
    },
    stale,
    {
      profile: (operation, p) => writeJsonAtomic(plan.paths.profile(id, label, operation), p),
      memory: (operation, m) => writeJsonAtomic(plan.paths.memory(id, label, operation), m),
    },
  );
}
