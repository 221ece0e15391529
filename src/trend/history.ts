import { existsSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { cumulativeStdNormalProbability, median } from 'simple-statistics';
import { compareEvidence, measurementId, rowKey } from '../compare/compare.js';
import {
  detectable,
  judgeNights,
  type Detectable,
  type FoundStep,
  type LastNight,
  type NightNoise,
  type NightVerdict,
  type RowNights,
} from '../compare/nights.js';
import { medianTrial } from '../compare/stats.js';
import type { CompareRow } from '../compare/compareReport.js';
import { DEFAULT_THRESHOLD_PCT, HISTORY_RUNS, NIGHT_CANARY_MARGIN, UNSTABLE_MIN_CALLS } from '../config/defaults.js';
import { trialCanary } from '../measure/canary.js';
import { readCtEvidence } from '../evidence/ctEvidence.js';
import { loadDataset, type Dataset } from '../evidence/dataset.js';
import { evidencePaths, instanceKey } from '../evidence/layout.js';
import { type PairedOperation, readPairedVerdict } from '../evidence/pairedNight.js';
import type { TimingRecord } from '../evidence/fileTypes.js';
import { errorMessage } from '../errors.js';
import { recordSpread } from '../measure/stats.js';

/** One night of the history: one version of the system's evidence folder, named by its run. */
export interface Night {
  /** Its run's start (campaign.json last_run); in older evidence, the folder's last end (ended_utc). ISO. */
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
interface NightFigure {
  cycles: number;
  /** Its trials, cycles per call: what the night rule takes the figure's own uncertainty from. */
  perCall: number[];
  /** The slowest trial per call over the fastest (measure/stats.ts recordSpread). */
  spread?: number;
  build_key?: string;
  machine: string;
  counter_hz?: number;
}

type ChangeCause = 'submission' | 'harness' | 'machine' | 'unknown';

export interface AttributedChange {
  /** The night the new level starts (index into TrendModel.nights). */
  night: number;
  delta_pct: number;
  /** The step over its standard deviation (compare/nights.ts). */
  z: number;
  /** Two-sided p of that z, before any sharing among a search's splits. */
  p_value: number;
  /** Where something known changed (the build key, the harness or the machine); else found by the search. */
  known: boolean;
  /** Every cause found within a night of the step, in the order submission, harness, machine; else unknown. */
  causes: ChangeCause[];
  /** What changed, in words, with the night it changed on when that is not the step's ("#19: build key 3f2a… → 9c1b…"). */
  detail: string;
}

export interface TrendSeries {
  candidate: string;
  label: string;
  operation: string;
  /** One entry per night; undefined where the night has no new figure for the operation (none, failed, or carried over). */
  points: Array<NightFigure | undefined>;
  changes: AttributedChange[];
  /**
   * The nights (index of the later one) where the pull-request rule called a regression or an
   * improvement between adjacent nights of unchanged code (same build key, harness and machine).
   */
  falseCalls: number[];
  /** Those calls as excursions: a call and the opposite call on the next night (a disturbed night and its return) count once. */
  excursions: number;
  /** At least UNSTABLE_MIN_CALLS excursions. */
  unstable: boolean;
}

/** One row of "Since last night": a library rebuilt at the last night whose operation moved beyond the noise. */
export interface NightChange {
  candidate: string;
  label: string;
  operation: string;
  verdict: Extract<NightVerdict, 'regression' | 'improvement'>;
  delta_pct: number;
  /** Against the nights since its build last changed before: how many. */
  against_nights: number;
  causes: ChangeCause[];
  detail: string;
  /** Judged on the night's trial pairs beside last night's library (evidence/pairedNight.ts), not on the nights. */
  paired?: { pairs: number; against_commit: string };
}

export interface TrendModel {
  /** The nights, oldest first; the last is the evidence the pages are rendered from. */
  nights: Night[];
  /** History folders that were left out, and adjacent nights that could not be compared, and why. */
  skipped: Array<{ folder: string; reason: string }>;
  series: TrendSeries[];
  /** The night rule's calls between the last night and the nights before it (compare/nights.ts). */
  sinceLastNight: NightChange[];
  /** Each night's host level against the first night's (percent), fitted on the rows that kept their build; undefined where too few did. */
  hostLevels: Array<number | undefined>;
  /** How far the host moved into the last night, by the rows that did not change (percent), and on how many. */
  hostMove?: { pct: number; rows: number };
  /** The night-to-night noise the rule measured on these nights. */
  noise: NightNoise;
  /** What steps the rule can see over these nights at that noise. */
  detectable: Detectable;
  /** Per night, its median canary over the nights' median (measure/canary.ts), and whether that marks a slow host; undefined where no trial kept one. */
  canary: Array<{ ratio: number; slow: boolean } | undefined>;
}

/** A history folder to read: the system folder of an earlier night, and where readers find it. */
export interface HistoryInput {
  dir: string;
  link?: string;
  /** How the folder is named in a "skipped" line (default: dir). */
  shown?: string;
}

export interface TrendOptions {
  /** Where the current folder's evidence can be read (its night's link). */
  currentLink?: string;
  /** The regression threshold (percent): the rule's, and the smallest step reported (default DEFAULT_THRESHOLD_PCT). */
  thresholdPct?: number;
  /** Search the series for change points (default true; the pull-request check needs only the unstable rows). */
  changePoints?: boolean;
}

/** The current folder cannot stand as the last night: the pages go out without trends, saying why. */
export class TrendsUnavailable extends Error {}

interface LoadedNight {
  night: Night;
  dir: string;
  ds: Dataset;
}

/**
 * The trends of a system: `history` (earlier versions of its folder, oldest first) and the current
 * folder as the last night. A folder that cannot be read, that holds unreadable files or a run that
 * did not end, that repeats the run of another night or is not older than the current one, is listed
 * in `skipped`, never fatal. Throws TrendsUnavailable when the current folder itself cannot be a night.
 */
export function loadTrends(systemDir: string, system: string, history: readonly HistoryInput[], opts: TrendOptions = {}): TrendModel {
  const current = readNight({ dir: systemDir, ...(opts.currentLink ? { link: opts.currentLink } : {}) });
  if (typeof current === 'string') throw new TrendsUnavailable(`${systemDir}: ${current}`);
  const now = Date.parse(current.night.started_utc);
  const skipped: TrendModel['skipped'] = [];
  const loaded: LoadedNight[] = [];
  for (const input of history) {
    const shown = input.shown ?? input.dir;
    const read = readNight(input);
    if (typeof read === 'string') skipped.push({ folder: shown, reason: read });
    else if (Date.parse(read.night.started_utc) >= now)
      skipped.push({
        folder: shown,
        reason:
          read.night.started_utc === current.night.started_utc
            ? `the same run as these pages (${read.night.started_utc})`
            : `not older than these pages' run (${read.night.started_utc} ≥ ${current.night.started_utc})`,
      });
    else if (loaded.some((l) => l.night.started_utc === read.night.started_utc))
      skipped.push({ folder: shown, reason: `the same run as an earlier night (${read.night.started_utc})` });
    else loaded.push(read);
  }
  loaded.sort((a, b) => Date.parse(a.night.started_utc) - Date.parse(b.night.started_utc));
  loaded.push(current);
  const nights = loaded.map((l) => l.night);
  const thresholdPct = opts.thresholdPct ?? DEFAULT_THRESHOLD_PCT;
  const series = seriesOf(loaded);
  const judged = judgeNights(
    series.map((s) => rowNightsOf(s, nights)),
    thresholdPct,
  );
  const paired = pairedVerdicts(loaded, series);
  overrideByPairs(judged, series, nights, paired, thresholdPct);
  if (opts.changePoints !== false)
    for (const s of series) s.changes = attributedChanges(s, nights, judged.steps.get(rowKey(s)) ?? [], judged.lastNight.get(rowKey(s)));
  const verdicts = verdictsBetween(loaded, system, thresholdPct, skipped);
  for (const s of series) {
    s.falseCalls = falseCalls(s, nights, verdicts);
    s.excursions = excursions(s.falseCalls, verdicts, rowKey(s));
    s.unstable = s.excursions >= UNSTABLE_MIN_CALLS;
  }
  const move = judged.hostShifts.at(-1);
  return {
    nights,
    skipped,
    series,
    sinceLastNight: sinceLastNight(series, nights, judged.lastNight, paired),
    hostLevels: judged.hostLevels.map((l) => (l === undefined ? undefined : (Math.exp(l) - 1) * 100)),
    ...(move && nights.length > 1 ? { hostMove: { pct: (Math.exp(move.shift) - 1) * 100, rows: move.rows } } : {}),
    noise: judged.noise,
    detectable: detectable(nights.length, judged.noise.tau, thresholdPct),
    canary: canaryLevels(loaded),
  };
}

/**
 * Each night's canary: the median over the trials it measured (records carried over from the night
 * before, with the same measurement, left out) of each trial's canary, against the median of the
 * nights on the same machine (its ticks are that machine's). The canary is work no library touches:
 * a night whose canary ran slow ran on a slow host, whatever its figures say.
 */
function canaryLevels(nights: readonly LoadedNight[]): TrendModel['canary'] {
  const ids = nights.map(({ ds }) => new Set(ds.records.map(({ record }) => measurementId(record))));
  const levels = nights.map(({ ds }, n) => {
    const fresh = ds.records.filter(({ record }) => Array.isArray(record?.trials) && (n === 0 || !ids[n - 1]!.has(measurementId(record))));
    const present = fresh
      .flatMap(({ record }) => record.trials.map((t) => trialCanary(t.canary_cycles)))
      .filter((c): c is number => c !== undefined);
    const machines = fresh.map(({ record }) => machineOf(record));
    return present.length > 0 ? { level: median(present), machine: mostCommon(machines) } : undefined;
  });
  return levels.map((l) => {
    if (!l) return undefined;
    const typical = median(levels.flatMap((o) => (o && o.machine === l.machine ? [o.level] : [])));
    return { ratio: l.level / typical, slow: l.level >= NIGHT_CANARY_MARGIN * typical };
  });
}

const mostCommon = (xs: readonly string[]): string => {
  const counts = new Map<string, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
};

/** What a series' figure was built and measured with: a change of any is a known cut for the night rule. */
const buildOf = (p: NightFigure, night: Night) => `${p.build_key ?? ''}|${p.machine}|${night.harness_version ?? ''}`;

function rowNightsOf(s: TrendSeries, nights: readonly Night[]): RowNights {
  return {
    key: rowKey(s),
    nights: s.points.map((p, n) => (p ? { median: p.cycles, perCall: p.perCall, build: buildOf(p, nights[n]!) } : undefined)),
  };
}

/** The last night's calls: only a row whose build changed that night can be one, and what changed is said. */
function sinceLastNight(
  series: readonly TrendSeries[],
  nights: readonly Night[],
  last: ReturnType<typeof judgeNights>['lastNight'],
  paired: PairedVerdicts,
): NightChange[] {
  const n = nights.length - 1;
  return series.flatMap((s) => {
    const v = last.get(rowKey(s));
    if (!v || (v.verdict !== 'regression' && v.verdict !== 'improvement')) return [];
    const between = causesBetween(s, n - 1, n, nights);
    const pair = paired.get(rowKey(s))?.get(n);
    // A change the pairs called is the library's own: both sides ran under tonight's harness and compiler.
    const byPairs = pair !== undefined && (pair.verdict === 'regression' || pair.verdict === 'improvement');
    const { detail } = between;
    const causes: ChangeCause[] = byPairs ? ['submission'] : between.causes;
    let against = 0;
    for (let k = n - 1; k >= 0 && s.points[k] && buildOf(s.points[k]!, nights[k]!) === buildOf(s.points[n - 1]!, nights[n - 1]!); k--)
      against++;
    return [
      {
        candidate: s.candidate,
        label: s.label,
        operation: s.operation,
        verdict: v.verdict,
        delta_pct: v.step.delta_pct,
        against_nights: against,
        causes,
        detail,
        ...(byPairs ? { paired: { pairs: pair.pairs, against_commit: pair.against_commit } } : {}),
      },
    ];
  });
}

/** Per row, per night index: the verdict of the night's paired run against the night before's library (evidence/pairedNight.ts). */
type PairedVerdicts = Map<string, Map<number, PairedOperation & { against_commit: string }>>;

function pairedVerdicts(nights: readonly LoadedNight[], series: readonly TrendSeries[]): PairedVerdicts {
  const out: PairedVerdicts = new Map();
  for (const [n, { dir, ds }] of nights.entries()) {
    const started = new Map(ds.records.map(({ record }) => [rowKey(record), record?.started_utc]));
    for (const s of series) {
      const recordStarted = started.get(rowKey(s));
      if (typeof recordStarted !== 'string') continue;
      const verdict = readPairedVerdict(dir, s.candidate, s.label, s.operation, recordStarted);
      if (!verdict) continue;
      const row = out.get(rowKey(s)) ?? new Map();
      row.set(n, verdict);
      out.set(rowKey(s), row);
    }
  }
  return out;
}

/**
 * Where a night measured a rebuilt row beside the night before's library, the pull-request rule's
 * verdict on those pairs is the night's for the row's own code, when its build key changed and the
 * verdict is decisive: a change, or no change where the pairs could have shown one of the
 * threshold. A change the pairs call is the submission's (both sides ran under tonight's harness
 * and compiler). No change drops a step the night rule finds there only when the build key alone
 * changed: a new harness or compiler can move both sides alike, which the pairs cannot see. Two
 * runs hours apart on this kind of host differ by more than the pairs do (statistics.md#nights).
 */
function overrideByPairs(
  judged: ReturnType<typeof judgeNights>,
  series: readonly TrendSeries[],
  nights: readonly Night[],
  paired: PairedVerdicts,
  thresholdPct: number,
): void {
  const changes = new Set(['regression', 'improvement']);
  const decisive = (p: PairedOperation) =>
    changes.has(p.verdict) || (p.verdict === 'unchanged' && p.mde_pct !== undefined && p.mde_pct <= thresholdPct);
  for (const s of series) {
    const row = paired.get(rowKey(s));
    if (!row) continue;
    // The pairs' verdict of night n, where it holds: decisive, on a row whose build key changed
    // that night; no change holds only where nothing else changed with it.
    const holding = (n: number) => {
      const p = row.get(n);
      const [before, after] = [s.points[n - 1], s.points[n]];
      if (!p || !decisive(p) || !before || !after || before.build_key === after.build_key) return undefined;
      if (changes.has(p.verdict)) return p;
      const { causes } = causesBetween(s, n - 1, n, nights);
      return causes.length === 1 && causes[0] === 'submission' ? p : undefined;
    };
    const steps = judged.steps.get(rowKey(s));
    if (steps)
      judged.steps.set(
        rowKey(s),
        steps.filter((step) => {
          const p = holding(step.index);
          return !p || changes.has(p.verdict);
        }),
      );
    const lastIndex = nights.length - 1;
    const pair = holding(lastIndex);
    if (!pair) continue;
    const verdict: NightVerdict = changes.has(pair.verdict) ? (pair.verdict as NightVerdict) : 'within noise';
    const last = judged.lastNight.get(rowKey(s));
    const delta_pct = pair.delta_pct ?? last?.step.delta_pct ?? 0;
    // A night that rebuilt nearly every row has no last-night verdict of the night rule: the pairs give it one.
    const step = last?.step ?? { delta_pct, z: 0, detectable_pct: pair.mde_pct ?? thresholdPct };
    judged.lastNight.set(rowKey(s), { verdict, step: { ...step, delta_pct }, changed: true });
  }
}

function readNight(input: HistoryInput): LoadedNight | string {
  const paths = evidencePaths(input.dir);
  if (!existsSync(input.dir)) return 'no such folder';
  if (!existsSync(paths.campaign)) return 'no campaign.json: not an evidence folder of ngcc-perf';
  let ds: Dataset;
  try {
    ds = loadDataset(input.dir);
  } catch (e) {
    return `unreadable: ${errorMessage(e)}`;
  }
  const inFolder = (p: string) => (isAbsolute(p) ? relative(input.dir, p) : p);
  const unreadable = [
    ...ds.unreadable.map((u) => ({ path: inFolder(u.path), problem: u.problem })),
    ...readCtEvidence(input.dir).unreadable.map((u) => ({ path: inFolder(u.path), problem: u.problem })),
    ...ds.records.filter(({ record }) => !isRecord(record)).map(({ path }) => ({ path: inFolder(path), problem: 'not a timing record' })),
  ];
  if (unreadable.length > 0) return `${unreadable.length} unreadable file(s), the first ${unreadable[0]!.path}`;
  const c = ds.campaign ?? {};
  if (c.ended_utc === null || c.ended_utc === undefined) return 'partial: its run did not end (campaign.json ended_utc is null)';
  const last = (c.last_run ?? {}) as Record<string, unknown>;
  // Older evidence has no last_run; its started_utc is the first run's, which a resumed folder keeps:
  // its latest end tells its versions apart.
  const started = typeof last.started_utc === 'string' ? last.started_utc : c.ended_utc;
  if (typeof started !== 'string' || Number.isNaN(Date.parse(started))) return 'campaign.json has no time for its run';
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

/** A timing record as far as the trends read one: an object naming its candidate, instance and operation. */
const isRecord = (r: unknown): r is TimingRecord =>
  typeof r === 'object' &&
  r !== null &&
  ['candidate', 'label', 'operation'].every((k) => typeof (r as Record<string, unknown>)[k] === 'string');

/** The machine a record was measured on, as the fields that change when the machine does. */
function machineOf(r: TimingRecord): string {
  const e = ((r as unknown as { environment?: Record<string, unknown> }).environment ?? {}) as Record<string, unknown>;
  return ['hostname', 'architecture', 'cpu_model', 'os', 'kernel', 'compiler'].map((k) => `${k}=${String(e[k] ?? '')}`).join('; ');
}

function figureOf(r: TimingRecord, buildKey: string | undefined): NightFigure | undefined {
  if (r.status === 'failed' || !Array.isArray(r.trials) || r.trials.length === 0) return undefined;
  const perCall = r.trials.map((t) => t.cycles / t.measurements);
  if (!perCall.every((x) => Number.isFinite(x) && x > 0)) return undefined;
  const e = (r as unknown as { environment?: { counter_hz?: unknown } }).environment;
  const spread = recordSpread(r);
  return {
    cycles: medianTrial(perCall),
    perCall,
    ...(spread !== undefined ? { spread } : {}),
    ...(buildKey ? { build_key: buildKey } : {}),
    machine: machineOf(r),
    ...(typeof e?.counter_hz === 'number' ? { counter_hz: e.counter_hz } : {}),
  };
}

function seriesOf(nights: LoadedNight[]): TrendSeries[] {
  const byKey = new Map<string, { series: TrendSeries; ids: Array<string | undefined> }>();
  for (const [n, { ds }] of nights.entries())
    for (const { record } of ds.records) {
      if (typeof record !== 'object' || record === null || typeof record.candidate !== 'string' || typeof record.operation !== 'string')
        continue;
      const key = rowKey({ candidate: record.candidate, label: record.label, operation: record.operation });
      let entry = byKey.get(key);
      if (!entry) {
        const points = nights.map(() => undefined);
        const series: TrendSeries = {
          candidate: record.candidate,
          label: record.label,
          operation: record.operation,
          points,
          changes: [],
          falseCalls: [],
          excursions: 0,
          unstable: false,
        };
        entry = { series, ids: nights.map(() => undefined) };
        byKey.set(key, entry);
      }
      // A record carried over from an earlier night (a failed shard left it) is that night's figure, not a new one.
      const id = measurementId(record);
      entry.ids[n] = id;
      if (id !== undefined && entry.ids.slice(0, n).includes(id)) continue;
      const build = ds.build.instances[instanceKey(record.candidate, record.label)];
      const figure = figureOf(record, build?.build_key ?? build?.library_sha256);
      if (figure) entry.series.points[n] = figure;
    }
  return [...byKey.values()].map((e) => e.series).sort((a, b) => (rowKey(a) < rowKey(b) ? -1 : 1));
}

/**
 * The night rule's steps of a series, each with what changed at its night (a step of unknown cause is
 * never the submission's). A step into the last night is the last-night verdict's: kept, with its
 * figures, only where that verdict is a change, so that the pages never say two things of one night.
 */
function attributedChanges(s: TrendSeries, nights: Night[], found: readonly FoundStep[], last: LastNight | undefined): AttributedChange[] {
  const lastIndex = nights.length - 1;
  const called = last && (last.verdict === 'regression' || last.verdict === 'improvement');
  const steps = found.flatMap((step) =>
    step.index !== lastIndex ? [step] : called ? [{ ...step, delta_pct: last.step.delta_pct, z: last.step.z }] : [],
  );
  return steps.flatMap((step) => {
    let before = step.index - 1;
    while (before >= 0 && s.points[before] === undefined) before--;
    if (before < 0) return [];
    const found = causesBetween(s, before, step.index, nights);
    const causes = step.known ? found.causes : found.causes.filter((c) => c !== 'submission');
    return [
      {
        night: step.index,
        delta_pct: step.delta_pct,
        z: step.z,
        p_value: 2 * (1 - cumulativeStdNormalProbability(Math.abs(step.z))),
        known: step.known,
        causes: causes.length > 0 ? causes : ['unknown'],
        detail: found.detail,
      },
    ];
  });
}

/** Relative change of the counter's rate beyond which the machine counts as changed (a probe's own scatter is far below). */
const COUNTER_RATE_CHANGE = 0.005;
const short = (v: string | null | undefined) => (v ? v.slice(0, 12) : 'none');

/** Why a series' figure moved from night `from` to night `to` (both with a figure): what changed between the two. */
function causesBetween(s: TrendSeries, from: number, to: number, nights: readonly Night[]): Pick<AttributedChange, 'causes' | 'detail'> {
  const before = s.points[from]!;
  const after = s.points[to]!;
  const causes: ChangeCause[] = [];
  const details: string[] = [];
  const hb = nights[from]!.harness_version;
  const ha = nights[to]!.harness_version;
  const rb = before.counter_hz;
  const ra = after.counter_hz;
  const rateMoved = rb !== undefined && ra !== undefined && Math.abs(ra / rb - 1) > COUNTER_RATE_CHANGE;
  const machine = before.machine !== after.machine || rateMoved;
  if (before.build_key !== after.build_key) {
    // The build key also covers the harness and the compiler: with either changed, the key's change may be theirs alone.
    if (hb === ha && before.machine === after.machine) causes.push('submission');
    details.push(`build key ${short(before.build_key)} → ${short(after.build_key)}`);
  }
  if (hb !== ha) {
    causes.push('harness');
    details.push(`harness ${short(hb)} → ${short(ha)}`);
  }
  if (machine) {
    causes.push('machine');
    details.push(
      rateMoved && before.machine === after.machine ? `counter rate ${rb} → ${ra} Hz` : 'the machine (host, CPU, OS, kernel or compiler)',
    );
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

/** Calls counted as excursions: a call followed on the next night by the opposite one (there and back) is one. */
function excursions(calls: number[], verdicts: (n: number) => Map<string, CompareRow>, key: string): number {
  let count = 0;
  for (let i = 0; i < calls.length; i++) {
    count++;
    const next = calls[i + 1];
    if (next === calls[i]! + 1 && verdicts(next).get(key)?.verdict !== verdicts(calls[i]!).get(key)?.verdict) i++;
  }
  return count;
}

/**
 * compare's rows between night n−1 (base) and night n (head), with up to HISTORY_RUNS nights before
 * as history, judged once per pair of nights for all rows. A pair compare cannot read is skipped,
 * saying why.
 */
function verdictsBetween(
  nights: LoadedNight[],
  system: string,
  thresholdPct: number,
  skipped: TrendModel['skipped'],
): (n: number) => Map<string, CompareRow> {
  const cache = new Map<number, Map<string, CompareRow>>();
  const dirs = nights.map((l) => l.dir);
  return (n) => {
    let rows = cache.get(n);
    if (!rows) {
      try {
        const report = compareEvidence({
          baseDir: '',
          headDir: '',
          system,
          thresholdPct,
          systemDirs: { base: dirs[n - 1]!, head: dirs[n]!, history: dirs.slice(Math.max(0, n - 1 - HISTORY_RUNS), n - 1).reverse() },
        });
        rows = new Map(report.rows.map((r) => [rowKey(r), r]));
      } catch (e) {
        skipped.push({ folder: `#${n + 1} against #${n}`, reason: `not compared: ${errorMessage(e)}` });
        rows = new Map();
      }
      cache.set(n, rows);
    }
    return rows;
  };
}

/**
 * The rows (rowKey) that are unstable over these nights (system folders, oldest first; the newest
 * readable one stands as the current night): what a pull request's check does not fail on. None from
 * fewer than three nights. `problems` gets the folders left out.
 */
export function unstableRows(nights: readonly string[], system: string, thresholdPct?: number, problems: string[] = []): Set<string> {
  for (let last = nights.length - 1; last >= 2; last--) {
    try {
      const t = loadTrends(
        nights[last]!,
        system,
        nights.slice(0, last).map((dir) => ({ dir })),
        { thresholdPct, changePoints: false },
      );
      problems.push(...t.skipped.map((s) => `${s.folder}: ${s.reason}`));
      return new Set(t.series.filter((s) => s.unstable).map(rowKey));
    } catch (e) {
      problems.push(`${nights[last]}: ${errorMessage(e)}`);
    }
  }
  return new Set();
}
