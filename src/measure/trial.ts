import { runDriver, type ChannelMark, type DriverRun } from '../sandbox/runProcess.js';
import type { Trial } from './stats.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { CONTRADICTION, kernelInconsistency, SLACK_PRECISE_S, SLACK_TICKS_S, trialWindow } from './kernelCheck.js';
import { cpuTimeIsPrecise } from '../sandbox/cpuTime.js';
import { parseOsLine } from './disturbance.js';
import { randomBytes } from 'node:crypto';
import { transcriptOf, type Transcript } from './transcript.js';
import { belowFloor } from './floor.js';
import { REFUSED } from './refusals.js';
import { type CanaryTicks, canaryOf } from './canary.js';
import { calibrationOverclaim, clockShortfall, type Held, heldOf, trustedClockOf, type TrustedClock, unheldOf } from './trustedClock.js';
import { type BatchPlan, batchPlan } from './batches.js';
import { processCost, type ProcessCost } from './processCost.js';
import {
  BESIDE_WINDOWS_SHARE,
  BESIDE_WINDOWS_SHARE_HELD,
  checkAgainstInputs,
  cpuBesideWindows,
  type DecInputs,
  makeDecInputs,
  type InputsCheck,
  type KeyPairSource,
} from './decInputs.js';

export interface TrialRequest {
  /** ngcc_driver. */
  driver: string;
  library: string;
  /** The driver's TYPE: kem, sig, kex, or hash:BITS. */
  type: string;
  operation: string;
  iterations: number;
  warmups: number;
  cpu: number;
  rng: string;
  timeoutMs: number;
  memoryLimitBytes?: number;
  /** How the driver is isolated (default bwrap): it reads itself and the library, writes nothing. */
  sandbox?: SandboxMode;
  /** The counter's rate from the run's probe: each trial is checked against the kernel's view with it. */
  counterHz?: number;
  /**
   * A calibration (its one call, or a few, only size the plan; the trials are checked): its
   * figures are not held against the kernel's, whose few milliseconds of slack a window of
   * microseconds cannot use.
   */
  calibration?: boolean;
  /** The fewest generator draws a KAT call of this operation made (build.json `kat_draws`), when known. */
  katDraws?: number;
  /** verify: the entries of its pool of signed messages (the driver's default is VERIFY_POOL, 16). */
  verifyPool?: number;
  /** dec: the library that makes the inputs, when not this one (measure/decInputs.ts `truthLibrary`). */
  truthLibrary?: string;
  /** dec: the operation's key pair (measure/decInputs.ts keyPairSource). */
  keys?: KeyPairSource;
  /**
   * The instance's sizes from its KAT (build.json `sizes`): the trial's batches and windows are held
   * to the plan they give (measure/batches.ts); without them, to the sizes the driver reports.
   */
  sizes?: Record<string, number>;
}

/** Spot checks per trial (native/core/harness.h DEFAULT_SPOT_CHECKS), said on the job line when a later field is. */
const DEFAULT_SPOT_CHECKS = 2;

export interface TrialProcess {
  status: 'complete' | 'failed';
  /** When the process started (ISO 8601, UTC). */
  started_utc: string;
  exit_code: number | null;
  meta: Record<string, string>;
  trials: Trial[];
  stderr: string;
  command: string[];
  wall_s: number;
  disturbed_retries: number;
  /** The disturbed attempts run again before this one (when, how long, why), oldest first. */
  retried?: Array<{ started_utc: string; wall_s: number; disturbed: string }>;
  /** Why a failed process failed: a driver STATUS, a signal or a timeout. */
  failure?: string;
  /** Where its wall time went, by the parent's clock at the driver's marks (measure/processCost.ts). */
  cost?: ProcessCost;
  /**
   * What the calls returned (native/core/calls.h): one digest per block of `per_block` consecutive
   * calls, which the replay of `meta.seed` must give again (measure/replay.ts). In the evidence
   * only their SHA-256 is kept (`digest`).
   */
  transcript?: Transcript;
  /**
   * The trusted half's window key (native/core/held.h), revealed once the trial was over: each segment's
   * inputs and generator seed came from it and the seed, so its replay is given it.
   */
  window_key?: string;
  /**
   * dec: its transcript against the one its inputs' job gave (measure/decInputs.ts), which stands
   * for its replay; and that job's wall seconds, what making the inputs elsewhere costs.
   */
  inputs_check?: InputsCheck;
  inputs_s?: number;
  /** dec: CPU seconds its process tree used outside its windows once its inputs existed (measure/decInputs.ts). */
  beside_windows_cpu_s?: number;
  /** Of it, the trusted half's own work on the book between the windows (its HELD line): not the library's. */
  held_beside_cpu_s?: number;
}

