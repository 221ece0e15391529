import { join, resolve } from 'node:path';
import { isNistKatRng } from '../config/campaign.js';
import { readManifest } from '../config/katManifest.js';
import { nistEntryPrefix } from '../compile/nistShim.js';
import type { BuildEntry, BuildJson } from '../evidence/fileTypes.js';
import { measurable } from '../kat/status.js';
import {
  answerUnseenSeed,
  drawnSeed,
  firstRecordDifference,
  instanceSeed,
  manifestOfInstance,
  seedId,
  UNSEEN_CHECK,
  type HeldTo,
  type UnseenAnswer,
  type UnseenRecord,
} from '../kat/unseen.js';
import { readJsonIfExists } from '../util/fsx.js';
import { driverTypeOf, libraryReplaced, preparedEntry, type InstanceContext, type PhaseStep } from './context.js';
import type { Unit } from './runPlan.js';
import { saveEntry } from './prepare.js';

/**
 * Holds a library's outputs to truth from outside it (docs/method.md#unseen-seeds), after its KAT:
 * - in a pull request (a paired run) whose library changed under the same manifest lines, the base's
 *   and the head's answers to a seed drawn for this run must agree by the manifest's digest rule;
 * - with a secret seed (nightlies), the answer's digest must be the one recorded for the same
 *   manifest lines on an earlier night, whenever the library changed.
 * Otherwise the instance is FORGED. What it was held to goes into build.json `held_to`.
 */
export const unseen: PhaseStep = {
  name: 'unseen',
  phase: 'kat',
  // It prints notes, not progress lines: most instances of most runs have nothing to be held to.
  ticks: () => 0,
  expect: () => ({ seconds: 0, source: 'plan' }),
  async run(ctx) {
    const { plan } = ctx.run;
    const entry = carriedTruth(ctx, preparedEntry(ctx, 'unseen'));
    if (!entry.library || !entry.library_sha256 || !measurable(entry.kat) || entry.forged) return 'kept';
    if (plan.against && baseOf(ctx)) {
      // A night that pairs its rebuilt instances with last night's still keeps their answers on its
      // secret seed, which the next night holds them to; then the base holds them, and is what the
      // measure step makes dec's inputs and replays a segment with (build.json held_to).
      if (plan.unseenSeed) {
        const night = await holdToNight(ctx, entry, plan.unseenSeed);
        if (ctx.entry?.forged) return night;
      }
      return holdToBase(ctx, ctx.entry ?? entry);
    }
    if (plan.unseenSeed) return holdToNight(ctx, entry, plan.unseenSeed);
    return 'kept';
  },
};

/**
 * The published answers on the secret seed, carried into an entry that lacks them (a nightly shard's
 * fresh folder): a night without the seed, or whose build failed, must not drop what later nights
 * are held to when its evidence replaces the published entry.
 */
function carriedTruth(ctx: InstanceContext, entry: BuildEntry): BuildEntry {
  const published = ctx.run.plan.unseenTruth?.[ctx.unit.key];
  if (!published || entry.unseen) return entry;
  ctx.entry = saveEntry(ctx.run, ctx.unit.key, { ...entry, unseen: published.unseen });
  return ctx.entry;
}

/** An instance's manifest lines and digest rule (kat/unseen.ts manifestOfInstance). */
const manifestOf = (unit: Unit) =>
  manifestOfInstance(readManifest(join(unit.candidate.folder, 'kat.sha256'), `${unit.candidate.id}/kat.sha256`), unit.instance.label);

