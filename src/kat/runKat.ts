import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isNistKatRng, type Candidate } from '../config/campaign.js';
import { runDriver, type DriverRun, type RunResult } from '../sandbox/runProcess.js';
import { runInPieces } from './katPieces.js';
import { katTimeoutS } from '../measure/cost.js';
import { writeFileAtomic } from '../util/fsx.js';
import { canonicalDigest } from './manifest.js';
import type { ManifestEntry } from '../config/katManifest.js';
import type { KatStatus } from './status.js';
import type { SandboxMode } from '../sandbox/bwrap.js';

export interface KatRequest {
  candidate: Candidate;
  label: string;
  nistPrefix?: string;
  library: string;
  /** ngcc_driver. */
  driver: string;
  /** Folder for the generated KAT file(s) of this instance: written by us, out of the driver's reach. */
  outDir: string;
  manifest: ManifestEntry[];
  timeoutMs: number;
  memoryLimitBytes?: number;
  /** How the driver is isolated (default bwrap): it reads itself and the library, writes nothing. */
  sandbox?: SandboxMode;
  /**
   * Driver processes the KAT may run as side by side, each computing a contiguous piece of the
   * records (kat/katPieces.ts); 1 or absent: one process, the job without a `piece=` field.
   */
  pieces?: number;
}

export interface KatOutcome {
  status: KatStatus;
  detail?: string;
  /** Generated file name (e.g. PQCkemKAT_1632.rsp), when one was written. */
  file?: string;
  fileBytes?: number;
  digests: Array<{ entry: ManifestEntry; actual: string }>;
  sizes: Record<string, number>;
  /**
   * The fewest draws from the harness's generator one call of each drawing operation made in the
   * KAT's records (keygen, enc, sign): a timed call must draw as many (measure/trial.ts).
   */
  draws?: Record<string, number>;
  /** The longest a call of each operation took in the KAT's records: what later timeouts follow (measure/cost.ts). */
  callSeconds?: Record<string, number>;
  records: number;
  /** The last driver run (absent when none could start, e.g. a hash instance without its digest length). */
  run?: RunResult;
  /** Type hash: each generator file's own outcome (kat/hashKat.ts); the status is the worst of them. */
  files?: KatFile[];
}

/** One file of a KAT with several (type hash): its own run, status and time. */
export interface KatFile {
  file: string;
  status: KatStatus;
  detail?: string;
  bytes?: number;
  seconds: number;
  /** The `:N` it was generated with: KAT_2_12 records or KAT_Loop iterations. */
  limit?: number;
}

/**
 * Bytes kept of a KAT driver's channel: the KAT text comes as base64 on it (docs/native-protocol.md),
 * so this bounds a KAT file at about 190 MiB, above the largest NIST KAT of Round 1's 100 records.
 */
const KAT_CHANNEL_MAX = 256 << 20;

/** The KAT text of a driver's KAT lines (base64 pieces, in order). */
export function katTextOf(lines: string[][]): string {
  return Buffer.concat(lines.filter((f) => f[0] === 'KAT').map((f) => Buffer.from(f[1] ?? '', 'base64'))).toString('latin1');
}

const DEFAULT_RECORDS = { 'iccs-drng': 10, 'nist-ctr-drbg': 100, hqc: 100 } as const;

function katFileName(candidate: Candidate, label: string, skBytes: number): string {
  if (isNistKatRng(candidate.katRng)) return `${candidate.type === 'kem' ? 'PQCkemKAT' : 'PQCsignKAT'}_${skBytes}.rsp`;
  if (candidate.type === 'hash') throw new Error('a hash has one KAT file per generator file (src/kat/hashKat.ts)');
  return `${{ kem: 'KAT_KEM', sig: 'KAT_SIG', kex: 'KAT_KEX' }[candidate.type]}_${label}.txt`;
}

/** How many records to generate: what the manifest's `:N` asks for, else the generator's default. */
function recordsToGenerate(candidate: Candidate, entries: ManifestEntry[]): number {
  const wanted = entries.map((e) => e.records);
  if (wanted.length > 0 && wanted.every((n) => n !== undefined)) return Math.max(...(wanted as number[]));
  return DEFAULT_RECORDS[candidate.katRng];
}

