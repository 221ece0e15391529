import { join } from 'node:path';
import { evidencePaths, instanceKey } from '../evidence/layout.js';
import { readJsonIfExists } from '../util/fsx.js';
import { type PairedOperation, writePairedNight } from '../evidence/pairedNight.js';
import { compareEvidence, pairCount } from './compare.js';
import type { CompareReport } from './compareReport.js';

/** The start of the head record a row judged, as the run wrote it. */
function headStarted(systemDir: string, r: { candidate: string; label: string; operation: string }): string | undefined {
  try {
    const started = readJsonIfExists<{ started_utc?: unknown }>(
      evidencePaths(systemDir).record(r.candidate, r.label, r.operation),
    )?.started_utc;
    return typeof started === 'string' ? started : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps a night's paired rows (a rebuilt instance measured beside last night's library) in the
 * night's evidence, one file per instance (evidence/pairedNight.ts): what "Since last night" and the
 * change points then take as the verdict of that night for those operations. Returns the rows kept.
 */
function keepPairedVerdicts(systemDir: string, report: CompareReport, againstCommit: string, nightStarted: string): number {
  const byInstance = new Map<string, { candidate: string; label: string; operations: Record<string, PairedOperation> }>();
  let kept = 0;
  for (const r of report.rows) {
    if (r.paired !== true) continue;
    const key = instanceKey(r.candidate, r.label);
    const entry = byInstance.get(key) ?? { candidate: r.candidate, label: r.label, operations: {} };
    const started = headStarted(systemDir, r);
    entry.operations[r.operation] = {
      verdict: r.verdict,
      ...(r.delta_pct !== undefined ? { delta_pct: r.delta_pct } : {}),
      ...(r.p_value !== undefined ? { p_value: r.p_value } : {}),
      pairs: pairCount(r),
      ...(r.mde_pct !== undefined ? { mde_pct: r.mde_pct } : {}),
      reason: r.reason,
      ...(started ? { record_started_utc: started } : {}),
    };
    byInstance.set(key, entry);
    kept++;
  }
  for (const e of byInstance.values())
    writePairedNight(systemDir, e.candidate, e.label, {
      night_started_utc: nightStarted,
      against_commit: againstCommit,
      operations: e.operations,
    });
  return kept;
}

/**
 * After a paired run (CampaignOptions.against): its paired rows judged by the pull-request rule and
 * kept in the run's evidence (keepPairedVerdicts), against the base side's campaign commit. Returns
 * the rows kept and that commit, or undefined when the run's start is not recorded.
 */
export function keepRunPairs(q: {
  systemDir: string;
  system: string;
  againstDataDir: string;
  campaignDir: string;
  thresholdPct?: number;
}): { kept: number; commit: string } | undefined {
  type Run = { last_run?: { started_utc?: string; campaign_commit?: string | null } };
  const started = readJsonIfExists<Run>(evidencePaths(q.systemDir).campaign)?.last_run?.started_utc;
  if (!started) return undefined;
  const base = readJsonIfExists<Run>(evidencePaths(join(q.againstDataDir, q.system)).campaign)?.last_run;
  const commit = base?.campaign_commit ?? 'unknown';
  const report = compareEvidence({
    baseDir: q.againstDataDir,
    headDir: join(q.systemDir, '..'),
    system: q.system,
    ...(q.thresholdPct !== undefined ? { thresholdPct: q.thresholdPct } : {}),
    campaignDir: q.campaignDir,
  });
  return { kept: keepPairedVerdicts(q.systemDir, report, commit, started), commit };
}
