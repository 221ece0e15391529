/**
 * The physical floor of a call (issue: a figure below it is flagged): the time no core can beat to
 * move the bytes the call must produce, and for a hash also read. Every output is checked after the
 * window (native/core/calls.c), so a call that claims less time than writing them takes did not do its work
 * in the counted span. Deliberately loose: it bounds lies, not slow code.
 */

/** Bytes a core moves per cycle at most: two 64-byte stores (or loads) a cycle, the widest cores'. */
const MAX_BYTES_PER_CYCLE = 128;
/** A clock no core sustains: the floor holds on any machine, with any counter. */
const MAX_CLOCK_HZ = 6.5e9;

/**
 * The bytes one call of the operation must write (a hash: also read), from the trial's META sizes;
 * undefined where nothing is known to be written (verify, key exchange).
 */
export function bytesMoved(type: string, operation: string, meta: Record<string, string>): number | undefined {
  const n = (key: string) => Number(meta[key] ?? 0) || 0;
  if (type.startsWith('hash')) return n('input_bytes') + n('digest_bytes');
  if (type === 'kem') {
    if (operation === 'keygen') return n('pk_bytes') + n('sk_bytes');
    if (operation === 'enc') return n('ct_bytes') + n('ss_bytes');
    if (operation === 'dec') return n('ss_bytes');
  }
  if (type === 'sig') {
    if (operation === 'keygen') return n('pk_bytes') + n('sk_bytes');
    // A signature may be shorter than its claimed length (Falcon's are about 87 % of it): half counts.
    if (operation === 'sign') return Math.floor(n('signature_bytes') / 2);
  }
  return undefined;
}

/** Seconds one call cannot go below for moving `bytes`. */
export const floorSeconds = (bytes: number): number => bytes / MAX_BYTES_PER_CYCLE / MAX_CLOCK_HZ;

/** Why a trial's per-call time is below the floor, or undefined when it is not. */
export function belowFloor(
  type: string,
  operation: string,
  meta: Record<string, string>,
  trial: { seconds: number; measurements: number },
): string | undefined {
  const bytes = bytesMoved(type, operation, meta);
  if (!bytes || !(trial.measurements > 0)) return undefined;
  const perCall = trial.seconds / trial.measurements;
  const floor = floorSeconds(bytes);
  if (perCall >= floor) return undefined;
  return `below the physical floor: ${(perCall * 1e9).toPrecision(3)} ns per ${operation} call, where moving its ${bytes} bytes takes at least ${(floor * 1e9).toPrecision(3)} ns (${MAX_BYTES_PER_CYCLE} bytes a cycle at ${MAX_CLOCK_HZ / 1e9} GHz)`;
}
