import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { digestBitsOf } from '../config/hashInstance.js';
import type { ManifestEntry } from '../config/katManifest.js';
import { hashDriverType } from '../measure/hashOperations.js';
import type { DriverRun } from '../sandbox/runProcess.js';
import { writeFileAtomic } from '../util/fsx.js';
import { canonicalDigest } from './manifest.js';
import { runInPieces } from './katPieces.js';
import { classifyDriverFailure, driverFailed, katTextOf, runKatDriver, type KatFile, type KatOutcome, type KatRequest } from './runKat.js';
import type { KatStatus } from './status.js';

/**
 * The files of the official hash KAT generator (KAT_CryptHash.c), each replayed by its own driver
 * run under its own timeout (native/jobs/kat_hash.c). KAT_2_33 hashes a 1 GiB message: it runs only when
 * kat.sha256 has a line for it.
 */
export const HASH_KAT_FILES = ['KAT_2_12', 'KAT_2_23', 'KAT_Loop', 'KAT_2_33'] as const;
export type HashKatFile = (typeof HASH_KAT_FILES)[number];
/** What runs for an instance without a kat.sha256 line: the files `kat-manifest` can then turn into lines. */
const DEFAULT_FILES: readonly HashKatFile[] = ['KAT_2_12', 'KAT_2_23', 'KAT_Loop'];

export const hashKatFileName = (kind: HashKatFile, label: string): string => `${kind}_${label}.txt`;

/** The kind of a manifest line's file, when it is one of this label's four. */
const kindOf = (file: string, label: string): HashKatFile | undefined => HASH_KAT_FILES.find((k) => hashKatFileName(k, label) === file);

/** From the worst: the instance's status is the worst of its files'. */
const SEVERITY: readonly KatStatus[] = ['CRASH', 'TIMEOUT', 'LOADFAIL', 'OVERFLOW', 'CRYPTOFAIL', 'MISMATCH', 'NOKAT', 'PASS'];
export const worstStatus = (statuses: KatStatus[]): KatStatus =>
  statuses.reduce<KatStatus>((w, s) => (SEVERITY.indexOf(s) < SEVERITY.indexOf(w) ? s : w), 'PASS');

/**
 * The driver's LIMIT for a file: a `:N` on every line of the file is N records of KAT_2_12 (as for
 * the KEM and signature files) or N iterations of KAT_Loop instead of 10^6 (the page says so); 0 is
 * the generator's own count.
 */
export function hashKatLimit(entries: ManifestEntry[]): number {
  const n = entries.map((e) => e.records);
  return n.length > 0 && n.every((x) => x !== undefined) ? Math.max(...(n as number[])) : 0;
}

/**
 * KAT_2_33's message is 2^33 bits, and CryptHash takes a message whole: the driver must hold 1 GiB
 * beside the library. Under a smaller address-space cap the file is not run, and the reason says
 * which setting to raise (the instance is then NOKAT: that file was not checked).
 */
const KAT_2_33_MIN_MEMORY_MB = 1536;
function refuse2to33(memoryLimitBytes: number | undefined): string | undefined {
  if (memoryLimitBytes === undefined || memoryLimitBytes >= KAT_2_33_MIN_MEMORY_MB * 1024 * 1024) return undefined;
  return `not run: its 2^33-bit (1 GiB) message needs planning.memory_limit_mb of at least ${KAT_2_33_MIN_MEMORY_MB}, the campaign allows ${Math.floor(memoryLimitBytes / 1048576)}`;
}

/** KAT_2_12's records: message lengths 0..4096 bits. */
const KAT_2_12_RECORDS = 4097;

/**
 * The records of a file that may run in pieces (kat/katPieces.ts), or 1: KAT_Loop's iterations each
 * hash the last one's output, and KAT_2_33's pieces would each hold its 1 GiB message.
 */
function recordsOf(kind: HashKatFile, limit: number): number {
  if (kind === 'KAT_2_12') return limit > 0 && limit < KAT_2_12_RECORDS ? limit : KAT_2_12_RECORDS;
  return kind === 'KAT_2_23' ? 3 : 1;
}

