import { PROCESS_FIXED_S } from '../config/defaults.js';
import { basename, relative } from 'node:path';
import { buildProfiled, type ProfileBuildResult, wrapCatalog } from '../compile/profileBuild.js';
import { flagsFor, type BuildRequest } from '../compile/compile.js';
import type { HarnessTools } from '../compile/harnessTools.js';
import { inputBytes } from '../measure/operation.js';
import { processSeconds, scaledTimeoutS, type CallSeconds } from '../measure/cost.js';
import { runDriver, type DriverRun } from '../sandbox/runProcess.js';
import { sha256Hex } from '../util/fsx.js';
import { medianRound, shares } from '../measure/shares.js';
import { disturbance, parseOsLine } from '../measure/disturbance.js';
import type { HashProfile, MemoryRecord } from './profileRecords.js';

export interface ProfileRequest {
  request: BuildRequest;
  /** The plain library (absolute path) and its hash, which every file written names. */
  library: string;
  librarySha256: string;
  /** Folder the commands in the profiles are shown relative to. */
  campaignDir: string;
  tools: HarnessTools;
  cpu: number;
  /** Symbols wrapped for NIST-API code (ngcc-perf.yml profile.nist_symbols). */
  nistSymbols: string[];
  targetSeconds: number;
  /** Fresh profiling processes per operation; the figure is the median undisturbed round's. */
  rounds: number;
  /** Re-runs of a disturbed round (planning.disturbed_retries), as for timing trials. */
  disturbedRetries: number;
  /** The floor of every round's and memory run's timeout (planning.process_timeout_s). */
  timeoutMs: number;
  /** The KAT's seconds per call of each operation: the timeouts follow them (measure/cost.ts). */
  callSeconds?: CallSeconds;
  /** The drivers' TYPE (the candidate's type; a hash's carries its digest length, `hash:BITS`). */
  driverType: string;
  /** The drivers' RNG argument (`auto` for a hash, which draws none). */
  driverRng: string;
  /** Seconds per call of an operation when it was timed, to size the rounds (100 calls when not). */
  perCallSeconds(operation: string): number | undefined;
}

/** Where the results go, each as soon as it is known (the caller decides the files). */
export interface ProfileSink {
  /** Not called when the profiling relink fails: there is no profile then, only memory. */
  profile(operation: string, profile: HashProfile): void;
  memory(operation: string, memory: MemoryRecord): void;
}

/** One run of the prof job (native/jobs/prof.c): a fresh process timing `operations` calls of one operation. */
interface ProfileRound {
  argv: string[];
  stderr: string;
  complete: boolean;
  /** Why an incomplete round gave no profile. */
  failure?: string;
  meta: Record<string, string>;
  total: { operations: number; ticks: number };
  calls: HashProfile['calls'];
  hashShare: number;
  /** Why the round did not have its core to itself (measure/disturbance.ts). */
  disturbed?: string;
}

/**
 * The symbols a profile of this API wraps, and their digest: what a profile depends on besides
 * the library, so that one made with other symbols is redone.
 */
export function profileSymbols(api: string, nistSymbols: string[]): { wanted: string[]; digest: string } {
  const wanted = api === 'nist' ? nistSymbols : wrapCatalog('wrap_iccs.c');
  return { wanted, digest: sha256Hex(wanted.join(',')) };
}

/**
 * The relink whose wrappers count the symmetric calls (compile/profileBuild.ts): a build, so it may
 * run before the profile's rounds and away from the core they hold.
 */
export function buildProfiledFor(request: BuildRequest, nistSymbols: string[]): Promise<ProfileBuildResult> {
  return buildProfiled(request, flagsFor(request), profileSymbols(request.candidate.api, nistSymbols).wanted);
}

/**
 * The profile of one instance's `operations`: hash/DRNG shares per operation (wrapped relink,
 * the prof job of ngcc_driver) and the memory of each operation alone (ngcc_mem on the plain library).
 * Shares come from `rounds` fresh processes per operation, interleaved across the operations like
 * timing trials, so that a passing disturbance of the machine moves one round, not the figure.
 */
