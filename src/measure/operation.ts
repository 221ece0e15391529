import { PROCESS_FIXED_S } from '../config/defaults.js';
import { basename } from 'node:path';
import { randomInt } from 'node:crypto';
import type { Planning } from '../config/schemas.js';
import { loadAverage } from '../env/host.js';
import {
  calibrationSecondsPerCall,
  callPlanStands,
  planCalls,
  planDone,
  plannedInCalls,
  planSizing,
  secondCalibration,
  planTrials,
  type Plan,
} from './plan.js';
import { deriveStatistics, type Trial } from './stats.js';
import { type CanaryReference, canaryDisturbance, trialCanary } from './canary.js';
import { disturbance } from './disturbance.js';
import { clockDisturbance } from './trustedClock.js';
import { HASH_OPERATIONS, hashMessageBytes } from './hashOperations.js';
import { runsOnceMore, runTrial, type TrialProcess, type TrialRequest, trialOnceMore } from './trial.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { KEX_PROFILED, kexOperations } from './kexOperations.js';
import { inputsVerdict, KAT_CALLS, replayTrial, replayWarmupLimit, type ReplayResult } from './replay.js';
import { repeatedInputAudit, type RepeatAudit } from './repeatAudit.js';
import { processSeconds, scaledTimeoutS, type CallSeconds } from './cost.js';
import { keyPairSource } from './decInputs.js';

export const OPERATIONS = {
  kem: ['keygen', 'enc', 'dec'],
  sig: ['keygen', 'sign', 'verify'],
  hash: HASH_OPERATIONS,
} as const satisfies Record<string, readonly string[]>;

/** A candidate's category (candidate.yml `type`). */
export type CandidateType = 'kem' | 'sig' | 'kex' | 'hash';

/** The timed operations of an instance: a key exchange's depend on its number of passes (build.json `sizes.kex_passes`). */
export const operationsOf = (type: CandidateType, passes?: number): readonly string[] =>
  type === 'kex' ? kexOperations(passes) : OPERATIONS[type];
/** The operations the profile phase profiles and measures the memory of: a key exchange's whole exchange only. */
export const profiledOperationsOf = (type: CandidateType): readonly string[] => (type === 'kex' ? KEX_PROFILED : OPERATIONS[type]);

/** The guide's signature message: 64 bytes for sign and verify, nothing for the other operations. */
const SIGNED_MESSAGE_BYTES = 64;
export const inputBytes = (type: CandidateType, operation: string): number =>
  type === 'hash' ? (hashMessageBytes(operation) ?? 0) : type === 'sig' && operation !== 'keygen' ? SIGNED_MESSAGE_BYTES : 0;

export interface OperationRequest {
  /** ngcc_driver. */
  driver: string;
  library: string;
  /** The library path as written into evidence (relative to the campaign). */
  libraryShown: string;
  /** The driver's TYPE: kem, sig, kex, or hash:BITS (hashOperations.ts). */
  type: string;
  operation: string;
  cpu: number;
  rng: string;
  planning: Planning;
  /** The clock the core is fixed at, if known: trials measuring below min_clock_ratio of it are retried. */
  fixedClockHz?: number;
  /** How the timing driver is isolated (default bwrap). */
  sandbox?: SandboxMode;
  /** The counter's rate from the run's probe (each trial is checked against the kernel's view). */
  counterHz?: number;
  /** Replay every trial rather than one drawn at random (measure/replay.ts). */
  audit?: boolean;
  /** The fewest generator draws a KAT call of this operation made: each trial is held to it. */
  katDraws?: number;
  /** The KAT's seconds per call of each operation (build.json `call_seconds`): the timeouts follow them. */
  callSeconds?: CallSeconds;
  /**
   * Another library this one must agree with (a pull request's base under the same KAT manifest):
   * it makes a segment of a trial again, and dec's inputs (docs/method.md#unseen-seeds).
   */
  truthLibrary?: string;
  /** The instance's sizes from its KAT (build.json `sizes`): each trial's batches are held to them. */
  sizes?: Record<string, number>;
  /** The host's recent canaries on this core: a trial whose canary ran far beyond them is disturbed (measure/canary.ts). */
  canary?: CanaryReference;
}