/** One file's driver run, in pieces when the request asks for them and the file can be split. */
function runHashFile(req: KatRequest, type: string, kind: HashKatFile, limit: number): Promise<DriverRun> {
  const job = ['kat', type, 'iccs', kind, String(limit)];
  const records = recordsOf(kind, limit);
  return runInPieces(records, req.pieces ?? 1, (piece, own) => runKatDriver(req, [...job, ...piece], own, 64 << 20), driverFailed);
}

/** Replays the hash KAT files the manifest names (else the three defaults) and checks each line. */
export async function runHashKat(req: KatRequest): Promise<KatOutcome> {
  const { candidate, label } = req;
  const entries = req.manifest.filter((e) => e.label === label);
  const index = candidate.instances.findIndex((i) => i.label === label);
  const digest = digestBitsOf(candidate.folder, candidate.instances[index]!, index);
  const base = { digests: [], sizes: {}, records: 0, files: [] };
  if ('problem' in digest) return { ...base, status: 'LOADFAIL', detail: digest.problem };
  const foreign = entries.find((e) => !kindOf(e.file, label));
  if (foreign)
    return {
      ...base,
      status: 'MISMATCH',
      detail: `kat.sha256 line ${foreign.line} names ${foreign.file}, not one of ${HASH_KAT_FILES.map((k) => hashKatFileName(k, label)).join(', ')}`,
    };
  const kinds = entries.length > 0 ? HASH_KAT_FILES.filter((k) => entries.some((e) => kindOf(e.file, label) === k)) : DEFAULT_FILES;
  const files: KatFile[] = [];
  const digests: KatOutcome['digests'] = [];
  let sizes: Record<string, number> = {};
  let last: KatOutcome['run'];
  mkdirSync(req.outDir, { recursive: true });
  for (const kind of kinds) {
    const mine = entries.filter((e) => kindOf(e.file, label) === kind);
    const limit = hashKatLimit(mine);
    const file = hashKatFileName(kind, label);
    const refused = kind === 'KAT_2_33' ? refuse2to33(req.memoryLimitBytes) : undefined;
    if (refused) {
      files.push({ file, seconds: 0, status: 'NOKAT', detail: refused });
      continue;
    }
    const driver = await runHashFile(req, hashDriverType(digest.bits), kind, limit);
    last = driver.run;
    sizes = {
      ...sizes,
      ...Object.fromEntries(
        Object.entries(driver.output.meta)
          .filter(([k]) => k.endsWith('_bytes') || k === 'digest_bits')
          .map(([k, v]) => [k, Number(v)]),
      ),
    };
    const shown = { file, seconds: driver.run.wallSeconds, ...(limit ? { limit } : {}) };
    const failure = classifyDriverFailure(driver);
    if (failure) {
      files.push({ ...shown, ...failure });
      continue;
    }
    const text = katTextOf(driver.output.lines);
    writeFileAtomic(join(req.outDir, file), text);
    const mineDigests = mine.map((entry) => ({ entry, actual: canonicalDigest(text, entry.mode, entry.records) }));
    digests.push(...mineDigests);
    const bad = mineDigests.find((d) => d.actual !== d.entry.sha256);
    const status: KatStatus = mine.length === 0 ? 'NOKAT' : bad ? 'MISMATCH' : 'PASS';
    files.push({
      ...shown,
      bytes: Buffer.byteLength(text, 'latin1'),
      status,
      ...(bad ? { detail: `digest ${bad.actual} differs from kat.sha256 line ${bad.entry.line}` } : {}),
      ...(mine.length === 0 ? { detail: 'no line for this file in kat.sha256' } : {}),
    });
  }
  const status = worstStatus(files.map((f) => f.status));
  const worst = files.find((f) => f.status === status);
  const written = files.find((f) => f.bytes !== undefined);
  return {
    status,
    ...(status !== 'PASS' && worst?.detail ? { detail: `${worst.file}: ${worst.detail}` } : {}),
    ...(written ? { file: written.file, fileBytes: written.bytes } : {}),
    digests,
    sizes,
    records: files.length,
    files,
    ...(last ? { run: last } : {}),
  };
}
