import * as core from '@actions/core';
import { resolve } from 'node:path';
import { loadSettings } from '../config/campaign.js';
import { doctor } from '../campaign/doctor.js';
import { defaultTrialCpu } from '../campaign/runPlan.js';
import { readinessLines } from '../env/readiness.js';
import type { SandboxSetting } from '../sandbox/bwrap.js';
import { errorMessage } from '../errors.js';
import type { ActionInputs } from '../github/inputs.js';
import { workspace, writeJobSummary } from './context.js';

/**
 * What the runner is, before anything is measured: the doctor's findings on the job's timing core
 * (input `cpu`, else the system's first in ngcc-perf.yml, else the run's default) go to the job
 * summary, and its warnings to the log. It stops nothing: the run's own start checks do that.
 */
export async function doctorSummary(inputs: ActionInputs): Promise<void> {
  let cpu = inputs.cpu;
  let sandbox: SandboxSetting = 'auto';
  let compilers: string[] = [];
  try {
    const settings = loadSettings(resolve(workspace(), inputs.campaign));
    const system = settings.systems[inputs.system];
    cpu ??= system?.cpus?.[0] ?? system?.cpu;
    sandbox = settings.sandbox;
    compilers = settings.ct.enabled ? [settings.compiler] : [];
  } catch {
    // An unreadable ngcc-perf.yml is the run's to report, naming the field.
  }
  try {
    const findings = await doctor({ cpu: cpu ?? defaultTrialCpu(), outDir: workspace(), sandbox, compilers });
    await writeJobSummary('ngcc-perf doctor', readinessLines(findings));
    // One annotation for all of them: a virtual machine's warnings would otherwise repeat on every job.
    const notOk = findings.filter((x) => x.verdict === 'warn' || x.verdict === 'fail');
    if (notOk.length > 0)
      core.warning(`ngcc-perf doctor: ${notOk.map((x) => `${x.verdict} ${x.check}`).join(', ')} (the job summary says what to do)`);
  } catch (e) {
    core.warning(`ngcc-perf doctor could not check this runner: ${errorMessage(e)}`);
  }
}
