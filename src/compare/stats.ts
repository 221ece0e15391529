import { DISTURBED_OFF_CPU, offCpuShare, type OsView } from '../measure/disturbance.js';
import { interquartileRange, mean, median, probit, sampleStandardDeviation } from 'simple-statistics';
import { HISTORY_MIN_RUNS } from '../config/defaults.js';
import { NOISY_TRIAL_SPREAD, trialSpread } from '../measure/stats.js';

/**
 * Two-sided p-value for a difference of means between two small samples: an exact permutation
 * test over every split of the pooled values (no normality assumed), or — when the number of
 * splits is large — a seeded Monte Carlo estimate with 20,000 random splits. With 5 trials a side
 * the smallest attainable p is 2/252 ≈ 0.008: only complete separation reaches p < 0.01.
 */
export function permutationPValue(a: number[], b: number[]): number {
  const pooled = [...a, ...b];
  const n = pooled.length;
  const k = a.length;
  if (k === 0 || b.length === 0) return 1;
  const total = pooled.reduce((s, x) => s + x, 0);
  const observed = Math.abs(mean(a) - mean(b));
  const diffOf = (sumA: number) => Math.abs(sumA / k - (total - sumA) / (n - k));
  // Relative tolerance: splits whose difference equals the observed one up to rounding count as extreme.
  const extreme = (d: number) => d >= observed * (1 - 1e-12);
  if (binomial(n, k) <= 200_000) {
    let hits = 0;
    let count = 0;
    const walk = (start: number, left: number, sum: number) => {
      if (left === 0) {
        count++;
        if (extreme(diffOf(sum))) hits++;
        return;
      }
      for (let i = start; i <= n - left; i++) walk(i + 1, left - 1, sum + pooled[i]!);
    };
    walk(0, k, 0);
    return hits / count;
  }
  let state = 0x2545f491;
  const rand = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const rounds = 20_000;
  let hits = 1; // the observed split itself
  const idx = pooled.map((_, i) => i);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(rand() * (n - i));
      [idx[i], idx[j]] = [idx[j]!, idx[i]!];
    }
    let sum = 0;
    for (let i = 0; i < k; i++) sum += pooled[idx[i]!]!;
    if (extreme(diffOf(sum))) hits++;
  }
  return hits / (rounds + 1);
}

/**
 * Two-sided p-value of the rank-sum (Mann–Whitney) test: the permutation test above applied to the
 * pooled trials' ranks (ties share their mean rank). A trial moved anywhere, however far, changes
 * only its own rank, so one disturbed trial cannot make a difference significant; with 5 trials a
 * side complete separation still gives the smallest p, 2/252.
 */
export function rankPValue(a: number[], b: number[]): number {
  const ranks = midranks([...a, ...b]);
  return permutationPValue(ranks.slice(0, a.length), ranks.slice(a.length));
}

function midranks(values: number[]): number[] {
  const order = values.map((v, i) => ({ v, i })).sort((x, y) => x.v - y.v);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.v === order[start]!.v) end++;
    for (let j = start; j <= end; j++) ranks[order[j]!.i] = (start + end) / 2 + 1;
    start = end + 1;
  }
  return ranks;
}

/** The median of a side's per-trial cycles per call: the figure a verdict compares. */
export const medianTrial = (trialCycles: number[]): number => median(trialCycles);

/**
 * Slowest over fastest trial of a side, the measure phase's noise figure (NOISY_TRIAL_SPREAD). The
 * record's own spread is in seconds; a side built from cycles alone uses its cycles, the same
 * ratio on a counter of fixed rate.
 */
export function sideSpread(side: { trial_cycles: number[]; trial_spread?: number }): number | undefined {
  if (side.trial_spread !== undefined) return side.trial_spread;
  const c = side.trial_cycles;
  return trialSpread({ min_trial_seconds: Math.min(...c), max_trial_seconds: Math.max(...c) }, c.length);
}

export const isNoisySpread = (spread: number | undefined): boolean => spread !== undefined && spread >= NOISY_TRIAL_SPREAD;

/**
 * Share of a trial its process may spend off the CPU before the trial counts as disturbed: the
 * measure phase's rule (docs/method.md#disturbed-trials), one definition for both.
 */
export const DISTURBED_OFF_CPU_SHARE = DISTURBED_OFF_CPU;

/**
 * The share of a trial spent on the CPU, at most 1: from the driver thread's own figures over the
 * loop when the trial has them (exact), else from the kernel's view at the marks (which also holds
 * the marks' round trips); undefined when the trial carries neither.
 */
export function onCpuShare(t: { kernel_cpu_s?: number; window_s?: number; os?: OsView }): number | undefined {
  if (t.os && t.os.wall_s > 0) return 1 - offCpuShare(t.os);
  if (typeof t.kernel_cpu_s !== 'number' || typeof t.window_s !== 'number' || !(t.window_s > 0)) return undefined;
  return Math.min(1, Math.max(0, t.kernel_cpu_s / t.window_s));
}