/** `unit`'s answer to `seed` from `library`, by its own instance's spec, in the run's sandbox. */
function answer(ctx: InstanceContext, unit: Unit, library: string, seed: Buffer): Promise<UnseenAnswer> {
  const { plan, tools } = ctx.run;
  const { candidate, instance } = unit;
  return answerUnseenSeed({
    driver: tools.driver,
    library,
    type: driverTypeOf(candidate, instance),
    mode: isNistKatRng(candidate.katRng) ? 'nist' : 'iccs',
    nistPrefix: nistEntryPrefix(instance),
    digestMode: manifestOf(unit).mode,
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

/** The base side's unit, entry and library of this instance in a paired run, when it was built and passed its KAT. */
function baseOf(ctx: InstanceContext): { unit: Unit; entry: BuildEntry; library: string } | undefined {
  const against = ctx.run.plan.against!;
  const unit = against.units.get(ctx.unit.key);
  const entry = readJsonIfExists<BuildJson>(against.paths.build)?.instances[ctx.unit.key];
  if (!unit || !entry?.library || !entry.library_sha256 || !measurable(entry.kat) || entry.forged) return undefined;
  if (unit.candidate.type !== ctx.unit.candidate.type) return undefined;
  if (libraryReplaced({ ...ctx.run, plan: { ...ctx.run.plan, campaignDir: against.campaignDir } }, entry)) return undefined;
  return { unit, entry, library: resolve(against.campaignDir, entry.library) };
}

/** A pull request's head, held to its base on a seed drawn now (never written anywhere). */
async function holdToBase(ctx: InstanceContext, entry: BuildEntry): Promise<'kept' | undefined> {
  const base = baseOf(ctx);
  if (!base || base.entry.library_sha256 === entry.library_sha256) return 'kept';
  if (manifestOf(base.unit).sha256 !== manifestOf(ctx.unit).sha256) {
    ctx.run.progress?.note?.(`${ctx.unit.key}: new KAT manifest lines: held to its published KAT only`);
    settle(ctx, entry, { against: 'published-kat', why: 'new-manifest' });
    return undefined;
  }
  const seed = drawnSeed();
  // The base first and alone, by its own instance's spec: the head can neither starve it nor make it fail.
  const theirs = await answer(ctx, base.unit, base.library, seed);
  if ('failure' in theirs) {
    ctx.run.progress?.note?.(
      `${ctx.unit.key}: the base gave no answer on unseen seeds (${theirs.failure}): held to its published KAT only`,
    );
    settle(ctx, entry, { against: 'published-kat', why: 'unseen-failed', detail: `the base: ${theirs.failure}` });
    return undefined;
  }
  const ours = await answer(ctx, ctx.unit, resolve(ctx.run.plan.campaignDir, entry.library!), seed);
  const held: HeldTo = { against: 'base', base_library_sha256: base.entry.library_sha256! };
  if ('failure' in ours) {
    settle(ctx, entry, held, forgery(`on unseen seeds, where the base answered, it failed (${ours.failure})`));
    return undefined;
  }
  const where = ours.digest === theirs.digest ? undefined : (firstRecordDifference(theirs.text, ours.text) ?? 'the texts differ');
  settle(ctx, entry, held, where ? forgery(`its outputs on unseen seeds differ from the base's (${where})`) : {});
  return undefined;
}

/**
 * The status word alone of a failure on the secret seed: what a library prints in its failure (a
 * return code, a STATUS line of its own) must not carry the seed out into the evidence or the log.
 */
const statusOnly = (failure: string): string => failure.split(':')[0]!.trim();

/**
 * A night's library, held to the digest an earlier night recorded on the secret seed: the published
 * evidence's (RunPlan.unseenTruth, a nightly's) or, without it, this folder's own.
 */
async function holdToNight(ctx: InstanceContext, entry: BuildEntry, secret: Buffer): Promise<'kept' | undefined> {
  const id = seedId(secret);
  const published = ctx.run.plan.unseenTruth?.[ctx.unit.key];
  const before = published?.unseen ?? entry.unseen;
  if (before?.seed_id === id && before.library_sha256 === entry.library_sha256) {
    // The same library as the night that gave the digest: nothing to ask again; what it was held to goes on.
    if (published?.held_to && !entry.held_to) settle(ctx, entry, published.held_to);
    return 'kept';
  }
  const manifest = manifestOf(ctx.unit);
  const got = await answer(ctx, ctx.unit, resolve(ctx.run.plan.campaignDir, entry.library!), instanceSeed(secret, ctx.unit.key));
  const now = new Date().toISOString();
  const comparable = before?.seed_id === id && before.instance_manifest_sha256 === manifest.sha256;
  if (comparable) {
    const held: HeldTo = { against: 'night', night_utc: before.confirmed_utc, seed_id: id };
    const night = before.confirmed_utc.slice(0, 10);
    // The truth stays the earlier library's when this one does not give it.
    if ('failure' in got)
      settle(ctx, entry, held, {
        unseen: before,
        ...forgery(`on unseen seeds, where the library of ${night} answered, it failed (${statusOnly(got.failure)})`),
      });
    else if (got.digest !== before.digest)
      settle(ctx, entry, held, { unseen: before, ...forgery(`its outputs on unseen seeds differ from those of the library of ${night}`) });
    else settle(ctx, entry, held, { unseen: { ...before, library_sha256: entry.library_sha256!, confirmed_utc: now } });
    return undefined;
  }
  if ('failure' in got) {
    ctx.run.progress?.note?.(`${ctx.unit.key}: no answer on unseen seeds (${statusOnly(got.failure)}): held to its published KAT only`);
    settle(ctx, entry, { against: 'published-kat', why: 'unseen-failed', detail: statusOnly(got.failure) });
    return undefined;
  }
  const record: UnseenRecord = {
    seed_id: id,
    digest: got.digest,
    records: got.records,
    library_sha256: entry.library_sha256!,
    instance_manifest_sha256: manifest.sha256,
    recorded_utc: now,
    confirmed_utc: now,
  };
  const why = !before ? 'first-version' : before.seed_id !== id ? 'new-seed' : 'new-manifest';
  ctx.run.progress?.note?.(`${ctx.unit.key}: new digests on unseen seeds recorded (${why.replace('-', ' ')})`);
  settle(ctx, entry, { against: 'published-kat', why }, { unseen: record });
  return undefined;
}
