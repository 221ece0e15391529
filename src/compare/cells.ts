import { MISSING, formatCycles, pyFixed } from '../text/format.js';
import { disturbedTrials, sideSpread } from './stats.js';
import type { SideStats } from './compareReport.js';

/** How the numbers and messages of a comparison read, in its Markdown and its annotations alike. */

/** A byte count or other integer-valued quantity. */
export const amount = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? MISSING : pyFixed(v, 0));

export const cycles = (v: number | undefined): string => (v === undefined ? MISSING : formatCycles(v));

/** A compiler message can be long and multi-line: its first line says what broke. */
export const firstLine = (s: string): string => {
  const line =
    s
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
};

/** The figure a verdict compares: the median trial (the mean in comparisons made before it). */
export const sideFigure = (s: SideStats | undefined): number | undefined => (s ? (s.median_cycles ?? s.mean_cycles) : undefined);

/** A side's slowest over fastest trial, and its disturbed trials when there are any: '1.97×', '1.10×, 2/5 off-CPU'. */
export function spreadText(s: SideStats | undefined): string {
  if (!s) return MISSING;
  const x = sideSpread(s);
  const d = disturbedTrials(s);
  return `${x === undefined ? MISSING : `${pyFixed(x, 2)}×`}${d > 0 ? `, ${d}/${s.trial_cycles.length} off-CPU` : ''}`;
}
