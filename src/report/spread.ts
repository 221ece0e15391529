import type { TimingRecord } from '../evidence/fileTypes.js';
import { NOISY_TRIAL_SPREAD, recordSpread } from '../measure/stats.js';
import { precisionOf, type AdaptiveRule, type CallRule } from '../measure/precision.js';
import { PARTIAL_MARK, PARTIAL_NOTE, partialStop, REFUSED_NOTE, refusedMark, refusedTrials } from '../measure/refusals.js';
import type { RootContent } from 'mdast';
import { median } from 'simple-statistics';
import { DEFAULT_THRESHOLD_PCT } from '../config/defaults.js';
import { code, para } from '../text/md.js';
import { formatCycles, formatPrecision, formatSeconds, formatSpread, plural, pyFixed } from '../text/format.js';

/**
 * What a figure carries when its measurement lacked something (measure/refusals.ts): ' ⚠ 1 trial
 * refused' when a check refused a trial, ' ⚠ partial' when it stopped before its plan; else ''.
 */
export function figureMarks(r: TimingRecord): string {
  const refused = refusedMark(refusedTrials(r.processes).length);
  const apart = medianApart(r);
  return `${refused ? ` ${refused}` : ''}${partialStop(r) !== undefined ? ` ${PARTIAL_MARK}` : ''}${apart !== undefined ? ` ${medianMark(apart)}` : ''}`;
}

/**
 * A record's median trial per call, when its mean lies more than the regression threshold from it:
 * a few slow trials (something else on the core, a slower host) pulled the guide's mean up. The
 * §3.5 tables keep the mean, as the guide asks; comparisons, rankings and trends use the median trial.
 */
function medianApart(r: TimingRecord): number | undefined {
  const perCall = (r.trials ?? []).map((t) => t.cycles / t.measurements).filter((x) => Number.isFinite(x) && x > 0);
  if (perCall.length < 2 || typeof r.mean_cycles !== 'number') return undefined;
  const mid = median(perCall);
  return Math.abs(r.mean_cycles / mid - 1) * 100 > DEFAULT_THRESHOLD_PCT ? mid : undefined;
}

const medianMark = (mid: number): string => `≠ median ${formatCycles(mid)}`;

const MEDIAN_APART_NOTE = `"≠ median": the mean lies more than ${DEFAULT_THRESHOLD_PCT} % from the median trial, which follows: a few slower trials pulled the mean up. The tables keep the mean, as the guide asks; comparisons, rankings and trends use the median trial.`;

/** The notes that explain the marks figureMarks put on any of `records`: each said once, under the table. */
export function figureNotes(records: ReadonlyArray<TimingRecord | undefined>): RootContent[] {
  const shown = records.filter((r): r is TimingRecord => r !== undefined);
  return [
    ...(shown.some((r) => refusedTrials(r.processes).length > 0) ? [para(REFUSED_NOTE)] : []),
    ...(shown.some((r) => partialStop(r) !== undefined) ? [para(PARTIAL_NOTE)] : []),
    ...(shown.some((r) => medianApart(r) !== undefined) ? [para(MEDIAN_APART_NOTE)] : []),
    ...shown.flatMap(callPlanNote),
  ];
}

/** A record's plan, as precisionOf reads it. */
const planOf = (r: TimingRecord) => r.plan as { adaptive?: AdaptiveRule; calls?: CallRule } | null | undefined;

/**
 * What the figure of an operation planned in calls (measure/plan.ts planCalls) is of: its calls, each
 * about how long, and the interval they reached, under the table that shows it.
 */
function callPlanNote(r: TimingRecord): RootContent[] {
  if (!planOf(r)?.calls || r.trials.length === 0 || typeof r.mean_seconds !== 'number') return [];
  const p = precisionOf(r.trials, planOf(r));
  const calls = r.trials.reduce((a, t) => a + t.measurements, 0);
  const interval =
    p.ci95_rel === null
      ? 'no interval: fewer than two undisturbed calls'
      : `${formatPrecision(p.ci95_rel)} (target ${formatPrecision(p.target!)}: ${p.met ? 'met' : 'not met'})`;
  return [
    para(
      code(`${r.candidate}/${r.label}`),
      ` ${r.operation}: planned in calls, its call being slow. The figure is of ${plural(calls, 'call')} of about ${formatSeconds(r.mean_seconds)} each, each call a trial process of its own; its mean per call is known to ${interval}.`,
    ),
  ];
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
  if (spread === undefined) return `${r.trials?.length === 1 ? '— (one trial)' : '—'}${figureMarks(r)}`;
  const cell = isNoisy(spread) ? `${formatSpread(spread)} ${NOISY_MARK}` : formatSpread(spread);
  return `${cell}${precisionCell(r)}${figureMarks(r)}`;
}

/**
 * The precision the record's trials reached (measure/precision.ts), from its trials and plan as
 * the spread is: " · ±0.4%", and for an adaptive plan whether its target was met.
 */
function precisionCell(r: TimingRecord): string {
  const p = precisionOf(r.trials, planOf(r));
  if (p.ci95_rel === null) return '';
  const target = p.target !== undefined ? ` (target ${formatPrecision(p.target!)}: ${p.met ? 'met' : 'not met'})` : '';
  return ` · ${formatPrecision(p.ci95_rel)}${target}`;
}

/** What the precision in a trial-spread cell is, for the pages that show it. */
export const PRECISION_NOTE =
  '±: half the 95 % confidence interval of the mean time per call (Student t over the undisturbed trials), relative to the mean; "target" marks an adaptive plan, or one in calls, which stops once that interval is within its target.';

/** The footnote every page with a noisy mark carries, so the mark is never left unexplained. */
export const NOISY_NOTE = `${NOISY_MARK}: the slowest trial took at least ${pyFixed(NOISY_TRIAL_SPREAD, 2)}× as long per call as the fastest. Something else ran on the core during part of the measurement, and the mean includes that time; measure again on a quiet core before relying on the number.`;
