import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { KAT_STATUSES, type Forgery } from '../kat/status.js';
import { parseResultLine } from '../kat/log.js';
import { deriveStatistics } from '../measure/stats.js';
import { precisionOf, type AdaptiveRule, type CallRule, type Precision } from '../measure/precision.js';
import { refusedTrials } from '../measure/refusals.js';
import { medianRound, shares } from '../measure/shares.js';
import { ATOMIC_TEMP, leftoverTempFiles, nonRegularEntries, processAlive, sha256Hex } from '../util/fsx.js';
import { calibrationProblems } from './calibration.js';
import { validateCtFiles } from './ctValidate.js';
import { type Dataset, loadDataset } from './dataset.js';
import { BUILD_FILE, evidencePaths, instanceKey } from './layout.js';
import type { BuildEntry, HashProfile, TimingRecord } from './fileTypes.js';

const REL_TOLERANCE = 1e-9;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * A record names the library it timed, and that is the library build.json says was built and
 * KAT-checked: a record without the hash could be of any library.
 */
function libraryHashProblems(where: string, key: string, r: TimingRecord, entry: BuildEntry): string[] {
  const stated = r.library_sha256 as unknown;
  if (typeof stated !== 'string' || !SHA256_HEX.test(stated))
    return [
      `${where}: library_sha256 is ${stated === undefined ? 'missing' : JSON.stringify(stated)}: a record names the SHA-256 of the library it timed`,
    ];
  if (entry.library_sha256 === undefined)
    return [`${where}: build.json has no library_sha256 for ${key}, so the library this record timed is not known to be the one built`];
  return stated === entry.library_sha256
    ? []
    : [`${where}: library_sha256 ${stated.slice(0, 12)}… differs from build.json's ${entry.library_sha256.slice(0, 12)}…`];
}

