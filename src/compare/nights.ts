import { medianAbsoluteDeviation, probit } from 'simple-statistics';
import {
  DEFAULT_THRESHOLD_PCT,
  HOST_SHIFT_MIN_ROWS,
  NIGHT_ALPHA,
  NIGHT_MIN_AFTER,
  NIGHT_MIN_BEFORE,
  NIGHT_NOISE_CONFIDENCE,
  NIGHT_NOISE_FLOOR,
  NIGHT_NOISE_MIN_PAIRS,
  NIGHT_NOISE_UNMEASURED,
  NIGHT_NOISY_FACTOR,
} from '../config/defaults.js';

/**
 * The night rule (docs/statistics.md#nights): whether an operation's figure moved between nights
 * beyond the noise of nights, and where a series of nights steps. Every figure is the logarithm of a
 * night's median trial, net of the host's move that night (hostShift); its noise is the night-to-night
 * spread of unchanged rows (nightNoise) plus what the night's own trials leave uncertain.
 */

/** A night's figure as the rule reads it: log of the median trial, net of the host, and that log's variance from the night's trials. */
interface NightPoint {
  y: number;
  v: number;
}

/** The robust sd of a normal sample from its median absolute deviation. */
const MAD_TO_SD = 1.4826;
/** The standard error of a normal sample's median over that of its mean. */
const MEDIAN_SE_FACTOR = 1.2533;

/** A night's log figure, and its variance from its trials (per call): none from fewer than three. */
function nightPoint(medianTrial: number, perCall: readonly number[]): NightPoint {
  const logs = perCall.filter((x) => x > 0).map(Math.log);
  if (logs.length < 3) return { y: Math.log(medianTrial), v: 0 };
  const se = (MEDIAN_SE_FACTOR * MAD_TO_SD * medianAbsoluteDeviation(logs)) / Math.sqrt(logs.length);
  return { y: Math.log(medianTrial), v: se * se };
}

/**
 * Each night's host level, in log units: the least-squares fit of every figure as its unit's level
 * plus its night's (a unit is one row's run of one build). The submissions' own code is the canary
 * of the night. Units of one night fit any level and are left out. Levels are fitted over the run of
 * nights that ends at the last one with HOST_SHIFT_MIN_ROWS units, each of its nights linked to the
 * one before by HOST_SHIFT_MIN_ROWS units that span both, measured from its first night. A night
 * outside that run (before a night that rebuilt nearly every row: a new harness, compiler or machine)
 * cannot be set against the ones after it: it gets no level (0, undefined in `seen`). The units'
 * levels are eliminated, which leaves one linear equation per night, solved by Gaussian elimination
 * with partial pivoting. `crossing[t]`: the units that span nights t − 1 and t.
 */
function hostLevels(
  cells: ReadonlyArray<{ unit: number; night: number; y: number }>,
  nights: number,
): { level: number[]; seen: Array<number | undefined>; crossing: number[] } {
  const byUnit = new Map<number, Array<{ night: number; y: number }>>();
  for (const c of cells) byUnit.set(c.unit, [...(byUnit.get(c.unit) ?? []), c]);
  const multi = [...byUnit.values()].filter((cs) => cs.length >= 2);
  const counts = new Array<number>(nights).fill(0);
  const crossing = new Array<number>(nights).fill(0);
  for (const cs of multi) {
    const at = new Set(cs.map((c) => c.night));
    for (const night of at) {
      counts[night]!++;
      if (at.has(night - 1)) crossing[night]!++;
    }
  }
  const level = new Array<number>(nights).fill(0);
  const seen = new Array<number | undefined>(nights).fill(undefined);
  let last = nights - 1;
  while (last >= 0 && counts[last]! < HOST_SHIFT_MIN_ROWS) last--;
  if (last < 0) return { level, seen, crossing };
  let first = last;
  while (first > 0 && counts[first - 1]! >= HOST_SHIFT_MIN_ROWS && crossing[first]! >= HOST_SHIFT_MIN_ROWS) first--;
  for (let t = first; t <= last; t++) seen[t] = counts[t];
  if (first === last) return { level, seen, crossing };
  // Night `first` is the reference (level 0): unknowns are the others.
  const index = new Map(Array.from({ length: last - first }, (_, i) => [first + 1 + i, i]));
  const size = index.size;
  const m = Array.from({ length: size }, () => new Array<number>(size + 1).fill(0));
  for (const cs of multi) {
    const inUnit = cs.filter((c) => c.night >= first && c.night <= last);
    if (inUnit.length < 2) continue;
    const mean = inUnit.reduce((a, c) => a + c.y, 0) / inUnit.length;
    for (const c of inUnit) {
      const row = index.get(c.night);
      if (row === undefined) continue;
      m[row]![size]! += c.y - mean;
      for (const o of inUnit) {
        const col = index.get(o.night);
        if (col !== undefined) m[row]![col]! += (c.night === o.night ? 1 : 0) - 1 / inUnit.length;
      }
    }
  }
  const x = solveLinear(m);
  for (const [night, i] of index) level[night] = x[i] ?? 0;
  return { level, seen, crossing };
}

