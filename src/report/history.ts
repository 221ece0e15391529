import { existsSync } from 'node:fs';
import { changePoints } from '../compare/changePoints.js';
import { compareEvidence, rowKey } from '../compare/compare.js';
import { medianTrial } from '../compare/stats.js';
import type { CompareRow } from '../compare/types.js';
import { HISTORY_RUNS, UNSTABLE_MIN_CALLS } from '../config/defaults.js';
import { loadDataset, type Dataset } from '../evidence/dataset.js';
import { evidencePaths, instanceKey } from '../evidence/layout.js';
import type { TimingRecord } from '../evidence/types.js';
import { errorMessage } from '../errors.js';
import { recordSpread } from './spread.js';

/** One night of the history: one version of the system's evidence folder, named by its run. */
export interface Night {
  /** Its start (campaign.json last_run, else started_utc), ISO. */
  started_utc: string;
  /** The campaign repository's commit the run measured (null: not a git checkout; absent: older evidence). */
  commit?: string | null;
  /** The campaign folder had uncommitted changes. */
  changed?: boolean;
  harness_version?: string;
  /** Where this evidence version can be read (a URL, or a path relative to the pages folder). */
  link?: string;
}

/** One operation's figure of one night: the median trial, cycles per call, and what it was measured with. */
export interface NightFigure {
  cycles: number;
  /** The slowest trial per call over the fastest (report/spread.ts). */
  spread?: number;
  build_key?: string;
  machine: string;
  counter_hz?: number;
}

export type ChangeCause = 'submission' | 'harness' | 'machine' | 'unknown';

export interface AttributedChange {
  /** The night the new level starts (index into TrendModel.nights). */
  night: number;
  delta_pct: number;
  p_value: number;
  /** Every cause that holds, in the order submission, harness, machine; else unknown. */
  causes: ChangeCause[];
  /** What changed that night, in words ("build key 3f2a… → 9c1b…"). */
  detail: string;
}

export interface TrendSeries {
  candidate: string;
  label: string;
  operation: string;
  /** One entry per night; undefined where the night has no figure for the operation. */
  points: Array<NightFigure | undefined>;
  changes: AttributedChange[];
  /**
   * Adjacent nights of unchanged code (same build key, harness and machine) between which the
   * pull-request rule called a regression or an improvement: with UNSTABLE_MIN_CALLS of them the row is unstable.
   */
  falseCalls: number[];
  unstable: boolean;
}

export interface TrendModel {
  /** The nights, oldest first; the last is the evidence the pages are rendered from. */
  nights: Night[];
  /** History folders that were left out, and why. */
  skipped: Array<{ folder: string; reason: string }>;
  series: TrendSeries[];
  /** What the pull-request rule calls a change between the last two nights (regressions and improvements). */
  sinceLastNight: CompareRow[];
}

/** A history folder to read: the system folder of an earlier night, and where readers find it. */
export interface HistoryInput {
  dir: string;
  link?: string;
  /** How the folder is named in a "skipped" line (default: dir). */
  shown?: string;
}

interface LoadedNight {
  night: Night;
  dir: string;
  ds: Dataset;
}

/**
 * The trends of a system: `history` (earlier versions of its folder, oldest first) and the current
 * folder as the last night. A folder that cannot be read, that holds unreadable files or a run that
 * did not end, or that repeats the run of the night before, is listed in `skipped`, never fatal.
 */
export function loadTrends(systemDir: string, system: string, history: readonly HistoryInput[], currentLink?: string): TrendModel {
  const skipped: TrendModel['skipped'] = [];
  const loaded: LoadedNight[] = [];
  const inputs = [...history, { dir: systemDir, link: currentLink, shown: systemDir }];
  for (const [i, input] of inputs.entries()) {
    const shown = input.shown ?? input.dir;
    const read = readNight(input);
    if (typeof read === 'string') {
      if (i === inputs.length - 1) throw new Error(`${shown}: ${read}`);
      skipped.push({ folder: shown, reason: read });
      continue;
    }
    const same = loaded.find((l) => l.night.started_utc === read.night.started_utc);
    if (same) {
      // The current folder always stands: an earlier copy of the same run gives way to it.
      if (i === inputs.length - 1) {
        loaded.splice(loaded.indexOf(same), 1);
        skipped.push({ folder: same.night.link ?? same.dir, reason: `the same run as ${shown} (started ${read.night.started_utc})` });
      } else {
        skipped.push({ folder: shown, reason: `the same run as an earlier night (started ${read.night.started_utc})` });
        continue;
      }
    }
    loaded.push(read);
  }
  loaded.sort((a, b) => Date.parse(a.night.started_utc) - Date.parse(b.night.started_utc));
  const series = seriesOf(loaded);
  const dirs = loaded.map((l) => l.dir);
  const nights = loaded.map((l) => l.night);
  const verdicts = verdictsBetween(dirs, system);
  for (const s of series) {
    s.falseCalls = falseCalls(s, nights, verdicts);
    s.unstable = s.falseCalls.length >= UNSTABLE_MIN_CALLS;
  }
  const last = dirs.length > 1 ? [...verdicts(dirs.length - 1).values()] : [];
  return { nights, skipped, series, sinceLastNight: last.filter((r) => r.verdict === 'regression' || r.verdict === 'improvement') };
}

