import { DEFAULT_THRESHOLD_PCT } from '../config/defaults.js';
import { loadTrends } from './history.js';

/**
 * The night rule calibrated on an A/A history (docs/statistics.md#nights): nights of unchanged code
 * on one host, judged as each came, as `calibrate` judges the pull-request check on A/A pairs. Every
 * claim such a history gets is false.
 */
export interface NightCalibration {
  nights: number;
  /** Rows judged into some night: a figure on that night and the night before. */
  operation_nights: number;
  /** What "Since last night" claimed on each night as it came. */
  claims: Array<{ night: number; row: string; verdict: string; delta_pct: number }>;
  /** The change points the whole history shows. */
  change_points: Array<{ night: number; row: string; delta_pct: number; causes: string[] }>;
  /** The night noise measured over the whole history (percent). */
  noise_pct: number;
  /** Per night, the host's fitted level against the first (percent). */
  host_levels: Array<number | null>;
}

/** Judges `dirs` (one system's folders of successive nights, oldest first) as each night came. */
export function calibrateNights(dirs: readonly string[], system: string, thresholdPct = DEFAULT_THRESHOLD_PCT): NightCalibration {
  const claims: NightCalibration['claims'] = [];
  let operationNights = 0;
  for (let n = 2; n <= dirs.length; n++) {
    const t = loadTrends(
      dirs[n - 1]!,
      system,
      dirs.slice(0, n - 1).map((dir) => ({ dir })),
      { thresholdPct },
    );
    const last = t.nights.length - 1;
    operationNights += t.series.filter((s) => s.points[last] && s.points[last - 1]).length;
    for (const c of t.sinceLastNight)
      claims.push({ night: n, row: `${c.candidate}/${c.label}/${c.operation}`, verdict: c.verdict, delta_pct: c.delta_pct });
  }
  const all = loadTrends(
    dirs.at(-1)!,
    system,
    dirs.slice(0, -1).map((dir) => ({ dir })),
    { thresholdPct },
  );
  return {
    nights: all.nights.length,
    operation_nights: operationNights,
    claims,
    change_points: all.series.flatMap((s) =>
      s.changes.map((c) => ({
        night: c.night + 1,
        row: `${s.candidate}/${s.label}/${s.operation}`,
        delta_pct: c.delta_pct,
        causes: c.causes,
      })),
    ),
    noise_pct: all.noise.tau * 100,
    host_levels: all.hostLevels.map((l) => (l === undefined ? null : l)),
  };
}
