import { median } from 'simple-statistics';
import type { BuildEntry, TimingRecord } from '../evidence/fileTypes.js';
import { formatGHz, formatMHz, formatMiB } from '../text/format.js';

const NOT_RECORDED = 'not recorded';

/**
 * The environment the numbers were measured in: the campaign's end state (ngcc-harness), our
 * latest, a record's, else the start state.
 */
export function measuredEnvironment(campaign: Record<string, unknown> | undefined, recordEnvironment?: unknown): Record<string, unknown> {
  return (campaign?.environment_at_end ??
    campaign?.environment_latest ??
    recordEnvironment ??
    campaign?.environment_at_start ??
    {}) as Record<string, unknown>;
}
type Env = Record<string, unknown>;
const str = (v: unknown): string | undefined => (v === null || v === undefined || v === '' ? undefined : String(v));

export function archName(env: Env): { display: string; guide: string } {
  const arch = str(env.architecture);
  if (arch === 'aarch64') return { display: 'AArch64', guide: 'ARM' };
  if (arch === 'x86_64') return { display: 'x86-64', guide: 'x86' };
  return { display: arch ?? 'an unrecorded architecture', guide: arch ?? 'x86' };
}

/** The core the trials ran on: shards' lowest CPU, else the campaign's, else the records'. */
function measuredCpu(campaign: Record<string, unknown>, env: Env): number | undefined {
  const shardCpus = campaign.shard_cpus as Record<string, number> | undefined;
  if (shardCpus && Object.keys(shardCpus).length > 0) return Math.min(...Object.values(shardCpus));
  const fromEnv = env.cpu_number;
  return typeof fromEnv === 'number' ? fromEnv : undefined;
}

function clockDescription(env: Env): string {
  const min = Number(str(env.cpufreq_min_khz) ?? NaN);
  const max = Number(str(env.cpufreq_max_khz) ?? NaN);
  const gov = str(env.cpufreq_governor);
  const parts: string[] = [];
  if (Number.isFinite(min) && Number.isFinite(max) && min === max)
    parts.push(`fixed ${formatGHz(max * 1e3)} (${gov ? `governor ${gov}, ` : ''}minimum = maximum)`);
  else if (Number.isFinite(max)) parts.push(`max ${formatGHz(max * 1e3)}${gov ? `, governor ${gov}` : ''}`);
  else if (gov) parts.push(`governor ${gov}`);
  else parts.push('frequency not recorded (no cpufreq)');
  const noTurbo = str(env.intel_pstate_no_turbo);
  const boost = str(env.cpufreq_boost);
  if (noTurbo !== undefined) parts.push(noTurbo === '1' ? 'turbo off' : 'turbo on');
  else if (boost !== undefined) parts.push(boost === '0' ? 'boost off' : 'boost on');
  const smt = str(env.smt_control);
  if (smt) parts.push(smt === 'notsupported' ? 'SMT none' : smt === 'on' ? 'SMT on' : 'SMT off');
  return parts.length > 0 ? parts.join(', ') : NOT_RECORDED;
}

/** The evidence a page's facts come from: its records and its instances' builds. */
export interface Provenance {
  records: readonly TimingRecord[];
  builds: readonly BuildEntry[];
}

/**
 * The counter's rate, as the trials measured it (each trial's cycles over its seconds, which is
 * `trials[].clock_hz` where recorded): the rate that turns the cycle columns into the time columns.
 */
export function counterRate(records: readonly TimingRecord[], fixedClockHz?: unknown): string | undefined {
  const rates = records
    .flatMap((r) => r.trials ?? [])
    .filter((t) => t.seconds > 0 && t.cycles > 0)
    .map((t) => t.cycles / t.seconds)
    .sort((a, b) => a - b);
  if (rates.length === 0) return undefined;
  const [lo, hi] = [formatMHz(rates[0]!), formatMHz(rates[rates.length - 1]!)];
  const over =
    rates.length === 1 ? 'of 1 trial' : `median of ${rates.length} trials${lo === hi ? '' : `, ${lo.replace(' MHz', '')}–${hi}`}`;
  const fixed = typeof fixedClockHz === 'number' && fixedClockHz > 0 ? `; fixed clock configured at ${formatMHz(fixedClockHz)}` : '';
  return `${formatMHz(median(rates))} (cycles ÷ seconds, ${over})${fixed}`;
}

const distinct = (values: unknown[]): string[] => [...new Set(values.map(str).filter((v): v is string => v !== undefined))].sort();

/**
 * Which ngcc-perf and which native harness made the numbers: the version in the records'
 * environment (else the campaign's) and the harness that checked each instance's KAT (else the
 * campaign's). Undefined for evidence that names no tool at all (the ngcc-harness's).
 */
function toolDescription(campaign: Record<string, unknown>, env: Env, from: Provenance): string | undefined {
  // With records, only what each record says: one kept from an older run was not made by the latest run's version.
  const recorded = (
    from.records.length > 0 ? from.records.map((r) => (r.environment as Env | undefined)?.ngcc_perf_version) : [env.ngcc_perf_version]
  ).map(str);
  const versions = distinct(recorded);
  const missing = recorded.filter((v) => v === undefined).length;
  const harnesses = distinct(from.builds.length > 0 ? from.builds.map((b) => b.kat_harness_version) : [campaign.harness_version]);
  const tool = str(campaign.tool) ?? (versions.length > 0 || harnesses.length > 0 ? 'ngcc-perf' : undefined);
  if (!tool) return undefined;
  const version =
    versions.length === 0
      ? `${tool} (version ${NOT_RECORDED})`
      : `${tool} ${versions.join(', ')}${missing > 0 ? ` (version ${NOT_RECORDED} in ${missing} of ${recorded.length} records)` : ''}`;
  return harnesses.length > 0 ? `${version}; native harness ${harnesses.join(', ')}` : version;
}

const pair = (a: unknown, b: unknown) => (str(a) || str(b) ? `${str(a) ?? NOT_RECORDED} / ${str(b) ?? NOT_RECORDED}` : NOT_RECORDED);
const utc = (v: unknown) => str(v)?.slice(0, 19);

/** Rows of "2. Assessment environment"; a missing fact says so instead of vanishing. */
export function environmentRows(campaign: Record<string, unknown>, env: Env, from: Provenance): Array<[string, string]> {
  const cpu = measuredCpu(campaign, env);
  const rows: Array<[string, string]> = [
    ['processor', `${str(env.cpu_model) ?? NOT_RECORDED}${cpu !== undefined ? ` (CPU ${cpu}, one core)` : ''}`],
  ];
  if (str(env.machine)) rows.push(['machine', str(env.machine)!]);
  rows.push(['clock', clockDescription(env)]);
  const rate = counterRate(from.records, campaign.fixed_clock_hz);
  if (rate) rows.push(['counter rate', rate]);
  const kib = Number(env.memory_total_kib);
  rows.push(['memory', Number.isFinite(kib) && kib > 0 ? formatMiB(kib) : NOT_RECORDED]);
  rows.push(['OS / kernel', pair(env.os, env.kernel)]);
  rows.push(['compiler / build tool', pair(env.compiler, env.cmake)]);
  rows.push(['campaign start / end (UTC)', pair(utc(campaign.started_utc), utc(campaign.ended_utc))]);
  const counter = str(campaign.counter_source);
  if (counter) rows.push(['cycle counter', counter]);
  const tool = toolDescription(campaign, env, from);
  if (tool) rows.push(['measured with', tool]);
  return rows;
}
