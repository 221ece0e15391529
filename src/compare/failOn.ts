import { InputError } from '../errors.js';
import type { CompareReport } from './compareReport.js';

const FAIL_ON = ['regression', 'kat', 'size-audit', 'ct'] as const;
export type FailOn = (typeof FAIL_ON)[number];

export function parseFailOn(v: string, where: string): Set<FailOn> {
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const x of list)
    if (!(FAIL_ON as readonly string[]).includes(x)) throw new InputError(where, '', `unknown check '${x}' (known: ${FAIL_ON.join(', ')})`);
  return new Set(list as FailOn[]);
}

/** Why a comparison fails the check, given what should fail it: none when it passes. */
export function failReasons(report: CompareReport, failOn: ReadonlySet<FailOn>): string[] {
  const n = report.counts;
  return [
    failOn.has('regression') && n.regressions > 0 ? `${n.regressions} regression(s)` : '',
    failOn.has('kat') && n.kat_failures > 0 ? `${n.kat_failures} KAT failure(s)` : '',
    failOn.has('kat') && report.build_failures.length > 0 ? `${report.build_failures.length} build failure(s)` : '',
    failOn.has('kat') && report.invalid_candidates.length > 0 ? `${report.invalid_candidates.length} invalid candidate(s)` : '',
    failOn.has('size-audit') && n.size_mismatches > 0 ? `${n.size_mismatches} size-audit mismatch(es)` : '',
    failOn.has('ct') && (n.ct_findings ?? 0) > 0 ? `${n.ct_findings} new constant-time finding(s)` : '',
    failOn.has('ct') && campaignUnbuilt(report) > 0
      ? `${campaignUnbuilt(report)} ct build(s) of the campaign's own compiler and flag set failed to build`
      : '',
  ].filter(Boolean);
}

/** Failed ct builds of the configuration the measured build fell back from: its figures' own check is missing. */
const campaignUnbuilt = (report: CompareReport): number => (report.ct_build_failures ?? []).filter((f) => f.campaign_build).length;

export const compareFails = (report: CompareReport, failOn: ReadonlySet<FailOn>): boolean => failReasons(report, failOn).length > 0;
