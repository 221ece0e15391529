import * as core from '@actions/core';
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { PHASES, runCampaign, type CampaignSummary } from './campaign/run.js';
import { loadCampaign, loadSettings } from './config/campaign.js';
import { doctor } from './campaign/doctor.js';
import { defaultTrialCpu } from './campaign/plan.js';
import { readinessLines } from './env/readiness.js';
import type { SandboxSetting } from './sandbox/bwrap.js';
import { HISTORY_COMMITS_READ } from './config/defaults.js';
import { stoppable } from './stoppable.js';
import { compareEvidence, pairCount, rowKey, undecidedRows } from './compare/compare.js';
import { pyFixed } from './text/format.js';
import type { CompareReport, PullRequestContext } from './compare/types.js';
import { errorMessage, isInputError } from './errors.js';
import { evidencePaths, instanceKey, parseInstanceKey } from './evidence/layout.js';
import type { BuildJson } from './evidence/types.js';
import { validateDataset } from './evidence/validate.js';
import { forgeryShown, instanceStatus } from './kat/status.js';
import { actionsBuildCache } from './github/buildCache.js';
import { baselineName, findBaseline, headFromBaseline, overlayPairedRecords, publishedUnseenTruth } from './github/baseline.js';
import type { UnseenTruth } from './kat/unseen.js';
import { deliverResults, postComment } from './github/deliver.js';
import { readPullRequestEvent } from './github/event.js';
import { checkoutAt, historyOf, historyVersions, mergeBase } from './github/gitTree.js';
import { readInputs, type ActionInputs } from './github/inputs.js';
import { publish } from './github/publish.js';
import { actionOrigin, reproduceCli } from './github/reproduce.js';
import { touchedCandidates } from './github/touched.js';
import { lastNightSide } from './github/lastNight.js';
import { keepRunPairs } from './compare/nightPairs.js';
import { createProgress } from './campaign/progress.js';
import { baselineInstanceKeys } from './campaign/iccsBaseline.js';
import { outcomeLines } from './campaign/tracker.js';
import { loadReportModel, systemsIn } from './report/model.js';
import { renderIndex, renderPages, writePages } from './report/render.js';
import { unstableRows, type HistoryInput } from './trend/history.js';
import { trendHighlights } from './report/pages/trends.js';
import type { RootContent } from 'mdast';
import { diskFullError, filesUnder, readJsonIfExists } from './util/fsx.js';
import { toolRoot, toolVersion } from './util/paths.js';

/** The pages' index of every system (a path under pages-dir). */
const INDEX_PAGE = 'index.md';

/** A scratch folder for this step, outside the workspace (never committed, never a "system"). */
const workDir = (purpose: string) => mkdtempSync(join(process.env.RUNNER_TEMP ?? tmpdir(), `ngcc-perf-${purpose}-`));
const workspace = () => resolve(process.env.GITHUB_WORKSPACE ?? process.cwd());
const runUrl = () =>
  process.env.GITHUB_RUN_ID
    ? `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${process.env.GITHUB_REPOSITORY}/actions/runs/${process.env.GITHUB_RUN_ID}`
    : undefined;

/** The action's entry: one of three modes, everything reported through outputs and the summary. */
export async function run(): Promise<void> {
  try {
    const inputs = readInputs();
    // A cancelled job signals this process only; submission code in its own process groups would
    // keep running on the self-hosted runner, beyond any timeout, and disturb the next job.
    await stoppable(
      async () => {
        if (inputs.mode !== 'report') await doctorSummary(inputs);
        if (inputs.mode === 'pull-request') await pullRequest(inputs);
        else if (inputs.mode === 'nightly') await nightly(inputs);
        else await reportOnly(inputs);
      },
      (line) => core.error(`ngcc-perf ${line}`),
    );
  } catch (e) {
    const input = isInputError(e) ? e : diskFullError(e);
    core.setFailed(input ? input.message : `ngcc-perf: ${errorMessage(e)}`);
  }
}

/**
 * What the runner is, before anything is measured: the doctor's findings on the job's timing core
 * (input `cpu`, else the system's first in ngcc-perf.yml, else the run's default) go to the job
 * summary, and its warnings to the log. It stops nothing: the run's own start checks do that.
 */
