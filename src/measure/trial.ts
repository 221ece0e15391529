import { runDriver, type DriverRun } from '../sandbox/run.js';
import type { Trial } from './stats.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { kernelInconsistency, SLACK_PRECISE_S, SLACK_TICKS_S, trialWindow } from './kernelCheck.js';
import { cpuTimeIsPrecise } from '../sandbox/cpuTime.js';
import { parseOsLine } from './disturbance.js';

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
}

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
  const job = ['time', req.type, req.operation, String(req.iterations), String(req.warmups), String(req.cpu), req.rng];
  const argv = [req.driver, req.library, ...job];
  const driver = await runDriver([req.driver, req.library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, req.library], writable: [] },
  });
  const { run, output: out } = driver;
  let failure = failureOf(driver);
  const trials: Trial[] = [];
  const window = trialWindow(run.channel?.marks ?? []);
  let loop: Pick<Trial, 'loop_cycles' | 'loop_s'> = {};
  // Only a finished driver's lines are a trial.
  for (const f of failure ? [] : out.lines) {
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
  if (!failure && trials.length > 0) failure = countFailure(trials, req.iterations);
  if (!failure && trials.length > 0) failure = kernelFailure(trials, window, out.meta.counter, req.counterHz);
  if (failure) trials.length = 0;
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
  };
}

/**
 * A trial whose count is not the one the parent asked for, as a failure: the count is the parent's,
 * and the library shares the process that reports it (a forged TRIAL line could claim ten times the
 * calls). The per-call samples cannot outnumber the calls either.
 */
function countFailure(trials: Trial[], asked: number): string | undefined {
  const t = trials[0]!;
  if (t.measurements !== asked) return `inconsistent trial: the driver reported ${t.measurements} calls, the parent asked for ${asked}`;
  const n = t.per_call_cycles?.n;
  if (n !== undefined && (n < 1 || n > asked)) return `inconsistent trial: ${n} per-call samples for ${asked} calls`;
  return undefined;
}

/** A trial the kernel's view contradicts (docs/method.md#the-kernels-view), as a failure; undefined when it holds. */
function kernelFailure(
  trials: Trial[],
  window: ReturnType<typeof trialWindow>,
  counter: string | undefined,
  counterHz: number | undefined,
) {
  if (!window || trials.length !== 1) return 'inconsistent trial: the driver did not mark the timed loop once';
  if (counterHz === undefined || counter === undefined) return undefined; // no trusted rate: nothing to compare with
  // A key-exchange span is part of each call: the kernel saw the whole loop.
  const slack = cpuTimeIsPrecise() ? SLACK_PRECISE_S : SLACK_TICKS_S;
  const why = kernelInconsistency(trials[0]!.loop_cycles ?? trials[0]!.cycles, counter, counterHz, window, slack);
  return why ? `inconsistent trial: ${why}` : undefined;
}
