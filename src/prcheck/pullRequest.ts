import * as core from '@actions/core';
import { existsSync, mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { PHASES, runCampaign } from '../campaign/runCampaign.js';
import { HISTORY_COMMITS_READ } from '../config/defaults.js';
import { pairCount, rowKey } from '../compare/compare.js';
import type { Phase } from '../campaign/runPlan.js';
import { judgePullRequest, runPairedRounds } from './pairedRounds.js';
import { pyFixed } from '../text/format.js';
import type { Baseline, CompareReport, CompareRow, PullRequestContext } from '../compare/compareReport.js';
import { evidencePaths, parseInstanceKey } from '../evidence/layout.js';
import type { BuildJson } from '../evidence/fileTypes.js';
import { instanceStatus } from '../kat/status.js';
import { baselineName, findBaseline, headFromBaseline, overlayPairedRecords } from '../github/baseline.js';
import { deliverResults, postComment } from '../github/deliver.js';
import { readPullRequestEvent } from '../github/event.js';
import { checkoutAt, historyOf, mergeBase } from '../github/gitTree.js';
import type { ActionInputs } from '../github/inputs.js';
import { actionOrigin, reproduceCli } from '../github/reproduce.js';
import { touchedCandidates } from '../github/touched.js';
import { unstableRows } from '../trend/history.js';
import { readJsonIfExists } from '../util/fsx.js';
import { toolRoot } from '../util/paths.js';
import { campaignOptions, runUrl, workDir, workspace } from '../action/context.js';
import { publishEvidence } from '../action/publishEvidence.js';

/** The pull-request event, as readPullRequestEvent gives it. */
type PullRequestEvent = ReturnType<typeof readPullRequestEvent>;

/** Where a pull request's check works, and what it found before measuring anything. */
interface PullRequestPlan {
  repo: string;
  campaignDir: string;
  work: string;
  /** The baseline evidence tree (DATA_DIR) and head's, each holding the system's folder. */
  baseData: string;
  headData: string;
  baseline: Baseline | undefined;
  /** Candidates the pull request touches that still exist: what is measured. */
  measured: string[];
  /** Earlier nightly evidence trees (DATA_DIR) of this system. */
  history: string[];
  unstable: Set<string>;
}

/** What the measurement added to the comment. */
interface Measured {
  report: CompareReport;
  /** Operations of the base commit measured in this run, interleaved with head's. */
  paired: number;
  extraRounds?: PullRequestContext['extraRounds'];
}

/**
 * The pull-request check as one pipeline: plan (baseline, what the pull request touches, the
 * nightly history), paired rounds judged with extra rounds for the undecided rows
 * (prcheck/pairedRounds.ts, the rule `calibrate` measures), then the comment.
 */
export async function pullRequest(inputs: ActionInputs): Promise<void> {
  const event = readPullRequestEvent();
  if (!admitted(inputs, event)) return;
  const plan = await planPullRequest(inputs, event);
  const measured = await measurePullRequest(inputs, event, plan);
  await deliverPullRequest(inputs, event, plan, measured);
}

/** Whether the pull request's code may run here: a fork's only when the workflow allows it. */
function admitted(inputs: ActionInputs, event: PullRequestEvent): boolean {
  if (inputs.unseenSeed)
    core.warning(
      "unseen-seed is not used in pull-request mode: a pull request's code is held to its base on a seed of its own, never given the nightly's secret",
    );
  if (event.fromFork && !inputs.allowForks) {
    core.setFailed(
      `ngcc-perf: pull request #${event.number} comes from the fork ${event.headRepo}; its code is not run on this runner unless the workflow sets allow-forks: true (after a maintainer's review).`,
    );
    return false;
  }
  return true;
}

/** The baseline, the touched candidates (head starts from the baseline's untouched ones), the history. */
async function planPullRequest(inputs: ActionInputs, event: PullRequestEvent): Promise<PullRequestPlan> {
  const repo = workspace();
  const campaignDir = resolve(repo, inputs.campaign);
  const dataRel = relative(repo, resolve(repo, inputs.dataDir));
  const work = workDir('pr');
  const evidencePath = join(dataRel, inputs.system);
  const baseData = join(work, 'base', dataRel);
  const headData = join(work, 'head');
  const baseline = await baselineOf(inputs, event, { repo, evidencePath, into: join(work, 'base') });
  mkdirSync(join(baseData, inputs.system), { recursive: true });
  const touched = await touchedBy(event, {
    repo,
    campaignDir,
    baselineSystemDir: baseline ? join(baseData, inputs.system) : undefined,
    work,
  });
  // Untouched candidates keep the baseline's numbers; touched ones start empty and are measured.
  headFromBaseline(join(baseData, inputs.system), join(headData, inputs.system), touched);
  // A candidate the pull request deletes is touched but has nothing left to measure.
  const measured = touched.filter((id) => existsSync(join(campaignDir, id, 'candidate.yml')));
  const history = await nightlyHistory(inputs, repo, { evidencePath, dataRel, work });
  const unstable = unstableOnTrends(inputs, history);
  return { repo, campaignDir, work, baseData, headData, baseline, measured, history, unstable };
}

/** The baseline evidence of the system, said in the log either way. */
async function baselineOf(inputs: ActionInputs, event: PullRequestEvent, at: { repo: string; evidencePath: string; into: string }) {
  const search = {
    baseSha: event.baseSha,
    baseRef: event.baseRef,
    publishBranch: inputs.publishBranch,
    evidencePath: at.evidencePath,
    into: at.into,
  };
  const baseline = await findBaseline(at.repo, search);
  if (baseline) core.info(`baseline: the ${inputs.system} evidence on the ${baselineName(baseline)}`);
  else
    core.warning(
      `no baseline evidence for ${inputs.system}: nothing at ${at.evidencePath} on the base commit ${event.baseSha.slice(0, 7)} nor on origin/${inputs.publishBranch} (is it fetched? fetch-depth: 0): nothing is compared`,
    );
  return baseline;
}

/**
 * What can change a number, held against what the baseline measured: build keys (every file a
 * build reads, wherever it lies), kat.sha256, candidate.yml and ngcc-perf.yml.
 */
async function touchedBy(
  event: PullRequestEvent,
  at: { repo: string; campaignDir: string; baselineSystemDir: string | undefined; work: string },
): Promise<string[]> {
  const touched = await touchedCandidates({
    repo: at.repo,
    campaignDir: at.campaignDir,
    baseSha: event.baseSha,
    headSha: event.headSha,
    baselineSystemDir: at.baselineSystemDir,
    scratch: join(at.work, 'keys'),
  });
  for (const why of touched.reasons.slice(0, 50)) core.info(`  ${why}`);
  if (touched.reasons.length > 50) core.info(`  … and ${touched.reasons.length - 50} more`);
  core.info(`candidates touched by #${event.number}: ${touched.candidates.length > 0 ? touched.candidates.join(', ') : 'none'}`);
  return touched.candidates;
}

/**
 * The run-to-run spread of each operation on this machine: earlier nightly evidence on the data
 * branch (when the checkout has it), extracted as DATA_DIR trees.
 */
async function nightlyHistory(inputs: ActionInputs, repo: string, at: { evidencePath: string; dataRel: string; work: string }) {
  // Commits that republish a record unchanged (a shard, a report) count once in compare, which keeps
  // the last HISTORY_RUNS distinct measurements: read enough commits to find them.
  const history = (
    await historyOf(repo, `origin/${inputs.publishBranch}`, at.evidencePath, HISTORY_COMMITS_READ, join(at.work, 'history'))
  ).map((d) => join(d, at.dataRel));
  if (history.length > 0)
    core.info(`nightly history: ${history.length} earlier evidence versions of ${inputs.system} (each measurement counted once)`);
  return history;
}

/** Operations whose nightly verdicts flip on unchanged code fail no pull request (the trend page names them). */
function unstableOnTrends(inputs: ActionInputs, history: string[]): Set<string> {
  const trendProblems: string[] = [];
  const unstable = unstableRows(
    history.map((d) => join(d, inputs.system)).reverse(),
    inputs.system,
    inputs.regressionThreshold,
    trendProblems,
  );
  for (const p of trendProblems) core.info(`nightly history for the unstable rows: left out ${p}`);
  if (unstable.size > 0) core.info(`unstable on the nightly trends (their regressions fail nothing): ${[...unstable].join(', ')}`);
  return unstable;
}

/**
 * The touched candidates measured: with a baseline, the base commit's code of the same candidates
 * in the same run, trials interleaved with head's (two runs minutes apart differ by more than the
 * effects we look for); without one, build and KAT only, as there is nothing to compare timings with.
 */
async function measurePullRequest(inputs: ActionInputs, event: PullRequestEvent, plan: PullRequestPlan): Promise<Measured> {
  const judge = () =>
    judgePullRequest({
      baseDir: plan.baseData,
      headDir: plan.headData,
      system: inputs.system,
      thresholdPct: inputs.regressionThreshold,
      campaignDir: plan.campaignDir,
      history: plan.history,
      unstable: plan.unstable,
    });
  if (plan.measured.length === 0) return { report: judge(), paired: 0 };
  const only = new RegExp(`^(${plan.measured.join('|')})(/|$)`);
  const phases = plan.baseline ? new Set(PHASES) : new Set(['build', 'kat'] as const);
  const base = plan.baseline
    ? await baseSide(plan.repo, event, relative(plan.repo, plan.campaignDir), join(plan.work, 'base-src'))
    : undefined;
  try {
    if (!base) {
      await runCampaign({ ...campaignOptions(inputs, plan.headData), only, phases, force: true, pairedTrials: inputs.prRounds });
      return { report: judge(), paired: 0 };
    }
    return await pairedWithBase(inputs, plan, { base, only, phases, judge });
  } finally {
    await base?.remove();
  }
}

/** Head and the base commit's code measured side by side, judged, and the undecided rows measured again. */
async function pairedWithBase(
  inputs: ActionInputs,
  plan: PullRequestPlan,
  run: { base: BaseSide; only: RegExp; phases: ReadonlySet<Phase>; judge: () => CompareReport },
): Promise<Measured> {
  const pairedDir = join(plan.work, 'paired-base');
  const overlay = () => overlayPairedRecords(join(pairedDir, inputs.system), join(plan.baseData, inputs.system));
  let paired: number | undefined;
  const outcome = await runPairedRounds({
    // Options made afresh for each run, each with its own progress display, as before the loop was shared.
    campaign: () => ({
      ...campaignOptions(inputs, plan.headData),
      only: run.only,
      against: { campaignDir: run.base.campaignDir, dataDir: pairedDir },
    }),
    phases: run.phases,
    rounds: inputs.prRounds,
    extraRounds: inputs.prExtraRounds,
    judge: run.judge,
    afterRun: () => {
      const count = overlay();
      if (paired !== undefined) return;
      paired = count;
      core.info(
        `base side: ${paired} operations of the base commit ${run.base.commit.slice(0, 7)} measured in this run, interleaved with head's`,
      );
    },
    onUndecided: (undecided) => {
      // Pinpoint's third answer: rather than "cannot tell", measure those rows again, and only those.
      for (const r of undecided) core.info(`  ${rowKey(r)}: ${r.verdict} after ${pairCount(r)} trial pairs (${undecidedWhy(r)})`);
      core.info(`extra rounds: ${undecided.length} operation(s) undecided: ${inputs.prExtraRounds} more trial pairs each`);
    },
  });
  return {
    report: outcome.report,
    paired: paired ?? 0,
    ...(outcome.undecided.length > 0 ? { extraRounds: { rows: outcome.undecided.length, pairs: inputs.prExtraRounds } } : {}),
  };
}

/** Why a row is given more pairs, as the log says it. */
function undecidedWhy(r: CompareRow): string {
  if (r.verdict !== 'unchanged') return r.reason;
  const power =
    r.mde_pct === undefined ? 'too few pairs to show any change' : `the smallest change they could show ±${pyFixed(r.mde_pct, 1)}%`;
  return `${r.reason}; ${power}`;
}

/** The comparison delivered: outputs, job summary, verdict, evidence artifact, and the comment. */
async function deliverPullRequest(inputs: ActionInputs, event: PullRequestEvent, plan: PullRequestPlan, m: Measured): Promise<void> {
  const systemDir = (data: string) => join(data, inputs.system);
  const pr: PullRequestContext = {
    baseline: plan.baseline,
    looked: { baseRef: event.baseRef, baseSha: event.baseSha, dataBranch: inputs.publishBranch },
    measured: plan.measured,
    historyRuns: plan.history.length,
    paired: m.paired,
    ...(m.extraRounds ? { extraRounds: m.extraRounds } : {}),
    campaign: relative(plan.repo, plan.campaignDir) || '.',
    cli: reproduceCli(actionOrigin(toolRoot(), plan.repo)),
    ...katFindings(systemDir(plan.baseData), systemDir(plan.headData), m.report, plan.measured),
  };
  const delivery = {
    system: inputs.system,
    prNumber: event.number,
    failOn: inputs.failOn,
    reportUrl: inputs.reportUrl,
    runUrl: runUrl(),
    work: plan.work,
  };
  const text = await deliverResults(m.report, pr, delivery);
  core.setOutput('evidence-dir', systemDir(plan.headData));
  if (inputs.publish === 'artifact') await publishEvidence(inputs, systemDir(plan.headData), undefined, plan.work);
  await postComment(m.report, pr, delivery, inputs, text);
}

/**
 * The pull request's base (the merge base, what the pull request's diff is against) checked out
 * beside the workspace, when the campaign exists there; undefined, with a warning, when it cannot
 * be (then head is compared with the baseline evidence alone).
 */
type BaseSide = NonNullable<Awaited<ReturnType<typeof baseSide>>>;

async function baseSide(repo: string, event: { baseSha: string; headSha: string }, campaignRel: string, into: string) {
  const commit = await mergeBase(repo, event.baseSha, event.headSha);
  const checkout = await checkoutAt(repo, commit, into);
  if ('error' in checkout) {
    core.warning(`the base side is not measured in this run (${checkout.error}): head is compared with the baseline evidence alone`);
    return undefined;
  }
  const campaignDir = join(checkout.dir, campaignRel);
  if (!existsSync(campaignDir)) {
    await checkout.remove();
    core.info(
      `no campaign folder ${campaignRel || '.'} at the base commit ${commit.slice(0, 7)}: head is compared with the baseline evidence alone`,
    );
    return undefined;
  }
  return { commit, campaignDir, remove: checkout.remove };
}

/** The first compiler error of each head build failure, and KATs that fail as on the baseline. */
function katFindings(
  baseSystemDir: string,
  headSystemDir: string,
  report: CompareReport,
  measured: string[],
): Pick<PullRequestContext, 'buildErrors' | 'stillFailing'> {
  const read = (dir: string) => readJsonIfExists<BuildJson>(evidencePaths(dir).build)?.instances ?? {};
  const base = read(baseSystemDir);
  const head = read(headSystemDir);
  const buildErrors: Record<string, string> = {};
  for (const key of report.build_failures) {
    const error = head[key]?.build_error ?? head[key]?.kat_detail;
    if (error) buildErrors[key] = error;
  }
  const stillFailing = Object.entries(head)
    .filter(
      ([key, e]) =>
        measured.includes(e.candidate ?? parseInstanceKey(key).candidate) &&
        instanceStatus(e) !== 'PASS' &&
        e.kat !== 'BUILDFAIL' &&
        instanceStatus(base[key]) === instanceStatus(e),
    )
    .map(([key, e]) => ({ key, status: instanceStatus(e)!, detail: e.forged?.detail ?? e.kat_detail }));
  return { buildErrors, stillFailing };
}