export interface OperationResult {
  status: 'complete' | 'partial' | 'failed';
  failure?: string;
  /** A replay gave other outputs than the trial: the failure, which makes the instance FORGED. */
  forged?: string;
  plan?: Plan;
  processes: TrialProcess[];
  trials: Trial[];
  stats?: ReturnType<typeof deriveStatistics>;
  meta: Record<string, string>;
  disturbed_retries: number;
  /** The trials replayed after the operation's last trial, and what each replay found (measure/replay.ts). */
  replays?: ReplayResult[];
  /** Why no trial was replayed, when none was. */
  replay_skipped?: string;
  /** verify: its figure on distinct inputs against the trials' repeated ones (measure/repeatAudit.ts). */
  repeat_audit?: RepeatAudit;
  repeat_audit_skipped?: string;
  started_utc: string;
  ended_utc: string;
  load_average_start: number[];
  load_average_end: number[];
}

/** A process as the evidence keeps it: paths shown relative, the transcript's digest without its blocks. */
function shown(p: TrialProcess, tool: string, lib: string, libShown: string): TrialProcess {
  const transcript = p.transcript ? { transcript: { per_block: p.transcript.per_block, digest: p.transcript.digest } } : {};
  return { ...p, command: p.command.map((a) => (a === tool ? basename(tool) : a === lib ? libShown : a)), ...transcript };
}

/** One operation under way: its plan and the trial processes run so far. */
interface InProgress {
  req: OperationRequest;
  base: Omit<TrialRequest, 'iterations' | 'warmups' | 'timeoutMs'>;
  started_utc: string;
  load_average_start: number[];
  /** The process whose figure sized the plan; none where the KAT's figure did (plan.sized_by). */
  calibration?: TrialProcess;
  plan?: Plan;
  processes: TrialProcess[];
  disturbed: number;
  stopped: boolean;
  replays?: ReplayResult[];
  replay_skipped?: string;
  repeat_audit?: RepeatAudit;
  repeat_audit_skipped?: string;
}

function start(req: OperationRequest): Omit<InProgress, 'calibration'> {
  return {
    req,
    base: {
      driver: req.driver,
      library: req.library,
      type: req.type,
      operation: req.operation,
      cpu: req.cpu,
      rng: req.rng,
      memoryLimitBytes: req.planning.memory_limit_mb * 1024 * 1024,
      sandbox: req.sandbox,
      counterHz: req.counterHz,
      ...(req.katDraws ? { katDraws: req.katDraws } : {}),
      ...(req.truthLibrary ? { truthLibrary: req.truthLibrary } : {}),
      ...(req.sizes ? { sizes: req.sizes } : {}),
      ...(req.type === 'kem' && req.operation === 'dec' ? { keys: keyPairSource() } : {}),
    },
    started_utc: new Date().toISOString(),
    load_average_start: loadAverage(),
    processes: [],
    disturbed: 0,
    stopped: false,
  };
}

/**
 * A timing process's timeout: the planning's floor, or the margin over what the KAT says its calls
 * and their inputs will take (measure/cost.ts) and the process's own start, whichever is longer.
 */
function processTimeoutMs(req: OperationRequest, calls: number, warmups: number, verifyPool?: number): number {
  const calling = req.callSeconds ? processSeconds(req.type, req.operation, req.callSeconds, calls, warmups, verifyPool) : undefined;
  return scaledTimeoutS(req.planning.process_timeout_s, calling === undefined ? undefined : calling + PROCESS_FIXED_S) * 1000;
}