/** The solution of the augmented system m (n rows of n + 1), by Gaussian elimination with partial pivoting; 0 where it is singular. */
function solveLinear(m: number[][]): number[] {
  const n = m.length;
  // Singular below this, relative to the system's own scale.
  const tiny = 1e-9 * Math.max(1e-300, ...m.map((row, i) => Math.abs(row[i]!)));
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const p = m[col]![col]!;
    if (Math.abs(p) < tiny) continue;
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / p;
      if (f !== 0) for (let k = col; k <= n; k++) m[r]![k]! -= f * m[col]![k]!;
    }
  }
  return m.map((row, i) => (Math.abs(row[i]!) < tiny ? 0 : row[n]! / row[i]!));
}

export interface NightNoise {
  /** The sd of one night's log figure, night to night, beyond the host's move (at least NIGHT_NOISE_FLOOR). */
  tau: number;
  /** The pairs of adjacent unchanged nights it was measured on. */
  pairs: number;
  /** Measured on at least NIGHT_NOISE_MIN_PAIRS pairs; else tau is at least NIGHT_NOISE_UNMEASURED. */
  measured: boolean;
}

/**
 * The night-to-night noise from the host-adjusted log changes of adjacent unchanged nights (any
 * rows of the system): their robust sd over √2, a change being the difference of two nights. A
 * step among them moves the median absolute deviation little. With too few pairs, the noise is
 * taken to be at least NIGHT_NOISE_UNMEASURED, so that a first week claims only large steps.
 */
function nightNoise(unchangedLogChanges: readonly number[]): NightNoise {
  const pairs = unchangedLogChanges.length;
  const measured = pairs >= NIGHT_NOISE_MIN_PAIRS;
  const estimate = pairs >= 2 ? (MAD_TO_SD * medianAbsoluteDeviation([...unchangedLogChanges])) / Math.SQRT2 : 0;
  const tau = Math.max(estimate, NIGHT_NOISE_FLOOR, measured ? 0 : NIGHT_NOISE_UNMEASURED);
  return { tau, pairs, measured };
}

/**
 * The p-quantile of χ² with k degrees of freedom, by Wilson and Hilferty's cube-root normal
 * approximation: at the 10 % quantile within 1 % of the table from k = 3, and 7 % below it at k = 2,
 * where a bound from it is wider (test/nights.test.ts).
 */
export function chiSquaredQuantile(p: number, k: number): number {
  const c = 2 / (9 * k);
  return k * Math.max(0, 1 - c + probit(p) * Math.sqrt(c)) ** 3;
}

/**
 * A row's own night noise: an upper bound at NIGHT_NOISE_CONFIDENCE on the sd of its night figure,
 * from its residuals over adjacent unchanged nights. The largest is left out (a step of unknown
 * cause is one such pair, and would hide itself). Undefined from fewer than two residuals left: not
 * known yet.
 */
function rowNoise(residuals: readonly number[], confidence = NIGHT_NOISE_CONFIDENCE): number | undefined {
  const kept = [...residuals].sort((a, b) => Math.abs(a) - Math.abs(b)).slice(0, -1);
  if (kept.length < 2) return undefined;
  // A residual is the difference of two nights: half its square is one night's variance.
  const sumOfSquares = kept.reduce((a, r) => a + (r * r) / 2, 0);
  return Math.sqrt(sumOfSquares / chiSquaredQuantile(1 - confidence, kept.length));
}

