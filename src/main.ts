import * as core from '@actions/core';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { PHASES, runCampaign, type CampaignSummary } from './campaign.js';
import { compareEvidence } from './compare/compare.js';
import { compareFails } from './compare/failOn.js';
import type { CompareReport } from './compare/types.js';
import { errorMessage, isInputError } from './errors.js';
import { validateDataset } from './evidence/validate.js';
import { actionsBuildCache } from './github/buildCache.js';
import { annotations, renderComment, renderJobSummary } from './github/comment.js';
import { readPullRequestEvent } from './github/event.js';
import { makeOctokit, upsertStickyComment } from './github/githubApi.js';
import { extractAt, historyOf, touchedCandidates } from './github/gitTree.js';
import { readInputs, type ActionInputs } from './github/inputs.js';
import { publish } from './github/publish.js';
import { createProgress } from './progress.js';
import { loadReportModel } from './report/model.js';
import { renderPages, writePages } from './report/render.js';

/** Nightly evidence versions consulted for the run-to-run spread of each operation. */
const HISTORY_RUNS = 8;

/** A scratch folder for this step, outside the workspace (never committed, never a "system"). */
const workDir = (purpose: string) => mkdtempSync(join(process.env.RUNNER_TEMP ?? tmpdir(), `ngcc-perf-${purpose}-`));
const workspace = () => resolve(process.env.GITHUB_WORKSPACE ?? process.cwd());
const runUrl = () =>
  process.env.GITHUB_RUN_ID ? `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${process.env.GITHUB_REPOSITORY}/actions/runs/${process.env.GITHUB_RUN_ID}` : undefined;

/** The action's entry: one of three modes, everything reported through outputs and the summary. */
export async function run(): Promise<void> {
  try {
    const inputs = readInputs();
    if (inputs.mode === 'pull-request') await pullRequest(inputs);
    else if (inputs.mode === 'nightly') await nightly(inputs);
    else await reportOnly(inputs);
  } catch (e) {
    core.setFailed(isInputError(e) ? e.message : `ngcc-perf: ${errorMessage(e)}`);
  }
}

function campaignOptions(inputs: ActionInputs, dataDir: string) {
  return {
    campaignDir: resolve(workspace(), inputs.campaign),
    system: inputs.system,
    dataDir,
    only: inputs.only,
    phases: new Set(PHASES),
    trialTarget: inputs.trialTarget,
    opBudget: inputs.opBudget,
    cpu: inputs.cpu,
    shard: inputs.shard,
    progress: createProgress(process.stdout),
    buildCache: inputs.buildCache ? actionsBuildCache() : undefined,
  };
}

function reportKat(summary: CampaignSummary): number {
  const failures = summary.instances.filter((i) => i.kat !== 'PASS');
  for (const f of failures) core.error(`${f.key}: KAT ${f.kat}${f.detail ? ` — ${f.detail}` : ''}`, { title: 'ngcc-perf KAT' });
  return failures.length;
}