/** Why a trial process gave no trial; undefined when it gave one. */
function failureOf({ run, output: out, rejected }: DriverRun): string | undefined {
  if (rejected?.kind === 'timeout') return 'TIMEOUT';
  if (rejected?.kind === 'signal') return `CRASH (${run.signal})`;
  if (rejected?.kind === 'output-limit') return rejected.reason;
  if (rejected) return `the driver did not finish: ${rejected.reason}`;
  if (run.exitCode !== 0) return `${out.status ?? 'ERROR'}${out.statusDetail ? `: ${out.statusDetail}` : ''}`;
  if (out.status !== 'complete') return 'no STATUS line';
  return undefined;
}

/** Runs one trial in a fresh process (the driver pins itself to the CPU). */
export async function runTrial(req: TrialRequest): Promise<TrialProcess> {
  const started_utc = new Date().toISOString();
  const job = timeJob(req);
  const argv = [req.driver, req.library, ...job];
  // The trial's inputs and the library's randomness come from it; sent once the library is loaded.
  const seed = randomBytes(SEED_BYTES).toString('hex');
  // dec's timed inputs come from another process.
  const inputs = takesInputs(req) ? await makeDecInputs(req) : undefined;
  if (typeof inputs === 'string') return inputsFailed(argv, started_utc, inputs);
  let driver: DriverRun;
  try {
    driver = await runDriver([req.driver, req.library], job, {
      timeoutMs: req.timeoutMs,
      maxOutputBytes: 64 * 1024,
      memoryLimitBytes: req.memoryLimitBytes,
      sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, req.library, ...(inputs ? [inputs.givenDir] : [])], writable: [] },
      ...inputAnswers(req, seed, inputs),
    });
  } finally {
    inputs?.dispose();
  }
  const { run, output: out } = driver;
  const held = heldOf(out.lines) ?? unheldOf(out.lines);
  // A trial the trusted half could not hold fails for that, whatever the driver then said.
  let failure = typeof held === 'string' && failureOf(driver) ? heldNone(held) : failureOf(driver);
  const trials: Trial[] = [];
  // dec's `warmups` and `inputs` marks fall between its seed and its first window: the split counts
  // them as preparing.
  const marks = (run.channel?.marks ?? []).filter((m) => m.name !== 'warmups' && m.name !== 'inputs');
  const window = trialWindow(marks, true);
  // Only a finished driver's lines are a trial.
  const parsed = failure ? { trials } : trialsOf(out.lines, req.type, window);
  trials.push(...parsed.trials);
  failure ??= parsed.refused;
  const transcript = failure ? undefined : transcriptOf(out.lines);
  const clock = trustedClockOf(out.lines);
  keepClock(trials, clock, canaryOf(out.lines));
  if (!failure && trials.length > 0) failure = firstRefusal({ req, meta: out.meta, trials, window, clock, held, transcript, seed });
  // The driver says only that it could not open them; the parent knows why.
  if (inputs?.placeFailure()) failure = inputs.placeFailure();
  if (!failure && trials.length > 0 && inputs && out.meta.inputs !== 'given')
    failure = `${REFUSED}the driver did not take the inputs it was given`;
  const beside = inputs && !failure && trials.length > 0 ? cpuBesideWindows(run.channel?.marks ?? []) : undefined;
  failure ??= besideFailure(beside, typeof held === 'object' ? held : undefined);
  if (failure) trials.length = 0;
  const check = inputs && transcript && !failure ? checkAgainstInputs(transcript, inputs.transcript, req.iterations) : undefined;
  // A calibration's figure sizes the plan: one whose outputs are not its inputs' sizes nothing.
  if (check?.outcome === 'differs' && req.calibration) {
    failure = `dec's secrets differ from those enc gave with the ciphertexts, in the process that made them (${check.calls})`;
    trials.length = 0;
  }
  return {
    status: failure || trials.length === 0 ? 'failed' : 'complete',
    started_utc,
    exit_code: run.exitCode,
    meta: out.meta,
    trials,
    stderr: run.stderr,
    command: argv,
    wall_s: run.wallSeconds,
    disturbed_retries: 0,
    failure: failure ?? (trials.length === 0 ? 'no TRIAL line' : undefined),
    ...costOf(marks, run.wallSeconds),
    ...(transcript && !failure ? { transcript } : {}),
    ...(typeof held === 'object' && !failure ? { window_key: held.key } : {}),
    ...(check ? { inputs_check: check } : {}),
    ...(inputs ? { inputs_s: inputs.wall_s } : {}),
    ...(beside && typeof beside !== 'string' ? { beside_windows_cpu_s: beside.beside_s } : {}),
    ...(beside && typeof beside !== 'string' && typeof held === 'object' ? { held_beside_cpu_s: held.beside_s } : {}),
  };
}

