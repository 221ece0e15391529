import * as core from '@actions/core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PHASES } from '../campaign/runCampaign.js';
import { errorMessage } from '../errors.js';
import { actionsBuildCache } from '../github/buildCache.js';
import type { ActionInputs } from '../github/inputs.js';
import { createProgress } from '../campaign/progress.js';

/** A scratch folder for this step, outside the workspace (never committed, never a "system"). */
export const workDir = (purpose: string) => mkdtempSync(join(process.env.RUNNER_TEMP ?? tmpdir(), `ngcc-perf-${purpose}-`));
export const workspace = () => resolve(process.env.GITHUB_WORKSPACE ?? process.cwd());
export const runUrl = () =>
  process.env.GITHUB_RUN_ID
    ? `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${process.env.GITHUB_REPOSITORY}/actions/runs/${process.env.GITHUB_RUN_ID}`
    : undefined;

export function campaignOptions(inputs: ActionInputs, dataDir: string) {
  return {
    campaignDir: resolve(workspace(), inputs.campaign),
    system: inputs.system,
    dataDir,
    only: inputs.only,
    argumentNames: { only: [`input 'only'`, ''] as const, cpu: [`input 'cpu'`, ''] as const },
    phases: new Set(PHASES),
    // ngcc-perf.yml's ct.enabled adds the constant-time check to nightly and pull-request runs.
    campaignPhases: true,
    trialTarget: inputs.trialTarget,
    opBudget: inputs.opBudget,
    cpu: inputs.cpu,
    shard: inputs.shard,
    progress: createProgress(process.stdout),
    buildCache: inputs.buildCache ? actionsBuildCache({ workspace: workspace() }) : undefined,
    // A pull request's code never answers the nightly's secret seed: it is held to its base instead.
    ...(inputs.unseenSeed && inputs.mode !== 'pull-request' ? { unseenSeed: inputs.unseenSeed } : {}),
  };
}

/**
 * A section of the job summary: a heading and the lines as the log printed them. A runner without a
 * summary file (or one that cannot be written) loses the section, never the run.
 */
export async function writeJobSummary(heading: string, lines: string[]): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    await core.summary.addRaw(`### ${heading}\n\n\`\`\`text\n${lines.join('\n')}\n\`\`\`\n\n`).write();
  } catch (e) {
    core.warning(`job summary not written: ${errorMessage(e)}`);
  }
}
