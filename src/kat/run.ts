import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Candidate } from '../config/campaign.js';
import { runDriver, type DriverRun, type RunResult } from '../sandbox/run.js';
import { nonRegularEntries, readRegularFile } from '../util/fsx.js';
import { canonicalDigest } from './manifest.js';
import type { ManifestEntry } from '../config/katManifest.js';
import type { KatStatus } from './status.js';
import type { SandboxMode } from '../sandbox/bwrap.js';

export interface KatRequest {
  candidate: Candidate;
  label: string;
  nistPrefix?: string;
  library: string;
  katTool: string;
  /** Folder for the generated KAT file(s) of this instance. */
  outDir: string;
  manifest: ManifestEntry[];
  timeoutMs: number;
  memoryLimitBytes?: number;
  /** How the driver is isolated (default bwrap): it reads itself and the library, writes only outDir. */
  sandbox?: SandboxMode;
}

export interface KatOutcome {
  status: KatStatus;
  detail?: string;
  /** Generated file name (e.g. PQCkemKAT_1632.rsp), when one was written. */
  file?: string;
  fileBytes?: number;
  digests: Array<{ entry: ManifestEntry; actual: string }>;
  sizes: Record<string, number>;
  records: number;
  run: RunResult;
}

/** A KAT driver's output while it is written; renamed or removed when the KAT ends, never evidence. */
export const KAT_PARTIAL_FILE = '.kat-output.partial';

const DEFAULT_RECORDS = { 'iccs-drng': 10, 'nist-ctr-drbg': 100 } as const;

export function katFileName(candidate: Candidate, label: string, skBytes: number): string {
  if (candidate.katRng === 'nist-ctr-drbg') return `${candidate.type === 'kem' ? 'PQCkemKAT' : 'PQCsignKAT'}_${skBytes}.rsp`;
  return `${candidate.type === 'kem' ? 'KAT_KEM' : 'KAT_SIG'}_${label}.txt`;
}

/** How many records to generate: what the manifest's `:N` asks for, else the generator's default. */
export function recordsToGenerate(candidate: Candidate, entries: ManifestEntry[]): number {
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

/** Generates the instance's KAT with the native driver and checks it against the manifest. */
export async function runKat(req: KatRequest): Promise<KatOutcome> {
  const { candidate, label } = req;
  const entries = req.manifest.filter((e) => e.label === label);
  const records = recordsToGenerate(candidate, entries);
  mkdirSync(req.outDir, { recursive: true });
  const partial = join(req.outDir, KAT_PARTIAL_FILE);
  rmSync(partial, { force: true });
  const mode = candidate.katRng === 'nist-ctr-drbg' ? 'nist' : 'iccs';
  const argv = [req.katTool, req.library, candidate.type, mode, String(records), partial];
  if (mode === 'nist') argv.push(req.nistPrefix ?? '');
  const driver = await runDriver(argv, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.katTool, req.library], writable: [req.outDir] },
  });
  const { run, output: out } = driver;
  const sizes = Object.fromEntries(
    Object.entries(out.meta)
      .filter(([k]) => k.endsWith('_bytes'))
      .map(([k, v]) => [k, Number(v)]),
  );
  const base = { digests: [], sizes, records, run };
  const failure = classifyDriverFailure(driver);
  if (failure) {
    rmSync(partial, { force: true });
    return { ...base, ...failure };
  }
  // The library may write its KAT folder: a link or FIFO left there would make us read a file of
  // the host (and publish it) or block for ever. Only regular files are evidence.
  const strays = nonRegularEntries(req.outDir);
  for (const s of strays) rmSync(join(req.outDir, s), { force: true });
  const read = strays.length > 0 ? undefined : readRegularFile(partial);
  if (!read || 'problem' in read) {
    rmSync(partial, { force: true });
    const why = read
      ? `the KAT output is ${read.problem}`
      : `left ${strays.length} link(s) or special file(s) in its KAT folder (${strays.slice(0, 3).join(', ')})`;
    return { ...base, status: 'CRASH', detail: `the library tampered with its KAT output: ${why}` };
  }
  const file = katFileName(candidate, label, sizes.sk_bytes ?? 0);
  const target = join(req.outDir, file);
  renameSync(partial, target);
  const { text } = read;
  const fileBytes = statSync(target).size;
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
