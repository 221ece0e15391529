export const KAT_STATUSES = ['PASS', 'MISMATCH', 'NOKAT', 'CRYPTOFAIL', 'OVERFLOW', 'LOADFAIL', 'TIMEOUT', 'CRASH', 'BUILDFAIL'] as const;
export type KatStatus = (typeof KAT_STATUSES)[number];

/** Statuses that mean the code itself misbehaved (as opposed to a missing or different KAT). */
export function katBroken(status: KatStatus): boolean {
  return !['PASS', 'NOKAT', 'MISMATCH'].includes(status);
}
