import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildToyKem } from './helpers/build.js';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { planningSchema } from '../src/config/schemas.js';
import { allowedCpus } from '../src/env/cpus.js';
import { DISTURBED_OFF_CPU, disturbance, offCpuShare, parseOsLine } from '../src/measure/disturbance.js';
import { measureOperations } from '../src/measure/operation.js';
import { calibrationSecondsPerCall } from '../src/measure/plan.js';
import { runTrial } from '../src/measure/trial.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Disturbed trials: a process pinned to the measuring core takes scheduler slices from the trial,
 * which the OS view of the driver's thread shows (src/measure/disturbance.ts).
 */

describe('the disturbance rule', () => {
  const os = (cpu: number, wall: number, involuntary: number) => ({
    thread_cpu_s: cpu,
    wall_s: wall,
    involuntary_switches: involuntary,
    voluntary_switches: 0,
  });

  it('calls a span disturbed when something else took more than 2 % of it from the thread', () => {
    expect(DISTURBED_OFF_CPU).toBe(0.02);
    expect(disturbance(os(0.99, 1, 1), { minClockRatio: 0.95 })).toBeUndefined();
    expect(disturbance(os(0.5, 1, 40), { minClockRatio: 0.95 })).toBe('off the CPU 50.0 % of the time (40 involuntary switches)');
    // Off the CPU on its own (sleeping, blocking I/O: voluntary switches only) is the library's doing.
    expect(disturbance({ ...os(0.5, 1, 0), voluntary_switches: 3 }, { minClockRatio: 0.95 })).toBeUndefined();
    expect(offCpuShare(os(1.0000001, 1, 0))).toBe(0);
  });

  it('and a span run below the fixed clock of the core', () => {
    expect(disturbance(os(1, 1, 0), { clockHz: 2.0e9, fixedClockHz: 2.2e9, minClockRatio: 0.95 })).toBe(
      'clock 2.000 GHz, below 0.95 of the fixed 2.200 GHz',
    );
    expect(disturbance(os(1, 1, 0), { clockHz: 2.1e9, fixedClockHz: 2.2e9, minClockRatio: 0.95 })).toBeUndefined();
    expect(disturbance(undefined, { clockHz: 2.1e9, minClockRatio: 0.95 })).toBeUndefined();
  });

  it('reads the driver’s OS line, and refuses a malformed one', () => {
    expect(parseOsLine(['OS', '0.5', '1.0', '3', '0'])).toEqual(os(0.5, 1, 3));
    expect(parseOsLine(['OS', '0.5', '0', '3', '0'])).toBeUndefined();
    expect(parseOsLine(['OS', 'x'])).toBeUndefined();
  });

  it('plans from the median calibration call, not from one that ended early', () => {
    const trial = {
      measurements: 5,
      seconds: 5e-3,
      cycles: 1e7,
      per_call_cycles: { n: 5, min: 2e5, q1: 2e6, median: 2.1e6, q3: 2.2e6, max: 3e6 },
    };
    expect(calibrationSecondsPerCall(trial)).toBeCloseTo(1.05e-3, 9);
    expect(calibrationSecondsPerCall({ measurements: 4, seconds: 2, cycles: 8 })).toBe(0.5);
  });
});

describe('a competitor on the measuring core', () => {
  const cpu = (allowedCpus() ?? [0]).at(-1)!;
  let tools: HarnessTools;
  let lib: string;
  let competitor: ChildProcess | undefined;
  const compete = () => {
    // A shell spinning on the same core, as another job's benchmark would.
    competitor = spawn('taskset', ['-c', String(cpu), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
  };

  beforeAll(async () => {
    tools = await harnessTools();
    const dir = tempDir();
    lib = buildToyKem(dir);
  });

  afterEach(() => {
    competitor?.kill('SIGKILL');
    competitor = undefined;
  });

  const request = { type: 'kem' as const, operation: 'keygen', cpu, rng: 'iccs-drng', sandbox: 'none' as const };

  it('shows in the trial: the thread was off the CPU for a large share of the loop', async () => {
    compete();
    // Enough calls (0.3 s alone on this VM) that a host several times faster still spans many of the
    // scheduler's slices shared with the competitor.
    const p = await runTrial({ ...request, library: lib, driver: tools.driver, iterations: 100_000, warmups: 10, timeoutMs: 60_000 });
    expect(p.status).toBe('complete');
    const os = p.trials[0]!.os!;
    expect(os.involuntary_switches).toBeGreaterThan(5);
    expect(offCpuShare(os)).toBeGreaterThan(0.2);
    expect(disturbance(os, { minClockRatio: 0.95 })).toMatch(/^off the CPU \d+\.\d % of the time/);
    // The kernel's view, read by the parent, agrees.
    expect(p.trials[0]!.kernel_cpu_s!).toBeLessThan(0.8 * p.trials[0]!.window_s!);
  });

  it('is re-run up to disturbed_retries, then kept, marked and counted', async () => {
    compete();
    const planning = planningSchema.parse({
      trials: 2,
      trial_target_s: 0.05,
      op_budget_s: 5,
      min_measurements: 10,
      warmups: 1,
      disturbed_retries: 1,
    });
    const [r] = await measureOperations([{ ...request, library: lib, driver: tools.driver, libraryShown: 'libgood.so', planning }]);
    expect(r!.status).toBe('complete');
    expect(r!.disturbed_retries).toBe(2);
    expect(r!.trials).toHaveLength(2);
    for (const t of r!.trials) expect(t.disturbed).toMatch(/^off the CPU/);
  });
});
