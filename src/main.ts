import * as core from '@actions/core';
import { resolve } from 'node:path';
import { PHASES, runCampaign, type Phase } from './campaign.js';
import { errorMessage } from './errors.js';
import { validateDataset } from './evidence/validate.js';
import { createProgress } from './progress.js';

/** The action's entry: measures the campaign on this runner and reports through outputs. */
export async function run(): Promise<void> {
  try {
    const campaign = core.getInput('campaign') || '.';
    const system = core.getInput('system', { required: true });
    const dataDir = core.getInput('data-dir') || 'performance/data';
    const phases = (core.getInput('phases') || PHASES.join(',')).split(',').map((s) => s.trim()) as Phase[];
    const only = core.getInput('only');
    const summary = await runCampaign({
      campaignDir: campaign,
      system,
      dataDir,
      only: only ? new RegExp(only) : undefined,
      phases: new Set(phases),
      trialTarget: core.getInput('trial-target') ? Number(core.getInput('trial-target')) : undefined,
      opBudget: core.getInput('op-budget') ? Number(core.getInput('op-budget')) : undefined,
      progress: createProgress(process.stdout),
    });
    const katFailures = summary.instances.filter((i) => i.kat !== 'PASS');
    for (const f of katFailures) core.error(`${f.key}: KAT ${f.kat}${f.detail ? ` — ${f.detail}` : ''}`, { title: 'ngcc-perf KAT' });
    const problems = validateDataset(summary.systemDir);
    for (const p of problems) core.warning(p, { title: 'ngcc-perf validate' });
    core.setOutput('kat-failures', String(katFailures.length));
    core.setOutput('evidence-dir', resolve(summary.systemDir));
    if (katFailures.length > 0) core.setFailed(`${katFailures.length} instance(s) did not pass their KAT`);
  } catch (e) {
    core.setFailed(errorMessage(e));
  }
}
