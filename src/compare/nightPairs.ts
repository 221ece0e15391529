import { instanceKey } from '../evidence/layout.js';
import { type PairedOperation, writePairedNight } from '../evidence/pairedNight.js';
import { pairCount } from './compare.js';
import type { CompareReport } from './types.js';

/**
 * Keeps a night's paired rows (a rebuilt instance measured beside last night's library) in the
 * night's evidence, one file per instance (evidence/pairedNight.ts): what "Since last night" and the
 * change points then take as the verdict of that night for those operations. Returns the rows kept.
 */
export function keepPairedVerdicts(systemDir: string, report: CompareReport, againstCommit: string, nightStarted: string): number {
  const byInstance = new Map<string, { candidate: string; label: string; operations: Record<string, PairedOperation> }>();
  let kept = 0;
  for (const r of report.rows) {
    if (r.paired !== true) continue;
    const key = instanceKey(r.candidate, r.label);
    const entry = byInstance.get(key) ?? { candidate: r.candidate, label: r.label, operations: {} };
    entry.operations[r.operation] = {
      verdict: r.verdict,
      ...(r.delta_pct !== undefined ? { delta_pct: r.delta_pct } : {}),
      ...(r.p_value !== undefined ? { p_value: r.p_value } : {}),
      pairs: pairCount(r),
      ...(r.mde_pct !== undefined ? { mde_pct: r.mde_pct } : {}),
      reason: r.reason,
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