/** The driver's `time` job for a trial. */
function timeJob(req: TrialRequest): string[] {
  return [
    'time',
    req.type,
    req.operation,
    String(req.iterations),
    String(req.warmups),
    String(req.cpu),
    req.rng,
    // verify's pool of signed messages, when not the driver's default (the repeated-input audit).
    ...(req.verifyPool ? [String(DEFAULT_SPOT_CHECKS), String(req.verifyPool)] : []),
  ];
}

/**
 * What the driver is told at its `seed`, `warmups` and `inputs` marks, and dec's timed inputs as a
 * file only its trusted half keeps, where it holds the trial's windows (the plan says so from the
 * instance's sizes: native/core/held.h); else their path, put in place at the mark.
 */
function inputAnswers(req: TrialRequest, seed: string, inputs: DecInputs | undefined) {
  if (!inputs) return { markAnswers: { seed, warmups: '-', inputs: '-' } };
  const held = req.sizes ? batchPlan(req.type, req.operation, req.iterations, req.sizes)?.held : false;
  const timed = held ? { inputs: HELD_INPUTS, heldInputsFd: inputs.openHeld() } : { inputs: inputs.place };
  return {
    markAnswers: { seed, warmups: inputs.placeWarmups, inputs: timed.inputs },
    ...(held ? { heldInputsFd: timed.heldInputsFd } : {}),
  };
}

/** The answer to dec's `inputs` mark that gives its timed inputs to the trusted half (native/core/calls.h GIVEN_HELD). */
const HELD_INPUTS = 'held';

/** The trial of a driver's lines (TRIAL, then its OS and CALLS; a key exchange's LOOP before them), or why they are refused. */
function trialsOf(lines: string[][], type: string, window: ReturnType<typeof trialWindow>): { trials: Trial[]; refused?: string } {
  const trials: Trial[] = [];
  let refused: string | undefined;
  let loop: Pick<Trial, 'loop_cycles' | 'loop_s'> = {};
  for (const f of lines) {
    // Only a key exchange counts a span of each call and reports its whole loop beside it.
    if (f[0] === 'LOOP' && type !== 'kex') refused = `${REFUSED}a LOOP line in a trial of ${type}, which has no span`;
    if (f[0] === 'TRIAL') {
      const [measurements, seconds, cycles] = [Number(f[1]), Number(f[2]), Number(f[3])];
      trials.push({ measurements, seconds, cycles, clock_hz: cycles / seconds, ...loop, ...window });
    } else if (f[0] === 'LOOP' && trials.length === 0) {
      loop = { loop_cycles: Number(f[1]), loop_s: Number(f[2]) };
    } else if (f[0] === 'OS' && trials.length > 0) {
      const os = parseOsLine(f);
      if (os) trials[trials.length - 1]!.os = os;
    } else if (f[0] === 'CALLS' && trials.length > 0) {
      const [n, min, q1, med, q3, max] = f.slice(1).map(Number) as [number, number, number, number, number, number];
      trials[trials.length - 1]!.per_call_cycles = { n, min, q1, median: med, q3, max };
    }
  }
  return { trials, ...(refused ? { refused } : {}) };
}

/** The trusted half's count and canary kept with the trial it judged (evidence: trials[].trusted_cycles, trusted_wait_s, canary_cycles). */
function keepClock(trials: Trial[], clock: TrustedClock | undefined, canary: CanaryTicks | undefined): void {
  if (trials.length === 0) return;
  if (canary) trials[0]!.canary_cycles = canary;
  if (!clock) return;
  trials[0]!.trusted_cycles = clock.cycles;
  if (clock.waited_ns !== undefined) trials[0]!.trusted_wait_s = clock.waited_ns / 1e9;
}

