import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readSizeCatalog } from '../catalogs/catalogs.js';
import { sizeAudit, statedSizes, type AuditedInstance } from '../catalogs/sizeAudit.js';
import { loadCampaign } from '../config/campaign.js';
import { instanceStatus, measurable } from '../kat/status.js';
import { heldToShown } from '../kat/unseen.js';
import { DEFAULT_ALPHA, DEFAULT_THRESHOLD_PCT, HISTORY_RUNS, HISTORY_SIGMAS, RSS_NOISE_BYTES } from '../config/defaults.js';
import { type CtEvidence, readCtEvidence } from '../evidence/ctEvidence.js';
import { loadDataset, type Dataset } from '../evidence/dataset.js';
import { validateDataset } from '../evidence/validate.js';
import { partialStop, refusedTrials } from '../measure/refusals.js';
import { instanceKey, parseInstanceKey } from '../evidence/layout.js';
import type { BuildEntry, TimingRecord } from '../evidence/fileTypes.js';
import { roundsOf } from '../evidence/record.js';
import { InputError } from '../errors.js';
import { deriveStatistics, NOISY_TRIAL_SPREAD, trialSpread } from '../measure/stats.js';
import {
  DISTURBED_OFF_CPU_SHARE,
  disturbedTrials,
  historyCv,
  isNoisySpread,
  medianTrial,
  onCpuShare,
  pairedMdePct,
  rankPValue,
  separated,
  sideSpread,
  signedRankPValue,
} from './stats.js';
import { median, quantile } from 'simple-statistics';
import { plural, pyFixed, pyGeneral } from '../text/format.js';
import { ctBuildFailures, newCtFindings } from './ctChanges.js';
import type { CompareReport, CompareRow, KatChange, SideStats, ValueChange } from './compareReport.js';

export interface CompareOptions {
  baseDir: string;
  headDir: string;
  system: string;
  /** Minimum effect in percent of the base mean (default DEFAULT_THRESHOLD_PCT). */
  thresholdPct?: number;
  /** Significance level of the trial-level test (default DEFAULT_ALPHA). */
  alpha?: number;
  /** Earlier evidence trees (DATA_DIR) of nightly runs on this system: their run-to-run spread. */
  history?: string[];
  /** Campaign folder for the size catalog (external_sizes.csv). */
  campaignDir?: string;
  /** A peak-RSS change below this many bytes is page-level noise (default RSS_NOISE_BYTES). */
  rssNoiseBytes?: number;
  /**
   * The system folders themselves, when they are not DATA_DIR/system (the trend pages' nights):
   * they take the place of baseDir, headDir and history.
   */
  systemDirs?: { base: string; head: string; history: string[] };
  /**
   * Rows (rowKey) the nightly trends mark unstable (trend/history.ts): their regressions are shown
   * but counted as none, so they fail no check.
   */
  unstable?: ReadonlySet<string>;
}

/** The span of a record's trial processes' starts (ms), or undefined without them. */
function startSpan(r: TimingRecord): [number, number] | undefined {
  const starts = (Array.isArray(r.processes) ? r.processes : [])
    .map((p) => Date.parse((p as { started_utc?: string }).started_utc ?? ''))
    .filter((t) => Number.isFinite(t));
  return starts.length > 0 ? [Math.min(...starts), Math.max(...starts)] : undefined;
}

/**
 * Two records a paired run measured together: both marked paired, their trials run in one span.
 * Two nights' records of a paired row are each paired with their own base, never with each other.
 */
export function measuredTogether(b: TimingRecord, h: TimingRecord): boolean {
  if (b.paired !== true || h.paired !== true) return false;
  const [sb, sh] = [startSpan(b), startSpan(h)];
  // Records without their processes' starts (older evidence) are taken at their word.
  return sb === undefined || sh === undefined || (sb[0] <= sh[1] && sh[0] <= sb[1]);
}

