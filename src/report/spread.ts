import type { TimingRecord } from '../evidence/types.js';
import { deriveStatistics, NOISY_TRIAL_SPREAD, trialSpread } from '../measure/stats.js';
import { precisionOf, type AdaptiveRule } from '../measure/precision.js';
import { refusedMark, refusedTrials } from '../measure/refusals.js';
import { formatPrecision, formatSpread, pyFixed } from './format.js';

/**
 * How far an operation's trials spread, read from its record's raw trials (never from the run that
 * wrote it): a record kept by a later run shows the same spread and the same mark.
 */
export function recordSpread(r: TimingRecord): number | undefined {
  if (!r.trials || r.trials.length < 2) return undefined;
  return trialSpread(deriveStatistics(r.trials), r.trials.length);
}

/** ' ⚠ 1 trial refused' after a figure whose measurement had a trial refused (measure/refusals.ts), else ''. */
export function refusedSuffix(r: TimingRecord): string {
  const mark = refusedMark(refusedTrials(r.processes).length);
  return mark ? ` ${mark}` : '';
}

/** The project's noisy rule (src/measure/stats.ts), the one the run's progress lines apply. */
export const isNoisy = (spread: number | undefined): spread is number => spread !== undefined && spread >= NOISY_TRIAL_SPREAD;

export const NOISY_MARK = '⚠ noisy';

/**
 * "1.02× · ±0.4%", "2.07× ⚠ noisy · ±19%", "1.01× · ±0.6% (target ±1%: met)", or why there is no
 * spread; "… ⚠ 1 trial refused" when a check refused one of its trials.
 */
export function spreadCell(r: TimingRecord): string {
  const spread = recordSpread(r);
  if (spread === undefined) return `${r.trials?.length === 1 ? '— (one trial)' : '—'}${refusedSuffix(r)}`;
  const cell = isNoisy(spread) ? `${formatSpread(spread)} ${NOISY_MARK}` : formatSpread(spread);
  return `${cell}${precisionCell(r)}${refusedSuffix(r)}`;
}

/**
 * The precision the record's trials reached (measure/precision.ts), from its trials and plan as
 * the spread is: " · ±0.4%", and for an adaptive plan whether its target was met.
 */
function precisionCell(r: TimingRecord): string {
  const p = precisionOf(r.trials, r.plan as { adaptive?: AdaptiveRule } | null | undefined);
  if (p.ci95_rel === null) return '';
  const target = p.mode === 'adaptive' ? ` (target ${formatPrecision(p.target!)}: ${p.met ? 'met' : 'not met'})` : '';
  return ` · ${formatPrecision(p.ci95_rel)}${target}`;
}

/** What the precision in a trial-spread cell is, for the pages that show it. */
export const PRECISION_NOTE =
  '±: half the 95 % confidence interval of the mean time per call (Student t over the undisturbed trials), relative to the mean; "target" marks an adaptive plan, which stops its trials once that interval is within its target.';

/** The footnote every page with a noisy mark carries, so the mark is never left unexplained. */
export const NOISY_NOTE = `${NOISY_MARK}: the slowest trial took at least ${pyFixed(NOISY_TRIAL_SPREAD, 2)}× as long per call as the fastest. Something else ran on the core during part of the measurement, and the mean includes that time; measure again on a quiet core before relying on the number.`;
