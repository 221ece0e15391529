import { randomInt } from 'node:crypto';
import { runDriver } from '../sandbox/runProcess.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import type { TrialProcess } from './trial.js';
import type { InputsCheck } from './decInputs.js';
import { firstDifference, transcriptOf } from './transcript.js';

export { firstDifference } from './transcript.js';

/**
 * Proof of work (docs/method.md#proof-of-work): one segment of a trial's calls (about an eighth),
 * drawn after the trial is over, is made again from the trial's seed by a separate process. That
 * process is not timed, shares nothing with the trial's, runs fewer warm-ups than a KAT makes calls, of its own, and makes
 * that segment alone, so
 * its calls sit at other places in the library's history than in the trial. What they return must
 * be what the trial's calls returned, block by block of the transcript (native/core/calls.h). A library
 * that skipped work in the trial, answered from a cache or from its last answer, cheated from some
 * call or some time on, or whose lines were forged by code in its process, gives blocks that
 * differ, and the operation is FORGED.
 */

export interface ReplayRequest {
  driver: string;
  library: string;
  type: string;
  operation: string;
  rng: string;
  timeoutMs: number;
  memoryLimitBytes?: number;
  sandbox?: SandboxMode;
}

/** What a replay found for one trial. */
export interface ReplayResult {
  /** Which trial of the operation (0-based, in the order they ran). */
  trial: number;
  /** Which segment of its calls (native/core/calls.h) was made again. */
  segment?: number;
  /**
   * `inputs`: no replay; dec's transcript against the one its inputs job gave (measure/decInputs.ts).
   * `base`: the replay was made by the library this one is held to (a pull request's base).
   */
  check?: 'inputs' | 'base';
  /** `differs`: the outputs are not the replay's (FORGED); `failed`: the replay gave no transcript. */
  outcome: 'agrees' | 'differs' | 'failed';
  /** Unless they agree: why, naming the trial and the calls. */
  detail?: string;
  wall_s: number;
}

/** The most calls of one operation an ICCS KAT makes in a process (native/jobs/kat.c: 10 records, 2 fresh seeds, dec twice for each). */
export const KAT_CALLS = 14;

/**
 * Warm-ups for a replay: fewer than a KAT makes calls of an operation, so a library that stops
 * computing after so many calls in a process still computes at the start of the replayed segment;
 * and not the trial's number, so the segment's calls come at another place in the library's count.
 */
export function replayWarmups(trialWarmups: number, most = KAT_CALLS - 1): number {
  const limit = Math.max(1, Math.min(most, KAT_CALLS - 1));
  if (trialWarmups > limit) return randomInt(limit + 1);
  const w = randomInt(limit);
  return w >= trialWarmups ? w + 1 : w;
}

/**
 * The most warm-ups a replay may make: those of a KAT, unless the calls are slow, where they cost
 * at most about one trial's target (a 47-s keygen's 13 warm-ups would take ten minutes), and never
 * fewer than one more than the trial's, so that the count still differs.
 */
export function replayWarmupLimit(trialWarmups: number, secondsPerCall: number | undefined, trialTargetS: number): number {
  if (!secondsPerCall || !(secondsPerCall > 0)) return KAT_CALLS - 1;
  return Math.max(trialWarmups + 1, Math.min(KAT_CALLS - 1, Math.floor(trialTargetS / secondsPerCall)));
}

/**
 * Replays one segment, drawn now, of trial `index` of an operation (a complete process with a
 * transcript and its seed), which ran the plan's `iterations` calls after `warmups`.
 */
export async function replayTrial(
  req: ReplayRequest,
  proc: TrialProcess,
  index: number,
  iterations: number,
  warmups: number,
  mostWarmups = KAT_CALLS - 1,
): Promise<ReplayResult> {
  const seed = proc.meta.seed;
  const perSegment = Number(proc.meta.calls_per_segment);
  const name = `trial ${index + 1}`;
  if (!seed || !proc.transcript?.blocks || !(perSegment >= 1))
    return { trial: index, outcome: 'failed', detail: `${name} kept no seed or transcript to replay`, wall_s: 0 };
  const segment = randomInt(Math.ceil(iterations / perSegment));
  // The trial's job, unpinned and without marks, for one segment after other warm-ups.
  const job = [
    'replay',
    req.type,
    req.operation,
    String(iterations),
    String(replayWarmups(warmups, mostWarmups)),
    '-1',
    req.rng,
    '2',
    seed,
    String(segment),
    // The trusted half's key, under which the trial's segments were made (native/core/held.h).
    ...(proc.window_key ? [proc.window_key] : []),
  ];
  const driver = await runDriver([req.driver, req.library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, req.library], writable: [] },
  });
  const { run, output, rejected } = driver;
  const wall_s = run.wallSeconds;
  const done = { trial: index, segment, wall_s };
  const replayed = rejected || output.status !== 'complete' ? undefined : transcriptOf(output.lines);
  if (!replayed) {
    const why = rejected?.reason ?? `${output.status ?? 'no STATUS'}${output.statusDetail ? `: ${output.statusDetail}` : ''}`;
    return { ...done, outcome: 'failed', detail: `the replay of ${name} gave no transcript (${why})` };
  }
  const where = firstDifference(proc.transcript, replayed, iterations);
  return where
    ? { ...done, outcome: 'differs', detail: `${name}, ${where}: the outputs differ from those of its replay from the trial's seed` }
    : { ...done, outcome: 'agrees' };
}

/** A dec trial's check as the operation's replays list it, the trial's index 0-based (-1: the calibration). */
export function inputsVerdict(check: InputsCheck, index: number, wall_s: number): ReplayResult {
  const done = { trial: index, check: 'inputs' as const, wall_s };
  return check.outcome === 'agrees'
    ? { ...done, outcome: 'agrees' }
    : {
        ...done,
        outcome: 'differs',
        detail: `${index < 0 ? 'the calibration' : `trial ${index + 1}`}, ${check.calls}: dec's secrets differ from those enc gave with the ciphertexts, in the process that made them`,
      };
}