/**
 * The first check a trial fails, each a refusal, in this order: its count, the kernel's view, its
 * batches, the trusted half's clock, its seed, its transcript, its draws, the physical floor.
 */
function firstRefusal(t: {
  req: TrialRequest;
  meta: Record<string, string>;
  trials: Trial[];
  window: ReturnType<typeof trialWindow>;
  clock: TrustedClock | undefined;
  /** What the trusted half held, or why it held nothing. */
  held: Held | string | undefined;
  transcript: Transcript | undefined;
  seed: string;
}): string | undefined {
  const { req, meta, trials } = t;
  const checks: Array<() => string | undefined> = [
    () => countFailure(trials, req.iterations),
    () =>
      kernelFailure(
        trials,
        t.window,
        meta.counter,
        req.calibration ? undefined : req.counterHz,
        typeof t.held === 'object' ? t.held : undefined,
      ),
    () => batchFailure(req, meta, t.clock, t.held, t.transcript),
    () => clockFailure(trials, t.clock, meta.counter, req.counterHz, req.calibration),
    () => (meta.seed !== t.seed ? `${REFUSED}the driver did not report the seed it was sent` : undefined),
    () => (t.transcript ? undefined : `${REFUSED}no transcript of the calls`),
    () => drawsFailure(meta.draws, trials[0]!.measurements, req),
    () => {
      const low = belowFloor(req.type, req.operation, meta, trials[0]!);
      return low ? `${REFUSED}${low}` : undefined;
    },
  ];
  for (const check of checks) {
    const why = check();
    if (why) return why;
  }
  return undefined;
}

/**
 * dec's CPU beside its windows, as a refusal: library code run in the driver's place outside the
 * windows (a hook on its pread, a signal's handler) would make the calls cheap with a true
 * transcript, and its CPU shows here.
 */
function besideFailure(beside: ReturnType<typeof cpuBesideWindows> | undefined, held: Held | undefined): string | undefined {
  if (typeof beside === 'string') return `${REFUSED}${beside}`;
  if (!beside) return undefined;
  // Held, the trusted half reads each window's ciphertexts and folds its outputs: its own work is in the
  // process tree's CPU there, is not the library's, and leaves the driver less to do beside the windows.
  const library = beside.beside_s - (held?.beside_s ?? 0);
  const share = held ? BESIDE_WINDOWS_SHARE_HELD : BESIDE_WINDOWS_SHARE;
  const limit = besideLimit(beside.windows_s, share);
  if (library <= limit) return undefined;
  return `${REFUSED}${BESIDE_WINDOWS}${library.toFixed(4)} s of CPU outside its windows once its inputs existed, more than ${limit.toFixed(4)} s (${share * 100} % of the windows' ${beside.windows_s.toFixed(4)} s, and the accounting's slack)`;
}

/** The most CPU a dec trial may use outside its windows once its inputs exist (measure/decInputs.ts). */
const besideLimit = (windows_s: number, share: number): number =>
  (cpuTimeIsPrecise() ? SLACK_PRECISE_S : SLACK_TICKS_S) + share * windows_s;

/** Whether a trial's timed inputs come from the inputs job: kem dec's, calibrations' too. */
const takesInputs = (req: TrialRequest): boolean => req.type === 'kem' && req.operation === 'dec';

/** A trial that did not run: its inputs could not be made. */
function inputsFailed(command: string[], started_utc: string, why: string): TrialProcess {
  return {
    status: 'failed',
    started_utc,
    exit_code: null,
    meta: {},
    trials: [],
    stderr: '',
    command,
    wall_s: 0,
    disturbed_retries: 0,
    failure: why,
  };
}

const costOf = (marks: ChannelMark[], wall_s: number): { cost?: ProcessCost } => {
  const cost = processCost(marks, wall_s);
  return cost ? { cost } : {};
};

/** Bytes of a trial's seed (native/core/calls.h SEED_BYTES). */
const SEED_BYTES = 48;

/**
 * A trial whose count is not the one the parent asked for, as a failure: the count is the parent's,
 * and the library shares the process that reports it (a forged TRIAL line could claim ten times the
 * calls). The per-call samples cannot outnumber the calls either.
 */
function countFailure(trials: Trial[], asked: number): string | undefined {
  const t = trials[0]!;
  if (t.measurements !== asked) return `${REFUSED}the driver reported ${t.measurements} calls, the parent asked for ${asked}`;
  const n = t.per_call_cycles?.n;
  if (n !== undefined && (n < 1 || n > asked)) return `${REFUSED}${n} per-call samples for ${asked} calls`;
  return undefined;
}