/** One trial in a fresh process; re-run while the core's clock was below the fixed clock. */
async function nextTrial(op: InProgress): Promise<void> {
  const p = op.req.planning;
  const plan = op.plan!;
  let proc: TrialProcess;
  let retries = 0;
  let onceMore = 0;
  const retried: NonNullable<TrialProcess['retried']> = [];
  for (;;) {
    proc = await runTrial({
      ...op.base,
      iterations: plan.iterations_per_trial,
      warmups: plan.warmups,
      timeoutMs: Math.max(plan.timeout_per_process_s * 1000, processTimeoutMs(op.req, plan.iterations_per_trial, plan.warmups)),
    });
    // A loaded host once charged a short trial's window a millisecond or two more than its calls, and
    // an honest dec 17 ms beside its windows: such a trial runs once more, and fails only if it fails
    // so again (trial.ts runsOnceMore).
    if (runsOnceMore(proc) && onceMore++ < 1) {
      retried.push({ started_utc: proc.started_utc, wall_s: proc.wall_s, disturbed: proc.failure! });
      continue;
    }
    const trial = proc.trials[0];
    // Every complete trial's canary joins the host's reference, disturbed or not.
    const slowHost =
      proc.status === 'complete' && trial && op.req.canary
        ? canaryDisturbance(trialCanary(trial.canary_cycles), op.req.canary, p.canary_margin)
        : undefined;
    const why =
      proc.status === 'complete' && trial
        ? (clockDisturbance(trial, op.req.counterHz) ??
          disturbance(trial.os, { clockHz: trial.clock_hz, fixedClockHz: op.req.fixedClockHz, minClockRatio: p.min_clock_ratio }) ??
          slowHost)
        : undefined;
    if (!why) break;
    if (retries >= p.disturbed_retries) {
      // Still disturbed after its re-runs: kept, and said so.
      trial!.disturbed = why;
      break;
    }
    retried.push({ started_utc: proc.started_utc, wall_s: proc.wall_s, disturbed: why });
    retries++;
  }
  proc.disturbed_retries = retries;
  if (retried.length > 0) proc.retried = retried;
  op.disturbed += retries;
  op.processes.push(proc);
  if (proc.status !== 'complete') op.stopped = true;
  replanFastCall(op);
}

/**
 * A plan in calls whose first call proved fast (plan.ts callPlanStands): that trial becomes the
 * operation's calibration, and its figure plans the operation in trials. Only the first: once calls
 * are in, a later faster one is a fast stretch of the host, and a record keeps one plan.
 */
function replanFastCall(op: InProgress): void {
  const last = op.processes.at(-1);
  const t = last?.status === 'complete' ? last.trials[0] : undefined;
  if (!op.plan?.calls || op.processes.length !== 1 || !last || !t || callPlanStands(t, op.req.planning)) return;
  op.processes.pop();
  op.calibration = last;
  op.plan = planTrials(calibrationSecondsPerCall(t), op.req.planning);
}