async function doctorSummary(inputs: ActionInputs): Promise<void> {
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

function campaignOptions(inputs: ActionInputs, dataDir: string) {
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

function reportKat(summary: CampaignSummary): number {
  const failures = summary.instances.filter((i) => instanceStatus(i) !== 'PASS');
  for (const f of failures)
    core.error(`${f.key}: ${f.forged ? `FORGED — ${forgeryShown(f.forged)}` : `KAT ${f.kat}${f.detail ? ` — ${f.detail}` : ''}`}`, {
      title: 'ngcc-perf KAT',
    });
  return failures.length;
}

/** Measures what the pull request touches and compares it with the baseline evidence. */
async function pullRequest(inputs: ActionInputs): Promise<void> {
  const event = readPullRequestEvent();
  if (inputs.unseenSeed)
    core.warning(
      "unseen-seed is not used in pull-request mode: a pull request's code is held to its base on a seed of its own, never given the nightly's secret",
    );
  if (event.fromFork && !inputs.allowForks) {
    core.setFailed(
      `ngcc-perf: pull request #${event.number} comes from the fork ${event.headRepo}; its code is not run on this runner unless the workflow sets allow-forks: true (after a maintainer's review).`,
    );
    return;
  }
  const repo = workspace();
  const campaignDir = resolve(repo, inputs.campaign);
  const dataRel = relative(repo, resolve(repo, inputs.dataDir));
  const work = workDir('pr');
  const evidencePath = join(dataRel, inputs.system);
  const baseData = join(work, 'base', dataRel);
  const headData = join(work, 'head');
  const search = {
    baseSha: event.baseSha,
    baseRef: event.baseRef,
    publishBranch: inputs.publishBranch,
    evidencePath,
    into: join(work, 'base'),
  };
  const baseline = await findBaseline(repo, search);
  if (baseline) core.info(`baseline: the ${inputs.system} evidence on the ${baselineName(baseline)}`);
  else
    core.warning(
      `no baseline evidence for ${inputs.system}: nothing at ${evidencePath} on the base commit ${event.baseSha.slice(0, 7)} nor on origin/${inputs.publishBranch} (is it fetched? fetch-depth: 0): nothing is compared`,
    );
  mkdirSync(join(baseData, inputs.system), { recursive: true });

  // What can change a number, held against what the baseline measured: build keys (every file a
  // build reads, wherever it lies), kat.sha256, candidate.yml and ngcc-perf.yml.
  const touched = await touchedCandidates({
    repo,
    campaignDir,
    baseSha: event.baseSha,
    headSha: event.headSha,
    baselineSystemDir: baseline ? join(baseData, inputs.system) : undefined,
    scratch: join(work, 'keys'),
  });
  for (const why of touched.reasons.slice(0, 50)) core.info(`  ${why}`);
  if (touched.reasons.length > 50) core.info(`  … and ${touched.reasons.length - 50} more`);
  core.info(`candidates touched by #${event.number}: ${touched.candidates.length > 0 ? touched.candidates.join(', ') : 'none'}`);
  // Untouched candidates keep the baseline's numbers; touched ones start empty and are measured.
  headFromBaseline(join(baseData, inputs.system), join(headData, inputs.system), touched.candidates);

  // A candidate the pull request deletes is touched but has nothing left to measure.
  const measured = touched.candidates.filter((id) => existsSync(join(campaignDir, id, 'candidate.yml')));
  // The run-to-run spread of each operation on this machine: earlier nightly evidence on the
  // data branch (when the checkout has it), extracted as DATA_DIR trees.
  // Commits that republish a record unchanged (a shard, a report) count once in compare, which keeps
  // the last HISTORY_RUNS distinct measurements: read enough commits to find them.
  const history = (await historyOf(repo, `origin/${inputs.publishBranch}`, evidencePath, HISTORY_COMMITS_READ, join(work, 'history'))).map(
    (d) => join(d, dataRel),
  );
  if (history.length > 0)
    core.info(`nightly history: ${history.length} earlier evidence versions of ${inputs.system} (each measurement counted once)`);
  // Operations whose nightly verdicts flip on unchanged code fail no pull request (the trend page names them).
  const trendProblems: string[] = [];
  const unstable = unstableRows(
    history.map((d) => join(d, inputs.system)).reverse(),
    inputs.system,
    inputs.regressionThreshold,
    trendProblems,
  );
  for (const p of trendProblems) core.info(`nightly history for the unstable rows: left out ${p}`);
  if (unstable.size > 0) core.info(`unstable on the nightly trends (their regressions fail nothing): ${[...unstable].join(', ')}`);
  const compare = () =>
    compareEvidence({
      baseDir: baseData,
      headDir: headData,
      system: inputs.system,
      thresholdPct: inputs.regressionThreshold,
      campaignDir,
      history,
      unstable,
    });
  let paired = 0;
  let extraRounds: PullRequestContext['extraRounds'];
  if (measured.length > 0) {
    const only = new RegExp(`^(${measured.join('|')})(/|$)`);
    // Without a baseline there is nothing to compare timings with: build and KAT-check only.
    const phases = baseline ? new Set(PHASES) : new Set(['build', 'kat'] as const);
    // With a baseline, the base commit's code of the same candidates is measured in the same run,
    // trials interleaved with head's: two runs minutes apart differ by more than the effects we look for.
    const base = baseline ? await baseSide(repo, event, relative(repo, campaignDir), join(work, 'base-src')) : undefined;
    const pairedDir = join(work, 'paired-base');
    const against = base ? { against: { campaignDir: base.campaignDir, dataDir: pairedDir } } : {};
    try {
      await runCampaign({ ...campaignOptions(inputs, headData), only, phases, force: true, pairedTrials: inputs.prRounds, ...against });
      if (base) {
        paired = overlayPairedRecords(join(pairedDir, inputs.system), join(baseData, inputs.system));
        core.info(
          `base side: ${paired} operations of the base commit ${base.commit.slice(0, 7)} measured in this run, interleaved with head's`,
        );
        const undecided = inputs.prExtraRounds > 0 ? undecidedRows(compare()) : [];
        if (undecided.length > 0) {
          // Pinpoint's third answer: rather than "cannot tell", measure those rows again, and only those.
          for (const r of undecided)
            core.info(
              `  ${rowKey(r)}: ${r.verdict} after ${pairCount(r)} trial pairs (${r.reason}${r.verdict === 'unchanged' ? `; ${r.mde_pct === undefined ? 'too few pairs to show any change' : `the smallest change they could show ±${pyFixed(r.mde_pct, 1)}%`}` : ''})`,
            );
          core.info(`extra rounds: ${undecided.length} operation(s) undecided: ${inputs.prExtraRounds} more trial pairs each`);
          await runCampaign({
            ...campaignOptions(inputs, headData),
            only,
            phases: new Set(['measure'] as const),
            campaignPhases: false,
            extraRounds: { pairs: inputs.prExtraRounds, operations: new Set(undecided.map(rowKey)) },
            ...against,
          });
          overlayPairedRecords(join(pairedDir, inputs.system), join(baseData, inputs.system));
          extraRounds = { rows: undecided.length, pairs: inputs.prExtraRounds };
        }
      }
    } finally {
      await base?.remove();
    }
  }
  const report = compare();
  const pr: PullRequestContext = {
    baseline,
    looked: { baseRef: event.baseRef, baseSha: event.baseSha, dataBranch: inputs.publishBranch },
    measured,
    historyRuns: history.length,
    paired,
    ...(extraRounds ? { extraRounds } : {}),
    campaign: relative(repo, campaignDir) || '.',
    cli: reproduceCli(actionOrigin(toolRoot(), repo)),
    ...katFindings(join(baseData, inputs.system), join(headData, inputs.system), report, measured),
  };
  const delivery = {
    system: inputs.system,
    prNumber: event.number,
    failOn: inputs.failOn,
    reportUrl: inputs.reportUrl,
    runUrl: runUrl(),
    work,
  };
  const text = await deliverResults(report, pr, delivery);
  core.setOutput('evidence-dir', join(headData, inputs.system));
  if (inputs.publish === 'artifact') await publishEvidence(inputs, join(headData, inputs.system), undefined, work);
  await postComment(report, pr, delivery, inputs, text);
}

/**
 * The pull request's base (the merge base, what the pull request's diff is against) checked out
 * beside the workspace, when the campaign exists there; undefined, with a warning, when it cannot
 * be (then head is compared with the baseline evidence alone).
 */
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
async function nightly(inputs: ActionInputs): Promise<void> {
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

/**
 * A section of the job summary: a heading and the lines as the log printed them. A runner without a
 * summary file (or one that cannot be written) loses the section, never the run.
 */
async function writeJobSummary(heading: string, lines: string[]): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    await core.summary.addRaw(`### ${heading}\n\n\`\`\`text\n${lines.join('\n')}\n\`\`\`\n\n`).write();
  } catch (e) {
    core.warning(`job summary not written: ${errorMessage(e)}`);
  }
}

/** Pages from evidence already on disk (e.g. merged shards). */
async function reportOnly(inputs: ActionInputs): Promise<void> {
  const systemDir = resolve(workspace(), inputs.dataDir, inputs.system);
  if (!existsSync(systemDir)) throw new Error(`no evidence at ${systemDir}`);
  const campaignDir = resolve(workspace(), inputs.campaign);
  const rendered = await renderAndOutput(inputs, systemDir, campaignDir);
  if (inputs.publish !== 'none') await publishEvidence(inputs, systemDir, rendered, workDir('report'));
}

interface Rendered {
  pages: Map<string, string>;
  /** The index's trend sections of this system (kept when the index is rendered again at publish time). */
  highlights: RootContent[];
}

async function renderAndOutput(inputs: ActionInputs, systemDir: string, campaignDir: string): Promise<Rendered> {
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

/**
 * Evidence files (never built libraries) and, unless this is a shard, the pages: committed to the
 * data branch, or copied under the artifact folder for the workflow to upload.
 */
async function publishEvidence(inputs: ActionInputs, systemDir: string, rendered: Rendered | undefined, work: string): Promise<void> {
  const pages = rendered?.pages;
  const repo = workspace();
  const evidenceTo = join(relative(repo, resolve(repo, inputs.dataDir)), inputs.system);
  const pagesTo = relative(repo, resolve(repo, inputs.pagesDir));
  const files = filesUnder(systemDir)
    .filter((f) => !f.startsWith('build/'))
    .map((f) => ({ from: join(systemDir, f), to: join(evidenceTo, f) }));
  if (inputs.publish === 'artifact') {
    const dir = join(work, 'artifact', 'evidence', inputs.system);
    for (const f of files) cpSync(f.from, join(dir, relative(evidenceTo, f.to)));
    core.setOutput('artifact-dir', join(work, 'artifact'));
    return;
  }
  // index.md lists every system on the data branch, which only the branch knows: rendered there.
  const pageFiles = [...(pages ?? [])]
    .filter(([p]) => p !== INDEX_PAGE)
    .map(([p, text]) => {
      const from = join(work, 'pages-out', p);
      mkdirSync(dirname(from), { recursive: true });
      writeFileSync(from, text);
      return { from, to: join(pagesTo, p) };
    });
  // A shard owns exactly its files; a whole system owns its evidence folder per instance: what it
  // re-measured is replaced, instances the campaign no longer has leave the branch, and those a
  // failed shard lacks stay. The pages folder is shared by every system: never owned.
  const owns = inputs.shard ? files.map((f) => f.to) : [evidenceTo];
  const campaign = loadCampaign(resolve(repo, inputs.campaign));
  const campaignInstances = new Set([
    ...campaign.candidates.flatMap((c) => c.instances.map((i) => instanceKey(c.id, i.label))),
    // The ICCS baseline is measured once per system (ngcc-perf iccs-baseline), not by each run: kept.
    ...baselineInstanceKeys(),
  ]);
  const result = await publish({
    repoDir: repo,
    remote: 'origin',
    branch: inputs.publishBranch,
    files: [...files, ...pageFiles],
    owns,
    campaignInstances,
    // A shard's campaign.json spans its own run: merged with the branch's as `ngcc-perf merge` does.
    mergeCampaign: inputs.shard !== undefined,
    derived: pages
      ? [
          {
            to: join(pagesTo, INDEX_PAGE),
            render: (tree) => renderIndex(systemsIn(join(tree, dirname(evidenceTo))), toolVersion(), rendered?.highlights),
          },
        ]
      : [],
    message: `ngcc-perf ${inputs.system}: evidence${inputs.shard ? ` (shard ${inputs.shard.index}/${inputs.shard.count})` : ' and pages'}`,
    author: { name: 'ngcc-perf', email: 'ngcc-perf@users.noreply.github.com' },
    token: inputs.token || undefined,
  });
  core.info(result.changed ? `published ${result.commit} after ${result.attempts} attempt(s)` : 'nothing to publish: evidence unchanged');
}