/**
 * A trial whose calls drew from the harness's generator fewer times than there were calls, for an
 * operation whose KAT calls drew, as SUPERCOP counts randombytes: a call that hands out an earlier
 * answer has no use for fresh randomness. The count is the library's generator's (native/core/harness.c
 * api_draws), over all the trial's calls.
 */
export function drawsFailure(reported: string | undefined, calls: number, req: TrialRequest): string | undefined {
  const perCall = req.katDraws;
  if (!perCall) return undefined;
  if (reported === undefined || !/^\d+$/.test(reported))
    return `${REFUSED}no count of the generator's draws, though the KAT counted ${perCall} per ${req.operation}`;
  const drawn = Number(reported);
  // One draw per call, not the KAT's fewest: a scheme that samples until it accepts draws a varying
  // number of times, and a dozen records do not find its least (the catalogue's McEliece enc drew
  // at least 2, or 6, in every KAT record, and once in a trial's call). A call that draws nothing
  // takes its randomness from nowhere.
  if (drawn < calls)
    return `${REFUSED}${calls} ${req.operation} calls drew ${drawn} times from the generator; each drew at least ${perCall} in the KAT`;
  return undefined;
}

/** A trial the kernel's view contradicts (docs/method.md#the-kernels-view), as a failure; undefined when it holds. */
function kernelFailure(
  trials: Trial[],
  window: ReturnType<typeof trialWindow>,
  counter: string | undefined,
  counterHz: number | undefined,
  held: Held | undefined,
) {
  if (!window || trials.length !== 1) return `${REFUSED}the driver did not mark its seed and the timed batches`;
  if (counterHz === undefined || counter === undefined) return undefined; // no trusted rate: nothing to compare with
  // A key-exchange span is part of each call: the kernel saw the whole loop. The trusted half's
  // copies of the windows' inputs and outputs are in the process's CPU, and are not the library's.
  const slack = cpuTimeIsPrecise() ? SLACK_PRECISE_S : SLACK_TICKS_S;
  // (Its work between the windows, beside_s, is outside the begin→end pairs the kernel's view sums:
  // nothing of it is there to take off.)
  const library = held ? { ...window, kernel_cpu_s: Math.max(0, window.kernel_cpu_s - held.cpu_s) } : window;
  const why = kernelInconsistency(trials[0]!.loop_cycles ?? trials[0]!.cycles, counter, counterHz, library, slack);
  return why ? `${REFUSED}${why}` : undefined;
}

/** A trial whose cycles fall short of the trusted half's count (measure/trustedClock.ts), as a failure. */
function clockFailure(
  trials: Trial[],
  clock: TrustedClock | undefined,
  counter: string | undefined,
  counterHz: number | undefined,
  calibration?: boolean,
) {
  if (counterHz === undefined) return undefined; // no trusted rate: nothing to compare with
  const t = trials[0]!;
  if (calibration) {
    // Its few calls only size the plan: held only to not claiming more than passed.
    const why = calibrationOverclaim(t.loop_cycles ?? t.cycles, counterHz, clock);
    return why ? `${REFUSED}${why}` : undefined;
  }
  if (t.loop_cycles !== undefined && t.cycles > t.loop_cycles)
    return `${REFUSED}its span of each exchange, ${t.cycles} counter ticks, is more than the whole loop's ${t.loop_cycles}`;
  // A key exchange's counted span is part of each call: the trusted half saw the whole loop.
  const why = clockShortfall(t.loop_cycles ?? t.cycles, counter, counterHz, clock);
  return why ? `${REFUSED}${why}` : undefined;
}

/** The sizes a driver reports (META), under build.json's names. */
const SIZE_METAS = ['pk_bytes', 'sk_bytes', 'ct_bytes', 'ss_bytes', 'signature_bytes'] as const;

/**
 * A trial whose batches, or windows, are not those the plan gives, as a failure: a mark the library
 * wrote inside its calls would leave the work after it out of the trusted half's count.
 */