/** The KAT status of a driver run that gave no PASS, or undefined when it did. */
export function classifyDriverFailure({ run, output: out, rejected }: DriverRun): { status: KatStatus; detail?: string } | undefined {
  if (rejected?.kind === 'timeout') return { status: 'TIMEOUT', detail: rejected.reason };
  if (rejected?.kind === 'output-limit') return { status: 'CRASH', detail: rejected.reason };
  if (rejected?.kind === 'signal') return { status: 'CRASH', detail: rejected.reason };
  // The library's own code can end the process early (exit(0) in a constructor or an operation),
  // or print protocol lines of its own: without the driver's last word there is no finished KAT.
  if (rejected)
    return { status: 'CRASH', detail: `the driver did not finish: the process ended before the KAT was complete (${rejected.reason})` };
  if (out.status && ['CRYPTOFAIL', 'OVERFLOW', 'LOADFAIL'].includes(out.status))
    return { status: out.status as KatStatus, detail: out.statusDetail };
  if (run.exitCode !== 0)
    return { status: 'CRASH', detail: `driver exited with code ${run.exitCode}${out.statusDetail ? `: ${out.statusDetail}` : ''}` };
  if (out.status !== 'PASS')
    return { status: 'CRASH', detail: `the driver finished without STATUS PASS (${out.status ?? 'no STATUS line'})` };
  return undefined;
}

/** Whether a driver run gave no PASS. */
export const driverFailed = (d: DriverRun): boolean => classifyDriverFailure(d) !== undefined;

/**
 * One KAT driver process of `records` records (a whole KAT's, or a piece's): once its first record
 * is done, the rest take about as long each, and its timeout follows.
 */
export function runKatDriver(req: KatRequest, job: string[], records: number, channelMaxBytes: number): Promise<DriverRun> {
  return runDriver([req.driver, req.library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    channelMaxBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, req.library], writable: [] },
    timeoutOnMark: (name, wall_s) => (name === 'kat-record' ? katTimeoutS(req.timeoutMs / 1000, wall_s, records) * 1000 : undefined),
  });
}

/** The records from fresh seeds a KEM, signature or key exchange KAT checks after the official ones (native/jobs/kat.c FRESH_RECORDS): each about a record's work. */
const FRESH_RECORDS = 2;

/** Generates the instance's KAT with the native driver and checks it against the manifest. */
export async function runKat(req: KatRequest): Promise<KatOutcome> {
  const { candidate, label } = req;
  const entries = req.manifest.filter((e) => e.label === label);
  const records = recordsToGenerate(candidate, entries);
  // HQC's generator replays NIST's schedule: the library's randombytes is what differs.
  const mode = isNistKatRng(candidate.katRng) ? 'nist' : 'iccs';
  const job = ['kat', candidate.type, mode, String(records), ...(mode === 'nist' ? [req.nistPrefix ?? ''] : [])];
  const driver = await runInPieces(
    records,
    req.pieces ?? 1,
    (piece, own) => runKatDriver(req, [...job, ...piece], own, KAT_CHANNEL_MAX),
    driverFailed,
    FRESH_RECORDS,
  );
  const { run, output: out } = driver;
  const sizes = Object.fromEntries(
    Object.entries(out.meta)
      .filter(([k]) => k.endsWith('_bytes') || k === 'kex_passes')
      .map(([k, v]) => [k, Number(v)]),
  );
  const draws = Object.fromEntries(
    Object.entries(out.meta)
      .filter(([k, v]) => /^draws_(keygen|enc|sign)$/.test(k) && /^\d+$/.test(v))
      .map(([k, v]) => [k.slice('draws_'.length), Number(v)]),
  );
  const callSeconds = Object.fromEntries(
    Object.entries(out.meta)
      .filter(([k, v]) => /^call_s_(keygen|enc|dec|sign|verify)$/.test(k) && Number.isFinite(Number(v)))
      .map(([k, v]) => [k.slice('call_s_'.length), Number(v)]),
  );
  const base = {
    digests: [],
    sizes,
    records,
    run,
    ...(Object.keys(draws).length > 0 ? { draws } : {}),
    ...(Object.keys(callSeconds).length > 0 ? { callSeconds } : {}),
  };
  const failure = classifyDriverFailure(driver);
  if (failure) return { ...base, ...failure };
  const file = katFileName(candidate, label, sizes.sk_bytes ?? 0);
  const text = katTextOf(out.lines);
  mkdirSync(req.outDir, { recursive: true });
  writeFileAtomic(join(req.outDir, file), text);
  const fileBytes = Buffer.byteLength(text, 'latin1');
  if (entries.length === 0) return { ...base, status: 'NOKAT', detail: 'no line for this instance in kat.sha256', file, fileBytes };
  const digests = entries.map((entry) => ({ entry, actual: canonicalDigest(text, entry.mode, entry.records) }));
  const wrongName = entries.find((e) => e.file !== file);
  if (wrongName)
    return {
      ...base,
      digests,
      file,
      fileBytes,
      status: 'MISMATCH',
      detail: `kat.sha256 line ${wrongName.line} names ${wrongName.file}, the generator wrote ${file}`,
    };
  const bad = digests.find((d) => d.actual !== d.entry.sha256);
  if (bad)
    return {
      ...base,
      digests,
      file,
      fileBytes,
      status: 'MISMATCH',
      detail: `digest ${bad.actual} differs from kat.sha256 line ${bad.entry.line}`,
    };
  return { ...base, digests, file, fileBytes, status: 'PASS' };
}
