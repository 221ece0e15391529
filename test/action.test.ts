import { summary } from '@actions/core';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { InlineCode, Paragraph } from 'mdast';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import type { CompareReport } from '../src/compare/compareReport.js';
import { mergeCampaignJson } from '../src/evidence/merge.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { runProcess } from '../src/sandbox/runProcess.js';
import { COMMENT_MARKER } from '../src/github/comment.js';
import { actionOrigin, reproduceCli } from '../src/github/reproduce.js';
import { touchedCandidates } from '../src/github/touched.js';
import { run } from '../src/main.js';
import { runActionCaptured } from './helpers/action.js';
import { startFakeCache, type FakeCache } from './helpers/fakeCache.js';
import { startFakeGithub, type FakeGithub } from './helpers/fakeGithub.js';
import { git } from './helpers/git.js';
import { parsePage, plain, sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const TOKEN = 'ghs_test_token_value';
const fixtureKem = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
const iccs = join(repoRoot, 'native', 'iccs');

const KEM_SOURCE = '#include "KEM_AlgorithmInstance.h"\n#include "../common/toy_kem.inc"\n';
/** The same output, more cycles: a busy loop in every operation. */
const SLOW_SOURCE = '#include "KEM_AlgorithmInstance.h"\n#define TOY_KEM_SLOWDOWN 40000\n#include "../common/toy_kem.inc"\n';
/** A candidate whose toy KEM comes from the repository's vendor/toy/, outside the campaign folder. */
const VENDORED_SOURCE = '#include "KEM_AlgorithmInstance.h"\n#include "toy_kem.inc"\n';
/** The vendored toy KEM, slowed down: the same output, more cycles, for every candidate that compiles it. */
const slowVendored = (repo: string) => {
  const inc = join(repo, 'vendor', 'toy', 'toy_kem.inc');
  writeFileSync(inc, `#define TOY_KEM_SLOWDOWN 40000\n${readFileSync(inc, 'utf8')}`);
};
/** The cwd the tests started in: the runner starts an action in the workspace, the tests go back. */
const startCwd = process.cwd();

interface RepositoryOptions {
  /** Where the baseline evidence lives (as workflows-example/nightly.yml publishes it, or committed on main). */
  evidenceOn?: 'main' | 'data-branch';
  /** kem-1 and kem-2 compile vendor/toy/toy_kem.inc from outside `submissions/`; the pull request slows it. */
  vendored?: boolean;
}

/**
 * A submission repository: two toy KEM candidates on main, and their evidence either committed
 * on main or (as workflows-example/nightly.yml publishes it) only on the data branch, seen as
 * origin/ngcc-perf-data the way a fetch-depth: 0 checkout has it.
 */
async function makeRepository(opts: RepositoryOptions = {}): Promise<{ repo: string; base: string; head: string }> {
  const { evidenceOn = 'main', vendored = false } = opts;
  const repo = tempDir();
  await git(repo, 'init', '-q', '-b', 'main');
  const campaign = join(repo, 'submissions');
  if (vendored) cpSync(join(fixtureKem, 'common'), join(repo, 'vendor', 'toy'), { recursive: true });
  for (const id of ['kem-1', 'kem-2']) {
    const dir = join(campaign, id);
    mkdirSync(dir, { recursive: true });
    cpSync(join(fixtureKem, 'good'), join(dir, 'src'), { recursive: true });
    if (!vendored) cpSync(join(fixtureKem, 'common'), join(dir, 'common'), { recursive: true });
    // (Each its own source: equal inputs would share one build, and one cache entry.)
    writeFileSync(join(dir, 'src', 'KEM_AlgorithmInstance.c'), vendored ? `/* ${id} */\n${VENDORED_SOURCE}` : KEM_SOURCE);
    const include = vendored ? '../../../vendor/toy' : '../common';
    writeFileSync(
      join(dir, 'candidate.yml'),
      `id: ${id}\ntype: kem\nalgorithm: Toy ${id}\ninstances:\n  - label: good\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ${include}]\n`,
    );
    const digest = readFileSync(join(fixtureKem, 'kat.sha256'), 'utf8')
      .split('\n')
      .find((l) => / good\//.test(l))!;
    writeFileSync(join(dir, 'kat.sha256'), `${digest}\n`);
  }
  writeFileSync(join(campaign, 'ngcc-perf.yml'), 'planning:\n  trials: 5\n  trial_target_s: 0.04\n  op_budget_s: 2\n  warmups: 2\n');
  writeFileSync(join(repo, '.gitignore'), 'performance/data/*/build/\n');
  const dataDir = join(repo, 'performance', 'data');
  if (evidenceOn === 'data-branch') {
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'base: submissions, no evidence');
  }
  await runCampaign({ campaignDir: campaign, system: 'x86_1', dataDir, phases: new Set(['build', 'kat', 'measure']) });
  if (evidenceOn === 'main') {
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'base: submissions and their evidence');
  } else {
    await git(repo, 'checkout', '-q', '--orphan', 'data');
    await git(repo, 'rm', '-rq', '--cached', '.');
    await git(repo, 'add', 'performance/data');
    await git(repo, 'commit', '-q', '-m', 'nightly evidence');
    await git(repo, 'update-ref', 'refs/remotes/origin/ngcc-perf-data', 'HEAD');
    await git(repo, 'checkout', '-q', '-f', 'main');
    await git(repo, 'branch', '-q', '-D', 'data');
    rmSync(join(repo, 'performance'), { recursive: true, force: true });
  }
  const base = await git(repo, 'rev-parse', 'HEAD');
  const head = await prHead(repo, base, 'slower', (c) =>
    vendored ? slowVendored(repo) : writeFileSync(join(c, 'kem-1', 'src', 'KEM_AlgorithmInstance.c'), SLOW_SOURCE),
  );
  return { repo, base, head };
}

/** A pull request's head: `change` applied to the campaign on a branch from `from`, checked out. */
async function prHead(repo: string, from: string, branch: string, change: (campaignDir: string) => unknown): Promise<string> {
  await git(repo, 'checkout', '-q', '-f', '-B', branch, from);
  change(join(repo, 'submissions'));
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', `pull request ${branch}`);
  return git(repo, 'rev-parse', 'HEAD');
}

function readOutputs(file: string): Record<string, string> {
  // GITHUB_OUTPUT lines: name<<DELIM / value / DELIM.
  const out: Record<string, string> = {};
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<]+)<<(.+)$/.exec(lines[i]!);
    if (!m) continue;
    const end = lines.indexOf(m[2]!, i + 1);
    out[m[1]!] = lines.slice(i + 1, end).join('\n');
    i = end;
  }
  return out;
}

const runCaptured = runActionCaptured;

const headlineOf = (body: string): string => body.split('\n').find((l) => l.startsWith('### '))!;
/** Markdown as a reader sees it (escapes and code spans resolved). */
const rendered = (md: string): string => plain(parsePage(md));

interface PullRequest {
  number?: number;
  base: string;
  head: string;
  headRepo?: string;
  inputs?: Record<string, string>;
  /** Further variables of the runner (the action's own repository, the cache service). */
  env?: Record<string, string>;
}

/** Variables of the machine running the tests that would change what the action does. */
const RUNNER_ONLY = [
  'GITHUB_ACTION_REPOSITORY',
  'GITHUB_ACTION_REF',
  'GITHUB_SERVER_URL',
  'ACTIONS_CACHE_URL',
  'ACTIONS_RESULTS_URL',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_CACHE_SERVICE_V2',
];
const withoutRunnerOnly = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([k]) => !RUNNER_ONLY.includes(k)));

// @actions/core keeps the job summary's path from its first write: one file, emptied per run.
const SUMMARY = join(tempDir(), 'summary');