function readNight(input: HistoryInput): LoadedNight | string {
  const paths = evidencePaths(input.dir);
  if (!existsSync(paths.campaign)) return 'no campaign.json: not an evidence folder of ngcc-perf';
  let ds: Dataset;
  try {
    ds = loadDataset(input.dir);
  } catch (e) {
    return `unreadable: ${errorMessage(e)}`;
  }
  if (ds.unreadable.length > 0)
    return `${ds.unreadable.length} unreadable file(s), the first ${ds.unreadable[0]!.path.slice(input.dir.length + 1)}: ${ds.unreadable[0]!.problem}`;
  const c = ds.campaign ?? {};
  if (c.ended_utc === null || c.ended_utc === undefined) return 'partial: its run did not end (campaign.json ended_utc is null)';
  const last = (c.last_run ?? {}) as Record<string, unknown>;
  const started = typeof last.started_utc === 'string' ? last.started_utc : c.started_utc;
  if (typeof started !== 'string' || Number.isNaN(Date.parse(started))) return 'campaign.json has no start time';
  const harness = typeof last.harness_version === 'string' ? last.harness_version : c.harness_version;
  const night: Night = {
    started_utc: started,
    ...('campaign_commit' in last ? { commit: (last.campaign_commit as string | null) ?? null } : {}),
    ...(last.campaign_changed === true ? { changed: true } : {}),
    ...(typeof harness === 'string' ? { harness_version: harness } : {}),
    ...(input.link ? { link: input.link } : {}),
  };
  return { night, dir: input.dir, ds };
}

/** The machine a record was measured on, as the fields that change when the machine does. */
function machineOf(r: TimingRecord): string {
  const e = ((r as unknown as { environment?: Record<string, unknown> }).environment ?? {}) as Record<string, unknown>;
  return ['hostname', 'architecture', 'cpu_model', 'os', 'kernel', 'compiler'].map((k) => `${k}=${String(e[k] ?? '')}`).join('; ');
}

function figureOf(r: TimingRecord, buildKey: string | undefined): NightFigure | undefined {
  if (r.status === 'failed' || !r.trials?.length) return undefined;
  const e = (r as unknown as { environment?: { counter_hz?: unknown } }).environment;
  const spread = recordSpread(r);
  return {
    cycles: medianTrial(r.trials.map((t) => t.cycles / t.measurements)),
    ...(spread !== undefined ? { spread } : {}),
    ...(buildKey ? { build_key: buildKey } : {}),
    machine: machineOf(r),
    ...(typeof e?.counter_hz === 'number' ? { counter_hz: e.counter_hz } : {}),
  };
}

function seriesOf(nights: LoadedNight[]): TrendSeries[] {
  const byKey = new Map<string, TrendSeries>();
  for (const [n, { ds }] of nights.entries())
    for (const { record } of ds.records) {
      const operation = record.operation;
      const key = rowKey({ candidate: record.candidate, label: record.label, operation });
      let s = byKey.get(key);
      if (!s) {
        s = {
          candidate: record.candidate,
          label: record.label,
          operation,
          points: nights.map(() => undefined),
          changes: [],
          falseCalls: [],
          unstable: false,
        };
        byKey.set(key, s);
      }
      const entry = ds.build.instances[instanceKey(record.candidate, record.label)];
      const figure = figureOf(record, entry?.build_key ?? entry?.library_sha256);
      if (figure) s.points[n] = figure;
    }
  const series = [...byKey.values()].sort((a, b) => (rowKey(a) < rowKey(b) ? -1 : 1));
  for (const s of series)
    s.changes = attributedChanges(
      s,
      nights.map((l) => l.night),
    );
  return series;
}