function finish(op: InProgress): OperationResult {
  const req = op.req;
  const common = {
    started_utc: op.started_utc,
    ended_utc: new Date().toISOString(),
    load_average_start: op.load_average_start,
    load_average_end: loadAverage(),
  };
  const show = (x: TrialProcess) => shown(x, req.driver, req.library, req.libraryShown);
  // dec: a calibration whose outputs are not its inputs' (measure/decInputs.ts) is as FORGED as a trial.
  const calibration = op.calibration;
  const calibrationForged =
    calibration?.inputs_check?.outcome === 'differs' ? inputsVerdict(calibration.inputs_check, -1, 0).detail : undefined;
  if (calibration && calibrationForged)
    return {
      ...common,
      status: 'failed',
      failure: `FORGED: ${calibrationForged}`,
      forged: `FORGED: ${calibrationForged}`,
      processes: [show(calibration)],
      trials: [],
      meta: calibration.meta,
      disturbed_retries: 0,
    };
  // Without a plan there was a calibration (a KAT's figure always plans), and it failed.
  if (!op.plan)
    return {
      ...common,
      status: 'failed',
      failure: `calibration: ${calibration?.failure}`,
      processes: calibration ? [show(calibration)] : [],
      trials: [],
      meta: calibration?.meta ?? {},
      disturbed_retries: 0,
    };
  const trials = op.processes.filter((x) => x.status === 'complete').flatMap((x) => x.trials);
  const failed = op.processes.find((x) => x.status !== 'complete');
  const forged = op.replays?.find((r) => r.outcome === 'differs') ?? (op.repeat_audit?.outcome === 'differs' ? op.repeat_audit : undefined);
  const unreplayed =
    op.replays?.find((r) => r.outcome === 'failed') ?? (op.repeat_audit?.outcome === 'failed' ? op.repeat_audit : undefined);
  const replay = {
    ...(op.replays ? { replays: op.replays } : {}),
    ...(op.replay_skipped ? { replay_skipped: op.replay_skipped } : {}),
    ...(op.repeat_audit ? { repeat_audit: op.repeat_audit } : {}),
    ...(op.repeat_audit_skipped ? { repeat_audit_skipped: op.repeat_audit_skipped } : {}),
  };
  // Outputs that are not what the library computes when it is not timed, or a figure that is not its
  // work on fresh inputs: no figure of it stands.
  if (forged || unreplayed)
    return {
      ...common,
      status: 'failed',
      failure: forged
        ? `FORGED: ${forged.detail}`
        : unreplayed === op.repeat_audit
          ? `repeated-input audit: ${unreplayed!.detail}`
          : `replay: ${unreplayed!.detail}`,
      ...(forged ? { forged: `FORGED: ${forged.detail}` } : {}),
      plan: op.plan,
      processes: op.processes.map(show),
      trials: [],
      meta: op.processes[0]?.meta ?? op.calibration?.meta ?? {},
      disturbed_retries: op.disturbed,
      ...replay,
    };
  return {
    ...common,
    status: failed ? (trials.length > 0 ? 'partial' : 'failed') : 'complete',
    failure: failed?.failure,
    plan: op.plan,
    processes: op.processes.map(show),
    trials,
    stats: trials.length > 0 ? deriveStatistics(trials) : undefined,
    meta: op.processes[0]?.meta ?? op.calibration?.meta ?? {},
    disturbed_retries: op.disturbed,
    ...replay,
  };
}

/** Draws n distinct indices below `of`, uniformly. */
function draw(of: number, n: number): number[] {
  const all = [...Array(of).keys()];
  for (let i = all.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, n).sort((a, b) => a - b);
}

/**
 * After an operation's last trial: one of its complete trials, drawn only now (every one with
 * `audit`), is replayed from its seed in a separate process (measure/replay.ts).
 */
async function replayOperation(op: InProgress): Promise<void> {
  const complete = op.processes.map((p, i) => ({ p, i })).filter(({ p }) => p.status === 'complete');
  if (!op.plan || complete.length === 0) return;
  if (complete.every(({ p }) => p.inputs_check)) {
    // dec: every trial was already checked against the inputs made for it in another process.
    op.replays = complete.map(({ p, i }) => inputsVerdict(p.inputs_check!, i, p.inputs_s ?? 0));
    return;
  }
  const rng = complete[0]!.p.meta.rng;
  if (rng === 'none' && !op.req.type.startsWith('hash')) {
    op.replay_skipped = 'the library draws no randomness from the harness, so its outputs cannot be made again';
    return;
  }
  const picked = op.req.audit ? complete : draw(complete.length, 1).map((k) => complete[k]!);
  // Held to another library: one more trial, drawn now, is made again by that library.
  const byTruth = op.req.truthLibrary ? draw(complete.length, 1).map((k) => complete[k]!) : [];
  op.replays = [];
  const replay = (library: string, { p, i }: { p: TrialProcess; i: number }) =>
    replayTrial(
      // A segment after fewer warm-ups than a KAT's calls: at most the trial's own process.
      {
        ...op.base,
        library,
        timeoutMs: Math.max(op.plan!.timeout_per_process_s * 1000, processTimeoutMs(op.req, op.plan!.iterations_per_trial, KAT_CALLS)),
      },
      p,
      i,
      op.plan!.iterations_per_trial,
      op.plan!.warmups,
      replayWarmupLimit(op.plan!.warmups, op.plan!.calibration_seconds_per_call, trialTargetOf(op.req.planning)),
    );
  for (const picked_ of picked) op.replays.push(await replay(op.req.library, picked_));
  for (const picked_ of byTruth) op.replays.push(byOtherLibrary(await replay(op.req.truthLibrary!, picked_)));
}