/** The runner's environment for a pull_request event: INPUT_* variables, payload, output files. */
function runnerEnv(saved: NodeJS.ProcessEnv, repo: string, apiUrl: string, pr: PullRequest): { output: string; summary: string } {
  const dir = tempDir();
  const event = join(dir, 'event.json');
  const number = pr.number ?? 7;
  writeFileSync(
    event,
    JSON.stringify({
      action: 'synchronize',
      number,
      pull_request: {
        number,
        base: { sha: pr.base, ref: 'main', repo: { full_name: 'ngcc/submissions' } },
        head: { sha: pr.head, ref: 'change', repo: { full_name: pr.headRepo ?? 'ngcc/submissions' } },
      },
    }),
  );
  const output = join(dir, 'output');
  const summary = SUMMARY;
  writeFileSync(output, '');
  writeFileSync(summary, '');
  process.env = {
    ...withoutRunnerOnly(saved),
    GITHUB_WORKSPACE: repo,
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: event,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_REPOSITORY: 'ngcc/submissions',
    GITHUB_API_URL: apiUrl,
    GITHUB_RUN_ID: '42',
    RUNNER_TEMP: dir,
    INPUT_MODE: 'pull-request',
    INPUT_CAMPAIGN: 'submissions',
    INPUT_SYSTEM: 'x86_1',
    'INPUT_DATA-DIR': 'performance/data',
    INPUT_COMMENT: 'always',
    INPUT_TOKEN: TOKEN,
    INPUT_PUBLISH: 'none',
    'INPUT_FAIL-ON': 'regression,kat',
    'INPUT_BUILD-CACHE': 'true',
    // The fewest pairs that can reach p ≤ 0.01 (2/2^8): the slowdowns these tests plant are tenfold or
    // more, and their other pull requests change no timing at all.
    'INPUT_PR-ROUNDS': '8',
    ...Object.fromEntries(Object.entries(pr.inputs ?? {}).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
    ...pr.env,
  };
  // The runner starts a JavaScript action in the workspace.
  process.chdir(repo);
  process.exitCode = undefined;
  return { output, summary };
}

/** A fake GitHub API and a repository for a describe block; the environment is restored after it. */
function pullRequestFixture(opts?: RepositoryOptions) {
  const fx = { api: undefined as unknown as FakeGithub, repo: '', base: '', head: '', saved: { ...process.env } };
  beforeAll(async () => {
    fx.api = await startFakeGithub({ token: TOKEN });
    Object.assign(fx, await makeRepository(opts));
  });
  afterAll(async () => {
    process.env = fx.saved;
    process.chdir(startCwd);
    await fx.api.stop();
  });
  return fx;
}

describe('the action in pull-request mode, as the runner calls it', () => {
  const fx = pullRequestFixture();

  function setRunnerEnv(headRepo = 'ngcc/submissions'): { output: string; summary: string } {
    return runnerEnv(fx.saved, fx.repo, fx.api.url, { base: fx.base, head: fx.head, headRepo });
  }

  it('flags the slowed-down candidate, not the untouched one, in one sticky comment', async () => {
    await git(fx.repo, 'checkout', '-q', '-f', fx.head);
    const { output, summary } = setRunnerEnv();
    const { log, failed } = await runCaptured();
    // On a failure, the comment and the log say which row went how, and why.
    const said = `${fx.api.comments('ngcc', 'submissions', 7)[0]?.body}\n${log}`;
    expect(failed, said).toBe(true);
    const outputs = readOutputs(output);
    expect(Number(outputs.regressions)).toBeGreaterThanOrEqual(1);
    expect(outputs['kat-failures']).toBe('0');
    const comments = fx.api.comments('ngcc', 'submissions', 7);
    expect(comments).toHaveLength(1);
    const body = comments[0]!.body;
    expect(body.split('\n')[0]).toBe(COMMENT_MARKER('x86_1'));
    // The changed-rows table is the first table: kem-1 regressions only.
    const changed = sections(body).flatMap((s) => s.tables)[0]!;
    const rows = changed.slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.every((r) => r[0] === 'kem-1')).toBe(true);
    expect(rows.some((r) => r.some((c) => /regression/.test(c)))).toBe(true);
    expect(body).not.toMatch(/\| kem-2 \|[^\n]*regression/);
    // Where the baseline came from, in the comment, the job summary and the log.
    const from = `base commit main@${fx.base.slice(0, 7)}`;
    expect(rendered(body)).toContain(from);
    expect(rendered(readFileSync(summary, 'utf8'))).toContain(from);
    expect(log).toContain(from);
    expect(readFileSync(summary, 'utf8')).toMatch(/regression/);
    // Only kem-1 was measured: its three operations are compared, kem-2's are carried over.
    expect(body).toMatch(/3 measurements compared, \d+ changed; 3 of untouched candidates carried over/);
    expect(log).toContain('kem-1/good: build inputs changed');
    expect(log).toContain('candidates touched by #7: kem-1\n');
    expect(log).toMatch(/::error::ngcc-perf x86_1: \d regression\(s\)/);
  });

  it("the comment's reproduce commands run as printed, in a checkout of the pull request, and find the regression", async () => {
    const body = fx.api.comments('ngcc', 'submissions', 7)[0]!.body;
    const hint = parsePage(body).children.find((n) => n.type === 'paragraph' && plain(n).startsWith('Reproduce locally'))!;
    const commands = (hint as Paragraph).children.filter((n): n is InlineCode => n.type === 'inlineCode').map((n) => n.value);
    expect(commands).toHaveLength(3);
    const [runCommand, compareCommand, baselineDir] = commands as [string, string, string];
    // Outside a workflow the action has no repository of its own: the CLI of the checkout it runs from.
    expect(runCommand.startsWith(`node ${join(repoRoot, 'dist', 'cli.js')} run `)).toBe(true);

    const checkout = join(tempDir(), 'pr');
    await git(fx.repo, 'worktree', 'add', '-q', '--detach', checkout, fx.head);
    const sh = (command: string) => runProcess(['sh', '-c', command], { cwd: checkout, timeoutMs: 300_000 });
    const measured = await sh(runCommand);
    expect(measured.exitCode, measured.stderr).toBe(0);
    expect(existsSync(join(checkout, 'data', 'x86_1', 'records', 'kem-1', 'good__keygen.json'))).toBe(true);
    expect(existsSync(join(checkout, 'data', 'x86_1', 'records', 'kem-2'))).toBe(false);

    // The baseline evidence where the comment says, taken from the base commit.
    const archive = join(tempDir(), 'base.tar');
    await git(fx.repo, 'archive', '-o', archive, fx.base, 'performance/data/x86_1');
    await runProcess(['tar', '-xf', archive, '-C', checkout], { timeoutMs: 60_000 });
    mkdirSync(join(checkout, dirname(baselineDir)), { recursive: true });
    renameSync(join(checkout, 'performance', 'data', 'x86_1'), join(checkout, baselineDir));
    const compared = await sh(compareCommand);
    expect(compared.exitCode, compared.stderr).toBe(1);
    const rows = sections(compared.stdout)
      .flatMap((x) => x.tables)[0]!
      .slice(1)
      .filter((r) => r.some((c) => /regression/.test(c)));
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.every((r) => r[0] === 'kem-1')).toBe(true);
  });

  it('a second run updates the same comment instead of adding one', async () => {
    const before = fx.api.comments('ngcc', 'submissions', 7)[0]!;
    setRunnerEnv();
    await runCaptured();
    const after = fx.api.comments('ngcc', 'submissions', 7);
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(before.id);
    expect(fx.api.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('on-change: a run with nothing to report updates the stale sticky comment, and creates none elsewhere', async () => {
    // Comment #7 still says "regression" from the runs above; the pull request now touches no candidate.
    expect(fx.api.comments('ngcc', 'submissions', 7)[0]!.body).toMatch(/regression/);
    const quiet = await prHead(fx.repo, fx.base, 'docs-only', () => writeFileSync(join(fx.repo, 'NOTES.md'), 'notes\n'));
    runnerEnv(fx.saved, fx.repo, fx.api.url, { base: fx.base, head: quiet, inputs: { comment: 'on-change' } });
    const { failed } = await runCaptured();
    expect(failed).toBe(false);
    const sticky = fx.api.comments('ngcc', 'submissions', 7);
    expect(sticky).toHaveLength(1);
    expect(headlineOf(sticky[0]!.body)).toBe('### ngcc-perf x86_1: ℹ no candidate touched: nothing measured');

    const posts = fx.api.requests.filter((r) => r.method === 'POST').length;
    runnerEnv(fx.saved, fx.repo, fx.api.url, { number: 8, base: fx.base, head: quiet, inputs: { comment: 'on-change' } });
    await runCaptured();
    expect(fx.api.comments('ngcc', 'submissions', 8)).toHaveLength(0);
    expect(fx.api.requests.filter((r) => r.method === 'POST')).toHaveLength(posts);
  });

  it('a refused comment leaves every output, the summary, the verdict and the evidence artifact in place', async () => {
    await git(fx.repo, 'checkout', '-q', '-f', fx.head);
    fx.api.failNext('POST', 403);
    const { output, summary } = runnerEnv(fx.saved, fx.repo, fx.api.url, {
      number: 9,
      base: fx.base,
      head: fx.head,
      inputs: { publish: 'artifact' },
    });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    const outputs = readOutputs(output);
    for (const name of [
      'regressions',
      'improvements',
      'kat-failures',
      'size-mismatches',
      'comparison-path',
      'summary-path',
      'artifact-dir',
      'evidence-dir',
    ])
      expect(outputs[name], name).toBeDefined();
    expect(Number(outputs.regressions)).toBeGreaterThanOrEqual(1);
    expect(readFileSync(summary, 'utf8')).toMatch(/regression/);
    // The verdict names the regressions; the comment's failure is its own warning, with the findings.
    expect(log).toMatch(/::error::ngcc-perf x86_1: \d regression\(s\)/);
    const warning = log.split('\n').find((l) => l.startsWith('::warning title=ngcc-perf comment not posted'))!;
    expect(warning).toMatch(/HTTP 403/);
    expect(warning).toMatch(/regression/);
    expect(warning).toContain(outputs['summary-path']!);
    expect(fx.api.comments('ngcc', 'submissions', 9)).toHaveLength(0);
    // publish: artifact leaves the pull request's evidence (KAT logs included) next to the comment.
    expect(outputs['summary-path']).toBe(join(outputs['artifact-dir']!, 'comment.md'));
    const evidence = join(outputs['artifact-dir']!, 'evidence', 'x86_1');
    expect(readFileSync(join(evidence, 'records', 'kem-1', 'good__keygen.json'), 'utf8')).toContain('"status": "complete"');
    expect(existsSync(join(evidence, 'kat', 'kem-1', 'good.log'))).toBe(true);
  });

  it('a touched candidate whose build now fails shows as removed, with the compiler error, never as unchanged', async () => {
    const broken = await prHead(fx.repo, fx.base, 'broken', (c) =>
      writeFileSync(
        join(c, 'kem-1', 'src', 'KEM_AlgorithmInstance.c'),
        '#include "KEM_AlgorithmInstance.h"\n#define TOY_KEM_FAULT_BUILDFAIL\n#include "../common/toy_kem.inc"\n',
      ),
    );
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, { number: 10, base: fx.base, head: broken });
    const { failed } = await runCaptured();
    expect(failed).toBe(true);
    const comparison = JSON.parse(readFileSync(readOutputs(output)['comparison-path']!, 'utf8')) as CompareReport;
    const kem1 = comparison.rows.filter((r) => r.candidate === 'kem-1');
    expect(kem1.map((r) => r.verdict)).toEqual(['removed', 'removed', 'removed']);
    expect(comparison.build_failures).toEqual(['kem-1/good']);
    const body = fx.api.comments('ngcc', 'submissions', 10)[0]!.body;
    expect(headlineOf(body)).toMatch(/❌ 1 build failure/);
    expect(body).toMatch(/`kem-1\/good`: `[^`\n]*error[^`\n]*`/);
    expect(body).toMatch(/0 measurements compared, 3 changed; 3 of untouched candidates carried over/);
  });

  it('a deleted candidate and a renamed instance show as removed (and new), not unchanged', async () => {
    const reshaped = await prHead(fx.repo, fx.base, 'reshape', (c) => {
      rmSync(join(c, 'kem-2'), { recursive: true });
      const yml = join(c, 'kem-1', 'candidate.yml');
      writeFileSync(yml, readFileSync(yml, 'utf8').replace('label: good', 'label: fine'));
      const kat = join(c, 'kem-1', 'kat.sha256');
      writeFileSync(kat, readFileSync(kat, 'utf8').replace('good/KAT_KEM_good.txt', 'fine/KAT_KEM_fine.txt'));
    });
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, {
      number: 11,
      base: fx.base,
      head: reshaped,
      inputs: { 'fail-on': 'kat' },
    });
    await runCaptured();
    const comparison = JSON.parse(readFileSync(readOutputs(output)['comparison-path']!, 'utf8')) as CompareReport;
    const verdicts = Object.fromEntries(comparison.rows.map((r) => [`${r.candidate}/${r.label}/${r.operation}`, r.verdict]));
    expect(verdicts).toEqual({
      'kem-1/fine/dec': 'new',
      'kem-1/fine/enc': 'new',
      'kem-1/fine/keygen': 'new',
      'kem-1/good/dec': 'removed',
      'kem-1/good/enc': 'removed',
      'kem-1/good/keygen': 'removed',
      'kem-2/good/dec': 'removed',
      'kem-2/good/enc': 'removed',
      'kem-2/good/keygen': 'removed',
    });
    expect(headlineOf(fx.api.comments('ngcc', 'submissions', 11)[0]!.body)).toMatch(/3 new, 6 removed/);
  });

  it('a KAT already failing on the base is listed, and counted the same way in the output, the headline and the verdict', async () => {
    // The base: kem-2 fails its KAT (one flipped bit of the shared secret), with its evidence.
    await prHead(fx.repo, fx.base, 'kem-2-fails', (c) =>
      writeFileSync(
        join(c, 'kem-2', 'src', 'KEM_AlgorithmInstance.c'),
        '#include "KEM_AlgorithmInstance.h"\n#define TOY_KEM_FAULT_CRYPTOFAIL\n#include "../common/toy_kem.inc"\n',
      ),
    );
    await runCampaign({
      campaignDir: join(fx.repo, 'submissions'),
      system: 'x86_1',
      dataDir: join(fx.repo, 'performance', 'data'),
      only: /^kem-2\//,
      phases: new Set(['build', 'kat']),
    });
    await git(fx.repo, 'add', '-A');
    await git(fx.repo, 'commit', '-q', '-m', 'kem-2 evidence: KAT fails');
    const prBase = await git(fx.repo, 'rev-parse', 'HEAD');
    const baseKat = (JSON.parse(await git(fx.repo, 'show', `${prBase}:performance/data/x86_1/build.json`)) as BuildJson).instances[
      'kem-2/good'
    ]!.kat;
    expect(baseKat).not.toBe('PASS');
    // The pull request changes kem-2's source without fixing it.
    const prHeadSha = await prHead(fx.repo, prBase, 'kem-2-still-fails', (c) => {
      const source = join(c, 'kem-2', 'src', 'KEM_AlgorithmInstance.c');
      writeFileSync(source, `/* still looking */\n${readFileSync(source, 'utf8')}`);
    });
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, { number: 12, base: prBase, head: prHeadSha });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(false);
    expect(readOutputs(output)['kat-failures']).toBe('0');
    expect(log).not.toMatch(/::error/);
    expect(log).toMatch(new RegExp(`::warning title=KAT still ${baseKat}%3A kem-2/good::`));
    const body = fx.api.comments('ngcc', 'submissions', 12)[0]!.body;
    expect(headlineOf(body)).toMatch(/⚠ 1 KAT still failing/);
    expect(headlineOf(body)).not.toMatch(/KAT: \d failure/);
    expect(body).toMatch(new RegExp(`still fail[^\\n]*\\n+- \`kem-2/good\`: ${baseKat}`));
  });

  it('a change the first rounds cannot decide gets extra paired rounds, and the comment says how many each row took', async () => {
    // 6 pairs cannot reach p ≤ 0.01 (2/2^6 = 0.03): after them every row is undecided, whatever the
    // change; 16 more make 22, enough for the signed-rank test to decide. The change is the toy
    // KEM's spin of 1000 (+30–60 % here): a +4 % one is decided this way only on a quieter host
    // than this VM (docs/benchmarks.md (y)), and a test does not bet on the host's noise.
    const slight = await prHead(fx.repo, fx.base, 'slower-a-little', (c) =>
      writeFileSync(
        join(c, 'kem-1', 'src', 'KEM_AlgorithmInstance.c'),
        '#include "KEM_AlgorithmInstance.h"\n#define TOY_KEM_SLOWDOWN 1000\n#include "../common/toy_kem.inc"\n',
      ),
    );
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, {
      number: 13,
      base: fx.base,
      head: slight,
      inputs: { 'pr-rounds': '6', 'pr-extra-rounds': '16' },
    });
    const { log, failed } = await runCaptured();
    const body = fx.api.comments('ngcc', 'submissions', 13)[0]!.body;
    // Undecided after the first rounds, each row named with its verdict and pairs.
    expect(log).toMatch(/kem-1\/good\/(keygen|enc|dec): (inconclusive|noisy|unchanged) after \d+ trial pairs/);
    expect(log).toMatch(/extra rounds: 3 operation\(s\) undecided: 16 more trial pairs each/);
    // Decided after the extra ones: a regression, whose row shows its two rounds.
    expect(failed, body).toBe(true);
    const changed = sections(body).flatMap((x) => x.tables)[0]!;
    expect(changed[0]).toEqual(['candidate', 'instance', 'operation', 'base', 'head', 'Δ%', 'verdict', 'trial pairs']);
    const regressions = changed.slice(1).filter((r) => /regression/.test(r[6]!));
    expect(regressions.length, body).toBeGreaterThanOrEqual(1);
    for (const r of regressions) expect(r[7]).toMatch(/^\d+ \+ \d+$/);
    expect(rendered(body)).toMatch(
      /\d rows? the first rounds could not decide \(inconclusive, noisy, or unchanged on too few pairs to show a change of the threshold\) got 16 more trial pairs each/,
    );
    // The head evidence holds the appended records, valid as any.
    const evidence = readOutputs(output)['evidence-dir']!;
    expect(validateDataset(evidence)).toEqual([]);
    const rounds = ['keygen', 'enc', 'dec'].map(
      (op) => (JSON.parse(readFileSync(join(evidence, 'records', 'kem-1', `good__${op}.json`), 'utf8')) as TimingRecord).trial_rounds,
    );
    expect(rounds.some((r) => r?.length === 2)).toBe(true);
  });

  it("refuses to run a fork's code unless allowed", async () => {
    const { output } = setRunnerEnv('stranger/submissions');
    const posts = fx.api.requests.length;
    const { failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(readOutputs(output).regressions).toBeUndefined();
    expect(fx.api.requests.length).toBe(posts);
  });

  it('names a bad input', async () => {
    setRunnerEnv();
    process.env.INPUT_COMMENT = 'sometimes';
    const { log } = await runCaptured();
    expect(log).toMatch(/input 'comment': expected one of always, on-change, never, got 'sometimes'/);
  });

  it('refuses publish: commit in pull-request mode, naming the input', async () => {
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, { base: fx.base, head: fx.head, inputs: { publish: 'commit' } });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(log).toMatch(/::error::input 'publish': 'commit' is refused in pull-request mode/);
    expect(readOutputs(output).regressions).toBeUndefined();
  });
});