/** Measures what the pull request touches and compares it with the evidence on its base commit. */
async function pullRequest(inputs: ActionInputs): Promise<void> {
  const event = readPullRequestEvent();
  if (event.fromFork && !inputs.allowForks) {
    core.setFailed(
      `ngcc-perf: pull request #${event.number} comes from the fork ${event.headRepo}; its code is not run on this runner unless the workflow sets allow-forks: true (after a maintainer's review).`,
    );
    return;
  }
  const repo = workspace();
  const campaignDir = resolve(repo, inputs.campaign);
  const touched = await touchedCandidates(repo, campaignDir, event.baseSha, event.headSha);
  core.info(`candidates touched by #${event.number}: ${touched.length > 0 ? touched.join(', ') : 'none'}`);

  const work = workDir('pr');
  const dataRel = relative(repo, resolve(repo, inputs.dataDir));
  const evidencePath = join(dataRel, inputs.system);
  // The base evidence as a DATA_DIR tree (empty when the base commit has none), and the head
  // tree starting as a copy of it: untouched candidates keep their base numbers.
  const baseData = join(work, 'base', dataRel);
  const headData = join(work, 'head');
  if (!(await extractAt(repo, event.baseSha, evidencePath, join(work, 'base'))))
    core.notice(`no evidence at ${evidencePath} on the base commit ${event.baseSha.slice(0, 7)}: every measurement is new`);
  mkdirSync(join(baseData, inputs.system), { recursive: true });
  cpSync(join(baseData, inputs.system), join(headData, inputs.system), { recursive: true });

  let katFailures = 0;
  if (touched.length > 0) {
    const only = new RegExp(`^(${touched.map((t) => t.replace(/-/g, '\\-')).join('|')})(/|$)`);
    const summary = await runCampaign({ ...campaignOptions(inputs, headData), only, force: true });
    katFailures = reportKat(summary);
  }
  // The run-to-run spread of each operation on this machine: earlier nightly evidence on the
  // data branch (when the checkout has it), extracted as DATA_DIR trees.
  const history = (await historyOf(repo, `origin/${inputs.publishBranch}`, evidencePath, HISTORY_RUNS, join(work, 'history'))).map((d) => join(d, dataRel));
  if (history.length > 0) core.info(`nightly history: ${history.length} earlier evidence versions of ${inputs.system}`);
  const report = compareEvidence({ baseDir: baseData, headDir: headData, system: inputs.system, thresholdPct: inputs.regressionThreshold, campaignDir, history });
  await deliver(inputs, report, event.number, work, katFailures);
  if (inputs.publish !== 'none') {
    const pages = renderPages(loadReportModel(join(headData, inputs.system), campaignDir));
    await publishEvidence(inputs, join(headData, inputs.system), pages, work);
  }
  core.setOutput('evidence-dir', join(headData, inputs.system));
}

/** Comment, job summary, annotations, outputs and the check's verdict. */
async function deliver(inputs: ActionInputs, report: CompareReport, prNumber: number, work: string, katFailures: number): Promise<void> {
  const opts = { runUrl: runUrl(), reportUrl: inputs.reportUrl };
  const body = renderComment(report, opts);
  const out = join(work, 'artifact');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'comparison.json'), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(join(out, 'comment.md'), body);
  writeFileSync(join(out, 'pr-number'), `${prNumber}\n`);
  writeFileSync(join(out, 'system'), `${inputs.system}\n`);
  await core.summary.addRaw(renderJobSummary(report, opts)).write();
  for (const a of annotations(report)) core[a.level](a.message, { title: a.title });
  const changed = report.rows.some((r) => r.verdict !== 'unchanged' && r.verdict !== 'inconclusive') || report.kat_changes.length > 0 || report.size_mismatches.length > 0;
  if (inputs.comment === 'always' || (inputs.comment === 'on-change' && changed)) {
    if (!inputs.token) core.warning('comment requested but no token given: the comment is in the artifact (comment.md)');
    else {
      const [owner, repo] = (process.env.GITHUB_REPOSITORY ?? '/').split('/') as [string, string];
      const octokit = makeOctokit(inputs.token, process.env.GITHUB_API_URL);
      const r = await upsertStickyComment(octokit, { owner, repo, issueNumber: prNumber, system: inputs.system, body });
      core.info(`sticky comment ${r.action} (id ${r.id})`);
    }
  }
  core.setOutput('regressions', String(report.counts.regressions));
  core.setOutput('improvements', String(report.counts.improvements));
  core.setOutput('kat-failures', String(Math.max(report.counts.kat_failures, katFailures)));
  core.setOutput('size-mismatches', String(report.counts.size_mismatches));
  core.setOutput('comparison-path', join(out, 'comparison.json'));
  core.setOutput('summary-path', join(out, 'comment.md'));
  core.setOutput('artifact-dir', out);
  if (compareFails(report, inputs.failOn)) {
    const why = [
      report.counts.regressions > 0 && inputs.failOn.has('regression') ? `${report.counts.regressions} regression(s)` : '',
      (report.counts.kat_failures > 0 || report.build_failures.length > 0) && inputs.failOn.has('kat') ? 'KAT or build failures' : '',
      report.counts.size_mismatches > 0 && inputs.failOn.has('size-audit') ? `${report.counts.size_mismatches} size-audit mismatch(es)` : '',
    ].filter(Boolean);
    core.setFailed(`ngcc-perf ${inputs.system}: ${why.join(', ')}`);
  }
}