function side(r: TimingRecord, entry: BuildEntry | undefined, paired: boolean): SideStats | undefined {
  if (!r.trials?.length || r.mean_cycles === undefined) return undefined;
  const trial_cycles = r.trials.map((t) => t.cycles / t.measurements);
  const spread = trialSpread(deriveStatistics(r.trials), r.trials.length);
  const onCpu = r.trials.map(onCpuShare);
  const refused = refusedTrials(r.processes).length;
  return {
    mean_cycles: r.mean_cycles,
    trial_cycles,
    median_cycles: medianTrial(trial_cycles),
    ...(spread !== undefined ? { trial_spread: spread } : {}),
    ...(onCpu.every((x) => x !== undefined) ? { trial_on_cpu: onCpu as number[] } : {}),
    ...(paired ? { paired: true } : {}),
    ...(paired ? { trial_rounds: roundsOf(r) } : {}),
    peak_rss_bytes: typeof r.peak_rss_bytes === 'number' ? r.peak_rss_bytes : undefined,
    elf_load_bytes: entry?.elf_load_bytes,
    ...(refused > 0 ? { refused_trials: refused } : {}),
    ...(partialStop(r) !== undefined ? { partial: true } : {}),
  };
}

/**
 * Which measurement a record holds: its start and its library. The same record copied into several
 * commits of the data branch, or carried into head from the baseline, is one measurement. Records
 * without a start time (older evidence) cannot be told apart and count as distinct.
 */
export function measurementId(r: TimingRecord): string | undefined {
  return typeof r.started_utc === 'string' ? `${r.started_utc} ${r.library_sha256 ?? ''}` : undefined;
}

/** One operation of one instance: `<candidate>/<label>/<operation>`. */
const operationKey = (candidate: string, label: string, operation: string) => `${instanceKey(candidate, label)}/${operation}`;
const recordKey = (r: TimingRecord) => operationKey(r.candidate, r.label, r.operation);
/** A row's operation key, as CampaignOptions.extraRounds names it. */
export const rowKey = (r: Pick<CompareRow, 'candidate' | 'label' | 'operation'>) => operationKey(r.candidate, r.label, r.operation);
/** The trial pairs a paired row had, disturbed ones included. */
export const pairCount = (r: Pick<CompareRow, 'base' | 'head'>) =>
  Math.min(r.base?.trial_cycles.length ?? 0, r.head?.trial_cycles.length ?? 0);

function recordsByKey(ds: Dataset): Map<string, TimingRecord> {
  return new Map(ds.records.map(({ record }) => [recordKey(record), record]));
}

function loadSystem(dir: string, system: string, role: string): Dataset {
  if (!existsSync(dir)) throw new InputError(dir, '', `no ${role} evidence for system ${system}`);
  return readable(loadDataset(dir), role);
}

/**
 * A file that cannot be parsed is left out of a dataset, and a record left out of head would read
 * as "removed" (of base, as "new"): a verdict about evidence nobody could read. So it is an error.
 */
function readable(ds: Dataset, role: string): Dataset {
  refuseUnreadable(ds.unreadable, role);
  return ds;
}

function refuseUnreadable(unreadable: Dataset['unreadable'], role: string): void {
  const [first, ...more] = unreadable;
  if (first)
    throw new InputError(
      relative(process.cwd(), first.path) || first.path,
      '',
      `unreadable ${role} evidence (${first.problem})${more.length > 0 ? ` and ${more.length} more unreadable file(s)` : ''}; run ngcc-perf validate on it`,
    );
}

/** A side's constant-time checks; an unreadable one would hide its sites, so it is an error too. */
function readableCt(systemDir: string, role: string): CtEvidence[] {
  const { files, unreadable } = readCtEvidence(systemDir);
  refuseUnreadable(unreadable, role);
  return files;
}

