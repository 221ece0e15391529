import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { planningSchema } from '../src/config/schemas.js';
import { allowedCpus } from '../src/env/cpus.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { measureOperations, type OperationResult } from '../src/measure/operation.js';
import type { Plan } from '../src/measure/plan.js';
import { precisionOf } from '../src/measure/precision.js';
import type { TrialProcess } from '../src/measure/trial.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { formatPrecision, formatSeconds } from '../src/text/format.js';
import { goodKemCampaign } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { KEYGEN, variants } from './helpers/toyVariant.js';

const readBuild = (system: string) => JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson;

/**
 * A slow operation planned in calls (measure/plan.ts planCalls), end to end: the toy KEM with a
 * keygen that spins on the clock for 0.1 s first under `call_plan_s: 0.05`, so it is planned as a
 * Round-1 keygen of minutes is at the default 1 s. A wait on the clock, not a count of iterations: a
 * fast host ran 3·10^8 iterations in 0.08 s, too near the plan's threshold for every run to be planned
 * in calls.
 */
const SPIN = `  struct timespec began, now;
  clock_gettime(CLOCK_MONOTONIC, &began);
  do clock_gettime(CLOCK_MONOTONIC, &now);
  while ((double)(now.tv_sec - began.tv_sec) + 1e-9 * (double)(now.tv_nsec - began.tv_nsec) < 0.1);`;
const SPIN_KEYGEN = `#include "KEM_AlgorithmInstance.h"
#include <time.h>
#define kem_keygen honest_kem_keygen
#include "../common/toy_kem.inc"
#undef kem_keygen
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
${SPIN}
  return honest_kem_keygen(pk, pk_len, sk, sk_len);
}
`;

/**
 * The same keygen, appending its process id to `log` at each call: the count of calls is the test's
 * own, not a figure of the harness. Its operations are timed unsandboxed, so that it may write there.
 */
const countingPrelude = (log: string) => `#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static void log_call(void) {
  char line[32];
  int len = snprintf(line, sizeof line, "%d\\n", (int)getpid());
  int out = open("${log}", O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (out >= 0) {
    (void)!write(out, line, (size_t)len);
    close(out);
  }
}`;

const SETTINGS = `planning:
  trials: 2
  trial_target_s: 0.01
  op_budget_s: 0.8
  min_measurements: 2
  warmups: 1
  call_plan_s: 0.05
`;

/** The keygen calls of each process that made any, in the order the processes started. */
function callsByProcess(log: string): number[] {
  const byPid = new Map<string, number>();
  for (const pid of readFileSync(log, 'utf8').split('\n').filter(Boolean)) byPid.set(pid, (byPid.get(pid) ?? 0) + 1);
  return [...byPid.values()];
}

/** The trial processes an operation ran, the attempts run again before each included. */
const trialProcesses = (processes: readonly TrialProcess[]) => processes.reduce((a, p) => a + 1 + (p.retried?.length ?? 0), 0);

