export const KAT_STATUSES = ['PASS', 'MISMATCH', 'NOKAT', 'CRYPTOFAIL', 'OVERFLOW', 'LOADFAIL', 'TIMEOUT', 'CRASH', 'BUILDFAIL'] as const;
export type KatStatus = (typeof KAT_STATUSES)[number];

/**
 * Whether an instance with this KAT status is timed: its code ran correctly (PASS), or only the
 * comparison with submitted vectors is missing or different (NOKAT, MISMATCH).
 */
export function measurable(status: string | undefined): boolean {
  return status === 'PASS' || status === 'NOKAT' || status === 'MISMATCH';
}