function attributedChanges(s: TrendSeries, nights: Night[]): AttributedChange[] {
  const present = s.points.flatMap((p, night) => (p ? [{ p, night }] : []));
  return changePoints(present.map((x) => x.p.cycles)).map((c) => {
    const before = present[c.index - 1]!.night;
    const after = present[c.index]!.night;
    return { night: after, delta_pct: c.delta_pct, p_value: c.p_value, ...causesBetween(s, before, after, nights) };
  });
}

/** Relative change of the counter's rate beyond which the machine counts as changed (a probe's own scatter is far below). */
const COUNTER_RATE_CHANGE = 0.005;
const short = (v: string | null | undefined) => (v ? v.slice(0, 12) : 'none');

/** Why a series' figure moved from night `from` to night `to` (both with a figure): what changed between the two. */
export function causesBetween(
  s: TrendSeries,
  from: number,
  to: number,
  nights: readonly Night[],
): Pick<AttributedChange, 'causes' | 'detail'> {
  const before = { p: s.points[from]!, night: from };
  const after = { p: s.points[to]!, night: to };
  const causes: ChangeCause[] = [];
  const details: string[] = [];
  if (before.p.build_key !== after.p.build_key) {
    causes.push('submission');
    details.push(`build key ${short(before.p.build_key)} → ${short(after.p.build_key)}`);
  }
  const hb = nights[before.night]!.harness_version;
  const ha = nights[after.night]!.harness_version;
  if (hb !== ha) {
    causes.push('harness');
    details.push(`harness ${short(hb)} → ${short(ha)}`);
  }
  const rb = before.p.counter_hz;
  const ra = after.p.counter_hz;
  const rateMoved = rb !== undefined && ra !== undefined && Math.abs(ra / rb - 1) > COUNTER_RATE_CHANGE;
  if (before.p.machine !== after.p.machine || rateMoved) {
    causes.push('machine');
    details.push(rateMoved ? `counter rate ${rb} → ${ra} Hz` : 'the machine (host, CPU, OS, kernel or compiler)');
  }
  if (causes.length === 0) causes.push('unknown');
  return { causes, detail: details.join('; ') };
}

/** Nothing but the night changed: the same build, harness and machine. */
function unchanged(a: NightFigure | undefined, b: NightFigure | undefined, na: Night, nb: Night): boolean {
  return !!a && !!b && a.build_key === b.build_key && a.machine === b.machine && na.harness_version === nb.harness_version;
}

/**
 * The nights (index of the later one) where the pull-request rule, applied to two adjacent nights of
 * unchanged code with the nights before as its history, called a regression or an improvement.
 */
function falseCalls(s: TrendSeries, nights: Night[], verdicts: (n: number) => Map<string, CompareRow>): number[] {
  const calls: number[] = [];
  for (let n = 1; n < nights.length; n++) {
    if (!unchanged(s.points[n - 1], s.points[n], nights[n - 1]!, nights[n]!)) continue;
    const row = verdicts(n).get(rowKey(s));
    if (row && (row.verdict === 'regression' || row.verdict === 'improvement')) calls.push(n);
  }
  return calls;
}

/**
 * compare's rows between night n−1 (base) and night n (head), with the nights before as history,
 * judged once per pair of nights for all rows (compare reads both folders and tests every row).
 */
function verdictsBetween(dirs: string[], system: string): (n: number) => Map<string, CompareRow> {
  const cache = new Map<number, Map<string, CompareRow>>();
  return (n) => {
    let rows = cache.get(n);
    if (!rows) {
      const report = compareEvidence({
        baseDir: '',
        headDir: '',
        system,
        systemDirs: { base: dirs[n - 1]!, head: dirs[n]!, history: dirs.slice(Math.max(0, n - 1 - HISTORY_RUNS), n - 1).reverse() },
      });
      rows = new Map(report.rows.map((r) => [rowKey(r), r]));
      cache.set(n, rows);
    }
    return rows;
  };
}

/**
 * The rows (rowKey) that are unstable over these nights (system folders, oldest first; the last
 * stands as the current night): what a pull request's check does not fail on. None from fewer than
 * three nights.
 */
export function unstableRows(nights: readonly string[], system: string): Set<string> {
  // The newest readable night stands as the current one: an unreadable newest version is skipped like any other.
  for (let last = nights.length - 1; last >= 2; last--) {
    try {
      const t = loadTrends(
        nights[last]!,
        system,
        nights.slice(0, last).map((dir) => ({ dir })),
      );
      return new Set(t.series.filter((s) => s.unstable).map(rowKey));
    } catch {
      /* not a readable night: try the one before */
    }
  }
  return new Set();
}