describe('the action in pull-request mode with the evidence only on the data branch', () => {
  const fx = pullRequestFixture({ evidenceOn: 'data-branch' });

  it('compares with the newest evidence on origin/<publish-branch> and says so', async () => {
    const dataSha = await git(fx.repo, 'rev-parse', 'origin/ngcc-perf-data');
    const { output, summary } = runnerEnv(fx.saved, fx.repo, fx.api.url, { base: fx.base, head: fx.head });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(Number(readOutputs(output).regressions)).toBeGreaterThanOrEqual(1);
    const from = `data branch ngcc-perf-data@${dataSha.slice(0, 7)}`;
    const body = fx.api.comments('ngcc', 'submissions', 7)[0]!.body;
    expect(rendered(body)).toContain(from);
    expect(headlineOf(body)).toMatch(/⚠ \d regressions?/);
    expect(rendered(readFileSync(summary, 'utf8'))).toContain(from);
    expect(log).toContain(from);
  });

  it('without any baseline the headline says that nothing was compared', async () => {
    const { summary } = runnerEnv(fx.saved, fx.repo, fx.api.url, {
      number: 8,
      base: fx.base,
      head: fx.head,
      inputs: { 'publish-branch': 'no-such-branch' },
    });
    const { log } = await runCaptured();
    const body = fx.api.comments('ngcc', 'submissions', 8)[0]!.body;
    expect(headlineOf(body)).toMatch(/^### ngcc-perf x86_1: ⚠ no baseline evidence for x86_1: nothing was compared/);
    expect(body).not.toContain('✅');
    expect(readFileSync(summary, 'utf8')).toContain('no baseline evidence for x86_1');
    expect(log).toMatch(/::warning::no baseline evidence for x86_1/);
  });
});

describe('a pull request that slows vendored code outside the campaign folder', () => {
  const fx = pullRequestFixture({ vendored: true });
  let cache: FakeCache;
  beforeAll(async () => {
    cache = await startFakeCache();
  });
  afterAll(() => cache.stop());
  const cacheEnv = () => ({ ACTIONS_CACHE_URL: cache.url, ACTIONS_RUNTIME_TOKEN: cache.token });

  it('is measured and flagged for every candidate that compiles it', async () => {
    // Only vendor/toy/toy_kem.inc changed: nothing under submissions/.
    expect(await git(fx.repo, 'diff', '--name-only', `${fx.base}...${fx.head}`)).toBe('vendor/toy/toy_kem.inc');
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, { base: fx.base, head: fx.head, env: cacheEnv() });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(log).toContain('candidates touched by #7: kem-1, kem-2\n');
    // Each base side's outcome is in the log: a row without base trials says why there.
    for (const op of ['keygen', 'enc', 'dec'])
      expect(log).toMatch(new RegExp(`kem-1/good ${op} \\(base side\\): (complete|partial)[^\\n]*, \\d+ trials`));
    const comparison = JSON.parse(readFileSync(readOutputs(output)['comparison-path']!, 'utf8')) as CompareReport;
    for (const id of ['kem-1', 'kem-2']) {
      const rows = comparison.rows.filter((r) => r.candidate === id);
      expect(rows, id).toHaveLength(3);
      expect(
        rows.every((r) => r.verdict === 'regression'),
        `${id}: ${rows.map((r) => `${r.operation} ${r.verdict} (${r.reason})`).join('; ')}`,
      ).toBe(true);
    }
    const body = fx.api.comments('ngcc', 'submissions', 7)[0]!.body;
    expect(headlineOf(body)).toMatch(/⚠ 6 regressions/);
    expect(body).toMatch(/6 measurements compared, 6 changed\./);
    // The base commit's code was built beside head's and measured in the same run.
    expect(log).toMatch(new RegExp(`base side: 6 operations of the base commit ${fx.base.slice(0, 7)} measured in this run`));
    expect(rendered(body)).toContain(
      "The base commit's code of the measured candidates was built and measured in this run, its trials interleaved with head's (6 operations)",
    );
    expect(await git(fx.repo, 'worktree', 'list')).not.toMatch(/base-src/);
  });

  it('a second run of the same pull request, in another workspace, restores the builds from the cache', async () => {
    // The first run looked each build up, missed, built and saved it.
    const first = [...cache.requests];
    const saved = first.filter((r) => r.kind === 'reserve');
    expect(saved.map((r) => r.keys![0]).sort()).toEqual(cache.entries.map((e) => e.key).sort());
    // Head's and the base side's build of each candidate.
    expect(saved).toHaveLength(4);
    expect(first.filter((r) => r.kind === 'lookup').every((r) => !r.hit)).toBe(true);

    // The same pull request on another runner: another workspace path, another temporary folder.
    const other = join(tempDir(), 'elsewhere', 'submissions-checkout');
    mkdirSync(dirname(other), { recursive: true });
    await git(dirname(other), 'clone', '-q', fx.repo, other);
    await git(other, 'checkout', '-q', '--detach', fx.head);
    cache.requests.length = 0;
    const { output } = runnerEnv(fx.saved, other, fx.api.url, { number: 8, base: fx.base, head: fx.head, env: cacheEnv() });
    const { failed } = await runCaptured();
    expect(failed).toBe(true);
    const lookups = cache.requests.filter((r) => r.kind === 'lookup');
    expect(lookups.map((r) => [r.keys![0], r.version]).sort()).toEqual(saved.map((r) => [r.keys![0], r.version]).sort());
    expect(lookups.every((r) => r.hit)).toBe(true);
    expect(cache.requests.filter((r) => r.kind === 'download')).toHaveLength(4);
    // Restored, not rebuilt: nothing new to save.
    expect(cache.requests.filter((r) => r.kind === 'reserve')).toEqual([]);
    // And the restored libraries are the slow ones the pull request builds.
    const comparison = JSON.parse(readFileSync(readOutputs(output)['comparison-path']!, 'utf8')) as CompareReport;
    const notRegressions = comparison.rows.filter((r) => r.verdict !== 'regression');
    expect(notRegressions.map((r) => `${r.candidate}/${r.operation} ${r.verdict} (${r.reason})`)).toEqual([]);
    expect(comparison.rows).toHaveLength(6);
  });
});