export async function profileInstance(
  p: ProfileRequest,
  operations: readonly string[],
  sink: ProfileSink,
  relinked?: ProfileBuildResult,
): Promise<void> {
  if (operations.length === 0) return;
  const { candidate } = p.request;
  const { digest } = profileSymbols(candidate.api, p.nistSymbols);
  const profiled = relinked ?? (await buildProfiledFor(p.request, p.nistSymbols));
  const rounds: OperationRounds = {
    done: new Map(operations.map((operation) => [operation, [] as ProfileRound[]])),
    // Disturbed rounds that were run again: not in the figure, listed in the profile.
    excluded: new Map(operations.map((operation) => [operation, [] as ProfileRound[]])),
  };
  if (profiled.ok) await runRounds(p, operations, profiled, rounds);

  for (const operation of operations) {
    if (profiled.ok) sink.profile(operation, hashProfile(p, operation, profiled, digest, rounds));
    sink.memory(operation, await measureMemory(p, operation));
  }
}

/** Each operation's profiling rounds: those that count, and the disturbed ones run again. */
interface OperationRounds {
  done: Map<string, ProfileRound[]>;
  excluded: Map<string, ProfileRound[]>;
}

/** `p.rounds` rounds of each operation, interleaved; a disturbed round is run again, a failed operation no more. */
async function runRounds(
  p: ProfileRequest,
  operations: readonly string[],
  profiled: ProfileBuildResult,
  rounds: OperationRounds,
): Promise<void> {
  const opsPerRound = new Map(
    operations.map((operation) => {
      const perCall = p.perCallSeconds(operation) ?? p.callSeconds?.[operation];
      // At least one call: a slow operation's single call holds its many hash calls (ten calls of a
      // 5-minute keygen in each of five rounds would take four hours).
      return [operation, perCall ? Math.min(100_000, Math.max(1, Math.round(p.targetSeconds / p.rounds / perCall))) : 100];
    }),
  );
  for (let round = 0; round < p.rounds; round++) {
    for (const operation of operations) {
      const done = rounds.done.get(operation)!;
      if (done.some((r) => !r.complete)) continue; // a failed operation is not retried
      let r = await runRound(p, profiled, operation, opsPerRound.get(operation)!);
      for (let retry = 0; r.complete && r.disturbed && retry < p.disturbedRetries; retry++) {
        rounds.excluded.get(operation)!.push(r);
        r = await runRound(p, profiled, operation, opsPerRound.get(operation)!);
      }
      done.push(r);
    }
  }
}

/** One round: a fresh process of the prof job, `perRound` calls of `operation` in the profiled relink. */
async function runRound(p: ProfileRequest, profiled: ProfileBuildResult, operation: string, perRound: number): Promise<ProfileRound> {
  const job = ['prof', p.driverType, operation, String(perRound), '1', String(p.cpu), p.driverRng];
  const argv = [p.tools.driver, profiled.library, ...job];
  const driver = await runDriver([p.tools.driver, profiled.library], job, {
    timeoutMs: timeoutFor(p, operation, perRound, PROFILE_WRAP_FACTOR),
    maxOutputBytes: 1 << 20,
    sandbox: { mode: p.request.sandbox ?? 'bwrap', readOnly: [p.tools.driver, profiled.library], writable: [] },
  });
  const { run, output: out, rejected } = driver;
  const total = out.lines.find((l) => l[0] === 'TOTAL');
  const calls = out.lines
    .filter((l) => l[0] === 'CALL')
    .map((l) => ({ fn: l[1]!, in_bits: Number(l[2]), out_bits: Number(l[3]), calls: Number(l[4]), ticks: Number(l[5]) }));
  const totals = { operations: Number(total?.[1] ?? 0), ticks: Number(total?.[2] ?? 0) };
  const complete = !rejected && run.exitCode === 0 && out.status === 'complete' && total !== undefined && totals.ticks > 0;
  const osLine = out.lines.find((l) => l[0] === 'OS');
  // The wrappers' ticks run on while the thread is descheduled: a shared core moves the share.
  const disturbed = complete ? disturbance(osLine && parseOsLine(osLine), { minClockRatio: 0 }) : undefined;
  return {
    ...(complete ? {} : { failure: driverFailure(driver) }),
    ...(disturbed ? { disturbed } : {}),
    argv,
    stderr: run.stderr,
    complete,
    meta: out.meta,
    total: totals,
    calls,
    hashShare: complete ? shares(totals.ticks, calls).hash_share : NaN,
  };
}