/** Every instance of a dataset with the sizes its evidence states, as the size audit takes them. */
function auditedInstances(ds: Dataset): AuditedInstance[] {
  type Evidence = { candidate: string; label: string; build?: BuildEntry; records: Map<string, TimingRecord> };
  const instances = new Map<string, Evidence>();
  const of = (candidate: string, label: string): Evidence => {
    const key = instanceKey(candidate, label);
    const known = instances.get(key) ?? { candidate, label, records: new Map() };
    instances.set(key, known);
    return known;
  };
  for (const [key, e] of Object.entries(ds.build.instances)) {
    const fromKey = parseInstanceKey(key);
    of(e.candidate ?? fromKey.candidate, e.label ?? fromKey.label).build = e;
  }
  for (const { record } of ds.records) of(record.candidate, record.label).records.set(record.operation, record);
  return [...instances.values()].map((i) => ({ candidate: i.candidate, label: i.label, sizes: statedSizes(i.records.values(), i.build) }));
}

/** Δ of a row: the change of the median trial, in percent of the base's. */
function medianDeltaPct(base: SideStats, head: SideStats): number {
  const b = medianTrial(base.trial_cycles);
  return ((medianTrial(head.trial_cycles) - b) / b) * 100;
}

const times = (x: number | undefined): string => (x === undefined ? 'one trial' : `${pyFixed(x, 2)}×`);

/** How a side's noise reads in a reason: its spread, and its trials off the CPU when there are any. */
function sideNoise(s: SideStats): string {
  const d = disturbedTrials(s);
  return `${times(sideSpread(s))}${d > 0 ? ` (${d} of ${s.trial_cycles.length} trials off the CPU > ${DISTURBED_OFF_CPU_SHARE * 100}% of their time)` : ''}`;
}

/** What a verdict is decided on: the effect, its significance, and the noise it must exceed. */
interface VerdictEvidence {
  delta_pct: number;
  p_value: number;
  noisy: boolean;
  /** The noise, as a reason reads it. */
  noise: string;
  /** Why noise stops the verdict (appended to `noise`). */
  noisyWhy: string;
  /** The effect is larger than all of the noise. */
  separated: boolean;
  /** Why a noisy row still has a verdict (when `separated`). */
  separatedWhy: string;
  /** `paired: true` when the figures are of trial pairs. */
  extra: Partial<CompareRow>;
}

/**
 * Unpaired sides: the median of the per-trial means (effect and threshold) and a rank-sum
 * permutation test (significance). A side is noisy when its trials spread NOISY_TRIAL_SPREAD or
 * more, or when one of them was off the CPU more than DISTURBED_OFF_CPU_SHARE of its window;
 * the effect exceeds the noise when head's worst-case range does not overlap base's (`separated`).
 */
function unpairedEvidence(base: SideStats, head: SideStats): VerdictEvidence {
  const delta_pct = medianDeltaPct(base, head);
  const spreads = { base: sideSpread(base), head: sideSpread(head) };
  return {
    delta_pct,
    p_value: rankPValue(base.trial_cycles, head.trial_cycles),
    noisy: isNoisySpread(spreads.base) || isNoisySpread(spreads.head) || disturbedTrials(base) > 0 || disturbedTrials(head) > 0,
    noise: `trials spread ${sideNoise(base)} on base, ${sideNoise(head)} on head`,
    noisyWhy: ` (noisy from ${NOISY_TRIAL_SPREAD}×) and their worst-case ranges overlap`,
    separated: separated(base, head, delta_pct),
    separatedWhy: 'but their worst-case ranges do not overlap',
    extra: {},
  };
}

/** The rounds behind a row's pairs, when a pull request added extra ones to the first (appendTrials). */
const roundsOfPairs = (head: SideStats) => (head.trial_rounds && head.trial_rounds.length > 1 ? { rounds: head.trial_rounds } : {});

/** A paired row without two undisturbed pairs, judged as unpaired sides (noisy unless separated). */
function sideAgainstSide(base: SideStats, head: SideStats): VerdictEvidence {
  const e = unpairedEvidence(base, head);
  const why = 'fewer than 2 trial pairs without a trial off the CPU, judged side against side: ';
  return { ...e, noise: `${why}${e.noise}`, extra: { paired: true, ...roundsOfPairs(head) } };
}