function close(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= REL_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * Recomputes every derived number from the raw trials and checks KAT logs against build.json.
 * Returns one line per problem (empty when the dataset is consistent). A reader that has loaded the
 * dataset already passes it.
 */
export function validateDataset(systemDir: string, loaded?: Dataset): string[] {
  const problems: string[] = [];
  const rel = (p: string) => relative(systemDir, p) || p;
  if (!existsSync(systemDir)) return [`${systemDir}: no such folder`];
  const ds = loaded ?? loadDataset(systemDir);
  for (const u of ds.unreadable) problems.push(`${rel(u.path)}: ${u.problem}`);
  if (!existsSync(evidencePaths(systemDir).build)) problems.push(`${BUILD_FILE}: missing`);
  // A link would make readers and publishers copy whatever it points to.
  for (const f of nonRegularEntries(systemDir)) problems.push(`${f}: a link or special file; evidence holds regular files only`);
  problems.push(...unfinishedWrites(systemDir), ...calibrationProblems(systemDir));
  for (const [key, e] of Object.entries(ds.build.instances)) problems.push(...buildEntryProblems(systemDir, key, e, ds.records));
  for (const { path, record } of ds.records) problems.push(...recordProblems(rel(path), record, ds.build.instances));
  for (const { path, profile } of ds.profiles) problems.push(...profileProblems(rel(path), profile));
  problems.push(...validateCtFiles(systemDir, ds.build));
  return problems;
}

/** A build.json entry: its status, its forgery, and its KAT log. */
function buildEntryProblems(systemDir: string, key: string, e: BuildEntry, records: Dataset['records']): string[] {
  const where = `build.json: instances["${key}"]`;
  const problems: string[] = [];
  // No status is a library built without the kat phase: not checked, so no KAT log either.
  const checked = (e.kat as string | undefined) !== undefined;
  if (checked && !(KAT_STATUSES as readonly string[]).includes(e.kat)) problems.push(`${where}.kat: unknown status '${e.kat}'`);
  problems.push(...forgeryProblems(where, key, e, records));
  if (!e.kat_log) {
    if (checked && e.kat !== 'BUILDFAIL' && e.kat !== 'NOKAT') problems.push(`${where}.kat_log: missing for status ${e.kat}`);
    return problems;
  }
  return [...problems, ...katLogProblems(systemDir, where, key, e)];
}

/** An entry's KAT log: there, the file build.json hashed, and ending in the RESULT line of this status and instance. */
function katLogProblems(systemDir: string, where: string, key: string, e: BuildEntry): string[] {
  const logPath = join(systemDir, e.kat_log!);
  if (!existsSync(logPath)) return [`${where}.kat_log: ${e.kat_log} does not exist`];
  const problems: string[] = [];
  const log = readFileSync(logPath, 'utf8');
  if (e.kat_log_sha256 && sha256Hex(log) !== e.kat_log_sha256)
    problems.push(`${e.kat_log}: SHA-256 differs from build.json kat_log_sha256`);
  const result = parseResultLine(log);
  if (!result) problems.push(`${e.kat_log}: last line is not a RESULT line`);
  else {
    if (result.status !== e.kat) problems.push(`${e.kat_log}: RESULT says ${result.status}, build.json says ${e.kat}`);
    if (result.id !== e.candidate || (e.instance && result.label !== e.instance && result.label !== e.label))
      problems.push(`${e.kat_log}: RESULT names ${result.id} ${result.label}, build.json ${key}`);
  }
  return problems;
}

/** A timing record: against its build.json entry, its processes, and its trials. */
function recordProblems(where: string, r: TimingRecord, instances: Record<string, BuildEntry>): string[] {
  const key = instanceKey(r.candidate, r.label);
  const entry = instances[key];
  const problems: string[] = [];
  if (!entry) problems.push(`${where}: no build.json entry for ${key}`);
  else {
    problems.push(...libraryHashProblems(where, key, r, entry));
    if (r.kat && r.kat !== entry.kat) problems.push(`${where}: kat ${r.kat} differs from build.json ${entry.kat}`);
    // A forgery of the instance's current library makes it FORGED; a record cannot say so alone.
    if (typeof r.forged === 'string' && r.library_sha256 === entry.library_sha256 && !entry.forged)
      problems.push(`${where}: forged, but build.json does not say FORGED for ${key}`);
  }
  return [...problems, ...refusalProblems(where, r), ...trialProblems(where, r)];
}

/** A record's trials: positive, the ones its processes ran, in its rounds, and the source of every figure derived from them. */
function trialProblems(where: string, r: TimingRecord): string[] {
  const trials = r.trials ?? [];
  if (trials.length === 0) return r.status === 'complete' ? [`${where}: status complete but no trials`] : [];
  const bad = trials.findIndex((t) => !(t.measurements > 0) || !(t.seconds > 0) || !(t.cycles >= 0));
  if (bad >= 0) return [`${where}: trials[${bad}] has a non-positive measurement`];
  const problems: string[] = [];
  const processTrials = Array.isArray(r.processes)
    ? (r.processes as Array<{ status: string; trials?: unknown[] }>).filter((p) => p.status === 'complete').flatMap((p) => p.trials ?? [])
    : undefined;
  if (processTrials && JSON.stringify(processTrials.map(core)) !== JSON.stringify(trials.map(core)))
    problems.push(`${where}: trials[] differ from the trials of its processes[]`);
  problems.push(...processFacts(where, r));
  const rounds = r.trial_rounds;
  if (rounds !== undefined && (!Array.isArray(rounds) || rounds.reduce((a, n) => a + n, 0) !== trials.length))
    problems.push(`${where}: trial_rounds [${String(rounds)}] do not add up to its ${trials.length} trials`);
  return [...problems, ...derivedProblems(where, r)];
}

/** The figures a record states, against the ones recomputed from its trials. */
function derivedProblems(where: string, r: TimingRecord): string[] {
  const problems: string[] = [];
  const derived = deriveStatistics(r.trials);
  for (const field of [
    'measurements',
    'mean_seconds',
    'median_trial_seconds',
    'min_trial_seconds',
    'max_trial_seconds',
    'mean_cycles',
    'median_trial_cycles',
    'operations_per_second',
  ] as const) {
    const stored = r[field];
    if (stored === undefined) continue;
    if (typeof stored !== 'number' || !close(stored, derived[field]))
      problems.push(`${where}: ${field} ${stored} != ${derived[field]} recomputed from trials`);
  }
  if (r.guide_100_measurements_met !== undefined && r.guide_100_measurements_met !== derived.guide_100_measurements_met)
    problems.push(`${where}: guide_100_measurements_met ${r.guide_100_measurements_met} != ${derived.guide_100_measurements_met}`);
  problems.push(...precisionProblems(where, r));
  if (r.per_call_cycles && derived.per_call_cycles) {
    for (const q of ['q1', 'median', 'q3'] as const)
      if (!close(r.per_call_cycles[q], derived.per_call_cycles[q])) problems.push(`${where}: per_call_cycles.${q} != recomputed`);
  }
  return problems;
}

/** A complete hash profile's shares, against the ones recomputed from its calls. */
function profileProblems(where: string, p: HashProfile): string[] {
  if (p.status !== 'complete' || !p.total?.ticks) return [];
  const problems: string[] = [];
  const recomputed = shares(p.total.ticks, p.calls ?? []);
  // A complete schema-2 profile states its shares; the pages read them, so they must be the calls'.
  if (p.share === undefined) problems.push(`${where}: share missing (complete profile)`);
  if (p.hash_share === undefined) problems.push(`${where}: hash_share missing (complete profile)`);
  for (const fn of new Set([...Object.keys(p.share ?? {}), ...(p.share ? Object.keys(recomputed.share) : [])])) {
    const stated = p.share?.[fn];
    if (stated === undefined || !close(stated, recomputed.share[fn] ?? 0))
      problems.push(`${where}: share.${fn} ${stated ?? 'missing'} != ${recomputed.share[fn] ?? 0} recomputed from calls`);
  }
  if (p.hash_share !== undefined && !close(p.hash_share, recomputed.hash_share))
    problems.push(`${where}: hash_share ${p.hash_share} != ${recomputed.hash_share} recomputed from calls`);
  const rounds = p.round_hash_shares;
  if (rounds !== undefined && p.hash_share !== undefined) {
    const median = medianRound(rounds.map((hashShare) => ({ hashShare })))?.hashShare;
    if (median === undefined || !close(p.hash_share, median))
      problems.push(`${where}: hash_share ${p.hash_share} is not the median of round_hash_shares [${rounds.join(', ')}]`);
  }
  return problems;
}

/** A record's `precision` against the one recomputed from its trials and plan; records written before it have none. */
function precisionProblems(where: string, r: TimingRecord): string[] {
  if (r.precision === undefined) return [];
  const stated = r.precision as Partial<Precision> | null;
  const plan = r.plan as { adaptive?: AdaptiveRule; calls?: CallRule } | null | undefined;
  const want = precisionOf(r.trials, plan);
  const problems: string[] = [];
  // A plan in calls times one call a trial: a trial of more would be counted as one call.
  const many = plan?.calls ? r.trials.findIndex((t) => t.measurements !== 1) : -1;
  if (many >= 0) problems.push(`${where}: trials[${many}] has ${r.trials[many]!.measurements} calls; a plan in calls times one a trial`);
  for (const k of ['mode', 'trials', 'target', 'met'] as const)
    if (stated?.[k] !== want[k]) problems.push(`${where}: precision.${k} ${stated?.[k]} != ${want[k]} recomputed from trials and plan`);
  const rel = stated?.ci95_rel;
  if (want.ci95_rel === null ? rel !== null : typeof rel !== 'number' || !close(rel, want.ci95_rel))
    problems.push(`${where}: precision.ci95_rel ${rel} != ${want.ci95_rel} recomputed from trials`);
  return problems;
}

/**
 * Memory and sizes restate what the timing processes printed: peak RSS is the largest VmHWM, the
 * baseline one process's VmRSS before its first call (ours take the first, the ngcc-harness the
 * largest), and the sizes are the API's as the driver read them.
 */
function processFacts(where: string, r: TimingRecord): string[] {
  const metas = (Array.isArray(r.processes) ? (r.processes as Array<{ status?: string; meta?: Record<string, string> }>) : [])
    .filter((p) => p.status === 'complete' && p.meta)
    .map((p) => p.meta!);
  if (metas.length === 0) return [];
  const problems: string[] = [];
  const values = (k: string) =>
    metas
      .map((m) => m[k])
      .filter((v): v is string => v !== undefined)
      .map(Number);
  const peaks = values('peak_rss_bytes');
  if (typeof r.peak_rss_bytes === 'number' && peaks.length > 0 && r.peak_rss_bytes !== Math.max(...peaks))
    problems.push(`${where}: peak_rss_bytes ${r.peak_rss_bytes} != ${Math.max(...peaks)}, the largest of its processes`);
  const baselines = values('baseline_rss_bytes');
  if (typeof r.baseline_rss_bytes === 'number' && baselines.length > 0 && !baselines.includes(r.baseline_rss_bytes))
    problems.push(`${where}: baseline_rss_bytes ${r.baseline_rss_bytes} is none of its processes' (${[...new Set(baselines)].join(', ')})`);
  const sizes = (r.sizes ?? {}) as Record<string, unknown>;
  for (const k of ['pk_bytes', 'sk_bytes', 'ct_bytes', 'ss_bytes', 'signature_bytes']) {
    const printed = metas[0]![k];
    if (printed !== undefined && typeof sizes[k] === 'number' && sizes[k] !== Number(printed))
      problems.push(`${where}: sizes.${k} ${sizes[k]} != ${printed} printed by its process`);
  }
  return problems;
}

/** Temporary files of writes that never finished: one still going on names a live process; one whose process is gone never finished. */
function unfinishedWrites(systemDir: string): string[] {
  return leftoverTempFiles(systemDir)
    .filter((rel) => !processAlive(Number(ATOMIC_TEMP.exec(rel)![1])))
    .map((f) => `${f}: the temporary file of a write that never finished (a run killed, or a full disk); the next run removes it`);
}

/**
 * What the pages mark a figure by (measure/refusals.ts) is what the record's processes show: the
 * refused trials it lists, and a `complete` status only when no process failed.
 */
function refusalProblems(where: string, r: TimingRecord): string[] {
  const problems: string[] = [];
  const shown = refusedTrials(r.processes);
  const stated = r.refused_trials === undefined ? [] : r.refused_trials;
  if (JSON.stringify(stated) !== JSON.stringify(shown))
    problems.push(
      `${where}: refused_trials lists ${Array.isArray(stated) ? stated.length : JSON.stringify(stated)}, its processes[] show ${shown.length} refused trial(s)`,
    );
  const failed = (Array.isArray(r.processes) ? (r.processes as Array<{ status?: unknown }>) : []).filter((p) => p?.status !== 'complete');
  if (r.status === 'complete' && failed.length > 0)
    problems.push(`${where}: status complete, but ${failed.length} of its processes[] did not complete: partial, or failed`);
  return problems;
}

const core = (t: unknown) => {
  const x = t as { measurements: number; seconds: number; cycles: number };
  return [x.measurements, x.seconds, x.cycles];
};

/**
 * build.json `forged` (kat/status.ts): its shape, and the record it rests on, which must be of the
 * same library, failed, and hold a replay that differs.
 */
function forgeryProblems(where: string, key: string, e: BuildEntry, records: Array<{ record: TimingRecord }>): string[] {
  const f = e.forged as unknown;
  if (f === undefined) return [];
  const shaped =
    typeof f === 'object' && f !== null && typeof (f as Forgery).operation === 'string' && typeof (f as Forgery).detail === 'string';
  if (!shaped) return [`${where}.forged: not { operation, detail }`];
  const { operation, detail } = f as Forgery;
  const r = records.find(({ record }) => instanceKey(record.candidate, record.label) === key && record.operation === operation)?.record;
  if (!r) return [`${where}.forged: no ${operation} record to rest on`];
  if (r.forged !== detail)
    return [`${where}.forged: the ${operation} record says ${r.forged === undefined ? 'nothing of a forgery' : `'${r.forged}'`}`];
  if (r.library_sha256 !== e.library_sha256) return [`${where}.forged: the ${operation} record is of another library`];
  if (r.status !== 'failed' || !(r.replays?.some((x) => x.outcome === 'differs') || r.repeat_audit?.outcome === 'differs'))
    return [`${where}.forged: the ${operation} record is not failed with a replay or a repeated-input audit that differs`];
  return [];
}
