import { CHANGE_POINT_ALPHA, CHANGE_POINT_MIN_SEGMENT, CHANGE_POINT_PERMUTATIONS, DEFAULT_THRESHOLD_PCT } from '../config/defaults.js';

/** A step in a series: the level changes from `index` on (the first point of the new level). */
export interface ChangePoint {
  index: number;
  /** The level after the step against the level before it, in percent (geometric means of the segments beside it). */
  delta_pct: number;
  /** The permutation p-value of the search that found it, within its segment. */
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
 * The steps of a series of positive figures (one per night, oldest first), by binary segmentation
 * over splits and intervals: within a segment, the cut with the largest two-sample t statistic of the
 * figures' logarithms is either one split (a step) or an interval against the rest of the segment (a
 * step and its return, a regression later mended). It stands when a permutation test of that maximum
 * (the same maximum over every cut of shuffled segments, from a fixed seed, so a series always gives
 * the same answer) says p ≤ alpha; then each part is searched the same way. A step smaller than
 * minStepPct is not reported, but the parts beside it are still searched.
 *
 * Under no change (the nights exchangeable) the first test fails with probability about 1 − alpha,
 * and nothing else is tested: alpha bounds the false change-point rate per series (docs/statistics.md).
 */
export function changePoints(values: readonly number[], opts: ChangePointOptions = {}): ChangePoint[] {
  const s = {
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
    const best = bestCut(segment, s.minSegment);
    if (!best) return;
    const p_value = permutationP(segment, best.t, s);
    if (p_value > s.alpha) return;
    const bounds = [0, ...best.cuts, segment.length];
    const mean = (a: number, b: number) => segment.slice(a, b).reduce((x, y) => x + y, 0) / (b - a);
    for (let k = 1; k < bounds.length - 1; k++) {
      const delta_pct = (Math.exp(mean(bounds[k]!, bounds[k + 1]!) - mean(bounds[k - 1]!, bounds[k]!)) - 1) * 100;
      if (Math.abs(delta_pct) >= s.minStep) found.push({ index: from + bounds[k]!, delta_pct, p_value });
    }
    for (let k = 0; k < bounds.length - 1; k++) search(from + bounds[k]!, from + bounds[k + 1]!);
  };
  search(0, logs.length);
  return found.sort((a, b) => a.index - b.index);
}

interface Cut {
  /** One split, or the two ends of an interval (the interval against the rest). */
  cuts: number[];
  t: number;
}

/**
 * The cut of xs with the largest |t| (pooled variance): a split into two parts, or an interval
 * against the two parts around it taken together, every part at least minSegment long.
 */
function bestCut(xs: readonly number[], minSegment: number): Cut | undefined {
  const n = xs.length;
  if (n < 2 * minSegment) return undefined;
  const sum = [0];
  const squares = [0];
  for (const x of xs) {
    sum.push(sum.at(-1)! + x);
    squares.push(squares.at(-1)! + x * x);
  }
  const total = sum[n]!;
  const totalSquares = squares[n]!;
  /** |t| of xs[a, b) against the rest. */
  const tOf = (a: number, b: number): number => {
    const n1 = b - a;
    const n2 = n - n1;
    const s1 = sum[b]! - sum[a]!;
    const q1 = squares[b]! - squares[a]!;
    const m1 = s1 / n1;
    const m2 = (total - s1) / n2;
    const within = q1 - n1 * m1 * m1 + (totalSquares - q1) - n2 * m2 * m2;
    const pooled = Math.max(within, 0) / (n - 2);
    // A segment of identical figures: any difference of levels is infinitely many sds away.
    return pooled > 0 ? Math.abs(m1 - m2) / Math.sqrt(pooled * (1 / n1 + 1 / n2)) : m1 === m2 ? 0 : Number.POSITIVE_INFINITY;
  };
  let best: Cut | undefined;
  const consider = (cuts: number[], t: number) => {
    if (!best || t > best.t) best = { cuts, t };
  };
  for (let at = minSegment; at <= n - minSegment; at++) consider([at], tOf(0, at));
  // An interval inside, with at least minSegment on each side of it.
  for (let a = minSegment; a <= n - 2 * minSegment; a++) for (let b = a + minSegment; b <= n - minSegment; b++) consider([a, b], tOf(a, b));
  return best;
}

/** Share of shuffles of xs whose best cut is at least as extreme as `observed` (the observed order counted once). */
function permutationP(xs: readonly number[], observed: number, s: { minSegment: number; permutations: number }): number {
  const rand = seededRandom(0x5eed1e55);
  const shuffled = [...xs];
  let hits = 1;
  for (let r = 0; r < s.permutations; r++) {
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    if (bestCut(shuffled, s.minSegment)!.t >= observed * (1 - 1e-12)) hits++;
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