/**
 * Paired sides (both measured in one run, trials interleaved: trial i of head beside trial i of
 * base): each pair's ratio head/base, so that what disturbed both trials of a pair cancels. A pair
 * with a trial off the CPU is left out. The effect is the median ratio, its significance the
 * Wilcoxon signed-rank test of the log-ratios, the noise the spread of the middle half of the
 * ratios (noisy from NOISY_TRIAL_SPREAD); the effect exceeds the noise when that middle half lies
 * wholly on one side of 1.
 */
function pairedEvidence(base: SideStats, head: SideStats, alpha: number): VerdictEvidence | undefined {
  const n = Math.min(base.trial_cycles.length, head.trial_cycles.length);
  const undisturbed = (s: SideStats, i: number) => 1 - (s.trial_on_cpu?.[i] ?? 1) <= DISTURBED_OFF_CPU_SHARE;
  const ratios: number[] = [];
  for (let i = 0; i < n; i++) if (undisturbed(base, i) && undisturbed(head, i)) ratios.push(head.trial_cycles[i]! / base.trial_cycles[i]!);
  const left = n - ratios.length;
  const leftOut = left > 0 ? `; ${plural(left, 'pair')} with a trial off the CPU left out` : '';
  if (ratios.length < 2) return undefined;
  const [q1, q3] = [quantile(ratios, 0.25), quantile(ratios, 0.75)];
  const delta_pct = (median(ratios) - 1) * 100;
  const mde = pairedMdePct(ratios.map(Math.log), alpha);
  return {
    delta_pct,
    p_value: signedRankPValue(ratios.map(Math.log)),
    noisy: q3 / q1 >= NOISY_TRIAL_SPREAD,
    noise: `${ratios.length} trial pairs, the middle half of their ratios spread ${pyFixed(q3 / q1, 2)}×${leftOut}`,
    noisyWhy: ` (noisy from ${NOISY_TRIAL_SPREAD}×) and straddle 1`,
    separated: delta_pct > 0 ? q1 > 1 : delta_pct < 0 ? q3 < 1 : false,
    separatedWhy: 'but that middle half lies wholly on one side of 1',
    extra: { paired: true, ...roundsOfPairs(head), ...(mde !== undefined ? { mde_pct: mde } : {}) },
  };
}

/**
 * What paired trials could have shown, for a reason that leaves the row undecided: the smallest
 * change they would call (at least the threshold), or that their number cannot reach the test's alpha.
 */
function detectable(e: VerdictEvidence, thresholdPct: number): string {
  const pairs = e.extra.rounds ? e.extra.rounds.join(' + ') : undefined;
  const mde = e.extra.mde_pct;
  const what =
    mde === undefined
      ? 'too few pairs to reach the significance level'
      : `the smallest change these pairs could show: ±${pyFixed(Math.max(mde, thresholdPct), 1)}%`;
  return `; ${pairs ? `rounds of ${pairs} pairs; ` : ''}${what}`;
}

/**
 * The base-versus-head verdict of one operation, decided on figures one trial cannot move (see
 * unpairedEvidence and pairedEvidence): `noisy` unless the effect is larger than all of the noise;
 * else a regression or an improvement when |Δ| reaches the threshold, the test gives p ≤ alpha
 * and |Δ| exceeds HISTORY_SIGMAS× the nightly spread; otherwise unchanged or inconclusive.
 */