describe('a slow keygen, planned in calls', () => {
  const data = tempDir();
  const system = join(data, 's');
  let root: string;
  const record = () => JSON.parse(readFileSync(join(system, 'records', 'kem-1', 'slow__keygen.json'), 'utf8')) as TimingRecord;
  const plan = (r: object) => (r as { plan: Plan }).plan;

  beforeAll(async () => {
    root = goodKemCampaign(['slow'], SETTINGS);
    cpSync(join(root, 'kem-1', 'good'), join(root, 'kem-1', 'spin'), { recursive: true });
    writeFileSync(join(root, 'kem-1', 'spin', 'KEM_AlgorithmInstance.c'), SPIN_KEYGEN);
    const yml = join(root, 'kem-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace('dir: good', 'dir: spin'));
    const run = await runCli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
    expect(run.code, run.progress).toBe(0);
  }, 600_000);

  it('is sized by the KAT’s figure, then times one call a trial until the rule or the budget stops it', () => {
    const r = record();
    const p = plan(r);
    expect(r.status).toBe('complete');
    expect(p).toMatchObject({ sized_by: 'kat', iterations_per_trial: 1, warmups: 1 });
    expect(p.calibration_seconds_per_call).toBe(readBuild(system).instances['kem-1/slow']!.call_seconds!.keygen);
    expect(p.calls).toMatchObject({ ci_target: 0.01, min_calls: 3 });
    expect(r.trials.length).toBeGreaterThanOrEqual(3);
    for (const t of r.trials) expect(t.measurements).toBe(1);
    // Stopped at the first call that met the rule, or at the budget's cap.
    const precision = precisionOf(r.trials, p);
    expect(r.precision).toEqual(precision);
    if (precision.met) expect(precisionOf(r.trials.slice(0, -1), p).met).toBe(false);
    else expect(r.processes).toHaveLength(p.calls!.max_calls);
    // enc and dec, whose calls are fast, keep their trials of many calls.
    for (const op of ['enc', 'dec']) {
      const other = JSON.parse(readFileSync(join(system, 'records', 'kem-1', `slow__${op}.json`), 'utf8')) as TimingRecord;
      expect(plan(other).calls, op).toBeUndefined();
      expect(plan(other).iterations_per_trial, op).toBeGreaterThan(1);
    }
    expect(validateDataset(system)).toEqual([]);
  });

  it('the candidate page and the summary say the figure is of its calls, each about how long, and the interval', () => {
    const r = record();
    const pages = renderPages(loadReportModel(system, root));
    const note = `\`kem-1/slow\` keygen: planned in calls, its call being slow. The figure is of ${r.trials.length} calls of about ${formatSeconds(r.mean_seconds!)} each, each call a trial process of its own; its mean per call is known to `;
    for (const page of ['kem-1/perf_s.md', 'performance/summary_s.md']) expect(pages.get(page), page).toContain(note);
    const ci = (r.precision as { ci95_rel: number | null }).ci95_rel;
    // The interval, or why there is none (a busy host may leave fewer than two calls undisturbed).
    expect(pages.get('kem-1/perf_s.md')).toContain(`${note}${ci === null ? 'no interval' : `${formatPrecision(ci)} (target ±1.0%: `}`);
    expect(pages.get('kem-1/perf_s.md')).not.toMatch(/slow` (enc|dec): planned in calls/);
    // validate holds a plan in calls to one call a trial.
    const file = join(system, 'records', 'kem-1', 'slow__keygen.json');
    writeFileSync(file, JSON.stringify({ ...r, trials: [{ ...r.trials[0]!, measurements: 2 }, ...r.trials.slice(1)] }));
    expect(validateDataset(system)).toContainEqual(
      expect.stringMatching(/slow__keygen\.json: trials\[0\] has 2 calls; a plan in calls times one a trial/),
    );
    writeFileSync(file, JSON.stringify(r));
  });

  describe('its calls, counted by the library', () => {
    const cpu = (allowedCpus() ?? [0]).at(-1)!;
    const log = join(tempDir(), 'calls.log');
    let tools: HarnessTools;
    let lib: string;
    beforeAll(async () => {
      tools = await harnessTools();
      lib = variants(
        tempDir(),
        'counting',
        'kem',
        [['kem_keygen', KEYGEN, `  log_call();\n${SPIN}\n  return honest_kem_keygen(pk, pk_len, sk, sk_len);`]],
        countingPrelude(log),
      );
    }, 300_000);

    const keygenRequest = (callSeconds?: Record<string, number>, callPlanS = 0.05) => ({
      type: 'kem' as const,
      operation: 'keygen',
      cpu,
      rng: 'iccs-drng',
      sandbox: 'none' as const,
      library: lib,
      driver: tools.driver,
      libraryShown: 'libcounting.so',
      planning: planningSchema.parse({
        trials: 2,
        trial_target_s: 0.01,
        op_budget_s: 0.3,
        min_measurements: 2,
        warmups: 1,
        disturbed_retries: 0,
        call_plan_s: callPlanS,
      }),
      ...(callSeconds ? { callSeconds } : {}),
    });

    const measure = async (callSeconds?: Record<string, number>, callPlanS = 0.05) => {
      writeFileSync(log, '');
      const [r] = await measureOperations([keygenRequest(callSeconds, callPlanS)]);
      expect(r!.status).toBe('complete');
      // The processes in the order they ran: the calibration, if any, then the trials, then the replay.
      const calls = callsByProcess(log);
      const trials = trialProcesses(r!.processes);
      const replays = r!.replays?.length ?? 0;
      expect(replays).toBe(1);
      return {
        r: r!,
        calibrations: calls.slice(0, calls.length - trials - replays),
        trials: calls.slice(calls.length - trials - replays, calls.length - replays),
      };
    };

    it('with the KAT’s figure, none calibrates: every call of a timing process is a trial’s warm-up or its call', async () => {
      const { r, calibrations, trials } = await measure({ keygen: 0.1 });
      expect(plan(r)).toMatchObject({ sized_by: 'kat', calls: { min_calls: 3 } });
      expect(calibrations).toEqual([]);
      expect(trials).toEqual(trials.map(() => 2));
    }, 300_000);

    it('without it, one calibration call, with no warm-up, sizes the plan', async () => {
      const { r, calibrations, trials } = await measure();
      expect(plan(r).sized_by).toBeUndefined();
      expect(plan(r).calls).toMatchObject({ min_calls: 3 });
      expect(calibrations).toEqual([1]);
      expect(trials).toEqual(trials.map(() => 2));
      // Its call sized the plan and is none of the measured calls: those are the trials' own.
      expect(r.trials.reduce((a, t) => a + t.measurements, 0)).toBe(r.processes.length);
    }, 300_000);

    it('a KAT figure that overstates the call gives way to trials once a call proves fast', async () => {
      // 10 s claimed, 0.1 s measured, against call_plan_s 0.5: its first call becomes the calibration.
      const { r, calibrations } = await measure({ keygen: 10 }, 0.5);
      expect(plan(r).calls).toBeUndefined();
      expect(plan(r).calibration_seconds_per_call).toBeLessThan(0.25);
      expect(r.processes).toHaveLength(plan(r).trials);
      // That call's process (a warm-up and its call) sized the plan; no other calibration ran.
      expect(calibrations).toEqual([2]);
      expect(precisionOf(r.trials, plan(r)).mode).toBe('fixed');
    }, 300_000);

    it('the two sides of a paired comparison, with the KAT’s figure, calibrate neither and keep their planned pairs of trials', async () => {
      writeFileSync(log, '');
      const sides = await measureOperations([keygenRequest({ keygen: 0.1 }), keygenRequest({ keygen: 0.1 })], undefined, {
        alternate: true,
        pairs: true,
      });
      const calls = callsByProcess(log);
      for (const r of sides) {
        expect(r.status).toBe('complete');
        // Sized by the figure as a plan in trials, never in calls: the pair's test needs its planned pairs.
        expect(plan(r)).toMatchObject({ sized_by: 'kat', iterations_per_trial: 1, warmups: 1, trials: 2 });
        expect(plan(r).calls).toBeUndefined();
      }
      // Both sides' planned pairs, and a round more for each pair a disturbed trial lost.
      const [head, base] = sides as [OperationResult, OperationResult];
      expect(head.trials.length).toBe(base.trials.length);
      expect(head.trials.length).toBeGreaterThanOrEqual(2);
      if (head.trials.length > 2) expect([...head.trials, ...base.trials].some((t) => t.disturbed)).toBe(true);
      // Every process the library saw is a trial's (its warm-up and its call) or a replay's: none calibrated.
      const trials = sides.reduce((a, r) => a + trialProcesses(r.processes), 0);
      const replays = sides.reduce((a, r) => a + (r.replays?.length ?? 0), 0);
      expect(calls).toHaveLength(trials + replays);
      expect(calls.slice(0, trials)).toEqual(calls.slice(0, trials).map(() => 2));
    }, 300_000);
  });
});
