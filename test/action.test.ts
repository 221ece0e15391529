import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign.js';
import { COMMENT_MARKER } from '../src/github/comment.js';
import { run } from '../src/main.js';
import { startFakeGithub, type FakeGithub } from './helpers/fakeGithub.js';
import { git } from './helpers/git.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const TOKEN = 'ghs_test_token_value';
const fixtureKem = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
const iccs = join(repoRoot, 'native', 'iccs');

/** A submission repository: two toy KEM candidates and the evidence measured on its main branch. */
async function makeRepository(): Promise<{ repo: string; base: string; head: string }> {
  const repo = tempDir();
  await git(repo, 'init', '-q', '-b', 'main');
  const campaign = join(repo, 'submissions');
  for (const id of ['kem-1', 'kem-2']) {
    const dir = join(campaign, id);
    mkdirSync(dir, { recursive: true });
    cpSync(join(fixtureKem, 'good'), join(dir, 'src'), { recursive: true });
    cpSync(join(fixtureKem, 'common'), join(dir, 'common'), { recursive: true });
    writeFileSync(join(dir, 'src', 'KEM_AlgorithmInstance.c'), '#include "KEM_AlgorithmInstance.h"\n#include "../common/toy_kem.inc"\n');
    writeFileSync(
      join(dir, 'candidate.yml'),
      `id: ${id}\ntype: kem\nalgorithm: Toy ${id}\ninstances:\n  - label: good\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
    );
    const digest = readFileSync(join(fixtureKem, 'kat.sha256'), 'utf8').split('\n').find((l) => / good\//.test(l))!;
    writeFileSync(join(dir, 'kat.sha256'), `${digest}\n`);
  }
  writeFileSync(join(campaign, 'ngcc-perf.yml'), 'planning:\n  trials: 5\n  trial_target_s: 0.04\n  op_budget_s: 2\n  warmups: 2\n');
  writeFileSync(join(repo, '.gitignore'), 'performance/data/*/build/\n');
  await runCampaign({ campaignDir: campaign, system: 'x86_1', dataDir: join(repo, 'performance', 'data'), phases: new Set(['build', 'kat', 'measure']) });
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', 'base: submissions and their evidence');
  const base = await git(repo, 'rev-parse', 'HEAD');
  // The pull request: kem-1 gets slower (same output, a busy loop in every operation).
  writeFileSync(join(campaign, 'kem-1', 'src', 'KEM_AlgorithmInstance.c'), '#include "KEM_AlgorithmInstance.h"\n#define TOY_KEM_SLOWDOWN 40000\n#include "../common/toy_kem.inc"\n');
  await git(repo, 'commit', '-q', '-am', 'kem-1: slower');
  const head = await git(repo, 'rev-parse', 'HEAD');
  return { repo, base, head };
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

describe('the action in pull-request mode, as the runner calls it', () => {
  let api: FakeGithub;
  let repo: string;
  let base: string;
  let head: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    api = await startFakeGithub({ token: TOKEN });
    ({ repo, base, head } = await makeRepository());
  });
  afterAll(async () => {
    process.env = saved;
    await api.stop();
  });

  function setRunnerEnv(headRepo = 'ngcc/submissions'): { output: string; summary: string } {
    const dir = tempDir();
    const event = join(dir, 'event.json');
    writeFileSync(
      event,
      JSON.stringify({
        action: 'synchronize',
        number: 7,
        pull_request: { number: 7, base: { sha: base, ref: 'main', repo: { full_name: 'ngcc/submissions' } }, head: { sha: head, ref: 'slower', repo: { full_name: headRepo } } },
      }),
    );
    const output = join(dir, 'output');
    const summary = join(dir, 'summary');
    writeFileSync(output, '');
    writeFileSync(summary, '');
    process.env = {
      ...saved,
      GITHUB_WORKSPACE: repo,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: event,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_REPOSITORY: 'ngcc/submissions',
      GITHUB_API_URL: api.url,
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
    };
    process.exitCode = undefined;
    return { output, summary };
  }

  it('flags the slowed-down candidate, not the untouched one, in one sticky comment', async () => {
    const { output, summary } = setRunnerEnv();
    await run();
    const failed = process.exitCode;
    process.exitCode = undefined;
    expect(failed).toBe(1);
    const outputs = readOutputs(output);
    expect(Number(outputs.regressions)).toBeGreaterThanOrEqual(1);
    expect(outputs['kat-failures']).toBe('0');
    const comments = api.comments('ngcc', 'submissions', 7);
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
    expect(readFileSync(summary, 'utf8')).toMatch(/regression/);
  });

  it('a second run updates the same comment instead of adding one', async () => {
    const before = api.comments('ngcc', 'submissions', 7)[0]!;
    setRunnerEnv();
    await run();
    process.exitCode = undefined;
    const after = api.comments('ngcc', 'submissions', 7);
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(before.id);
    expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it("refuses to run a fork's code unless allowed", async () => {
    const { output } = setRunnerEnv('stranger/submissions');
    const posts = api.requests.length;
    await run();
    const failed = process.exitCode;
    process.exitCode = undefined;
    expect(failed).toBe(1);
    expect(readOutputs(output).regressions).toBeUndefined();
    expect(api.requests.length).toBe(posts);
  });

  it('names a bad input', async () => {
    setRunnerEnv();
    process.env.INPUT_COMMENT = 'sometimes';
    const errors: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (errors.push(String(chunk)), true)) as typeof process.stdout.write;
    try {
      await run();
    } finally {
      process.stdout.write = write;
    }
    process.exitCode = undefined;
    expect(errors.join('')).toMatch(/input 'comment': expected one of always, on-change, never, got 'sometimes'/);
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
  });

  function env(inputs: Record<string, string>): string {
    const dir = tempDir();
    const output = join(dir, 'output');
    writeFileSync(output, '');
    writeFileSync(join(dir, 'summary'), '');
    process.env = {
      ...saved,
      GITHUB_WORKSPACE: repo,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: join(dir, 'summary'),
      RUNNER_TEMP: dir,
      INPUT_CAMPAIGN: 'submissions',
      INPUT_SYSTEM: 'x86_1',
      'INPUT_DATA-DIR': 'performance/data',
      'INPUT_PAGES-DIR': 'performance/pages',
      ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
    };
    process.exitCode = undefined;
    return output;
  }

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
});