export function judge(
  base: SideStats,
  head: SideStats,
  thresholdPct: number,
  alpha: number,
  cv: number | null,
): Omit<CompareRow, 'candidate' | 'label' | 'operation' | 'base' | 'head'> {
  const bothPaired = base.paired === true && head.paired === true;
  const paired = bothPaired ? pairedEvidence(base, head, alpha) : undefined;
  // Every pair but one had a trial off the CPU: side against side, where only an effect larger
  // than all of the noise (the worst-case ranges apart) can still be called.
  const e = paired ?? (bothPaired ? sideAgainstSide(base, head) : unpairedEvidence(base, head));
  const { delta_pct, p_value, noisy, noise } = e;
  const mean_delta_pct = ((head.mean_cycles - base.mean_cycles) / base.mean_cycles) * 100;
  const common = { delta_pct, mean_delta_pct, p_value, ...e.extra, ...(noisy ? { noisy } : {}) };
  if (noisy && !e.separated)
    return {
      ...common,
      verdict: 'noisy',
      reason: `${noise}${e.noisyWhy}: a change cannot be told from the noise`,
    };
  const big = Math.abs(delta_pct) >= thresholdPct;
  const significant = p_value <= alpha;
  const aboveHistory = cv === null || Math.abs(delta_pct) > HISTORY_SIGMAS * cv * 100;
  const history = cv === null ? 'no nightly history' : `nightly spread ±${pyFixed(cv * 100, 1)}%`;
  const noiseNote = noisy ? `; ${noise}, ${e.separatedWhy}` : paired ? `; ${noise}` : '';
  if (big && significant && aboveHistory)
    return {
      ...common,
      verdict: delta_pct > 0 ? 'regression' : 'improvement',
      reason: `|Δ| ≥ ${thresholdPct}%, p = ${pyGeneral(p_value, 2)}, ${history}${noiseNote}`,
    };
  if (big)
    return {
      ...common,
      verdict: 'inconclusive',
      reason: `${!significant ? `p = ${pyGeneral(p_value, 2)} > ${alpha}: within the spread of the trials` : `within ${HISTORY_SIGMAS}× the ${history}`}${noiseNote}${paired ? detectable(e, thresholdPct) : ''}`,
    };
  return { ...common, verdict: 'unchanged', reason: `|Δ| < ${thresholdPct}%${noiseNote}` };
}

/**
 * The history of each operation: its distinct measurements (measurementId), newest first, at most
 * HISTORY_RUNS. `versions` are the history's evidence trees, newest first, as read.
 */
function historyByKey(versions: Map<string, TimingRecord>[]): Map<string, TimingRecord[]> {
  const out = new Map<string, TimingRecord[]>();
  const seen = new Map<string, Set<string>>();
  for (const version of versions)
    for (const [key, r] of version) {
      const list = out.get(key) ?? [];
      const ids = seen.get(key) ?? new Set<string>();
      const id = measurementId(r);
      if (list.length >= HISTORY_RUNS || (id !== undefined && ids.has(id))) continue;
      if (id !== undefined) ids.add(id);
      list.push(r);
      out.set(key, list);
      seen.set(key, ids);
    }
  return out;
}

/**
 * Rows of a paired comparison that its first rounds could not decide: inconclusive, noisy, or
 * unchanged on too few pairs to have shown a change of the threshold's size (Pinpoint's "unknown").
 */
export function undecidedRows(report: CompareReport): CompareRow[] {
  const underpowered = (r: CompareRow) => r.verdict === 'unchanged' && !(r.mde_pct !== undefined && r.mde_pct <= report.threshold_pct);
  return report.rows.filter((r) => r.paired === true && (r.verdict === 'inconclusive' || r.verdict === 'noisy' || underpowered(r)));
}

/** A row of an unstable operation: its verdict stands, its regression fails nothing, and it says why. */
function markUnstable(row: CompareRow): CompareRow {
  if (row.verdict !== 'regression' && row.verdict !== 'improvement') return { ...row, unstable: true };
  return {
    ...row,
    unstable: true,
    reason: `${row.reason}; unstable: its nightly verdicts flip on unchanged code (trend page), so this fails nothing`,
  };
}

/** What validate finds wrong in either side, when it finds anything: the comparison says so. */
function evidenceProblems(base: Dataset, head: Dataset): Pick<CompareReport, 'evidence_problems'> {
  const [b, h] = [validateDataset(base.systemDir, base), validateDataset(head.systemDir, head)];
  return b.length + h.length > 0 ? { evidence_problems: { ...(b.length ? { base: b } : {}), ...(h.length ? { head: h } : {}) } } : {};
}

