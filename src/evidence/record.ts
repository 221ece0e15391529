import type { Candidate } from '../config/campaign.js';
import type { HostEnvironment } from '../env/host.js';
import { inputBytes, type OperationResult } from '../measure/operation.js';
import { precisionOf } from '../measure/precision.js';
import { type Refusal, refusedTrials } from '../measure/refusals.js';
import { deriveStatistics } from '../measure/stats.js';
import type { BuildEntry, TimingRecord } from './fileTypes.js';

export interface RecordInput {
  unit: { candidate: Candidate; label: string };
  operation: string;
  entry: BuildEntry;
  result: OperationResult;
  environment: HostEnvironment;
}

const num = (meta: Record<string, string>, key: string) => (meta[key] !== undefined ? Number(meta[key]) : 0);

/** A schema-2 timing record (ngcc-harness field names) plus this tool's additions. */
export function buildRecord({ unit, operation, entry, result, environment }: RecordInput): TimingRecord {
  const meta = result.meta;
  const complete = result.processes.filter((p) => p.status === 'complete');
  const baseline = complete[0]?.meta.baseline_rss_bytes;
  const peaks = complete.map((p) => Number(p.meta.peak_rss_bytes ?? 0));
  const kex = unit.candidate.type === 'kex' ? kexFields(meta) : undefined;
  const clocks = result.trials.map((t) => t.clock_hz).filter((c): c is number => c !== undefined);
  const hash = unit.candidate.type === 'hash';
  return {
    schema: 2,
    status: result.status,
    ...(result.failure ? { failure: result.failure } : {}),
    // The instance's FORGED status rests on this (build.json `forged` names the record's operation).
    ...(result.forged ? { forged: result.forged } : {}),
    candidate: unit.candidate.id,
    label: unit.label,
    instance: unit.label,
    variant: entry.variant,
    flags: entry.flags,
    operation,
    input_bytes: inputBytes(unit.candidate.type, operation),
    plan: result.plan ?? null,
    kat: entry.kat,
    kat_not_passed: entry.kat !== 'PASS',
    disturbed_retries: result.disturbed_retries,
    disturbed_trials: result.trials.filter((t) => t.disturbed).length,
    library: entry.library,
    library_sha256: entry.library_sha256,
    kat_log: entry.kat_log,
    kat_log_sha256: entry.kat_log_sha256,
    started_utc: result.started_utc,
    ended_utc: result.ended_utc,
    load_average_start: result.load_average_start,
    load_average_end: result.load_average_end,
    environment: { ...environment, counter_hz: clocks.length ? clocks.reduce((a, b) => a + b, 0) / clocks.length : null },
    counter: { source: meta.counter ?? null, unit: meta.counter === 'monotonic-ns' ? 'ns' : 'cycles' },
    rng: meta.rng ?? null,
    processes: result.processes,
    ...refusedField(result.processes),
    // Which trial's batch was made again from its seed, and what that found (measure/replay.ts).
    ...(result.replays ? { replays: result.replays } : {}),
    ...(result.replay_skipped ? { replay_skipped: result.replay_skipped } : {}),
    ...(result.repeat_audit ? { repeat_audit: result.repeat_audit } : {}),
    ...(result.repeat_audit_skipped ? { repeat_audit_skipped: result.repeat_audit_skipped } : {}),
    trials: result.trials,
    ...(result.stats ?? {}),
    // Fixed or adaptive, how well the trials pin the mean down (validate recomputes it).
    precision: precisionOf(result.trials, result.plan),
    // Hash messages only (10^6 bytes per second, as the harness's records): a KEM has no message.
    throughput_MB_per_second: hash && result.stats?.mean_seconds ? inputBytes('hash', operation) / result.stats.mean_seconds / 1e6 : null,
    sizes: {
      input_bytes: hash ? num(meta, 'input_bytes') : inputBytes(unit.candidate.type, operation) ? num(meta, 'message_bytes') : 0,
      pk_bytes: num(meta, 'pk_bytes'),
      sk_bytes: num(meta, 'sk_bytes'),
      ct_bytes: num(meta, 'ct_bytes'),
      ss_bytes: num(meta, 'ss_bytes'),
      signature_bytes: num(meta, 'signature_bytes'),
      digest_bytes: hash ? num(meta, 'digest_bytes') : 0,
      ...kex?.sizes,
    },
    kex: kex?.kex ?? {},
    build_flags: entry.build_flags,
    baseline_rss_bytes: baseline !== undefined ? Number(baseline) : null,
    peak_rss_bytes: peaks.length ? Math.max(...peaks) : null,
    // A key-exchange step is counted inside full exchanges (the ngcc-harness's name for it).
    timing_scope: unit.candidate.type === 'kex' && operation !== 'exchange' ? 'per_call_step' : 'loop',
  };
}