describe('touchedCandidates: what can change a number, against the baseline', () => {
  let repo: string;
  let base: string;
  let baseline: string;

  /** kem-1 and kem-2 compile vendor/toy/toy_kem.inc; kem-3 has its own copy. Built and KAT-checked on the base. */
  beforeAll(async () => {
    ({ repo } = await makeRepositoryWithoutEvidence());
    base = await git(repo, 'rev-parse', 'HEAD');
    const dataDir = join(tempDir(), 'data');
    await runCampaign({ campaignDir: join(repo, 'submissions'), system: 'x86_1', dataDir, phases: new Set(['build', 'kat']) });
    baseline = join(dataDir, 'x86_1');
  });

  async function touchedBy(change: Record<string, string | ((text: string) => string) | null>, withBaseline = true) {
    await git(repo, 'checkout', '-q', '-f', '-B', `t${Math.random().toString(36).slice(2)}`, base);
    for (const [path, edit] of Object.entries(change)) {
      const file = join(repo, path);
      if (edit === null) rmSync(file, { recursive: true });
      else {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, typeof edit === 'string' ? edit : edit(readFileSync(file, 'utf8')));
      }
    }
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'change');
    return touchedCandidates({
      repo,
      campaignDir: join(repo, 'submissions'),
      baseSha: base,
      headSha: await git(repo, 'rev-parse', 'HEAD'),
      baselineSystemDir: withBaseline ? baseline : undefined,
      scratch: tempDir(),
    });
  }

  it('nothing changed: nothing touched (the head keys equal the ones the run wrote)', async () => {
    expect(await touchedBy({})).toEqual({ candidates: [], reasons: [] });
  });

  it('a vendored header outside the campaign touches every candidate that includes it, and only those', async () => {
    const t = await touchedBy({ 'vendor/toy/toy_kem.inc': (text) => `/* tuned */\n${text}` });
    expect(t.candidates).toEqual(['kem-1', 'kem-2']);
    expect(t.reasons).toEqual([
      'kem-1/good: build inputs changed (a source or header it reads, flags, compiler or harness)',
      'kem-2/good: build inputs changed (a source or header it reads, flags, compiler or harness)',
    ]);
  });

  it('files no build reads touch nothing, wherever they are', async () => {
    expect(
      (await touchedBy({ 'submissions/kem-3/README.md': 'notes\n', 'vendor/toy/NOTES.md': 'notes\n', 'README.md': 'hi\n' })).candidates,
    ).toEqual([]);
  });

  it("a candidate's own source, its kat.sha256 or its candidate.yml touch that candidate", async () => {
    const source = 'submissions/kem-3/src/KEM_AlgorithmInstance.c';
    expect((await touchedBy({ [source]: (t) => `${t}/* edited */\n` })).candidates).toEqual(['kem-3']);
    const manifest = await touchedBy({ 'submissions/kem-2/kat.sha256': (t) => t.replace(/^[0-9a-f]/m, (c) => (c === '0' ? '1' : '0')) });
    expect(manifest).toEqual({ candidates: ['kem-2'], reasons: ['kem-2/good: kat.sha256 changed (or its KAT was not run)'] });
    expect(await touchedBy({ 'submissions/kem-1/candidate.yml': (t) => `${t}# a comment\n` })).toEqual({
      candidates: ['kem-1'],
      reasons: ['kem-1: candidate.yml changed'],
    });
  });

  it('ngcc-perf.yml touches every candidate; a deleted candidate and a renamed instance are touched', async () => {
    const all = ['kem-1', 'kem-2', 'kem-3'];
    expect((await touchedBy({ 'submissions/ngcc-perf.yml': (t) => `${t}# tuned\n` })).candidates).toEqual(all);
    expect(await touchedBy({ 'submissions/kem-2': null })).toEqual({
      candidates: ['kem-2'],
      reasons: ['kem-2: candidate.yml changed', 'kem-2/good: in the baseline, no longer in the campaign'],
    });
    const renamed = await touchedBy({
      'submissions/kem-3/candidate.yml': (t) => t.replace('label: good', 'label: fine'),
      'submissions/kem-3/kat.sha256': (t) => t.replace('good/', 'fine/'),
    });
    expect(renamed.candidates).toEqual(['kem-3']);
    expect(renamed.reasons).toContain('kem-3/fine: new (not in the baseline)');
    expect(renamed.reasons).toContain('kem-3/good: in the baseline, no longer in the campaign');
  });

  it('without a baseline every candidate is new', async () => {
    expect((await touchedBy({}, false)).candidates).toEqual(['kem-1', 'kem-2', 'kem-3']);
  });
});