/** Both sides of a comparison and what they are judged by, as read once. */
interface Sides {
  opts: CompareOptions;
  thresholdPct: number;
  alpha: number;
  dirs: { base: string; head: string; history: string[] };
  base: Dataset;
  head: Dataset;
  /** Each operation's earlier measurements (historyByKey). */
  history: Map<string, TimingRecord[]>;
}

function readSides(opts: CompareOptions): Sides {
  const dirs = opts.systemDirs ?? {
    base: join(opts.baseDir, opts.system),
    head: join(opts.headDir, opts.system),
    history: (opts.history ?? []).map((d) => join(d, opts.system)),
  };
  const base = loadSystem(dirs.base, opts.system, 'base');
  const head = loadSystem(dirs.head, opts.system, 'head');
  const history = historyByKey(dirs.history.filter((d) => existsSync(d)).map((d) => recordsByKey(readable(loadDataset(d), 'history'))));
  return {
    opts,
    thresholdPct: opts.thresholdPct ?? DEFAULT_THRESHOLD_PCT,
    alpha: opts.alpha ?? DEFAULT_ALPHA,
    dirs,
    base,
    head,
    history,
  };
}

/** A row per operation on either side, in key order. */
function compareRows(sides: Sides): CompareRow[] {
  const baseRecords = recordsByKey(sides.base);
  const headRecords = recordsByKey(sides.head);
  const keys = [...new Set([...baseRecords.keys(), ...headRecords.keys()])].sort();
  return keys.map((key) => compareRow(sides, key, baseRecords.get(key), headRecords.get(key)));
}

/** One operation's row: new, removed, carried over, built with other flags, or judged (judge). */
function compareRow(sides: Sides, key: string, b: TimingRecord | undefined, h: TimingRecord | undefined): CompareRow {
  const entry = (ds: Dataset, r: TimingRecord) => ds.build.instances[instanceKey(r.candidate, r.label)];
  const { candidate, label, operation } = (b ?? h)!;
  const together = b !== undefined && h !== undefined && measuredTogether(b, h);
  const bs = b ? side(b, entry(sides.base, b), together) : undefined;
  const hs = h ? side(h, entry(sides.head, h), together) : undefined;
  const row = { candidate, label, operation, base: bs, head: hs };
  if (!bs && hs) return { ...row, verdict: 'new', reason: 'no base measurement' };
  if (bs && !hs) return { ...row, verdict: 'removed', reason: h ? `head not measured (${h.status})` : 'no head measurement' };
  if (!bs || !hs) return { ...row, verdict: 'inconclusive', reason: 'neither side has trials' };
  const id = measurementId(b!);
  if (id !== undefined && id === measurementId(h!))
    return {
      ...row,
      verdict: 'unchanged',
      carried_over: true,
      reason: "not measured (unchanged inputs): head holds the baseline's record",
    };
  if (b!.flags !== undefined && h!.flags !== undefined && b!.flags !== h!.flags)
    return {
      ...row,
      verdict: 'inconclusive',
      delta_pct: medianDeltaPct(bs, hs),
      reason: `build flags differ (${b!.flags} → ${h!.flags})`,
    };
  // Each past run's median trial: the figure the verdict compares, so one disturbed trial of a
  // nightly run does not widen the spread either.
  const past = (sides.history.get(key) ?? [])
    .filter((r) => r.trials?.length > 0)
    .map((r) => medianTrial(r.trials.map((t) => t.cycles / t.measurements)));
  const judged = { ...row, ...judge(bs, hs, sides.thresholdPct, sides.alpha, historyCv(past)), history_runs: past.length };
  return sides.opts.unstable?.has(key) ? markUnstable(judged) : judged;
}

/** Every instance key of either side's build.json, in order. */
const instanceKeysOf = (base: Dataset, head: Dataset): string[] =>
  [...new Set([...Object.keys(base.build.instances), ...Object.keys(head.build.instances)])].sort();

