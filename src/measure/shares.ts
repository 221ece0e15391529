/**
 * How a hash profile's shares are defined: the profile phase that produces them and `validate`
 * that recomputes them both read these rules from here.
 */

/** One wrapped function's accounting in a profile round. */
export interface WrappedCall {
  fn: string;
  calls: number;
  ticks: number;
}

/** Randomness entry points in profiles; every other wrapped function is hashing. */
export const DRNG_FNS = new Set(['drng', 'get_random_number', 'randombytes']);

/**
 * Per-function shares of a profile. The hash share is everything wrapped but the randomness
 * (for ICCS code: pseudohash, pseudoXOF, sm3hash — the ngcc-harness definition).
 */
export function shares(total: number, calls: readonly WrappedCall[]): { share: Record<string, number>; hash_share: number } {
  const share: Record<string, number> = {};
  for (const c of calls) share[c.fn] = (share[c.fn] ?? 0) + c.ticks / total;
  const hash_share = Object.entries(share)
    .filter(([fn]) => !DRNG_FNS.has(fn))
    .reduce((a, [, v]) => a + v, 0);
  return { share, hash_share };
}

/** The round whose hash share is the (lower) median: its calls and total stay consistent with its shares. */
export function medianRound<T extends { hashShare: number }>(rounds: T[]): T | undefined {
  const sorted = [...rounds].sort((a, b) => a.hashShare - b.hashShare);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