function batchFailure(
  req: TrialRequest,
  meta: Record<string, string>,
  clock: TrustedClock | undefined,
  held: Held | string | undefined,
  transcript: Transcript | undefined,
): string | undefined {
  const reported = Object.fromEntries(SIZE_METAS.filter((k) => meta[k] !== undefined).map((k) => [k, Number(meta[k])]));
  const sizes = req.sizes ?? reported;
  const differs = req.sizes
    ? SIZE_METAS.find((k) => req.sizes![k] !== undefined && reported[k] !== undefined && reported[k] !== req.sizes![k])
    : undefined;
  if (differs) return `${REFUSED}the driver says ${differs} is ${reported[differs]}, the KAT recorded ${req.sizes![differs]}`;
  const plan = batchPlan(req.type, req.operation, req.iterations, sizes);
  if (!plan) return `${REFUSED}no sizes to plan the batches of ${req.operation} with`;
  const said = `${meta.calls_per_batch ?? '?'} calls a batch in segments of ${meta.calls_per_segment ?? '?'}`;
  if (Number(meta.calls_per_batch) !== plan.batch || Number(meta.calls_per_segment) !== plan.segment)
    return `${REFUSED}the driver says ${said}; ${req.iterations} calls at these sizes make ${plan.batch} in segments of ${plan.segment}`;
  if (clock?.windows !== plan.windows)
    return `${REFUSED}the trusted half counted ${clock?.windows ?? 'no'} window(s); ${req.iterations} calls in batches of ${plan.batch} make ${plan.windows}`;
  return heldFailure(plan, req.iterations, held, transcript);
}

/**
 * A trial the trusted half should have held and did not, or held by another layout than the sizes
 * give (native/core/held.h): the untrusted half lays its slots out in the shared book, and one that
 * claimed smaller outputs there would have less of each folded.
 */
/** The refusal of a trial the trusted half should have held and did not, with its reason (its UNHELD line). */
const heldNone = (why: string | undefined) =>
  `${REFUSED}the trusted half held none of its windows' inputs and outputs (native/core/held.h)${why ? `: ${why}` : ''}`;

function heldFailure(
  plan: BatchPlan,
  calls: number,
  held: Held | string | undefined,
  transcript: Transcript | undefined,
): string | undefined {
  if (typeof held !== 'object') {
    return plan.held ? heldNone(held) : undefined;
  }
  const layout = (h: Pick<Held, 'kind' | 'stride' | 'batch' | 'segment' | 'perBlock' | 'inLen' | 'outLens'> & { calls: number }) =>
    `${h.calls} calls of ${h.kind} in slots of ${h.stride} bytes (input ${h.inLen}, outputs ${h.outLens.join(' and ')}), ${h.batch} a batch, segments of ${h.segment}, blocks of ${h.perBlock}`;
  const planned = layout({ ...plan, calls });
  if (layout(held) !== planned)
    return `${REFUSED}the trusted half read ${layout(held)} from the book; the job and the sizes give ${planned}`;
  // Its transcript covers every call, from the first block: no line of the child's stands in for it.
  const blocks = Math.ceil(calls / plan.perBlock);
  if (transcript?.first || transcript?.blocks?.length !== blocks)
    return `${REFUSED}the transcript has ${transcript?.blocks?.length ?? 'no'} block(s) from block ${transcript?.first ?? 0}; the trusted half folds ${blocks}`;
  return undefined;
}

/** How dec's refusal for CPU beside its windows starts, after REFUSED. */
const BESIDE_WINDOWS = 'its process used ';

/**
 * Whether a trial failed on what a loaded host can also cause, once: the kernel's view contradicting
 * its cycles (kernelCheck.ts), or dec's CPU beside its windows (kernel work charged to the process,
 * a page fault or reclaim, once added 17 ms to an honest toy's 2). The operation runs such a trial
 * once more, and fails only if it fails so again (measure/operation.ts).
 */
export const runsOnceMore = (p: Pick<TrialProcess, 'status' | 'failure'>): boolean =>
  p.status !== 'complete' && [CONTRADICTION, BESIDE_WINDOWS].some((start) => (p.failure ?? '').startsWith(`${REFUSED}${start}`));

/**
 * A single trial (a calibration, an audit process), run once more when it failed on what a loaded
 * host can also cause (runsOnceMore); the first attempt is kept in `retried`.
 */
export async function trialOnceMore(req: TrialRequest): Promise<TrialProcess> {
  const first = await runTrial(req);
  if (!runsOnceMore(first)) return first;
  const again = await runTrial(req);
  again.retried = [{ started_utc: first.started_utc, wall_s: first.wall_s, disturbed: first.failure! }];
  return again;
}
