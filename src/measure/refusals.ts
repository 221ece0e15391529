/**
 * Trials a check refused (trial.ts): a count of calls other than the one asked for, cycles the
 * kernel's view contradicts, a figure below the physical floor, dec's CPU beside its windows, draws
 * short of the KAT's. A refusal is what a cheat looks like, and also, once in a while, what a loaded
 * host does to an honest trial: a trial refused once runs once more (trial.ts runsOnceMore), and a
 * measurement may end with a figure from its other trials. That figure is never shown bare: every
 * reader (the summary, the candidate page, the comparison, validate) takes the refusals from the
 * record's processes by this one rule, and marks the figure with them.
 */

/** How every refusal of a trial begins (trial.ts). */
export const REFUSED = 'inconsistent trial: ';

export interface Refusal {
  /** The index of the process in the record's processes[]. */
  process: number;
  /** True for an attempt run once more (processes[].retried), false for a process that failed so. */
  retried: boolean;
  /** What the check found, without the REFUSED prefix. */
  reason: string;
}

const refusal = (text: unknown): string | undefined =>
  typeof text === 'string' && text.startsWith(REFUSED) ? text.slice(REFUSED.length) : undefined;

/** The refused trials of a timing record, from its processes[] (kept as the producer wrote them). */
export function refusedTrials(processes: unknown): Refusal[] {
  if (!Array.isArray(processes)) return [];
  return processes.flatMap((p: { status?: unknown; failure?: unknown; retried?: unknown }, process): Refusal[] => {
    const again = (Array.isArray(p?.retried) ? (p.retried as Array<{ disturbed?: unknown }>) : []).flatMap((r) => {
      const reason = refusal(r?.disturbed);
      return reason === undefined ? [] : [{ process, retried: true, reason }];
    });
    const own = p?.status === 'failed' ? refusal(p.failure) : undefined;
    return own === undefined ? again : [...again, { process, retried: false, reason: own }];
  });
}

/** The mark a figure carries for its refused trials: '⚠ 1 trial refused', or '' when none was. */
export function refusedMark(refused: number): string {
  return refused === 0 ? '' : `⚠ ${refused} trial${refused === 1 ? '' : 's'} refused`;
}

/** What the mark means, said once under every table that shows it. */
export const REFUSED_NOTE =
  '⚠ trials refused: a check refused a trial of this measurement (its count of calls, its cycles against the time the kernel saw, the physical floor, or dec’s CPU beside its windows), which a library that forges its figure would cause, and once in a while a loaded host. The figure is that of its other trials; the record’s processes[] say what was refused and why. Measure it again before relying on it.';

/**
 * Why a measurement stopped before its plan when no check refused the trial that stopped it (a
 * timeout, a crash, a CRYPTOFAIL in a later trial): its figure is of the trials before, fewer than
 * planned. Undefined for a record that is not `partial`, or whose stop was a refusal (marked so).
 */
export function partialStop(r: { status?: unknown; failure?: unknown }): string | undefined {
  if (r.status !== 'partial') return undefined;
  const why = typeof r.failure === 'string' ? r.failure : 'a trial failed';
  return why.startsWith(REFUSED) ? undefined : why;
}

export const PARTIAL_MARK = '⚠ partial';

export const PARTIAL_NOTE =
  '⚠ partial: a later trial of this measurement failed, so the figure is of the trials before it, fewer than planned; the record’s failure says why.';