interface Step {
  /** exp(mean after − mean before) − 1, in percent. */
  delta_pct: number;
  /** That difference over its standard deviation. */
  z: number;
  /** The smallest step this comparison could call at its level, in percent (at least the threshold). */
  detectable_pct: number;
}

const meanOf = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The step from the nights `before` to the nights `after`, against the night noise and their trials' own. */
function stepBetween(before: readonly NightPoint[], after: readonly NightPoint[], tau: number, zLevel: number, thresholdPct: number): Step {
  const d = meanOf(after.map((p) => p.y)) - meanOf(before.map((p) => p.y));
  const varOf = (ps: readonly NightPoint[]) => (tau * tau) / ps.length + ps.reduce((a, p) => a + p.v, 0) / (ps.length * ps.length);
  const sd = Math.sqrt(varOf(before) + varOf(after));
  const detectable_pct = Math.max(thresholdPct, (Math.exp(zLevel * sd) - 1) * 100);
  return { delta_pct: (Math.exp(d) - 1) * 100, z: sd > 0 ? d / sd : d === 0 ? 0 : Number.POSITIVE_INFINITY, detectable_pct };
}

/** The two-sided normal level of a test at NIGHT_ALPHA shared by `tests` tests (Bonferroni). */
const zLevel = (tests = 1, alpha = NIGHT_ALPHA) => probit(1 - alpha / (2 * Math.max(1, tests)));

export type NightVerdict = 'regression' | 'improvement' | 'within noise' | 'noisy';

/**
 * The verdict of a step at a night where something known changed (the library's build key): a
 * regression or an improvement when it is at least the threshold and stands zLevel() sds out;
 * noisy when the nights' own noise could not have shown a step of NIGHT_NOISY_FACTOR thresholds;
 * else within noise.
 */
function verdictOf(step: Step, thresholdPct = DEFAULT_THRESHOLD_PCT): NightVerdict {
  if (Math.abs(step.z) >= zLevel() && Math.abs(step.delta_pct) >= thresholdPct) return step.delta_pct > 0 ? 'regression' : 'improvement';
  return step.detectable_pct >= NIGHT_NOISY_FACTOR * thresholdPct ? 'noisy' : 'within noise';
}

export interface FoundStep {
  /** The index of the first point of the new level. */
  index: number;
  delta_pct: number;
  z: number;
  /** Known: a cut given by the caller (a change it knows of); else found by the search. */
  known: boolean;
}

interface StepSearchOptions {
  tau: number;
  thresholdPct?: number;
  /** Indices where something known changed (the first point after the change): tested where they are, each at NIGHT_ALPHA. */
  knownCuts?: readonly number[];
}

/**
 * The steps of a series of night points (oldest first), by binary segmentation. Within a segment,
 * every split is a candidate: at a known cut (where something known changed) tested at NIGHT_ALPHA
 * with a night on each side; elsewhere, with NIGHT_MIN_BEFORE nights before and NIGHT_MIN_AFTER
 * after, at NIGHT_ALPHA shared by the segment's other splits (Bonferroni). The candidate that stands
 * furthest beyond its level cuts the segment, and each side is searched again. Then every cut is
 * tested once more on the nights between its neighbours, and dropped when it no longer stands there
 * (a known cut just after a step of unknown cause would otherwise take part of that step as its
 * own). A step smaller than the threshold is not reported.
 */
