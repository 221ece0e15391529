import { mean, sampleStandardDeviation } from 'simple-statistics';
import { HISTORY_MIN_RUNS } from '../config/defaults.js';

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
