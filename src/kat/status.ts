export const KAT_STATUSES = ['PASS', 'MISMATCH', 'NOKAT', 'CRYPTOFAIL', 'OVERFLOW', 'LOADFAIL', 'TIMEOUT', 'CRASH', 'BUILDFAIL'] as const;
export type KatStatus = (typeof KAT_STATUSES)[number];

/**
 * Whether an instance with this KAT status is timed: its code ran correctly (PASS), or only the
 * comparison with submitted vectors is missing or different (NOKAT, MISMATCH).
 */
export function measurable(status: string | undefined): boolean {
  return status === 'PASS' || status === 'NOKAT' || status === 'MISMATCH';
}

/**
 * FORGED: a trial's outputs were not those the library gives when the same calls are made again
 * from the trial's seed in another process (measure/replay.ts). Found by the measure step after the
 * KAT passed, it replaces the KAT status wherever an instance's status is shown or judged.
 */
const INSTANCE_STATUSES = [...KAT_STATUSES, 'FORGED'] as const;
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

/** What the measure step found against an instance (build.json `forged`). */
export interface Forgery {
  operation: string;
  /** The record's failure: the trial and the calls whose outputs differ. */
  detail: string;
}

/** An instance's status: FORGED once a replay disagreed with the library's trial, else its KAT status. */
export function instanceStatus(entry: { kat?: KatStatus; forged?: Forgery } | undefined): InstanceStatus | undefined {
  return entry?.forged ? 'FORGED' : entry?.kat;
}

/** A forgery as one line: the operation, then the trial and calls its record names. */
export const forgeryShown = (f: Forgery): string => `${f.operation}: ${f.detail.replace(/^FORGED: /, '')}`;
