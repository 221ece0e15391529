import { InputError } from '../errors.js';
import type { CompareReport } from './types.js';

export const FAIL_ON = ['regression', 'kat', 'size-audit'] as const;
export type FailOn = (typeof FAIL_ON)[number];

export function parseFailOn(v: string, where: string): Set<FailOn> {
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  for (const x of list) if (!(FAIL_ON as readonly string[]).includes(x)) throw new InputError(where, '', `unknown check '${x}' (known: ${FAIL_ON.join(', ')})`);
  return new Set(list as FailOn[]);
}

/** Whether a comparison fails the check, given what should fail it. */
export function compareFails(report: CompareReport, failOn: ReadonlySet<FailOn>): boolean {
  return (
    (failOn.has('regression') && report.counts.regressions > 0) ||
    (failOn.has('kat') && (report.counts.kat_failures > 0 || report.build_failures.length > 0)) ||
    (failOn.has('size-audit') && report.counts.size_mismatches > 0)
  );
}
