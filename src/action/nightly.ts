import * as core from '@actions/core';
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { runCampaign, type CampaignSummary } from '../campaign/runCampaign.js';
import { validateDataset } from '../evidence/validate.js';
import { forgeryShown, instanceStatus } from '../kat/status.js';
import { publishedUnseenTruth } from '../github/baseline.js';
import type { UnseenTruth } from '../kat/unseen.js';
import type { ActionInputs } from '../github/inputs.js';
import { lastNightSide } from '../github/lastNight.js';
import { keepRunPairs } from '../compare/nightPairs.js';
import { outcomeLines } from '../campaign/tracker.js';
import { campaignOptions, workDir, workspace, writeJobSummary } from './context.js';
import { renderAndOutput } from './pages.js';
import { publishEvidence } from './publishEvidence.js';

function reportKat(summary: CampaignSummary): number {
  const failures = summary.instances.filter((i) => instanceStatus(i) !== 'PASS');
  for (const f of failures)
    core.error(`${f.key}: ${f.forged ? `FORGED — ${forgeryShown(f.forged)}` : `KAT ${f.kat}${f.detail ? ` — ${f.detail}` : ''}`}`, {
      title: 'ngcc-perf KAT',
    });
  return failures.length;
}

/** What the previous nights recorded on the secret seed, from the data branch (campaign/unseen.ts). */
async function nightlyUnseenTruth(inputs: ActionInputs): Promise<UnseenTruth | undefined> {
  const repo = workspace();
  const evidencePath = join(relative(repo, resolve(repo, inputs.dataDir)), inputs.system);
  const truth = await publishedUnseenTruth(repo, inputs.publishBranch, evidencePath, workDir('unseen'));
  if (!truth && inputs.unseenSeed)
    core.warning(
      `unseen seeds: no evidence for ${inputs.system} on origin/${inputs.publishBranch} (is it fetched? fetch-depth: 0): every library's answers are recorded as a first version, held to nothing earlier`,
    );
  return truth;
}

/** The whole campaign (or one shard of it), then pages and publishing. */
export async function nightly(inputs: ActionInputs): Promise<void> {
  const dataDir = resolve(workspace(), inputs.dataDir);
  // Read even without a seed: this night's evidence replaces the published entries, and must carry them on.
  const unseenTruth = await nightlyUnseenTruth(inputs);
  const campaignDir = resolve(workspace(), inputs.campaign);
  const work = workDir('nightly');
  // A rebuilt library is measured beside last night's, trials interleaved, as a pull request is.
  const lastNight = inputs.pairNights ? await lastNightOf(inputs, campaignDir, join(work, 'last-night')) : undefined;
  const pairedDir = join(work, 'last-night', 'data');
  let summary: CampaignSummary;
  try {
    // Nightly runs stop each operation's trials at the precision target (planning.adaptive.nightly).
    summary = await runCampaign({
      ...campaignOptions(inputs, dataDir),
      ...(unseenTruth ? { unseenTruth } : {}),
      ...(lastNight ? { against: { campaignDir: lastNight.campaignDir, dataDir: pairedDir, only: lastNight.only } } : {}),
      adaptive: 'nightly',
      // The plan and its expected duration go to the job summary before anything is measured.
      onPlan: (lines) => writeJobSummary('ngcc-perf plan', lines),
    });
  } finally {
    await lastNight?.remove();
  }
  if (lastNight) {
    const kept = keepRunPairs({
      systemDir: summary.systemDir,
      system: inputs.system,
      againstDataDir: pairedDir,
      campaignDir,
      thresholdPct: inputs.regressionThreshold,
    });
    if (kept)
      core.info(
        `paired night: ${kept.kept} operation(s) measured beside last night's library (${lastNight.commit.slice(0, 7)}), judged as a pull request is`,
      );
  }
  if (summary.forecast) await writeJobSummary('ngcc-perf: predicted against actual', outcomeLines(summary.forecast.outcome));
  const failures = reportKat(summary);
  const problems = validateDataset(summary.systemDir);
  for (const p of problems) core.warning(p, { title: 'ngcc-perf validate' });
  core.setOutput('kat-failures', String(failures));
  core.setOutput('evidence-dir', summary.systemDir);
  // A shard holds part of the evidence: pages are rendered after the merge (mode: report).
  const rendered = inputs.shard ? undefined : await renderAndOutput(inputs, summary.systemDir, campaignDir);
  if (inputs.publish !== 'none') await publishEvidence(inputs, summary.systemDir, rendered, work);
  if (failures > 0 && inputs.failOn.has('kat')) core.setFailed(`${failures} instance(s) did not pass their KAT`);
}

/** Last night's side of tonight's run, from the data branch (github/lastNight.ts). */
function lastNightOf(inputs: ActionInputs, campaignDir: string, work: string) {
  const repo = workspace();
  return lastNightSide({
    repo,
    campaignDir,
    dataRef: `origin/${inputs.publishBranch}`,
    evidencePath: join(relative(repo, resolve(repo, inputs.dataDir)), inputs.system),
    work,
    say: (line) => core.info(line),
  });
}

/** Pages from evidence already on disk (e.g. merged shards). */
export async function reportOnly(inputs: ActionInputs): Promise<void> {
  const systemDir = resolve(workspace(), inputs.dataDir, inputs.system);
  if (!existsSync(systemDir)) throw new Error(`no evidence at ${systemDir}`);
  const campaignDir = resolve(workspace(), inputs.campaign);
  const rendered = await renderAndOutput(inputs, systemDir, campaignDir);
  if (inputs.publish !== 'none') await publishEvidence(inputs, systemDir, rendered, workDir('report'));
}
