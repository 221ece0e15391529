import { existsSync, readFileSync } from 'node:fs';
import { median, quantile } from 'simple-statistics';
import { z } from 'zod';
import { evidencePaths } from './layout.js';

/**
 * The pull-request check calibrated on one system (`ngcc-perf calibrate`, docs/cli.md#calibrate):
 * the campaign measured paired against itself, unchanged code on both sides, as a pull request is
 * measured (first rounds, extra rounds for the undecided rows), judged by the same rule. A row called
 * a regression or an improvement is a false alarm; each row's smallest detectable change is what its
 * pairs could have called. Stored as calibration.json beside campaign.json (evidence/layout.ts).
 */
const CALIBRATION_SCHEMA = 'ngcc-perf/pr-calibration/1';

/** compare's verdicts (CompareRow.verdict), and `missing` for a repeat that did not judge the row. */
const VERDICTS = ['regression', 'improvement', 'unchanged', 'inconclusive', 'noisy', 'new', 'removed', 'missing'] as const;
/** At most as many repeats as `calibrate --repeat` allows (MAX_PR_PAIRS). */
const MAX_REPEATS = 100;
const utc = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 time');

const calibrationRowSchema = z.strictObject({
  /** `<candidate>/<label>/<operation>`. */
  row: z.string().min(1),
  /** One verdict per repeat, in order. */
  verdicts: z.array(z.enum(VERDICTS)).max(MAX_REPEATS),
  /** Trial pairs each repeat judged the row on (first and extra rounds). */
  pairs: z.array(z.number().int().min(0)).max(MAX_REPEATS),
  /** Each repeat's smallest change its pairs could call, percent (absent: too few pairs). */
  mde_pct: z.array(z.number().positive().nullable()).max(MAX_REPEATS),
});

const calibrationSchema = z.strictObject({
  schema: z.literal(CALIBRATION_SCHEMA),
  started_utc: utc,
  ended_utc: utc,
  harness_version: z.string(),
  /** The cores the runs could pin trials to (campaign.json `cpus`). */
  cpus: z.array(z.number().int().min(0)),
  threshold_pct: z.number().positive(),
  alpha: z.number().positive().lt(1),
  rounds: z.number().int().min(1),
  extra_rounds: z.number().int().min(0),
  repeats: z.number().int().min(1).max(MAX_REPEATS),
  /** Rows judged, over every repeat. */
  comparisons: z.number().int().min(0),
  false_alarms: z.number().int().min(0),
  /** One-sided 95 % upper bound of the false-alarm rate (Clopper–Pearson). */
  false_alarm_upper_95: z.number().min(0).max(1),
  /** Rows left inconclusive or noisy after the extra rounds. */
  undecided: z.number().int().min(0),
  /** Over every row and repeat with a figure. */
  mde_pct: z.strictObject({ median: z.number(), p90: z.number(), max: z.number() }).nullable(),
  rows: z.array(calibrationRowSchema),
});

export type Calibration = z.infer<typeof calibrationSchema>;
export type CalibrationRow = z.infer<typeof calibrationRowSchema>;

/** What one repeat's comparison said of a row. */
export interface CalibrationVerdict {
  row: string;
  /** compare's verdict (CompareRow.verdict). */
  verdict: Exclude<(typeof VERDICTS)[number], 'missing'>;
  pairs: number;
  mde_pct?: number;
}

const ALARMS = new Set(['regression', 'improvement']);
const UNDECIDED = new Set(['inconclusive', 'noisy']);

/**
 * P(X ≤ k) for X ~ Binomial(n, p), its terms summed in log space: (1 − p)^n alone underflows to 0
 * once n·ln(1 − p) < −745 (thousands of comparisons at a rate of a few per cent).
 */
function binomialCdf(k: number, n: number, p: number): number {
  if (p <= 0) return 1;
  if (p >= 1) return k >= n ? 1 : 0;
  const logs: number[] = [];
  let log = n * Math.log1p(-p);
  logs.push(log);
  for (let i = 1; i <= k; i++) {
    log += Math.log((n - i + 1) / i) + Math.log(p) - Math.log1p(-p);
    logs.push(log);
  }
  const top = Math.max(...logs);
  return Math.exp(top) * logs.reduce((sum, l) => sum + Math.exp(l - top), 0);
}

/**
 * The one-sided 95 % Clopper–Pearson upper bound of a rate seen `k` times in `n`: the p at which
 * seeing k or fewer has probability 0.05. 0 of 48 still allows 6 %.
 */
