import { InputError } from '../errors.js';
import type { DigestMode, ManifestEntry } from '../config/katManifest.js';
import { canonicalDigest } from './manifest.js';
import { createHash, randomBytes } from 'node:crypto';
import { runDriver } from '../sandbox/runProcess.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { classifyDriverFailure, katTextOf } from './runKat.js';

/**
 * Unseen seeds (docs/method.md#unseen-seeds): the KAT's own procedure, started from a seed no library
 * has seen instead of the published one. A library honest only where the published seeds are drawn
 * (the KAT's record-0 coins are public) answers such a run with its fake; held to another library's
 * answer on the same seed (a pull request's base, a night's predecessor), it shows.
 */

/** Bytes of the seed a KAT job takes as `unseen=HEX` (native/jobs/jobs.h KAT_UNSEEN_BYTES). */
export const UNSEEN_SEED_BYTES = 64;
/** Records of a KEM, signature or key-exchange run: the issue's "at least 10", an ICCS KAT's own number. */
const UNSEEN_RECORDS = 10;
/** The least bytes of a secret seed (NGCC_UNSEEN_SEED, the action's `unseen-seed`). */
const SECRET_SEED_MIN_BYTES = 32;

export interface UnseenRequest {
  /** The digest rule of the instance's manifest: `nolen` leaves the length lines out of the digest. */
  digestMode: DigestMode;
  /** ngcc_driver. */
  driver: string;
  library: string;
  /** The driver's TYPE: kem, sig, kex, or hash:BITS. */
  type: string;
  /** The instance's KAT generator: `nist` (PQCgenKAT's schedule) or `iccs`. */
  mode: 'nist' | 'iccs';
  nistPrefix?: string;
  seed: Buffer;
  /** Records of a KEM, signature or key exchange (default UNSEEN_RECORDS). */
  records?: number;
  timeoutMs: number;
  memoryLimitBytes?: number;
  sandbox?: SandboxMode;
}

/** A library's answer to an unseen seed: its KAT text and that text's digest by the manifest's rule (kat/manifest.ts canonicalDigest), or why there is none. */
export type UnseenAnswer = { text: string; digest: string; records: number } | { failure: string };

/** A seed for one run, drawn now (a pull request's: never written anywhere). */
export const drawnSeed = (): Buffer => randomBytes(UNSEEN_SEED_BYTES);

/**
 * The seed an instance's runs take from a secret seed: its own, so that no two instances' runs share
 * one, and the same every night, so that a night's answer can be held to the one before.
 */
export function instanceSeed(secret: Buffer, instanceKey: string): Buffer {
  return createHash('sha512').update('ngcc-perf unseen seed\n').update(secret).update(`\n${instanceKey}`).digest();
}

/** What the evidence keeps of a secret seed: a name for it that does not give it away. */
export const seedId = (secret: Buffer): string =>
  createHash('sha256').update('ngcc-perf unseen seed id\n').update(secret).digest('hex').slice(0, 16);

/** The KAT job's fields for an unseen seed: the whole KAT_2_12 of a hash (4097 messages), ten records of the others. */
function unseenJob(req: UnseenRequest): { job: string[]; records: number } {
  const unseen = `unseen=${req.seed.toString('hex')}`;
  if (req.type.startsWith('hash:')) return { job: ['kat', req.type, 'iccs', 'KAT_2_12', '0', unseen], records: 4097 };
  const prefix = req.mode === 'nist' ? [req.nistPrefix ?? ''] : [];
  const records = req.records ?? UNSEEN_RECORDS;
  return { job: ['kat', req.type, req.mode, String(records), ...prefix, unseen], records };
}

/** Runs the KAT's procedure from an unseen seed in the sandbox; the text never leaves this process. */
export async function answerUnseenSeed(req: UnseenRequest): Promise<UnseenAnswer> {
  if (req.seed.length !== UNSEEN_SEED_BYTES) throw new Error(`an unseen seed has ${UNSEEN_SEED_BYTES} bytes, not ${req.seed.length}`);
  const { job, records } = unseenJob(req);
  const driver = await runDriver([req.driver, req.library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    channelMaxBytes: 256 << 20,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, req.library], writable: [] },
  });
  const failed = classifyDriverFailure(driver);
  if (failed) return { failure: `${failed.status}${failed.detail ? `: ${failed.detail}` : ''}` };
  const text = katTextOf(driver.output.lines);
  return { text, digest: canonicalDigest(text, req.digestMode), records };
}

/**
 * Where two KAT texts first differ, as "record N, FIELD" (the record's count and the first line's key
 * that differs), or undefined when they are the same.
 */
export function firstRecordDifference(a: string, b: string): string | undefined {
  if (a === b) return undefined;
  const records = (t: string) => t.split(/\n\n+/).map((r) => r.replace(/\n+$/, ''));
  const [ra, rb] = [records(a), records(b)];
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    if (ra[i] === rb[i]) continue;
    const [la, lb] = [(ra[i] ?? '').split('\n'), (rb[i] ?? '').split('\n')];
    const count = la.find((l) => /^count = /i.test(l))?.replace(/^count = /i, '');
    const line = la.findIndex((l, k) => l !== lb[k]);
    const key = (la[line] ?? lb[line] ?? '').split(' = ')[0];
    return `${count !== undefined ? `record ${count}` : `block ${i + 1}`}${key ? `, ${key}` : ''}`;
  }
  return 'the texts differ';
}