/** The whole campaign (or one shard of it), then pages and publishing. */
async function nightly(inputs: ActionInputs): Promise<void> {
  const dataDir = resolve(workspace(), inputs.dataDir);
  const summary = await runCampaign(campaignOptions(inputs, dataDir));
  const failures = reportKat(summary);
  const problems = validateDataset(summary.systemDir);
  for (const p of problems) core.warning(p, { title: 'ngcc-perf validate' });
  core.setOutput('kat-failures', String(failures));
  core.setOutput('evidence-dir', summary.systemDir);
  const campaignDir = resolve(workspace(), inputs.campaign);
  // A shard holds part of the evidence: pages are rendered after the merge (mode: report).
  const pages = inputs.shard ? undefined : renderAndOutput(inputs, summary.systemDir, campaignDir);
  if (inputs.publish !== 'none') await publishEvidence(inputs, summary.systemDir, pages, workDir('nightly'));
  if (failures > 0 && inputs.failOn.has('kat')) core.setFailed(`${failures} instance(s) did not pass their KAT`);
}

/** Pages from evidence already on disk (e.g. merged shards). */
async function reportOnly(inputs: ActionInputs): Promise<void> {
  const systemDir = resolve(workspace(), inputs.dataDir, inputs.system);
  if (!existsSync(systemDir)) throw new Error(`no evidence at ${systemDir}`);
  const campaignDir = resolve(workspace(), inputs.campaign);
  const pages = renderAndOutput(inputs, systemDir, campaignDir);
  if (inputs.publish !== 'none') await publishEvidence(inputs, systemDir, pages, workDir('report'));
}

function renderAndOutput(inputs: ActionInputs, systemDir: string, campaignDir: string): Map<string, string> {
  const pagesDir = resolve(workspace(), inputs.pagesDir);
  const pages = renderPages(loadReportModel(systemDir, campaignDir));
  writePages(pagesDir, pages);
  core.setOutput('report-path', pagesDir);
  core.info(`${pages.size} pages written to ${pagesDir}`);
  return pages;
}

/**
 * Evidence files (never built libraries) and, unless this is a shard, the pages: committed to the
 * data branch, or copied under the artifact folder for the workflow to upload.
 */
async function publishEvidence(inputs: ActionInputs, systemDir: string, pages: Map<string, string> | undefined, work: string): Promise<void> {
  const repo = workspace();
  const evidenceTo = join(relative(repo, resolve(repo, inputs.dataDir)), inputs.system);
  const pagesTo = relative(repo, resolve(repo, inputs.pagesDir));
  const files = listFiles(systemDir)
    .filter((f) => !f.startsWith('build/'))
    .map((f) => ({ from: join(systemDir, f), to: join(evidenceTo, f) }));
  if (inputs.publish === 'artifact') {
    const dir = join(work, 'artifact', 'evidence', inputs.system);
    for (const f of files) cpSync(f.from, join(dir, relative(evidenceTo, f.to)));
    core.setOutput('artifact-dir', join(work, 'artifact'));
    return;
  }
  const pageFiles = [...(pages ?? [])].map(([p, text]) => {
    const from = join(work, 'pages-out', p);
    mkdirSync(dirname(from), { recursive: true });
    writeFileSync(from, text);
    return { from, to: join(pagesTo, p) };
  });
  // A shard owns exactly its files; a whole system owns its evidence folder, so evidence that no
  // longer exists leaves the branch. The pages folder is shared by every system: never owned.
  const owns = inputs.shard ? files.map((f) => f.to) : [evidenceTo];
  const result = await publish({
    repoDir: repo,
    remote: 'origin',
    branch: inputs.publishBranch,
    files: [...files, ...pageFiles],
    owns,
    message: `ngcc-perf ${inputs.system}: evidence${inputs.shard ? ` (shard ${inputs.shard.index}/${inputs.shard.count})` : ' and pages'}`,
    author: { name: 'ngcc-perf', email: 'ngcc-perf@users.noreply.github.com' },
    token: inputs.token || undefined,
  });
  core.info(result.changed ? `published ${result.commit} after ${result.attempts} attempt(s)` : 'nothing to publish: evidence unchanged');
}

function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}