describe('reproduceCli: the command a submitter starts the same ngcc-perf with', () => {
  const tool = '/runner/_actions/ngcc-dev/ngcc-perf/v1';
  const workspace = '/runner/_work/submissions/submissions';

  it("names the action's own repository and ref, which npm installs from git", () => {
    const env = { GITHUB_ACTION_REPOSITORY: 'ngcc-dev/ngcc-perf', GITHUB_ACTION_REF: 'v1' };
    expect(reproduceCli(actionOrigin(tool, workspace, env))).toBe('npx --yes github:ngcc-dev/ngcc-perf#v1');
    // GitHub Enterprise Server: the github: shorthand would mean github.com.
    expect(reproduceCli(actionOrigin(tool, workspace, { ...env, GITHUB_SERVER_URL: 'https://ghe.example.org/' }))).toBe(
      'npx --yes git+https://ghe.example.org/ngcc-dev/ngcc-perf.git#v1',
    );
  });

  it('an action used from the repository itself is the CLI in that checkout', () => {
    expect(reproduceCli(actionOrigin(join(workspace, '.github', 'ngcc-perf'), workspace, {}))).toBe('node .github/ngcc-perf/dist/cli.js');
    expect(reproduceCli(actionOrigin(workspace, workspace, {}))).toBe('node dist/cli.js');
    expect(reproduceCli(actionOrigin('/opt/ngcc perf', workspace, {}))).toBe("node '/opt/ngcc perf/dist/cli.js'");
  });
});