/** A replay made by the library this one is held to: says so, and what differs is the base's outputs. */
function byOtherLibrary(r: ReplayResult): ReplayResult {
  const detail = r.detail?.replace("from those of its replay from the trial's seed", "from the base library's on the trial's seed");
  return { ...r, check: 'base', ...(detail ? { detail: r.outcome === 'failed' ? `${detail} (the base library)` : detail } : {}) };
}

/** The seconds a trial is planned for, fixed or adaptive. */
const trialTargetOf = (p: Planning): number => (p.adaptive?.enabled ? p.adaptive.trial_target_s : p.trial_target_s);

/** verify, after its trials: the repeated-input audit (measure/repeatAudit.ts). */
async function auditRepeatedInputs(op: InProgress): Promise<void> {
  if (op.req.type !== 'sig' || op.req.operation !== 'verify' || !op.plan) return;
  const complete = op.processes.filter((p) => p.status === 'complete');
  if (complete.length === 0 || op.replays?.some((r) => r.outcome !== 'agrees')) return;
  const planning = op.req.planning;
  const audit = await repeatedInputAudit({
    base: op.base,
    complete,
    iterations: op.plan.iterations_per_trial,
    warmups: op.plan.warmups,
    timeoutMs: (calls) => Math.max(op.plan!.timeout_per_process_s * 1000, processTimeoutMs(op.req, calls, op.plan!.warmups, calls)),
    signBudgetS: trialTargetOf(planning),
  });
  if ('skipped' in audit) op.repeat_audit_skipped = audit.skipped;
  else op.repeat_audit = audit;
}

/**
 * An operation needs no further trial: it failed or stopped, ran its plan's trials, or (adaptive, or
 * in calls) its completed trials already meet the plan's precision rule.
 */
function done(op: InProgress): boolean {
  if (!op.plan || op.stopped) return true;
  const trials = op.processes.filter((x) => x.status === 'complete').flatMap((x) => x.trials);
  return planDone(op.plan, op.processes.length, trials);
}

/** Rounds whose trials of both operations of a pair completed undisturbed. */
function cleanPairs(a: InProgress, b: InProgress): number {
  let clean = 0;
  for (let j = 0; j < Math.min(a.processes.length, b.processes.length); j++) {
    const [x, y] = [a.processes[j]!, b.processes[j]!];
    if (x.status === 'complete' && y.status === 'complete' && !x.trials[0]?.disturbed && !y.trials[0]?.disturbed) clean++;
  }
  return clean;
}

/**
 * Paired operations (ops 2k and 2k+1, measured side by side): a pair whose trial stayed disturbed
 * after its re-runs says nothing about the change, and the comparison leaves it out. So further
 * rounds of the pair run, alternating as before, until it has as many clean pairs as planned, or
 * twice the planned rounds have run.
 */
async function replaceDisturbedPairs(ops: InProgress[], planned: number): Promise<void> {
  for (let k = 0; k + 1 < ops.length; k += 2) {
    const [a, b] = [ops[k]!, ops[k + 1]!];
    const wanted = Math.min(a.plan?.trials ?? 0, b.plan?.trials ?? 0);
    for (let round = planned; round < 2 * planned && cleanPairs(a, b) < wanted; round++) {
      if (!a.plan || !b.plan || a.stopped || b.stopped) break;
      for (const op of round % 2 === 1 ? [b, a] : [a, b]) await nextTrial(op);
    }
  }
}

