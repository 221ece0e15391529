import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import { evidencePaths } from './layout.js';

/**
 * A night's paired verdicts (docs/statistics.md#paired-nights): an instance whose library changed
 * since the last night was measured beside last night's library, trials interleaved, as a pull
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
}

export interface PairedNightFile {
  /** The run that measured it (campaign.json last_run.started_utc): a file of another run is not this night's. */
  night_started_utc: string;
  /** The campaign commit last night's library was built from. */
  against_commit: string;
  operations: Record<string, PairedOperation>;
}

export function writePairedNight(systemDir: string, candidate: string, label: string, file: PairedNightFile): void {
  writeJsonAtomic(evidencePaths(systemDir).pairedNight(candidate, label), file);
}

/** The instance's paired verdicts of the night that started at `nightStarted`, or undefined (none, another night's, or unreadable). */
export function readPairedNight(systemDir: string, candidate: string, label: string, nightStarted: string): PairedNightFile | undefined {
  try {
    const f = readJsonIfExists<PairedNightFile>(evidencePaths(systemDir).pairedNight(candidate, label));
    return f?.night_started_utc === nightStarted && f.operations && typeof f.operations === 'object' ? f : undefined;
  } catch {
    return undefined;
  }
}