interface Trials {
  trial_cycles: number[];
  trial_on_cpu?: number[];
}

/** Trials whose process was off the CPU more than DISTURBED_OFF_CPU_SHARE of their window. */
export const disturbedTrials = (side: Trials): number => (side.trial_on_cpu ?? []).filter((s) => 1 - s > DISTURBED_OFF_CPU_SHARE).length;

/**
 * The least each trial can stand for: the counter runs on while the process is off the CPU, so a
 * trial's cycles less that share is the lowest its own work can have cost. A trial without the
 * kernel's figures stands for its cycles.
 */
const lowestTrials = (side: Trials): number[] => side.trial_cycles.map((c, i) => c * (side.trial_on_cpu?.[i] ?? 1));

/**
 * Whether the effect is larger than all of the noise: head's worst-case range lies wholly above
 * base's (a slowdown) or wholly below it (a speed-up), each trial's range reaching from its
 * lowest (lowestTrials) to its cycles.
 */
export function separated(base: Trials, head: Trials, deltaPct: number): boolean {
  if (deltaPct > 0) return Math.min(...lowestTrials(head)) > Math.max(...base.trial_cycles);
  if (deltaPct < 0) return Math.max(...head.trial_cycles) < Math.min(...lowestTrials(base));
  return false;
}

function binomial(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** Coefficient of variation of a run-to-run history (null with fewer than HISTORY_MIN_RUNS points). */
export function historyCv(values: number[]): number | null {
  if (values.length < HISTORY_MIN_RUNS) return null;
  return sampleStandardDeviation(values) / mean(values);
}

/**
 * Two-sided p-value of the Wilcoxon signed-rank test of paired differences (here the log-ratios
 * head/base of trials measured side by side): the exact sign-flip distribution of the rank sum,
 * ties sharing their mean rank and zero differences left out; a seeded Monte Carlo estimate with
 * 20,000 random sign patterns beyond 20 pairs. With n pairs the smallest attainable p is 2/2^n:
 * 8 pairs are the fewest that can reach 0.01 (2/256).
 */
export function signedRankPValue(differences: number[]): number {
  const d = differences.filter((x) => x !== 0);
  const n = d.length;
  if (n === 0) return 1;
  const ranks = midranks(d.map(Math.abs));
  const total = ranks.reduce((a, r) => a + r, 0);
  const observed = Math.abs(d.reduce((s, x, i) => s + (x > 0 ? ranks[i]! : 0), 0) - total / 2);
  const extreme = (positive: number) => Math.abs(positive - total / 2) >= observed - 1e-9;
  if (n <= 20) {
    let hits = 0;
    for (let mask = 0; mask < 1 << n; mask++) {
      let positive = 0;
      for (let i = 0; i < n; i++) if (mask & (1 << i)) positive += ranks[i]!;
      if (extreme(positive)) hits++;
    }
    return hits / 2 ** n;
  }
  let state = 0x9e3779b9;
  const rand = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const rounds = 20_000;
  let hits = 1;
  for (let r = 0; r < rounds; r++) {
    let positive = 0;
    for (let i = 0; i < n; i++) if (rand() < 0.5) positive += ranks[i]!;
    if (extreme(positive)) hits++;
  }
  return hits / (rounds + 1);
}

/** The power at which a minimum detectable effect is stated (the usual 80 %). */
const MDE_POWER = 0.8;
/** The interquartile range of a normal distribution, in standard deviations: a robust sd is IQR / this. */
const NORMAL_IQR = 1.349;
/** The signed-rank test's asymptotic efficiency against the t-test under normal noise (3/π). */
const SIGNED_RANK_EFFICIENCY = 3 / Math.PI;

/** Student's t quantile from the normal one z, ν degrees of freedom (Abramowitz & Stegun 26.7.5). */
function tQuantile(z: number, nu: number): number {
  return z + (z ** 3 + z) / (4 * nu) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * nu ** 2);
}

/**
 * The smallest change, in percent, that trial pairs with these log-ratios would call at `alpha`
 * with MDE_POWER: (t₁₋α/₂ + t_power) · sd / √(n · 3/π) of the log-ratios, the paired t-test's
 * figure for n − 1 degrees of freedom, widened by the signed-rank test's efficiency. The sd is the
 * robust one (IQR / 1.349), as the test itself is rank-based: one disturbed pair does not inflate
 * it. Undefined when n pairs cannot reach p ≤ alpha at all (2/2^n > alpha: every change is
 * inconclusive) or there are fewer than 4 pairs.
 */
export function pairedMdePct(logRatios: readonly number[], alpha: number): number | undefined {
  const n = logRatios.length;
  if (n < 4 || 2 / 2 ** n > alpha) return undefined;
  const sd = interquartileRange([...logRatios]) / NORMAL_IQR;
  const t = tQuantile(probit(1 - alpha / 2), n - 1) + tQuantile(probit(MDE_POWER), n - 1);
  return (Math.exp((t * sd) / Math.sqrt(n * SIGNED_RANK_EFFICIENCY)) - 1) * 100;
}