/** kem-1 and kem-2 with vendor/toy/toy_kem.inc from outside the campaign, kem-3 with its own copy; no evidence. */
async function makeRepositoryWithoutEvidence(): Promise<{ repo: string }> {
  const repo = tempDir();
  await git(repo, 'init', '-q', '-b', 'main');
  cpSync(join(fixtureKem, 'common'), join(repo, 'vendor', 'toy'), { recursive: true });
  const digest = readFileSync(join(fixtureKem, 'kat.sha256'), 'utf8')
    .split('\n')
    .find((l) => / good\//.test(l))!;
  for (const id of ['kem-1', 'kem-2', 'kem-3']) {
    const dir = join(repo, 'submissions', id);
    const own = id === 'kem-3';
    cpSync(join(fixtureKem, 'good'), join(dir, 'src'), { recursive: true });
    if (own) cpSync(join(fixtureKem, 'common'), join(dir, 'common'), { recursive: true });
    writeFileSync(join(dir, 'src', 'KEM_AlgorithmInstance.c'), own ? KEM_SOURCE : VENDORED_SOURCE);
    writeFileSync(
      join(dir, 'candidate.yml'),
      `id: ${id}\ntype: kem\nalgorithm: Toy ${id}\ninstances:\n  - label: good\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ${own ? '../common' : '../../../vendor/toy'}]\n`,
    );
    writeFileSync(join(dir, 'kat.sha256'), `${digest}\n`);
  }
  writeFileSync(join(repo, 'submissions', 'ngcc-perf.yml'), 'planning:\n  trials: 5\n');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', 'base');
  return { repo };
}

/**
 * The environment a runner gives the action in nightly or report mode, on `workspace`, over the
 * process's `saved` one; returns the GITHUB_OUTPUT file.
 */
function nightlyEnv(saved: NodeJS.ProcessEnv, inputs: Record<string, string>, workspace: string): string {
  const dir = tempDir();
  const output = join(dir, 'output');
  writeFileSync(output, '');
  writeFileSync(join(dir, 'summary'), '');
  // @actions/core keeps the first summary file it wrote for the whole process (a runner starts a
  // fresh process per step): point it at this run's.
  (summary as unknown as { _filePath?: string })._filePath = undefined;
  process.env = {
    ...withoutRunnerOnly(saved),
    GITHUB_WORKSPACE: workspace,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: join(dir, 'summary'),
    RUNNER_TEMP: dir,
    INPUT_CAMPAIGN: 'submissions',
    INPUT_SYSTEM: 'x86_1',
    'INPUT_DATA-DIR': 'performance/data',
    'INPUT_PAGES-DIR': 'performance/pages',
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
  };
  process.chdir(workspace);
  process.exitCode = undefined;
  return output;
}

describe('a nightly run after a library changed since last night', () => {
  // Last night's evidence is on the data branch, measured at the commit before kem-1 was slowed
  // (makeRepository); tonight's checkout is that slowed commit.
  const saved = { ...process.env };
  let fx: { repo: string; base: string; head: string };
  let log: string;
  let output: string;
  beforeAll(async () => {
    fx = await makeRepository({ evidenceOn: 'data-branch' });
    await git(fx.repo, 'checkout', '-q', '-f', fx.head);
    output = nightlyEnv(saved, { mode: 'nightly', publish: 'none', 'trial-target': '0.02' }, fx.repo);
    ({ log } = await runCaptured());
  }, 600_000);
  afterAll(() => {
    process.env = saved;
    process.chdir(startCwd);
  });

  it("measures only the changed instance beside last night's library, and keeps the pull-request rule's verdicts in the night's evidence", async () => {
    expect(process.exitCode).toBeUndefined();
    expect(log).toMatch(new RegExp(`paired night: 3 operation\\(s\\) measured beside last night's library \\(${fx.base.slice(0, 7)}\\)`));
    const evidence = join(fx.repo, 'performance', 'data', 'x86_1');
    const paired = JSON.parse(readFileSync(join(evidence, 'paired', 'kem-1', 'good.json'), 'utf8'));
    const campaign = JSON.parse(readFileSync(join(evidence, 'campaign.json'), 'utf8'));
    expect(paired.night_started_utc).toBe(campaign.last_run.started_utc);
    expect(paired.against_commit).toBe(fx.base);
    expect(Object.keys(paired.operations).sort()).toEqual(['dec', 'enc', 'keygen']);
    for (const op of Object.values(paired.operations) as Array<{ pairs: number }>) expect(op.pairs).toBeGreaterThanOrEqual(8);
    // The slowed toy KEM: its keygen is much slower, beyond any noise of the pairs.
    expect(paired.operations.keygen.verdict).toBe('regression');
    // kem-2 did not change: measured once, not paired.
    expect(existsSync(join(evidence, 'paired', 'kem-2'))).toBe(false);
    expect(validateDataset(evidence)).toEqual([]);
  });

  it("and Since last night takes the pairs' verdict, saying so", () => {
    const index = readFileSync(join(readOutputs(output)['report-path']!, 'index.md'), 'utf8');
    expect(rendered(index)).toMatch(
      new RegExp(
        `Since last night[\\s\\S]*x86_1kem-1goodkeygenregression\\+\\d+(\\.\\d)?%submission\\d+ trial pairs beside last night's library \\(${fx.base.slice(0, 7)}\\)`,
      ),
    );
    // Nothing of kem-2, which did not change.
    expect(rendered(index)).not.toMatch(/x86_1kem-2good(keygen|enc|dec)(regression|improvement)/);
  });
});

describe('the action in nightly and report modes', () => {
  const saved = { ...process.env };
  let repo: string;
  let bare: string;

  beforeAll(async () => {
    ({ repo } = await makeRepository());
    bare = join(tempDir(), 'data.git');
    await git(repo, 'init', '-q', '--bare', bare);
    await git(repo, 'remote', 'add', 'origin', bare);
  });
  afterAll(() => {
    process.env = saved;
    process.chdir(startCwd);
  });

  const env = (inputs: Record<string, string>, workspace = repo): string => nightlyEnv(saved, inputs, workspace);

  /** Another runner's checkout of the repository, publishing to the same data remote, without evidence. */
  async function otherWorkspace(): Promise<string> {
    const dir = join(tempDir(), 'workspace');
    await git(dirname(dir), 'clone', '-q', repo, dir);
    await git(dir, 'remote', 'set-url', 'origin', bare);
    rmSync(join(dir, 'performance'), { recursive: true, force: true });
    return dir;
  }

  it('a nightly run whose only input selects nothing fails, naming the input, instead of measuring nothing', async () => {
    env({ mode: 'nightly', only: '^kem-99/' });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(log).toMatch(/::error::input 'only': '\^kem-99\/' matches no instance \(instances: kem-1\/good, kem-2\/good\)/);
  });

  it('a nightly shard measures its part and leaves evidence, not libraries, for the artifact', async () => {
    const output = env({ mode: 'nightly', shard: '2/2', publish: 'artifact', 'trial-target': '0.02' });
    await run();
    expect(process.exitCode).toBeUndefined();
    const outputs = readOutputs(output);
    const artifact = join(outputs['artifact-dir']!, 'evidence', 'x86_1');
    // Shard 2 of 2 holds the second instance only: kem-2/good.
    expect(readFileSync(join(artifact, 'records', 'kem-2', 'good__keygen.json'), 'utf8')).toContain('"status": "complete"');
    expect(() => readFileSync(join(artifact, 'build', 'kem-2', 'good', 'guide', 'libgood.so'))).toThrow();
    expect(outputs['report-path']).toBeUndefined();
    // The plan with its expected duration, then how it went, in the job summary.
    const jobSummary = readFileSync(join(dirname(output), 'summary'), 'utf8');
    // First what the runner is: the doctor's lines, the sandbox and the counter among them.
    expect(jobSummary).toMatch(
      /^### ngcc-perf doctor\n\n```text\n(ok {2}|warn|info) sandbox {2,}[\s\S]*\n(ok {2}|warn) counter {2,}CPU \d+: /,
    );
    expect(jobSummary.indexOf('### ngcc-perf doctor')).toBeLessThan(jobSummary.indexOf('### ngcc-perf plan'));
    expect(jobSummary).toMatch(/### ngcc-perf plan[\s\S]*plan: 1 instance\(s\)[\s\S]*expected wall time/);
    expect(jobSummary).toMatch(
      /### ngcc-perf: predicted against actual\n\n```text\npredicted → actual:\n[\s\S]* wall time +\S+ [µm]?s → +\S+ [µm]?s/,
    );
  });

  it('report mode renders the pages and commits evidence and pages to the data branch', async () => {
    const output = env({ mode: 'report', publish: 'commit', 'publish-branch': 'ngcc-perf-data' });
    await run();
    expect(process.exitCode).toBeUndefined();
    expect(readFileSync(join(readOutputs(output)['report-path']!, 'kem-1', 'perf_x86_1.md'), 'utf8')).toMatch(/^# kem-1 Toy kem-1/);
    const files = (await git(bare, 'ls-tree', '-r', '--name-only', 'ngcc-perf-data')).split('\n');
    expect(files).toContain('performance/data/x86_1/build.json');
    expect(files).toContain('performance/pages/kem-1/perf_x86_1.md');
    expect(files).toContain('performance/pages/index.md');
    expect(files.some((f) => f.includes('/build/'))).toBe(false);
  });

  it('two systems published one after the other leave an index.md listing both', async () => {
    // The x86_1 pages are on the branch (test above). arm_1 publishes from another runner's
    // checkout, which holds only arm_1's evidence.
    const arm = await otherWorkspace();
    await runCampaign({
      campaignDir: join(arm, 'submissions'),
      system: 'arm_1',
      dataDir: join(arm, 'performance', 'data'),
      phases: new Set(['build', 'kat']),
    });
    const output = env({ mode: 'report', system: 'arm_1', publish: 'commit', 'publish-branch': 'ngcc-perf-data' }, arm);
    await run();
    expect(process.exitCode).toBeUndefined();
    // The checkout's own rendering knows one system; the branch's index knows both.
    const local = sections(readFileSync(join(readOutputs(output)['report-path']!, 'index.md'), 'utf8')).flatMap((x) => x.tables)[0]!;
    expect(local.slice(1).map((r) => r[0])).toEqual(['arm_1']);
    const index = await git(bare, 'show', 'ngcc-perf-data:performance/pages/index.md');
    const table = sections(index).flatMap((x) => x.tables)[0]!;
    expect(table[0]).toEqual(['system', 'architecture', 'candidates', 'pages']);
    expect(table.slice(1).map((r) => [r[0], r[2]])).toEqual([
      ['arm_1', '2'],
      ['x86_1', '2'],
    ]);
    const files = (await git(bare, 'ls-tree', '-r', '--name-only', 'ngcc-perf-data')).split('\n');
    expect(files).toContain('performance/pages/performance/summary_x86_1.md');
    expect(files).toContain('performance/pages/performance/summary_arm_1.md');
  });

  it("shards published one after the other leave campaign.json's merged span, as `merge` writes it", async () => {
    const shards: Array<Record<string, unknown>> = [];
    for (const k of [1, 2]) {
      const ws = await otherWorkspace();
      env({ mode: 'nightly', shard: `${k}/2`, publish: 'commit', 'publish-branch': 'shard-data', 'trial-target': '0.02' }, ws);
      await run();
      expect(process.exitCode).toBeUndefined();
      shards.push(JSON.parse(readFileSync(join(ws, 'performance', 'data', 'x86_1', 'campaign.json'), 'utf8')) as Record<string, unknown>);
    }
    const [one, two] = shards as [Record<string, unknown>, Record<string, unknown>];
    expect(Date.parse(String(one.started_utc))).toBeLessThan(Date.parse(String(two.started_utc)));
    const published = JSON.parse(await git(bare, 'show', 'shard-data:performance/data/x86_1/campaign.json')) as Record<string, unknown>;
    expect(published).toEqual(mergeCampaignJson([one, two]));
    expect(published.started_utc).toBe(one.started_utc);
    expect(published.ended_utc).toBe(two.ended_utc);
    expect((published.host_checks as Array<{ shard?: string }>).map((c) => c.shard)).toEqual(['1/2', '2/2']);
    // Both shards' instances are on the branch.
    const build = JSON.parse(await git(bare, 'show', 'shard-data:performance/data/x86_1/build.json')) as BuildJson;
    expect(Object.keys(build.instances).sort()).toEqual(['kem-1/good', 'kem-2/good']);
  });

  it("report mode reads the data branch's earlier versions as nights: a trend page, each night linked to its commit", async () => {
    // x86_1's evidence is on the branch (a test above). Tonight's: the same folder, with kem-1 rebuilt
    // (a new build key) and three times slower in its dec (its record scaled: beyond any noise of this
    // host's few trials), as the nightly's merge step would leave it.
    const evidence = join(repo, 'performance', 'data', 'x86_1');
    const campaignFile = join(evidence, 'campaign.json');
    const campaign = JSON.parse(readFileSync(campaignFile, 'utf8')) as { last_run: Record<string, unknown> };
    campaign.last_run.started_utc = new Date(Date.parse(String(campaign.last_run.started_utc)) + 86_400_000).toISOString();
    writeFileSync(campaignFile, JSON.stringify(campaign));
    const recordFile = join(evidence, 'records', 'kem-1', 'good__dec.json');
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as TimingRecord;
    for (const t of record.trials) t.cycles *= 3;
    record.mean_cycles! *= 3;
    const buildFile = join(evidence, 'build.json');
    const builds = JSON.parse(readFileSync(buildFile, 'utf8')) as BuildJson;
    builds.instances['kem-1/good']!.build_key = `rebuilt-${builds.instances['kem-1/good']!.build_key}`;
    writeFileSync(buildFile, JSON.stringify(builds));
    // Another night's measurement (a record with the same start and library is the same measurement, carried over).
    (record as { started_utc?: string }).started_utc = String(campaign.last_run.started_utc);
    writeFileSync(recordFile, JSON.stringify(record));
    await git(repo, 'fetch', '-q', 'origin', '+refs/heads/ngcc-perf-data:refs/remotes/origin/ngcc-perf-data');
    const published = await git(repo, 'log', '-n1', '--format=%H', 'origin/ngcc-perf-data', '--', 'performance/data/x86_1');
    const output = env({ mode: 'report', publish: 'none', 'history-nights': '5' });
    process.env.GITHUB_REPOSITORY = 'ngcc-dev/submissions';
    const { log } = await runCaptured();
    expect(process.exitCode).toBeUndefined();
    expect(log).toContain('trends: 2 nights of x86_1 (report --history)');
    const pagesDir = readOutputs(output)['report-path']!;
    const trends = readFileSync(join(pagesDir, 'performance', 'trends_x86_1.md'), 'utf8');
    expect(trends).toContain(`[evidence](https://github.com/ngcc-dev/submissions/tree/${published}/performance/data/x86_1)`);
    const index = readFileSync(join(pagesDir, 'index.md'), 'utf8');
    expect(rendered(index)).toMatch(/Since last night[\s\S]*x86_1kem-1gooddecregression\+\d+(\.\d)?%submission/);
    // Only the operation that moved: kem-1's keygen and enc were rebuilt too, and kept their figures.
    expect(rendered(index)).not.toMatch(/x86_1kem-1good(keygen|enc)(regression|improvement)/);
  });

  it('history-nights: 0 reads no history, and a bad value names the input', async () => {
    const output = env({ mode: 'report', publish: 'none', 'history-nights': '0' });
    const { log: quiet } = await runCaptured();
    expect(process.exitCode).toBeUndefined();
    expect(quiet).not.toContain('trends:');
    expect(readFileSync(join(readOutputs(output)['report-path']!, 'index.md'), 'utf8')).not.toContain('Since last night');
    env({ mode: 'report', publish: 'none', 'history-nights': '101' });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(log).toMatch(/::error::input 'history-nights': .*100/);
  });
});

describe('a pull request that adds a secret-dependent branch, with ct enabled in ngcc-perf.yml', () => {
  // The ct fixture's unplanted KEM (test/fixtures/ct/README.md) on main; the pull request turns on
  // its planted early exit on the secret key, in planted_branch.
  const ctFixture = join(repoRoot, 'test', 'fixtures', 'ct', 'kem-7');
  const fx = { api: undefined as unknown as FakeGithub, repo: '', base: '', head: '', saved: { ...process.env } };
  const plantLine = () =>
    readFileSync(join(ctFixture, 'common', 'ct_kem.inc'), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes('PLANT: branch')) + 1;

  beforeAll(async () => {
    fx.api = await startFakeGithub({ token: TOKEN });
    const repo = tempDir();
    await git(repo, 'init', '-q', '-b', 'main');
    const campaign = join(repo, 'submissions');
    const dir = join(campaign, 'kem-7');
    cpSync(join(ctFixture, 'common'), join(dir, 'common'), { recursive: true });
    cpSync(join(ctFixture, 'clean'), join(dir, 'src'), { recursive: true });
    writeFileSync(
      join(dir, 'candidate.yml'),
      `id: kem-7\ntype: kem\nalgorithm: Toy ct-KEM\ninstances:\n  - label: good\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
    );
    writeFileSync(join(dir, 'kat.sha256'), '# no digests: the constant-time check is what this tests\n');
    writeFileSync(
      join(campaign, 'ngcc-perf.yml'),
      'planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  min_measurements: 10\n  warmups: 1\nprofile:\n  target_s: 0.01\n  rounds: 1\nct:\n  enabled: true\n',
    );
    writeFileSync(join(repo, '.gitignore'), 'performance/data/*/build/\n');
    // The baseline as a nightly run makes it: the default phases, plus ct because ngcc-perf.yml enables it.
    await runCampaign({
      campaignDir: campaign,
      system: 'x86_1',
      dataDir: join(repo, 'performance', 'data'),
      phases: new Set(['build', 'kat', 'measure']),
      campaignPhases: true,
    });
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'base: a clean KEM and its evidence');
    const base = await git(repo, 'rev-parse', 'HEAD');
    const head = await prHead(repo, base, 'leak', (c) =>
      writeFileSync(
        join(c, 'kem-7', 'src', 'KEM_AlgorithmInstance.c'),
        '#include "KEM_AlgorithmInstance.h"\n\n#define CT_PLANT_BRANCH\n#include "../common/ct_kem.inc"\n',
      ),
    );
    Object.assign(fx, { repo, base, head });
  });
  afterAll(async () => {
    process.env = fx.saved;
    process.chdir(startCwd);
    await fx.api.stop();
  });

  it('the baseline run checked the clean KEM: every operation clean', () => {
    const ct = JSON.parse(readFileSync(join(fx.repo, 'performance', 'data', 'x86_1', 'ct', 'kem-7', 'good.json'), 'utf8')) as {
      operations: Record<string, { status: string }>;
    };
    expect(Object.entries(ct.operations).map(([op, o]) => [op, o.status])).toEqual([
      ['keygen', 'clean'],
      ['enc', 'clean'],
      ['dec', 'clean'],
    ]);
  });

  it('the comment names the new branch in planted_branch at its line, and fail-on: ct fails the check', async () => {
    await git(fx.repo, 'checkout', '-q', '-f', fx.head);
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, { number: 21, base: fx.base, head: fx.head, inputs: { 'fail-on': 'ct' } });
    const { log, failed } = await runCaptured();
    expect(failed).toBe(true);
    expect(log).toMatch(/::error::ngcc-perf x86_1: 1 new constant-time finding\(s\)/);
    expect(readOutputs(output)['ct-findings']).toBe('1');
    const body = fx.api.comments('ngcc', 'submissions', 21)[0]!.body;
    expect(headlineOf(body)).toMatch(/⚠ 1 new constant-time finding/);
    expect(body).toMatch(/\*\*Constant-time findings\*\*/);
    expect(body).toMatch(
      // One site, one finding, whichever builds have it: the measured build's, new in the other two too.
      new RegExp(
        `\\| kem-7/good \\| branch \\| \`planted_branch\` \\| \`ct_kem\\.inc:${plantLine()}\` \\| dec; new in gcc performance, gcc resource too \\| \\d+ \\|`,
      ),
    );
    // Head's ct evidence is the one the comparison read: the touched candidate was checked in this run.
    const evidence = readOutputs(output)['evidence-dir']!;
    const ct = JSON.parse(readFileSync(join(evidence, 'ct', 'kem-7', 'good.json'), 'utf8')) as {
      operations: Record<string, { status: string; findings: Array<{ function: string }> }>;
    };
    expect(ct.operations.dec!.status).toBe('flagged');
    expect(ct.operations.dec!.findings.map((f) => f.function)).toContain('planted_branch');
  });

  it('with fail-on not naming ct the finding is listed but the check passes', async () => {
    await git(fx.repo, 'checkout', '-q', '-f', fx.head);
    const { output } = runnerEnv(fx.saved, fx.repo, fx.api.url, { number: 22, base: fx.base, head: fx.head, inputs: { 'fail-on': 'kat' } });
    const { failed } = await runCaptured();
    expect(failed).toBe(false);
    expect(readOutputs(output)['ct-findings']).toBe('1');
    const body = fx.api.comments('ngcc', 'submissions', 22)[0]!.body;
    expect(body).toMatch(/\| kem-7\/good \| branch \| `planted_branch` \|/);
  });
});