function nightSteps(points: readonly NightPoint[], opts: StepSearchOptions): FoundStep[] {
  const threshold = opts.thresholdPct ?? DEFAULT_THRESHOLD_PCT;
  const known = new Set((opts.knownCuts ?? []).filter((c) => c > 0 && c < points.length));
  const cuts = new Set<number>();
  const levelAt = (at: number, from: number, to: number): number | undefined => {
    if (known.has(at)) return zLevel();
    if (at - from < NIGHT_MIN_BEFORE || to - at < NIGHT_MIN_AFTER) return undefined;
    return zLevel(Math.max(1, to - from - NIGHT_MIN_BEFORE - NIGHT_MIN_AFTER + 1));
  };
  const stepAt = (at: number, from: number, to: number, level: number) =>
    stepBetween(points.slice(from, at), points.slice(at, to), opts.tau, level, threshold);
  const search = (from: number, to: number) => {
    let best: { at: number; ratio: number } | undefined;
    for (let at = from + 1; at < to; at++) {
      const level = levelAt(at, from, to);
      if (level === undefined) continue;
      const ratio = Math.abs(stepAt(at, from, to, level).z) / level;
      if (!best || ratio > best.ratio) best = { at, ratio };
    }
    if (!best || best.ratio < 1) return;
    cuts.add(best.at);
    search(from, best.at);
    search(best.at, to);
  };
  search(0, points.length);
  // Each cut once more, between its neighbours, until every one left stands there.
  for (let changed = true; changed; ) {
    changed = false;
    const sorted = [...cuts].sort((a, b) => a - b);
    for (const [i, at] of sorted.entries()) {
      const [from, to] = [sorted[i - 1] ?? 0, sorted[i + 1] ?? points.length];
      const level = levelAt(at, from, to);
      if (level === undefined || Math.abs(stepAt(at, from, to, level).z) < level) {
        cuts.delete(at);
        changed = true;
        break;
      }
    }
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  return sorted.flatMap((at, i) => {
    const [from, to] = [sorted[i - 1] ?? 0, sorted[i + 1] ?? points.length];
    const step = stepAt(at, from, to, levelAt(at, from, to)!);
    return Math.abs(step.delta_pct) >= threshold ? [{ index: at, delta_pct: step.delta_pct, z: step.z, known: known.has(at) }] : [];
  });
}

export interface Detectable {
  /** The smallest step of unknown cause the search can find over these nights, once it has lasted NIGHT_MIN_AFTER nights (percent). */
  searched_pct?: number;
  /** Nights the search needs before it can find any step (NIGHT_MIN_BEFORE + NIGHT_MIN_AFTER). */
  searched_needs: number;
  /** The smallest step at a night whose build key changed that the rule calls on that night (percent). */
  known_pct?: number;
}

/** What steps the rule can see over `nights` nights of a series with night noise `tau` (its trials' own noise aside). */
export function detectable(nights: number, tau: number, thresholdPct = DEFAULT_THRESHOLD_PCT): Detectable {
  const flat = (n: number): NightPoint[] => Array.from({ length: n }, () => ({ y: 0, v: 0 }));
  const needs = NIGHT_MIN_BEFORE + NIGHT_MIN_AFTER;
  const splits = nights - needs + 1;
  const searched =
    nights >= needs
      ? stepBetween(flat(nights - NIGHT_MIN_AFTER), flat(NIGHT_MIN_AFTER), tau, zLevel(splits), thresholdPct).detectable_pct
      : undefined;
  const known = nights >= 2 ? stepBetween(flat(nights - 1), flat(1), tau, zLevel(), thresholdPct).detectable_pct : undefined;
  return {
    ...(searched !== undefined ? { searched_pct: searched } : {}),
    searched_needs: needs,
    ...(known !== undefined ? { known_pct: known } : {}),
  };
}

/** One row's nights as the rule reads them: each night's median trial, its trials per call, and what it was built and measured with. */
export interface RowNights {
  key: string;
  nights: ReadonlyArray<
    | { median: number; perCall: readonly number[] /** Build key, harness and machine: a change of any is a known cut. */; build: string }
    | undefined
  >;
}

export interface LastNight {
  verdict: NightVerdict;
  step: Step;
  /** The row's build changed at the last night: only then can its step be a claim. */
  changed: boolean;
}

export interface NightsJudged {
  /** Per night, the host's fitted level against the first night's, in log units; undefined where too few rows kept their build to fit it. */
  hostLevels: Array<number | undefined>;
  /** Per night (index 0 has none), the host's move from the night before in log units, and on how many unchanged rows; undefined: too few. */
  hostShifts: Array<{ shift: number; rows: number } | undefined>;
  noise: NightNoise;
  steps: Map<string, FoundStep[]>;
  /** Per row with figures on the last two nights: the last night against the nights before it since its build last changed. */
  lastNight: Map<string, LastNight>;
}

/**
 * The night rule over a system's rows: each night's host level from every row (hostLevels), the night
 * noise from what the rows that did not change did beyond it, each row's steps and its last night's
 * verdict.
 */
export function judgeNights(rows: readonly RowNights[], thresholdPct = DEFAULT_THRESHOLD_PCT): NightsJudged {
  const count = Math.max(0, ...rows.map((r) => r.nights.length));
  // Units: each row's runs of one build.
  const cells: Array<{ unit: number; night: number; y: number; row: number }> = [];
  let unit = -1;
  for (const [row, r] of rows.entries()) {
    let build: string | undefined;
    for (const [night, f] of r.nights.entries()) {
      if (!f) continue;
      if (f.build !== build) unit++;
      build = f.build;
      cells.push({ unit, night, y: Math.log(f.median), row });
    }
  }
  const host = hostLevels(cells, count);
  const hostShifts: NightsJudged['hostShifts'] = Array.from({ length: count }, (_, t) =>
    t > 0 && host.seen[t] !== undefined && host.seen[t - 1] !== undefined
      ? { shift: host.level[t]! - host.level[t - 1]!, rows: host.crossing[t]! }
      : undefined,
  );
  // What each row did beyond the host between adjacent nights: the system's noise from the unchanged
  // pairs; a row's own from all of its pairs (most rebuilds leave most operations as they were, and
  // rowNoise leaves out the largest move, a step among them).
  // Too few rows to fit any night's level: the figures are taken as measured, and the host's moves
  // are part of the noise.
  const anyFitted = host.seen.some((m) => m !== undefined);
  const known = (t: number) => !anyFitted || host.seen[t] !== undefined;
  const residuals: number[] = [];
  const ownResiduals = rows.map((): number[] => []);
  for (const [row, r] of rows.entries())
    for (let t = 1; t < count; t++) {
      const [a, b] = [r.nights[t - 1], r.nights[t]];
      if (!a || !b || !known(t) || !known(t - 1)) continue;
      const residual = Math.log(b.median / a.median) - (host.level[t]! - host.level[t - 1]!);
      ownResiduals[row]!.push(residual);
      if (a.build === b.build) residuals.push(residual);
    }
  const noise = nightNoise(residuals);
  // A fitted level is as sure as the rows that tie its night to its neighbours.
  const support = host.seen.map((m, t) =>
    m === undefined
      ? undefined
      : Math.max(1, Math.min(...[host.crossing[t], host.crossing[t + 1]].filter((c): c is number => c !== undefined && c > 0), m)),
  );
  const levelVariance = support.map((k) => (k ? (noise.tau * noise.tau) / k : 0));
  const steps = new Map<string, FoundStep[]>();
  const lastNight = new Map<string, LastNight>();
  for (const [r, row] of rows.entries()) {
    // A row noisier than the system's own is held to its own noise; one whose own is not known yet,
    // to at least NIGHT_NOISE_UNMEASURED.
    const tau = Math.max(noise.tau, rowNoise(ownResiduals[r]!) ?? NIGHT_NOISE_UNMEASURED);
    // A night outside the fitted run cannot be set against the nights in it: left out of the judging.
    const present = row.nights.flatMap((f, t) => (f && known(t) ? [{ f, t }] : []));
    const points = present.map(({ f, t }) => {
      const p = nightPoint(f.median, f.perCall);
      return { y: p.y - host.level[t]!, v: p.v + levelVariance[t]! };
    });
    const knownCuts = present.flatMap(({ f }, i) => (i > 0 && f.build !== present[i - 1]!.f.build ? [i] : []));
    steps.set(
      row.key,
      nightSteps(points, { tau, thresholdPct, knownCuts }).map((s) => ({ ...s, index: present[s.index]!.t })),
    );
    const last = present.length - 1;
    if (last >= 1 && present[last]!.t === count - 1 && present[last - 1]!.t === count - 2) {
      const changed = present[last]!.f.build !== present[last - 1]!.f.build;
      const from = changed ? Math.max(0, ...knownCuts.filter((c) => c < last)) : last - 1;
      const step = stepBetween(points.slice(from, last), points.slice(last), tau, zLevel(), thresholdPct);
      const verdict = verdictOf(step, thresholdPct);
      // Unchanged code is never claimed: what moved it was the host or the noise.
      const shown: NightVerdict = changed ? verdict : verdict === 'noisy' ? 'noisy' : 'within noise';
      lastNight.set(row.key, { verdict: shown, step, changed });
    }
  }
  const levels = host.level.map((l, t) => (host.seen[t] !== undefined ? l : undefined));
  return { hostLevels: levels, hostShifts, noise, steps, lastNight };
}
