/**
 * What a process of an operation costs, from what the KAT measured of each call (build.json
 * `call_seconds`), so that every timeout follows it: a slow scheme's phases finish, or are skipped
 * with a reason that names the budget, and never end in TIMEOUT. One rule for the KAT, the timing
 * processes, the profile rounds, the memory runs and the ct runs.
 */

/** How much longer than expected a process may take before it is killed. */
const TIMEOUT_MARGIN = 3;
/**
 * No scaled timeout passes a whole nightly's goal (8 h): the figures it follows come from the
 * library's own process (a KAT record's mark), and a library that lies about its speed may hold its
 * lane that long, no longer.
 */
export const SCALED_TIMEOUT_CAP_S = 8 * 3600;
/** The KAT's records after the first (native/jobs/kat.c): its fresh seeds and the flipped checks. */
const KAT_EXTRA_RECORDS = 3;

/** Seconds per call of each operation, as the KAT saw them (the longest of its records). */
export type CallSeconds = Partial<Record<string, number>>;

/**
 * The seconds a process spends making what the operation's calls need, besides the calls
 * (native/core/calls.c, ops.c): a key pair for all but keygen and hash, a ciphertext per dec call,
 * verify's pool of signed messages.
 */
export function setupSeconds(type: string, operation: string, s: CallSeconds, calls: number, verifyPool = 16): number {
  const k = s.keygen ?? 0;
  if (type === 'kem') {
    if (operation === 'enc') return k;
    if (operation === 'dec') return k + calls * (s.enc ?? 0);
  }
  if (type === 'sig') {
    if (operation === 'sign') return k;
    if (operation === 'verify') return k + Math.min(calls, verifyPool) * (s.sign ?? 0);
  }
  return 0;
}

/** Seconds a process of `calls` calls (and `warmups`) of the operation is expected to take; undefined when a figure is missing. */
export function processSeconds(
  type: string,
  operation: string,
  s: CallSeconds,
  calls: number,
  warmups = 0,
  verifyPool = 16,
): number | undefined {
  const call = s[operation];
  if (call === undefined) return undefined;
  return setupSeconds(type, operation, s, calls + warmups, verifyPool) + (calls + warmups) * call;
}

/** A timeout in seconds: the floor, or the margin over the expected seconds when that is more. */
export const scaledTimeoutS = (floorS: number, expectedS: number | undefined): number =>
  expectedS === undefined ? floorS : Math.max(floorS, Math.min(SCALED_TIMEOUT_CAP_S, TIMEOUT_MARGIN * expectedS));

/**
 * The KAT's timeout once its first record is done, `firstS` seconds after the start: the margin over
 * as many records again, never less than the floor.
 */
export const katTimeoutS = (floorS: number, firstS: number, records: number): number =>
  scaledTimeoutS(floorS, firstS * (records + KAT_EXTRA_RECORDS));
