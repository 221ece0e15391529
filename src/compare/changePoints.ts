import { CHANGE_POINT_ALPHA, CHANGE_POINT_MIN_SEGMENT, CHANGE_POINT_PERMUTATIONS, DEFAULT_THRESHOLD_PCT } from '../config/defaults.js';

/** A step in a series: the level changes from `index` on (the first point of the new level). */
export interface ChangePoint {
  index: number;
  /** The level after the step against the level before it, in percent (geometric means of each side's segment). */
  delta_pct: number;
  /** The permutation p-value of the split within its segment. */
  p_value: number;
}

export interface ChangePointOptions {
  alpha?: number;
  /** A step smaller than this (percent) is not reported, however significant. */
  minStepPct?: number;
  minSegment?: number;
  permutations?: number;
}

/**
 * The steps of a series of positive figures (one per night, oldest first), by binary segmentation:
 * within a segment, the split with the largest two-sample t statistic of the figures' logarithms
 * is a change point when a permutation test of that maximum (the same maximum over every split of
 * shuffled segments, from a fixed seed, so a series always gives the same answer) says p ≤ alpha and
 * its step is at least minStepPct; then each side is searched the same way.
 *
 * Under no change (the nights exchangeable) the first test fails with probability 1 − alpha, and
 * nothing else is tested: alpha is the false change-point rate per series (docs/statistics.md).
 */
export function changePoints(values: readonly number[], opts: ChangePointOptions = {}): ChangePoint[] {
  const settings = {
    alpha: opts.alpha ?? CHANGE_POINT_ALPHA,
    minStep: opts.minStepPct ?? DEFAULT_THRESHOLD_PCT,
    minSegment: opts.minSegment ?? CHANGE_POINT_MIN_SEGMENT,
    permutations: opts.permutations ?? CHANGE_POINT_PERMUTATIONS,
  };
  const logs = values.map(Math.log);
  if (logs.some((x) => !Number.isFinite(x))) throw new Error('changePoints: every figure must be positive');
  const found: ChangePoint[] = [];
  const search = (from: number, to: number) => {
    const segment = logs.slice(from, to);
    const best = bestSplit(segment, settings.minSegment);
    if (!best) return;
    const p_value = permutationP(segment, best.t, settings);
    const delta_pct = (Math.exp(best.rightMean - best.leftMean) - 1) * 100;
    if (p_value > settings.alpha || Math.abs(delta_pct) < settings.minStep) return;
    found.push({ index: from + best.at, delta_pct, p_value });
    search(from, from + best.at);
    search(from + best.at, to);
  };
  search(0, logs.length);
  return found.sort((a, b) => a.index - b.index);
}

interface Split {
  at: number;
  t: number;
  leftMean: number;
  rightMean: number;
}

/** The split of xs (each side at least minSegment long) with the largest |t| (pooled variance). */
function bestSplit(xs: readonly number[], minSegment: number): Split | undefined {
  const n = xs.length;
  if (n < 2 * minSegment) return undefined;
  const sum = [0];
  const squares = [0];
  for (const x of xs) {
    sum.push(sum.at(-1)! + x);
    squares.push(squares.at(-1)! + x * x);
  }
  let best: Split | undefined;
  for (let at = minSegment; at <= n - minSegment; at++) {
    const n1 = at;
    const n2 = n - at;
    const m1 = sum[at]! / n1;
    const m2 = (sum[n]! - sum[at]!) / n2;
    const within = squares[at]! - n1 * m1 * m1 + (squares[n]! - squares[at]!) - n2 * m2 * m2;
    const pooled = Math.max(within, 0) / (n - 2);
    // A segment of identical figures: any difference of levels is infinitely many sds away.
    const t = pooled > 0 ? Math.abs(m2 - m1) / Math.sqrt(pooled * (1 / n1 + 1 / n2)) : m1 === m2 ? 0 : Number.POSITIVE_INFINITY;
    if (!best || t > best.t) best = { at, t, leftMean: m1, rightMean: m2 };
  }
  return best;
}

/** Share of shuffles of xs whose best split is at least as extreme as `observed` (the observed order counted once). */
function permutationP(xs: readonly number[], observed: number, s: { minSegment: number; permutations: number }): number {
  const rand = seededRandom(0x5eed1e55);
  const shuffled = [...xs];
  let hits = 1;
  for (let r = 0; r < s.permutations; r++) {
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    if (bestSplit(shuffled, s.minSegment)!.t >= observed * (1 - 1e-12)) hits++;
  }
  return hits / (s.permutations + 1);
}

/** xorshift32: the permutations' fixed sequence. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}