export function rateUpperBound95(k: number, n: number): number {
  if (n === 0) return 1;
  if (k >= n) return 1;
  let [lo, hi] = [k / n, 1];
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (binomialCdf(k, n, mid) > 0.05) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The calibration's figures from every repeat's verdicts (`repeats[i]` = repeat i's rows). */
export function summarizeCalibration(
  repeats: readonly (readonly CalibrationVerdict[])[],
  run: Omit<Calibration, 'schema' | 'repeats' | 'comparisons' | 'false_alarms' | 'false_alarm_upper_95' | 'undecided' | 'mde_pct' | 'rows'>,
): Calibration {
  const byRow = new Map<string, CalibrationRow>();
  repeats.forEach((rows, i) => {
    for (const r of rows) {
      const row = byRow.get(r.row) ?? { row: r.row, verdicts: [], pairs: [], mde_pct: [] };
      // A row a repeat did not judge keeps its place in the other repeats' order.
      while (row.verdicts.length < i) {
        row.verdicts.push('missing');
        row.pairs.push(0);
        row.mde_pct.push(null);
      }
      row.verdicts.push(r.verdict);
      row.pairs.push(r.pairs);
      row.mde_pct.push(r.mde_pct ?? null);
      byRow.set(r.row, row);
    }
  });
  for (const row of byRow.values())
    while (row.verdicts.length < repeats.length) {
      row.verdicts.push('missing');
      row.pairs.push(0);
      row.mde_pct.push(null);
    }
  const rows = [...byRow.values()].sort((a, b) => a.row.localeCompare(b.row));
  const all = rows.flatMap((r) => r.verdicts).filter((v) => v !== 'missing');
  const falseAlarms = all.filter((v) => ALARMS.has(v)).length;
  const mdes = rows.flatMap((r) => r.mde_pct).filter((m): m is number => m !== null);
  return {
    schema: CALIBRATION_SCHEMA,
    ...run,
    repeats: repeats.length,
    comparisons: all.length,
    false_alarms: falseAlarms,
    false_alarm_upper_95: rateUpperBound95(falseAlarms, all.length),
    undecided: all.filter((v) => UNDECIDED.has(v)).length,
    mde_pct: mdes.length > 0 ? { median: median(mdes), p90: quantile(mdes, 0.9), max: Math.max(...mdes) } : null,
    rows,
  };
}

/** The row's typical smallest detectable change over its repeats (their median), if any repeat had one. */
export function rowMdePct(row: CalibrationRow): number | undefined {
  const m = row.mde_pct.filter((x): x is number => x !== null);
  return m.length > 0 ? median(m) : undefined;
}

/**
 * The system's calibration.json: absent (never calibrated), read, or why it cannot be read, with
 * the field that is wrong.
 */
export function readCalibration(systemDir: string): { calibration?: Calibration; problem?: string } {
  const path = evidencePaths(systemDir).calibration;
  if (!existsSync(path)) return {};
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return { problem: `not JSON: ${(e as Error).message}` };
  }
  const parsed = calibrationSchema.safeParse(json);
  if (parsed.success) return { calibration: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { problem: `${issue.path.join('.') || '(top level)'}: ${issue.message}` };
}

/**
 * What `validate` finds wrong with calibration.json: an unreadable field, or a figure its rows do
 * not give (each recomputed from the rows' verdicts and detectable changes).
 */
export function calibrationProblems(systemDir: string): string[] {
  const { calibration: c, problem } = readCalibration(systemDir);
  const file = 'calibration.json';
  if (problem) return [`${file}: ${problem}`];
  if (!c) return [];
  const problems: string[] = [];
  for (const r of c.rows)
    if (r.verdicts.length !== c.repeats || r.pairs.length !== c.repeats || r.mde_pct.length !== c.repeats)
      problems.push(
        `${file}: rows["${r.row}"]: ${c.repeats} repeats, but ${r.verdicts.length} verdicts, ${r.pairs.length} pair counts, ${r.mde_pct.length} detectable changes`,
      );
  const seen = new Set<string>();
  for (const r of c.rows) {
    if (seen.has(r.row)) problems.push(`${file}: rows["${r.row}"]: listed twice`);
    seen.add(r.row);
    // A paired run takes up to twice its planned rounds when trials stay disturbed (campaign/measure.ts).
    const most = 2 * (c.rounds + c.extra_rounds);
    r.verdicts.forEach((v, i) => {
      if (v === 'missing' && (r.pairs[i] !== 0 || r.mde_pct[i] !== null))
        problems.push(`${file}: rows["${r.row}"]: repeat ${i + 1} is missing, but has ${r.pairs[i]} pairs`);
      if (r.pairs[i]! > most) problems.push(`${file}: rows["${r.row}"]: repeat ${i + 1} has ${r.pairs[i]} pairs, more than ${most}`);
    });
  }
  if (problems.length > 0) return problems;
  const repeats = Array.from({ length: c.repeats }, (_, i) =>
    c.rows
      .filter((r) => r.verdicts[i] !== 'missing')
      .map((r) => ({
        row: r.row,
        verdict: r.verdicts[i] as CalibrationVerdict['verdict'],
        pairs: r.pairs[i]!,
        ...(r.mde_pct[i] != null ? { mde_pct: r.mde_pct[i]! } : {}),
      })),
  );
  const again = summarizeCalibration(repeats, c);
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  for (const field of ['comparisons', 'false_alarms', 'false_alarm_upper_95', 'undecided'] as const)
    if (!close(c[field], again[field])) problems.push(`${file}: ${field} is ${c[field]}, its rows give ${again[field]}`);
  for (const stat of ['median', 'p90', 'max'] as const) {
    const [said, given] = [c.mde_pct?.[stat], again.mde_pct?.[stat]];
    if (said === undefined || given === undefined ? said !== given : !close(said, given))
      problems.push(`${file}: mde_pct.${stat} is ${said ?? 'absent'}, its rows give ${given ?? 'none'}`);
  }
  return problems;
}
