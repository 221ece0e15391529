import { resolve } from 'node:path';
import { isNistKatRng } from '../config/campaign.js';
import { nistEntryPrefix } from '../compile/nistShim.js';
import type { BuildEntry, BuildJson } from '../evidence/types.js';
import { measurable } from '../kat/status.js';
import {
  answerUnseenSeed,
  drawnSeed,
  firstRecordDifference,
  instanceSeed,
  seedId,
  UNSEEN_CHECK,
  type HeldTo,
  type UnseenAnswer,
  type UnseenRecord,
} from '../kat/unseen.js';
import { readJsonIfExists } from '../util/fsx.js';
import { driverTypeOf, libraryReplaced, preparedEntry, type InstanceContext, type PhaseStep } from './context.js';
import { saveEntry } from './prepare.js';

/**
 * Holds a library's outputs to truth from outside it (docs/method.md#unseen-seeds), after its KAT:
 * - in a pull request (a paired run) whose library changed under the same KAT manifest, the base's
 *   and the head's answers to a seed drawn for this run must be the same text, byte for byte;
 * - with a secret seed (nightlies), the answer's digest must be the one recorded for the same
 *   manifest on an earlier night, whenever the library changed.
 * Otherwise the instance is FORGED. What it was held to goes into build.json `held_to`.
 */
export const unseen: PhaseStep = {
  name: 'unseen',
  phase: 'kat',
  // It prints notes, not progress lines: most instances of most runs have nothing to be held to.
  ticks: () => 0,
  expect: () => ({ seconds: 0, source: 'plan' }),
  async run(ctx) {
    const entry = preparedEntry(ctx, 'unseen');
    if (!entry.library || !entry.library_sha256 || !measurable(entry.kat) || entry.forged) return 'kept';
    const { plan } = ctx.run;
    if (plan.against) return holdToBase(ctx, entry);
    if (plan.unseenSeed) return holdToNight(ctx, entry, plan.unseenSeed);
    return 'kept';
  },
};

/** The instance's answer to `seed` from `library`, in the run's sandbox. */
function answer(ctx: InstanceContext, library: string, seed: Buffer): Promise<UnseenAnswer> {
  const { plan, tools } = ctx.run;
  const { candidate, instance } = ctx.unit;
  return answerUnseenSeed({
    driver: tools.driver,
    library,
    type: driverTypeOf(candidate, instance),
    mode: isNistKatRng(candidate.katRng) ? 'nist' : 'iccs',
    nistPrefix: nistEntryPrefix(instance),
    seed,
    timeoutMs: plan.settings.planning.kat_timeout_s * 1000,
    memoryLimitBytes: plan.settings.planning.memory_limit_mb * 1024 * 1024,
    sandbox: plan.sandbox,
  });
}

/** Saves the entry with what it was held to, and a forgery when one was found. */
function settle(ctx: InstanceContext, entry: BuildEntry, held: HeldTo, extra: Partial<BuildEntry> = {}): void {
  ctx.entry = saveEntry(ctx.run, ctx.unit.key, { ...entry, ...extra, held_to: held });
  if (ctx.entry.forged) {
    ctx.summary.forged = ctx.entry.forged;
    ctx.run.progress?.note?.(`${ctx.unit.key}: FORGED (${ctx.entry.forged.detail.replace(/^FORGED: /, '')})`);
  }
}

const forgery = (detail: string) => ({ forged: { operation: UNSEEN_CHECK, detail: `FORGED: ${detail}` } });

/** The base side's entry and library of this instance in a paired run, when it was built and passed its KAT. */
function baseOf(ctx: InstanceContext): { entry: BuildEntry; library: string } | undefined {
  const against = ctx.run.plan.against!;
  const entry = readJsonIfExists<BuildJson>(against.paths.build)?.instances[ctx.unit.key];
  if (!entry?.library || !entry.library_sha256 || !measurable(entry.kat) || entry.forged) return undefined;
  if (libraryReplaced({ ...ctx.run, plan: { ...ctx.run.plan, campaignDir: against.campaignDir } }, entry)) return undefined;
  return { entry, library: resolve(against.campaignDir, entry.library) };
}