/** What changed of head's instances themselves: KAT statuses, what their outputs were held to, builds. */
function instanceChanges(
  base: Dataset,
  head: Dataset,
  instanceKeys: string[],
): Required<Pick<CompareReport, 'kat_changes' | 'held_to' | 'build_failures' | 'fell_back'>> {
  const kat_changes: KatChange[] = instanceKeys
    .map((key) => ({ key, base: instanceStatus(base.build.instances[key]), head: instanceStatus(head.build.instances[key]) }))
    .filter((c) => c.base !== c.head && c.head !== undefined);
  // What each changed library's outputs were held to (campaign/unseen.ts): said per instance in the comment.
  const held_to = instanceKeys
    .filter((k) => {
      const [b, h] = [base.build.instances[k], head.build.instances[k]];
      return h?.library_sha256 !== undefined && h.library_sha256 !== b?.library_sha256 && measurable(h.kat);
    })
    .map((key) => ({ key, held_to: heldToShown(head.build.instances[key]!) }));
  // New ones only, like KAT changes: a build that already failed on the base is not this change's doing.
  const build_failures = instanceKeys.filter(
    (k) => head.build.instances[k]?.kat === 'BUILDFAIL' && base.build.instances[k]?.kat !== 'BUILDFAIL',
  );
  return { kat_changes, held_to, build_failures, fell_back: fellBack(base, head, instanceKeys) };
}

/**
 * Head's instances measured with the harness defaults because their guide build failed: said, with why.
 * Only where it is new: a library the base also measured that way is no news of this change.
 */
function fellBack(base: Dataset, head: Dataset, instanceKeys: string[]): NonNullable<CompareReport['fell_back']> {
  const fellBackOf = (e: BuildEntry | undefined) => e?.flags === 'harness-default' && e.guide_result !== undefined && e.kat !== 'BUILDFAIL';
  return instanceKeys.flatMap((k) => {
    const e = head.build.instances[k];
    const b = base.build.instances[k];
    const known = fellBackOf(b) && b!.library_sha256 === e?.library_sha256;
    return fellBackOf(e) && !known ? [{ key: k, why: e!.guide_error ?? e!.guide_result! }] : [];
  });
}

/** Head's invalid candidates that the base did not have. */
function newInvalidCandidates(base: Dataset, head: Dataset): CompareReport['invalid_candidates'] {
  const invalidOf = (ds: { campaign?: Record<string, unknown> }) =>
    Array.isArray(ds.campaign?.invalid_candidates) ? (ds.campaign.invalid_candidates as Array<{ id: string; problem: string }>) : [];
  const invalidOnBase = new Set(invalidOf(base).map((c) => c.id));
  return invalidOf(head).filter((c) => !invalidOnBase.has(c.id));
}

/** Sizes and ELF images that differ between the sides' build.json, then peak RSS that moved more than the noise. */
function valueChanges(sides: Sides, instanceKeys: string[], rows: CompareRow[]): Pick<CompareReport, 'size_changes' | 'memory_changes'> {
  const size_changes: ValueChange[] = [];
  const memory_changes: ValueChange[] = [];
  for (const key of instanceKeys) {
    const b = sides.base.build.instances[key];
    const h = sides.head.build.instances[key];
    if (!b || !h) continue;
    for (const item of ['pk_bytes', 'sk_bytes', 'ct_bytes', 'ss_bytes', 'signature_bytes']) {
      const bv = b.sizes?.[item];
      const hv = h.sizes?.[item];
      if (bv !== undefined && hv !== undefined && bv !== hv) size_changes.push({ key, item, base: bv, head: hv });
    }
    if (b.elf_load_bytes !== undefined && h.elf_load_bytes !== undefined && b.elf_load_bytes !== h.elf_load_bytes)
      memory_changes.push({ key, item: 'elf_load_bytes', base: b.elf_load_bytes, head: h.elf_load_bytes });
  }
  const noise = sides.opts.rssNoiseBytes ?? RSS_NOISE_BYTES;
  for (const row of rows) {
    const bv = row.base?.peak_rss_bytes;
    const hv = row.head?.peak_rss_bytes;
    if (bv !== undefined && hv !== undefined && Math.abs(hv - bv) >= noise)
      memory_changes.push({ key: operationKey(row.candidate, row.label, row.operation), item: 'peak_rss_bytes', base: bv, head: hv });
  }
  return { size_changes, memory_changes };
}