/** The environment variable the CLI reads the secret seed from. */
export const UNSEEN_SEED_ENV = 'NGCC_UNSEEN_SEED';

/** A secret seed from its hex form (NGCC_UNSEEN_SEED); a string says what is wrong with it. */
export function parseSecretSeed(hex: string): Buffer | string {
  const trimmed = hex.trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(trimmed)) return 'is not hex digits (two per byte)';
  const bytes = Buffer.from(trimmed, 'hex');
  if (bytes.length < SECRET_SEED_MIN_BYTES) return `has ${bytes.length} bytes, fewer than ${SECRET_SEED_MIN_BYTES}`;
  return bytes;
}

/** The name a forgery found on unseen seeds goes by (build.json `forged.operation`): no timed operation has it. */
export const UNSEEN_CHECK = 'unseen seeds';

/** An instance's answer to the secret seed, as build.json keeps it: the digest and a seed id, never the seed. */
export interface UnseenRecord {
  seed_id: string;
  /** SHA-256 of the KAT text the library gave on the instance's seed. */
  digest: string;
  records: number;
  /** The library that gave it, last; and the instance's manifest lines it was held under (manifestOfInstance). */
  library_sha256: string;
  instance_manifest_sha256: string;
  /** When this digest was first recorded (a new version, a new seed), and when a library last gave it. */
  recorded_utc: string;
  confirmed_utc: string;
}

/**
 * What a library's outputs were held to, beyond its own run of the published KAT:
 * - `published-kat`: nothing else (a first version, a new KAT manifest, no base or no seed);
 * - `base`: a pull request's base library, on unseen seeds and on a segment of its timed trials;
 * - `night`: the digest the night of `night_utc` recorded for the same manifest on the secret seed.
 */
export type HeldTo =
  | { against: 'published-kat'; why: 'first-version' | 'new-manifest' | 'new-seed' | 'unseen-failed'; detail?: string }
  | { against: 'base'; base_library_sha256: string; commit?: string }
  | { against: 'night'; night_utc: string; seed_id: string };

/** The secret seed given as `value` (undefined: none given, the check is off); a bad one is an input error naming `file` and `where`. */
export function secretSeedOf(value: string | undefined, file: string, where: string): Buffer | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seed = parseSecretSeed(value);
  if (typeof seed === 'string')
    throw new InputError(file, where, `the unseen seed ${seed} (give at least ${SECRET_SEED_MIN_BYTES} bytes as hex)`);
  return seed;
}

/** What an instance's outputs were held to, as one phrase for the pages and the pull-request comment. */
export function heldToShown(entry: { held_to?: HeldTo; forged?: { operation: string } }): string {
  const h = entry.held_to;
  const forged = entry.forged?.operation === UNSEEN_CHECK ? ' — FORGED there' : '';
  if (!h) return 'its published KAT only';
  switch (h.against) {
    case 'base':
      return `the pull request's base library: on unseen seeds, on a segment of its timed trials, and dec's inputs made by the base${forged}`;
    case 'night':
      return `the digest of its answers on the secret unseen seed, as of the night of ${h.night_utc.slice(0, 10)}${forged}`;
    default:
      return `its published KAT only (${PUBLISHED_ONLY_WHY[h.why]}${h.detail ? `: ${h.detail}` : ''})`;
  }
}

const PUBLISHED_ONLY_WHY: Record<Extract<HeldTo, { against: 'published-kat' }>['why'], string> = {
  'first-version': 'a first version: its digests on the secret unseen seed are recorded for the next',
  'new-manifest': 'a new KAT manifest, a new version of the algorithm: its digests on unseen seeds start again',
  'new-seed': 'a new secret seed: its digests are recorded for the next night',
  'unseen-failed': 'no answer on unseen seeds to hold it to',
};

/**
 * What an instance's answers are held under: its own lines of the KAT manifest, canonical (digest in
 * lower case, mode, records, file; sorted), so that a comment, the lines' order or the digests' case
 * is no new version; and the digest rule its answers are compared by (the manifest's mode: `nolen`
 * leaves the length lines out). An instance without a line is held under 'none', strictly.
 */
export function manifestOfInstance(entries: readonly ManifestEntry[], label: string): { sha256: string; mode: DigestMode } {
  const mine = entries.filter((e) => e.label === label);
  const lines = mine.map((e) => `${e.sha256.toLowerCase()} ${e.mode}${e.records !== undefined ? `:${e.records}` : ''} ${e.file}`).sort();
  return {
    sha256: lines.length > 0 ? createHash('sha256').update(lines.join('\n')).digest('hex') : 'none',
    mode: mine[0]?.mode ?? 'strict',
  };
}

/** The published evidence's answers to the secret seed, by instance key: what a nightly holds its libraries to. */
export type UnseenTruth = Record<string, { unseen: UnseenRecord; held_to?: HeldTo }>;
