import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import { evidencePaths } from './layout.js';

/**
 * A night's paired verdicts (docs/statistics.md#nights, paired nights): an instance of a candidate
 * that changed since the last night was measured beside last night's library, trials interleaved, as a pull
 * request is, and each operation judged by the pull-request rule. One file per instance,
 * `paired/<candidate>/<label>.json`, so shards and publishing treat it as the instance's evidence.
 */
export interface PairedOperation {
  verdict: string;
  delta_pct?: number;
  p_value?: number;
  /** Trial pairs behind the verdict. */
  pairs: number;
  /** The smallest change the pairs could call. */
  mde_pct?: number;
  reason: string;
  /** The start of the head record it judged (its `started_utc`): the verdict holds for that record only. */
  record_started_utc?: string;
}

export interface PairedNightFile {
  /** The run that measured it (campaign.json last_run.started_utc; a shard's own, before a merge). */
  night_started_utc: string;
  /** The campaign commit last night's library was built from. */
  against_commit: string;
  operations: Record<string, PairedOperation>;
}

export function writePairedNight(systemDir: string, candidate: string, label: string, file: PairedNightFile): void {
  writeJsonAtomic(evidencePaths(systemDir).pairedNight(candidate, label), file);
}

/**
 * The paired verdict of one operation, when it judged the record the folder holds now (started at
 * `recordStarted`): a verdict kept from an earlier run, beside a record measured again since, is
 * not that record's. Undefined when there is none, it is another record's, or the file is unreadable.
 */
export function readPairedVerdict(
  systemDir: string,
  candidate: string,
  label: string,
  operation: string,
  recordStarted: string,
): (PairedOperation & { against_commit: string }) | undefined {
  try {
    const f = readJsonIfExists<PairedNightFile>(evidencePaths(systemDir).pairedNight(candidate, label));
    const op = f?.operations && typeof f.operations === 'object' ? f.operations[operation] : undefined;
    return op && op.record_started_utc === recordStarted ? { ...op, against_commit: String(f!.against_commit) } : undefined;
  } catch {
    return undefined;
  }
}