/**
 * An operation's plan (plan.ts planSizing): from the KAT's longest call when that is slow, with no
 * calibration call; else from a calibration of one call, then a warm one (plan.ts secondCalibration)
 * unless that call was slow. A call of call_plan_s or more is planned in calls. Paired
 * sides are never adaptive, nor in calls: they need their planned pairs.
 */
async function calibrated(s: Omit<InProgress, 'calibration'>, paired: boolean): Promise<InProgress> {
  const req = s.req;
  const planning = paired ? { ...req.planning, adaptive: { ...req.planning.adaptive, enabled: false } } : req.planning;
  const planOf = (secondsPerCall: number): Plan =>
    !paired && plannedInCalls(secondsPerCall, planning) ? planCalls(secondsPerCall, planning) : planTrials(secondsPerCall, planning);
  const sizing = planSizing(req.callSeconds?.[req.operation], planning);
  if ('kat' in sizing) return { ...s, plan: { ...planOf(sizing.kat), sized_by: 'kat' } };
  const trialTarget = planning.adaptive?.enabled ? planning.adaptive.trial_target_s : planning.trial_target_s;
  const timeoutMs = processTimeoutMs(req, 1, sizing.warmups);
  try {
    let calibration = await trialOnceMore({ ...s.base, iterations: 1, warmups: sizing.warmups, timeoutMs, calibration: true });
    const once = calibration.trials[0];
    const again = once ? secondCalibration(once.seconds, trialTarget, planning, sizing.warmups === 0) : 0;
    if (calibration.status === 'complete' && again > 0)
      calibration = await trialOnceMore({
        ...s.base,
        calibration: true,
        iterations: again,
        warmups: 1,
        timeoutMs: Math.max(processTimeoutMs(req, again, 1), timeoutMs + 3 * again * once!.seconds * 1000),
      });
    return {
      ...s,
      calibration,
      plan: calibration.status === 'complete' ? planOf(calibrationSecondsPerCall(calibration.trials[0]!)) : undefined,
    };
  } catch (e) {
    s.base.keys?.dispose();
    throw e;
  }
}

/**
 * Measures several operations (an instance's keygen, enc, dec) with their trials interleaved:
 * trial 1 of each, then trial 2 of each, … So slow drift of the machine (thermal state, a
 * neighbour's load) spreads over every operation's trials instead of hiding between them, and
 * the spread of the trials — what the regression test compares against — includes it. With
 * `alternate`, every other round runs in reverse order; with `pairs`, operations 2k and 2k+1 are
 * the two sides of a paired comparison, and a pair lost to a disturbed trial is measured again
 * (replaceDisturbedPairs).
 */
export async function measureOperations(
  reqs: OperationRequest[],
  onDone?: (i: number, r: OperationResult) => void,
  opts: { alternate?: boolean; pairs?: boolean } = {},
): Promise<OperationResult[]> {
  const ops: InProgress[] = [];
  try {
    for (const req of reqs) ops.push(await calibrated(start(req), opts.pairs === true));
    await runRounds(ops, opts);
  } finally {
    for (const op of ops) op.base.keys?.dispose();
  }
  for (const op of ops) {
    await replayOperation(op);
    await auditRepeatedInputs(op);
  }
  return ops.map((op, i) => {
    const r = finish(op);
    onDone?.(i, r);
    return r;
  });
}

/** Every operation's trials, round by round (measureOperations). */
async function runRounds(ops: InProgress[], opts: { alternate?: boolean; pairs?: boolean }): Promise<void> {
  for (let round = 0; !ops.every(done); round++)
    // Alternating, every other round runs backwards (A B, then B A): a linear drift of the machine
    // then favours neither of two neighbours, which is what a paired base/head comparison needs.
    // A round runs one trial of every operation not yet done, so adaptive operations stay interleaved.
    for (const op of opts.alternate && round % 2 === 1 ? [...ops].reverse() : ops) if (!done(op)) await nextTrial(op);
  if (opts.pairs) await replaceDisturbedPairs(ops, Math.max(0, ...ops.map((o) => o.plan?.trials ?? 0)));
}