/** `refused_trials`, the trials a check refused (measure/refusals.ts), when there were any: validate holds it to processes[]. */
function refusedField(processes: unknown): { refused_trials?: Refusal[] } {
  const refused = refusedTrials(processes);
  return refused.length > 0 ? { refused_trials: refused } : {};
}

/** A key exchange's sizes beside the common ones, and its passes (ngcc-harness field names). */
function kexFields(meta: Record<string, string>): { kex: Record<string, number>; sizes: Record<string, number> } {
  const extra = Object.fromEntries(
    Object.entries(meta)
      .filter(([k]) => /^(sta|stb|msg\d+|total_msg|total_msg_claimed|ss_actual)_bytes$/.test(k))
      .map(([k, v]) => [k, Number(v)]),
  );
  return { kex: { kex_passes: num(meta, 'kex_passes'), kex_passes_run: num(meta, 'kex_passes_run') }, sizes: extra };
}

/**
 * A record whose trials are `first`'s followed by `more`'s: the extra paired rounds a pull request
 * adds to a row the first rounds could not decide (CampaignOptions.extraRounds). Everything derived
 * from the trials is derived again, so that `validate` holds the result like any record;
 * `trial_rounds` says how many trials each round gave. A failed `more` is the record: the library
 * failed when measured again, and a failure is never hidden behind the first rounds' figures.
 */
export function appendTrials(first: TimingRecord, more: TimingRecord): TimingRecord {
  if (first.status !== 'complete' || more.status !== 'complete') return more;
  const trials = [...first.trials, ...more.trials];
  const offset = first.trials.length;
  const rounds = [...roundsOf(first), more.trials.length];
  const clocks = trials.map((t) => t.clock_hz).filter((c): c is number => c !== undefined);
  const replays = [...(first.replays ?? []), ...(more.replays ?? []).map((r) => ({ ...r, trial: r.trial + offset }))];
  const peaks = [first.peak_rss_bytes, more.peak_rss_bytes].filter((x): x is number => typeof x === 'number');
  const processes = (p: unknown) => (Array.isArray(p) ? p : []);
  const environment = first.environment as Record<string, unknown> | undefined;
  const stats = deriveStatistics(trials);
  const throughput = first.throughput_MB_per_second;
  return {
    ...first,
    ended_utc: more.ended_utc,
    load_average_end: more.load_average_end,
    disturbed_retries: Number(first.disturbed_retries ?? 0) + Number(more.disturbed_retries ?? 0),
    disturbed_trials: trials.filter((t) => t.disturbed).length,
    ...(environment
      ? { environment: { ...environment, counter_hz: clocks.length ? clocks.reduce((a, b) => a + b, 0) / clocks.length : null } }
      : {}),
    processes: [...processes(first.processes), ...processes(more.processes)],
    ...refusedField([...processes(first.processes), ...processes(more.processes)]),
    ...(replays.length > 0 ? { replays } : {}),
    trials,
    ...stats,
    precision: precisionOf(trials, first.plan as Parameters<typeof precisionOf>[1]),
    ...(typeof throughput === 'number' ? { throughput_MB_per_second: Number(first.input_bytes) / stats.mean_seconds / 1e6 } : {}),
    ...(peaks.length > 0 ? { peak_rss_bytes: Math.max(...peaks) } : {}),
    trial_rounds: rounds,
  };
}

/** Trials per round of a record: `trial_rounds`, or one round of all its trials. */
export function roundsOf(r: Pick<TimingRecord, 'trials' | 'trial_rounds'>): number[] {
  const stated = r.trial_rounds;
  return Array.isArray(stated) && stated.every((n) => Number.isInteger(n) && n > 0) ? (stated as number[]) : [r.trials.length];
}
