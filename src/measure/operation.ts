import { basename } from 'node:path';
import type { Planning } from '../config/schemas.js';
import type { HostEnvironment } from '../env/host.js';
import { loadAverage } from '../env/host.js';
import { planTrials, type Plan } from './plan.js';
import { deriveStatistics, type Trial } from './stats.js';
import { runTrial, type TrialProcess } from './trial.js';

export const OPERATIONS = { kem: ['keygen', 'enc', 'dec'], sig: ['keygen', 'sign', 'verify'] } as const;

export interface OperationRequest {
  timeTool: string;
  library: string;
  /** The library path as written into evidence (relative to the campaign). */
  libraryShown: string;
  type: 'kem' | 'sig';
  operation: string;
  cpu: number;
  rng: string;
  planning: Planning;
  /** The clock the core is fixed at, if known: trials measuring below min_clock_ratio of it are retried. */
  fixedClockHz?: number;
  onTrial?: (done: number, total: number) => void;
}

export interface OperationResult {
  status: 'complete' | 'partial' | 'failed';
  failure?: string;
  plan?: Plan;
  processes: TrialProcess[];
  trials: Trial[];
  stats?: ReturnType<typeof deriveStatistics>;
  meta: Record<string, string>;
  disturbed_retries: number;
  started_utc: string;
  ended_utc: string;
  load_average_start: number[];
  load_average_end: number[];
}

function shown(p: TrialProcess, tool: string, lib: string, libShown: string): TrialProcess {
  return { ...p, command: p.command.map((a) => (a === tool ? basename(tool) : a === lib ? libShown : a)) };
}

/** Calibrates with one call, plans, then runs each trial in a fresh pinned process. */
export async function measureOperation(req: OperationRequest): Promise<OperationResult> {
  const started_utc = new Date().toISOString();
  const load_average_start = loadAverage();
  const p = req.planning;
  const base = {
    timeTool: req.timeTool,
    library: req.library,
    type: req.type,
    operation: req.operation,
    cpu: req.cpu,
    rng: req.rng,
    memoryLimitBytes: p.memory_limit_mb * 1024 * 1024,
  };
  const finish = (r: Omit<OperationResult, 'started_utc' | 'ended_utc' | 'load_average_start' | 'load_average_end'>): OperationResult => ({
    ...r,
    processes: r.processes.map((x) => shown(x, req.timeTool, req.library, req.libraryShown)),
    started_utc,
    ended_utc: new Date().toISOString(),
    load_average_start,
    load_average_end: loadAverage(),
  });

  const calibration = await runTrial({ ...base, iterations: 1, warmups: 1, timeoutMs: p.process_timeout_s * 1000 });
  if (calibration.status !== 'complete')
    return finish({ status: 'failed', failure: `calibration: ${calibration.failure}`, processes: [calibration], trials: [], meta: calibration.meta, disturbed_retries: 0 });
  const plan = planTrials(calibration.trials[0]!.seconds, p);
  const processes: TrialProcess[] = [];
  let disturbed = 0;
  for (let i = 0; i < plan.trials; i++) {
    let proc: TrialProcess;
    let retries = 0;
    for (;;) {
      proc = await runTrial({ ...base, iterations: plan.iterations_per_trial, warmups: plan.warmups, timeoutMs: plan.timeout_per_process_s * 1000 });
      const clock = proc.trials[0]?.clock_hz;
      const slowed = proc.status === 'complete' && req.fixedClockHz !== undefined && clock !== undefined && clock < p.min_clock_ratio * req.fixedClockHz;
      if (!slowed || retries >= p.disturbed_retries) break;
      retries++;
    }
    proc.disturbed_retries = retries;
    disturbed += retries;
    processes.push(proc);
    req.onTrial?.(i + 1, plan.trials);
    if (proc.status !== 'complete') break;
  }
  const trials = processes.filter((x) => x.status === 'complete').flatMap((x) => x.trials);
  const failed = processes.find((x) => x.status !== 'complete');
  const status = failed ? (trials.length > 0 ? 'partial' : 'failed') : 'complete';
  return finish({
    status,
    failure: failed?.failure,
    plan,
    processes,
    trials,
    stats: trials.length > 0 ? deriveStatistics(trials, p.min_measurements) : undefined,
    meta: processes[0]?.meta ?? calibration.meta,
    disturbed_retries: disturbed,
  });
}