/** Head's sizes the campaign's size catalog states otherwise; none without a campaign folder. */
function sizeMismatches(head: Dataset, campaignDir: string | undefined): CompareReport['size_mismatches'] {
  return campaignDir
    ? sizeAudit(auditedInstances(head), readSizeCatalog(loadCampaign(campaignDir, { candidatesRequired: false })))
        .filter((f) => f.verdict === 'mismatch')
        .map(({ id, instance, item, catalog, api, basis }) => ({ id, instance, item, catalog, api, basis }))
    : [];
}

/** The constant-time check's news: new findings, and head's ct builds that newly failed to build. */
function ctChanges(base: Dataset, head: Dataset): Pick<CompareReport, 'ct_findings'> & Required<Pick<CompareReport, 'ct_build_failures'>> {
  // Only when a side has a constant-time check: comparisons of evidence without one stay as they were.
  const baseCt = readableCt(base.systemDir, 'base');
  const headCt = readableCt(head.systemDir, 'head');
  const ct_findings = baseCt.length + headCt.length > 0 ? newCtFindings(baseCt, headCt) : undefined;
  return { ct_findings, ct_build_failures: ctBuildFailures(baseCt, headCt) };
}

/** The sandbox head's campaign says it ran in, when it names a known one. */
function sandboxOf(head: Dataset): CompareReport['sandbox'] {
  const said = head.campaign?.sandbox;
  return said === 'bwrap' || said === 'unshare' || said === 'none' ? said : undefined;
}

export function compareEvidence(opts: CompareOptions): CompareReport {
  const sides = readSides(opts);
  const { base, head, thresholdPct, alpha } = sides;
  const rows = compareRows(sides);
  const instanceKeys = instanceKeysOf(base, head);
  const { kat_changes, held_to, build_failures, fell_back } = instanceChanges(base, head, instanceKeys);
  const invalid_candidates = newInvalidCandidates(base, head);
  const { size_changes, memory_changes } = valueChanges(sides, instanceKeys, rows);
  const size_mismatches = sizeMismatches(head, opts.campaignDir);
  const historyRuns = Math.max(0, ...rows.map((r) => r.history_runs ?? 0));
  const { ct_findings, ct_build_failures } = ctChanges(base, head);
  const katFailures = kat_changes.filter((c) => c.head !== 'PASS').length;
  const sandbox = sandboxOf(head);
  return {
    system: opts.system,
    threshold_pct: thresholdPct,
    alpha,
    rows,
    kat_changes,
    ...(held_to.length > 0 ? { held_to } : {}),
    build_failures,
    ...(fell_back.length > 0 ? { fell_back } : {}),
    invalid_candidates,
    ...(sandbox ? { sandbox } : {}),
    size_changes,
    memory_changes,
    size_mismatches,
    ...(ct_findings ? { ct_findings } : {}),
    ...(ct_build_failures.length > 0 ? { ct_build_failures } : {}),
    ...(sides.dirs.history.length > 0 ? { history_runs: historyRuns } : {}),
    ...evidenceProblems(base, head),
    counts: {
      regressions: rows.filter((r) => r.verdict === 'regression' && !r.unstable).length,
      improvements: rows.filter((r) => r.verdict === 'improvement').length,
      kat_failures: katFailures,
      size_mismatches: size_mismatches.length,
      noisy: rows.filter((r) => r.verdict === 'noisy').length,
      ...(ct_findings ? { ct_findings: ct_findings.length } : {}),
    },
  };
}
