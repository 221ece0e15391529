import { amount, cycles, firstLine, sideFigure, spreadText } from './cells.js';
import { signedPct } from '../text/format.js';
import { ctSite } from './ctChanges.js';
import { isCarriedOver } from './markdown.js';
import type { CompareReport, PullRequestContext } from './compareReport.js';

/** One workflow annotation of a comparison (GitHub shows them on the run and the pull request). */
export interface Annotation {
  level: 'error' | 'warning' | 'notice';
  title: string;
  message: string;
}

/**
 * Workflow annotations: KAT and build failures are errors, regressions, noisy rows and size
 * mismatches warnings; KAT statuses that became PASS and improvements are notices.
 */
export function annotations(report: CompareReport, pr?: PullRequestContext): Annotation[] {
  const out: Annotation[] = [];
  if (pr && !pr.baseline)
    out.push({
      level: 'warning',
      title: `No baseline: ${report.system}`,
      message: `no evidence for ${report.system} on the base commit nor on ${pr.looked.dataBranch}: nothing was compared`,
    });
  for (const k of report.kat_changes) {
    const move = `KAT status ${k.base ?? 'none'} → ${k.head ?? 'none'} on ${report.system}`;
    if (k.head === undefined) out.push({ level: 'notice', title: `KAT removed: ${k.key}`, message: move });
    else if (k.head === 'PASS') out.push({ level: 'notice', title: `KAT passes: ${k.key}`, message: move });
    else out.push({ level: 'error', title: `KAT ${k.head}: ${k.key}`, message: move });
  }
  for (const c of report.invalid_candidates)
    out.push({
      level: 'error',
      title: `Invalid candidate: ${c.id}`,
      message: `${c.id} was not built on ${report.system}: ${firstLine(c.problem)}`,
    });
  for (const b of report.build_failures) {
    const error = pr?.buildErrors[b];
    out.push({
      level: 'error',
      title: `Build failed: ${b}`,
      message: `${b} does not build in head on ${report.system}${error ? `: ${firstLine(error)}` : ''}`,
    });
  }
  for (const k of pr?.stillFailing ?? []) {
    out.push({
      level: 'warning',
      title: `KAT still ${k.status}: ${k.key}`,
      message: `KAT ${k.status} on ${report.system}, as on the baseline${k.detail ? ` — ${firstLine(k.detail)}` : ''}`,
    });
  }
  for (const r of report.rows) {
    if (isCarriedOver(r, pr)) continue;
    const what = `${r.candidate} ${r.label} ${r.operation}`;
    const message = `median trial ${cycles(sideFigure(r.base))} → ${cycles(sideFigure(r.head))} cycles (${signedPct(r.delta_pct)}) on ${report.system}: ${r.reason}`;
    if (r.verdict === 'regression') out.push({ level: 'warning', title: `Regression: ${what}`, message });
    else if (r.verdict === 'improvement') out.push({ level: 'notice', title: `Improvement: ${what}`, message });
    else if (r.verdict === 'noisy')
      out.push({
        level: 'warning',
        title: `Noisy: ${what}`,
        message: `trials spread ${spreadText(r.base)} on base, ${spreadText(r.head)} on head on ${report.system} (median trial ${signedPct(r.delta_pct)}): not judged, re-run to compare`,
      });
  }
  for (const f of report.ct_findings ?? []) {
    out.push({
      level: 'warning',
      title: `Constant-time: ${f.key} ${f.kind} in ${f.function}`,
      message: `${ctSite(f)}: a new unsuppressed ${f.kind} finding on ${report.system} (${f.operations.join(', ')})`,
    });
  }
  for (const m of report.size_mismatches) {
    out.push({
      level: 'warning',
      title: `Size mismatch: ${m.id} ${m.instance} ${m.item}`,
      message: `catalog ${amount(m.catalog)} bytes, API ${amount(m.api)} bytes (${m.basis})`,
    });
  }
  return out;
}
