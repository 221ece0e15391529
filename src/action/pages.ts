import * as core from '@actions/core';
import { join, relative, resolve } from 'node:path';
import { historyVersions } from '../github/gitTree.js';
import type { ActionInputs } from '../github/inputs.js';
import { loadReportModel } from '../report/model.js';
import { renderPages, writePages } from '../report/pages/render.js';
import type { HistoryInput } from '../trend/history.js';
import { trendHighlights } from '../report/pages/trends.js';
import type { RootContent } from 'mdast';
import { workDir, workspace } from './context.js';

export interface Rendered {
  pages: Map<string, string>;
  /** The index's trend sections of this system (kept when the index is rendered again at publish time). */
  highlights: RootContent[];
}

export async function renderAndOutput(inputs: ActionInputs, systemDir: string, campaignDir: string): Promise<Rendered> {
  const pagesDir = resolve(workspace(), inputs.pagesDir);
  const nights = await nightsOnDataBranch(inputs);
  const model = loadReportModel(
    systemDir,
    campaignDir,
    nights.length > 0 ? { nights, thresholdPct: inputs.regressionThreshold } : undefined,
  );
  for (const s of model.trends?.skipped ?? []) core.warning(`history: left out ${s.folder}: ${s.reason}`, { title: 'ngcc-perf trends' });
  if (model.trendsProblem) core.warning(`history: no trends: ${model.trendsProblem}`, { title: 'ngcc-perf trends' });
  if (model.trends) core.info(`trends: ${model.trends.nights.length} nights of ${inputs.system} (report --history)`);
  const pages = renderPages(model);
  writePages(pagesDir, pages);
  core.setOutput('report-path', pagesDir);
  core.info(`${pages.size} pages written to ${pagesDir}`);
  return { pages, highlights: model.trends ? trendHighlights(inputs.system, model.trends) : [] };
}

/**
 * The data branch's last `history-nights` versions of the system's evidence, oldest first, each
 * linked to its commit on GitHub: the trend pages' earlier nights. None when the branch is not
 * fetched (said in the log).
 */
async function nightsOnDataBranch(inputs: ActionInputs): Promise<HistoryInput[]> {
  if (inputs.historyNights === 0) return [];
  const repo = workspace();
  const evidencePath = join(relative(repo, resolve(repo, inputs.dataDir)), inputs.system);
  const versions = await historyVersions(
    repo,
    `origin/${inputs.publishBranch}`,
    evidencePath,
    inputs.historyNights,
    join(workDir('history'), 'v'),
  );
  if (versions.length === 0)
    core.info(`trends: no earlier ${inputs.system} evidence on origin/${inputs.publishBranch} (is it fetched deep enough?)`);
  const server = process.env.GITHUB_SERVER_URL ?? 'https://github.com';
  const repository = process.env.GITHUB_REPOSITORY;
  return versions.reverse().map((v) => ({
    dir: v.dir,
    shown: `${inputs.publishBranch}@${v.commit.slice(0, 7)}`,
    ...(repository ? { link: `${server}/${repository}/tree/${v.commit}/${evidencePath}` } : {}),
  }));
}
