import { parseDriverOutput, runProcess, type RunResult } from '../sandbox/run.js';
import type { Trial } from './stats.js';
import type { SandboxMode } from '../sandbox/bwrap.js';

export interface TrialRequest {
  timeTool: string;
  library: string;
  type: 'kem' | 'sig';
  operation: string;
  iterations: number;
  warmups: number;
  cpu: number;
  rng: string;
  timeoutMs: number;
  memoryLimitBytes?: number;
  /** How the driver is isolated (default bwrap): it reads itself and the library, writes nothing. */
  sandbox?: SandboxMode;
}

export interface TrialProcess {
  status: 'complete' | 'failed';
  exit_code: number | null;
  meta: Record<string, string>;
  trials: Trial[];
  stderr: string;
  command: string[];
  wall_s: number;
  disturbed_retries: number;
  /** Why a failed process failed: a driver STATUS, a signal or a timeout. */
  failure?: string;
}

function failureOf(run: RunResult, status?: string, detail?: string): string | undefined {
  if (run.timedOut) return 'TIMEOUT';
  if (run.signal) return `CRASH (${run.signal})`;
  if (run.exitCode !== 0) return `${status ?? 'ERROR'}${detail ? `: ${detail}` : ''}`;
  if (status !== 'complete') return 'no STATUS line';
  return undefined;
}

/** Runs one trial in a fresh process (the driver pins itself to the CPU). */
export async function runTrial(req: TrialRequest): Promise<TrialProcess> {
  const argv = [req.timeTool, req.library, req.type, req.operation, String(req.iterations), String(req.warmups), String(req.cpu), req.rng];
  const run = await runProcess(argv, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.timeTool, req.library], writable: [] },
  });
  const out = parseDriverOutput(run.stdout);
  const trials: Trial[] = [];
  for (const f of out.lines) {
    if (f[0] === 'TRIAL') {
      const [measurements, seconds, cycles] = [Number(f[1]), Number(f[2]), Number(f[3])];
      trials.push({ measurements, seconds, cycles, clock_hz: cycles / seconds });
    } else if (f[0] === 'CALLS' && trials.length > 0) {
      const [n, min, q1, med, q3, max] = f.slice(1).map(Number) as [number, number, number, number, number, number];
      trials[trials.length - 1]!.per_call_cycles = { n, min, q1, median: med, q3, max };
    }
  }
  const failure = failureOf(run, out.status, out.statusDetail);
  return {
    status: failure || trials.length === 0 ? 'failed' : 'complete',
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