/** A pull request's head, held to its base on a seed drawn now (never written anywhere). */
async function holdToBase(ctx: InstanceContext, entry: BuildEntry): Promise<'kept' | undefined> {
  const base = baseOf(ctx);
  if (!base || base.entry.library_sha256 === entry.library_sha256) return 'kept';
  if (!entry.kat_manifest_sha256 || base.entry.kat_manifest_sha256 !== entry.kat_manifest_sha256) {
    ctx.run.progress?.note?.(`${ctx.unit.key}: a new KAT manifest: held to its published KAT only`);
    settle(ctx, entry, { against: 'published-kat', why: 'new-manifest' });
    return undefined;
  }
  const seed = drawnSeed();
  const library = resolve(ctx.run.plan.campaignDir, entry.library!);
  // Side by side: each in a sandbox of its own, neither on a timing core.
  const [theirs, ours] = await Promise.all([answer(ctx, base.library, seed), answer(ctx, library, seed)]);
  const held: HeldTo = { against: 'base', base_library_sha256: base.entry.library_sha256! };
  if ('failure' in theirs) {
    ctx.run.progress?.note?.(
      `${ctx.unit.key}: the base gave no answer on unseen seeds (${theirs.failure}): held to its published KAT only`,
    );
    settle(ctx, entry, { against: 'published-kat', why: 'unseen-failed', detail: `the base: ${theirs.failure}` });
    return undefined;
  }
  if ('failure' in ours) {
    settle(ctx, entry, held, forgery(`on unseen seeds, where the base answered, it failed (${ours.failure})`));
    return undefined;
  }
  const where = firstRecordDifference(theirs.text, ours.text);
  settle(ctx, entry, held, where ? forgery(`its outputs on unseen seeds differ from the base's (${where})`) : {});
  return undefined;
}

/** A night's library, held to the digest an earlier night recorded on the secret seed. */
async function holdToNight(ctx: InstanceContext, entry: BuildEntry, secret: Buffer): Promise<'kept' | undefined> {
  const id = seedId(secret);
  const before = entry.unseen;
  if (before?.seed_id === id && before.library_sha256 === entry.library_sha256) return 'kept';
  const library = resolve(ctx.run.plan.campaignDir, entry.library!);
  const got = await answer(ctx, library, instanceSeed(secret, ctx.unit.key));
  const now = new Date().toISOString();
  const comparable = before?.seed_id === id && before.kat_manifest_sha256 === entry.kat_manifest_sha256;
  if ('failure' in got) {
    ctx.run.progress?.note?.(`${ctx.unit.key}: no answer on unseen seeds (${got.failure}): held to its published KAT only`);
    settle(ctx, entry, { against: 'published-kat', why: 'unseen-failed', detail: got.failure });
    return undefined;
  }
  if (comparable) {
    const held: HeldTo = { against: 'night', night_utc: before.confirmed_utc, seed_id: id };
    if (got.digest !== before.digest) {
      settle(
        ctx,
        entry,
        held,
        forgery(`its outputs on unseen seeds differ from those of the library of ${before.confirmed_utc.slice(0, 10)}`),
      );
      return undefined;
    }
    settle(ctx, entry, held, { unseen: { ...before, library_sha256: entry.library_sha256!, confirmed_utc: now } });
    return undefined;
  }
  const record: UnseenRecord = {
    seed_id: id,
    digest: got.digest,
    records: got.records,
    library_sha256: entry.library_sha256!,
    kat_manifest_sha256: entry.kat_manifest_sha256 ?? 'none',
    recorded_utc: now,
    confirmed_utc: now,
  };
  const why = !before ? 'first-version' : before.seed_id !== id ? 'new-seed' : 'new-manifest';
  ctx.run.progress?.note?.(`${ctx.unit.key}: new digests on unseen seeds recorded (${why.replace('-', ' ')})`);
  settle(ctx, entry, { against: 'published-kat', why }, { unseen: record });
  return undefined;
}
