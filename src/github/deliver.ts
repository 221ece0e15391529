import * as core from '@actions/core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { annotations } from '../compare/annotations.js';
import { failReasons, type FailOn } from '../compare/failOn.js';
import { hasFindings, headline } from '../compare/markdown.js';
import type { CompareReport, PullRequestContext } from '../compare/compareReport.js';
import { errorMessage } from '../errors.js';
import { renderComment, renderJobSummary } from './comment.js';
import { makeOctokit, upsertStickyComment } from './githubApi.js';

export interface Delivery {
  system: string;
  prNumber: number;
  failOn: ReadonlySet<FailOn>;
  reportUrl?: string;
  runUrl?: string;
  /** The step's scratch folder; the artifact goes to `<work>/artifact`. */
  work: string;
}

/**
 * Everything that must not depend on the GitHub API, done before the comment is posted: the
 * artifact files, every output, the job summary, the annotations and the check's verdict.
 * Returns the comment's text and where it was written.
 */
export async function deliverResults(
  report: CompareReport,
  pr: PullRequestContext,
  d: Delivery,
): Promise<{ body: string; commentPath: string }> {
  const opts = { runUrl: d.runUrl, reportUrl: d.reportUrl, pr };
  const body = renderComment(report, opts);
  const out = join(d.work, 'artifact');
  mkdirSync(out, { recursive: true });
  const commentPath = join(out, 'comment.md');
  writeFileSync(join(out, 'comparison.json'), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(commentPath, body);
  writeFileSync(join(out, 'pr-number'), `${d.prNumber}\n`);
  writeFileSync(join(out, 'system'), `${d.system}\n`);
  core.setOutput('regressions', String(report.counts.regressions));
  core.setOutput('improvements', String(report.counts.improvements));
  // The same count as the headline's "KAT: N failures" and fail-on: kat (KATs still failing as
  // on the baseline are listed, not counted: the pull request did not cause them).
  core.setOutput('kat-failures', String(report.counts.kat_failures));
  core.setOutput('size-mismatches', String(report.counts.size_mismatches));
  core.setOutput('ct-findings', String(report.counts.ct_findings ?? 0));
  core.setOutput('comparison-path', join(out, 'comparison.json'));
  core.setOutput('summary-path', commentPath);
  core.setOutput('artifact-dir', out);
  await core.summary.addRaw(renderJobSummary(report, opts)).write();
  const annotate = { error: core.error, warning: core.warning, notice: core.notice };
  for (const a of annotations(report, pr)) annotate[a.level](a.message, { title: a.title });
  const why = failReasons(report, d.failOn);
  if (why.length > 0) core.setFailed(`ngcc-perf ${d.system}: ${why.join(', ')}`);
  return { body, commentPath };
}

export interface CommentRequest {
  comment: 'always' | 'on-change' | 'never';
  token: string;
}

/**
 * The sticky comment. `on-change` creates one only when there is something to report but always
 * updates an existing one, so a fixed regression does not leave a stale warning behind. A failure
 * here is a warning that repeats the findings: the verdict and outputs are already set.
 */
export async function postComment(
  report: CompareReport,
  pr: PullRequestContext,
  d: Delivery,
  c: CommentRequest,
  text: { body: string; commentPath: string },
): Promise<void> {
  if (c.comment === 'never') return;
  const create = c.comment === 'always' || hasFindings(report, pr);
  if (!c.token) {
    if (create) core.warning(`comment requested but no token given (input 'token'): the comment is in the artifact (${text.commentPath})`);
    return;
  }
  try {
    const [owner, repo] = (process.env.GITHUB_REPOSITORY ?? '/').split('/') as [string, string];
    const octokit = makeOctokit(c.token, process.env.GITHUB_API_URL);
    const r = await upsertStickyComment(octokit, { owner, repo, issueNumber: d.prNumber, system: d.system, body: text.body, create });
    core.info(
      r.action === 'not-created'
        ? 'nothing to report and no sticky comment yet: none created (comment: on-change)'
        : `sticky comment ${r.action} (id ${r.id})`,
    );
  } catch (e) {
    core.warning(
      `the sticky comment of ${d.system} was not posted: ${errorMessage(e)}. Its findings: ${headline(report, pr)}. ` +
        `The full text is comment.md in the artifact (output summary-path: ${text.commentPath}).`,
      { title: 'ngcc-perf comment not posted' },
    );
  }
}