/** An operation's profile from its rounds: the median undisturbed round's, or the first failed one's. */
function hashProfile(
  p: ProfileRequest,
  operation: string,
  profiled: ProfileBuildResult,
  digest: string,
  rounds: OperationRounds,
): HashProfile {
  const { candidate } = p.request;
  const done = rounds.done.get(operation)!;
  const failed = done.find((r) => !r.complete);
  // The figure comes from the rounds that had the core; only when none did, from all of them.
  const quiet = done.filter((r) => !r.disturbed);
  const kept = quiet.length > 0 ? quiet : done;
  const chosen = failed ?? medianRound(kept)!;
  const left = [...rounds.excluded.get(operation)!, ...done.filter((r) => !kept.includes(r))];
  return {
    schema: 2,
    candidate: candidate.id,
    label: p.request.instance.label,
    operation,
    input_bytes: inputBytes(candidate.type, operation),
    status: failed ? 'failed' : 'complete',
    command: chosen.argv.map((a) => (a === p.tools.driver ? basename(a) : a === profiled.library ? relative(p.campaignDir, a) : a)),
    stderr: chosen.stderr,
    meta: { ...chosen.meta, tick_source: chosen.meta.counter ?? 'unknown', wrapped: profiled.wrapped.join(' ') },
    library_sha256: p.librarySha256,
    profile_symbols: digest,
    total: chosen.total,
    calls: chosen.calls,
    ...(failed
      ? { failure: failed.failure }
      : {
          ...shares(chosen.total.ticks, chosen.calls),
          round_hash_shares: kept.map((r) => r.hashShare),
          disturbed_rounds: kept === done ? done.filter((r) => r.disturbed).length : 0,
          left_out_rounds: left.map((r) => ({ hash_share: r.hashShare, disturbed: r.disturbed ?? '' })),
        }),
  };
}

/**
 * How much slower the profiled relink may run than the library: the wrapper around each hash call
 * costs about 70 ticks (docs/benchmarks.md (g)), a quarter of a small hash's compression.
 */
const PROFILE_WRAP_FACTOR = 2;

/** A round's or memory run's timeout: the floor, or the margin over what its calls and their inputs take. */
function timeoutFor(p: ProfileRequest, operation: string, calls: number, slower: number): number {
  const expected = p.callSeconds ? processSeconds(p.driverType, operation, p.callSeconds, calls, 1) : undefined;
  return scaledTimeoutS(p.timeoutMs / 1000, expected === undefined ? undefined : expected * slower + PROCESS_FIXED_S) * 1000;
}

/** ngcc_mem on the plain library: painted stack and interposed heap of one operation alone. */
async function measureMemory(p: ProfileRequest, operation: string): Promise<MemoryRecord> {
  const { candidate, instance } = p.request;
  const driver = await runDriver([p.tools.mem, p.library], ['mem', p.driverType, operation, p.driverRng], {
    timeoutMs: timeoutFor(p, operation, 1, 1),
    maxOutputBytes: 1 << 20,
    sandbox: { mode: p.request.sandbox ?? 'bwrap', readOnly: [p.tools.mem, p.library], writable: [] },
  });
  const { run: mem, output: m, rejected } = driver;
  const complete = !rejected && mem.exitCode === 0 && m.status === 'complete';
  // Figures only from a driver that finished: a half-run's are not the operation's.
  const num = (k: string) => (complete && m.meta[k] !== undefined ? Number(m.meta[k]) : null);
  return {
    schema: 1,
    candidate: candidate.id,
    label: instance.label,
    operation,
    status: complete ? 'complete' : 'failed',
    library_sha256: p.librarySha256,
    stack_bytes: num('stack_bytes'),
    stack_baseline_bytes: num('stack_baseline_bytes'),
    stack_net_bytes: num('stack_net_bytes'),
    heap_peak_bytes: num('heap_peak_bytes'),
    heap_allocations: num('heap_allocations'),
    vmhwm_bytes: num('vmhwm_bytes'),
    ...(complete ? {} : { failure: driverFailure(driver) }),
  };
}

/** Why a profiling or memory run gave no figures. */
function driverFailure({ run, output, rejected }: DriverRun): string {
  if (rejected) return rejected.kind === 'unfinished' ? `the driver did not finish: ${rejected.reason}` : rejected.reason;
  if (output.statusDetail) return output.statusDetail;
  return output.status === 'complete' ? 'no TOTAL line, or no ticks' : `exit ${run.exitCode}${output.status ? ` (${output.status})` : ''}`;
}
