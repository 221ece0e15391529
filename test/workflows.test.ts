import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join } from 'node:path';
import type { WorkflowTemplate } from '@actions/workflow-parser';
import type { Nodes, Table } from 'mdast';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { settingsSchema } from '../src/config/schemas.js';
import { makeOctokit } from '../src/github/githubApi.js';
import { startFakeGithub } from './helpers/fakeGithub.js';
import { parsePage, plain } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/** The inputs action.yml declares: an example may pass no other. */
const ACTION_INPUTS = new Set(Object.keys((parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as { inputs: object }).inputs));
const ACTION = /^ngcc-dev\/ngcc-perf@/;

// @actions/workflow-parser is published for bundlers: its ESM imports its JSON schemas without
// `with { type: 'json' }`, which Node refuses. Vitest leaves node_modules to Node, so a load hook
// supplies the attribute for JSON files (the parser itself runs unchanged).
register(
  `data:text/javascript,${encodeURIComponent(
    `export async function load(url, context, next) {
       if (url.endsWith('.json')) return next(url, { ...context, importAttributes: { ...context.importAttributes, type: 'json' } });
       return next(url, context);
     }`,
  )}`,
);
const { NoOperationTraceWriter, convertWorkflowTemplate, parseWorkflow } = await import('@actions/workflow-parser');

const FILES = ['pr.yml', 'pr-comment.yml', 'nightly.yml'] as const;

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
}
interface Job {
  if?: string;
  concurrency?: { group: string; 'cancel-in-progress'?: boolean | string };
  needs?: string | string[];
  'runs-on': string | string[];
  permissions?: Record<string, string> | string;
  strategy?: { matrix?: Record<string, unknown[]> };
  steps: Step[];
}
interface Workflow {
  name: string;
  concurrency?: unknown;
  on: Record<string, unknown>;
  permissions?: Record<string, string> | string;
  jobs: Record<string, Job>;
}

const text = (file: string): string => readFileSync(join(repoRoot, 'workflows-example', file), 'utf8');

/** docs/action.md, the action's documentation page (README links it). */
function actionSection(): string {
  const page = readFileSync(join(repoRoot, 'docs', 'action.md'), 'utf8');
  expect(page.startsWith('# The GitHub Action\n')).toBe(true);
  return page;
}
const yamlOf = (file: string): Workflow => parseYaml(text(file)) as Workflow;

/** Parses with GitHub's own workflow parser; the errors it reports, and the converted template. */
async function parseActions(file: string): Promise<{ errors: string[]; template: WorkflowTemplate }> {
  const result = parseWorkflow({ name: file, content: text(file) }, new NoOperationTraceWriter());
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (result.value === undefined)
    return { errors: [...errors, 'no workflow value'], template: { events: {}, jobs: [] } as unknown as WorkflowTemplate };
  const template = await convertWorkflowTemplate(result.context, result.value);
  return { errors: [...new Set([...errors, ...(template.errors ?? []).map((e) => e.Message)])], template };
}

const allSteps = (wf: Workflow): Step[] => Object.values(wf.jobs).flatMap((j) => j.steps);
const runsOn = (j: Job): string[] => (Array.isArray(j['runs-on']) ? j['runs-on'] : [j['runs-on']]);
const permissionValues = (p: Workflow['permissions']): string[] => (p === undefined ? [] : typeof p === 'string' ? [p] : Object.values(p));

describe("workflows-example: GitHub's workflow parser", () => {
  for (const file of FILES) {
    it(`${file} parses and converts without errors`, async () => {
      const { errors, template } = await parseActions(file);
      expect(errors).toEqual([]);
      expect(template.jobs.length).toBeGreaterThan(0);
    });
  }

  it('reports errors it finds (the check is not vacuous)', async () => {
    const broken = text('pr.yml')
      .replace('permissions:\n  contents: read', 'permissions:\n  contents: maybe')
      .replace('runs-on:', 'runs-onn:');
    const result = parseWorkflow({ name: 'broken.yml', content: broken }, new NoOperationTraceWriter());
    expect(result.context.errors.getErrors().length).toBeGreaterThan(0);
  });
});

/** The parser accepts any string as a permission level: check scopes and levels ourselves. */
const PERMISSION_SCOPES = new Set([
  'actions',
  'attestations',
  'checks',
  'contents',
  'deployments',
  'discussions',
  'id-token',
  'issues',
  'models',
  'packages',
  'pages',
  'pull-requests',
  'repository-projects',
  'security-events',
  'statuses',
]);

describe('workflows-example: what each workflow promises', () => {
  it('every permissions block names real scopes and levels, and no workflow asks for write-all', () => {
    for (const file of FILES) {
      const wf = yamlOf(file);
      const blocks = [wf.permissions, ...Object.values(wf.jobs).map((j) => j.permissions)].filter((p) => p !== undefined);
      expect(blocks.length, file).toBeGreaterThan(0);
      for (const block of blocks) {
        expect(typeof block, `${file}: permissions must list scopes`).toBe('object');
        for (const [scope, level] of Object.entries(block as Record<string, string>)) {
          expect(PERMISSION_SCOPES.has(scope), `${file}: ${scope}`).toBe(true);
          expect(['read', 'write', 'none'], `${file}: ${scope}: ${level}`).toContain(level);
        }
      }
    }
  });

  it('every workflow starts with a header comment naming its permissions and why', () => {
    for (const file of FILES) {
      const header = text(file)
        .split('\n')
        .filter((_l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith('#')));
      expect(header.length, file).toBeGreaterThan(3);
      expect(header.join('\n'), file).toMatch(/Permissions \(and why\):/);
    }
  });

  it('every use of the action passes only its inputs', () => {
    let uses = 0;
    for (const file of FILES) {
      for (const step of allSteps(yamlOf(file))) {
        if (!step.uses || !ACTION.test(step.uses)) continue;
        uses++;
        const unknown = Object.keys(step.with ?? {}).filter((k) => !ACTION_INPUTS.has(k));
        expect(unknown, `${file}: ${step.name ?? step.uses}`).toEqual([]);
      }
    }
    expect(uses).toBe(3);
  });

  it('pr.yml: read-only, gated for forks, runs the action without commenting, uploads the comment', async () => {
    const wf = yamlOf('pr.yml');
    expect(Object.keys(wf.on)).toEqual(['pull_request']);
    // The campaign folder (with ngcc-perf.yml and the catalogs) and the vendored code outside it
    // that builds read: a pull request changing only that code must start the check too.
    expect((wf.on.pull_request as { paths: string[] }).paths).toEqual(['submissions/**', 'vendor/**']);
    const filterComment = text('pr.yml').split('paths:')[0]!.split('\n').slice(-8).join(' ');
    expect(filterComment).toMatch(/List every folder a build\s*#?\s*reads/);
    // No write permission anywhere, at the top or in a job.
    const perms = [...permissionValues(wf.permissions), ...Object.values(wf.jobs).flatMap((j) => permissionValues(j.permissions))];
    expect(perms.length).toBeGreaterThan(0);
    expect(perms.some((p) => /write/.test(p))).toBe(false);
    expect(wf.permissions).toEqual({ contents: 'read' });

    const job = wf.jobs.measure!;
    expect(runsOn(job)).toContain('self-hosted');
    expect(job.strategy?.matrix?.system).toEqual(['x86_1', 'arm_1']);
    // The fork gate: same repository, or a maintainer's label.
    expect(job.if).toMatch(/github\.event\.pull_request\.head\.repo\.full_name == github\.repository/);
    expect(job.if).toMatch(/contains\(github\.event\.pull_request\.labels\.\*\.name, 'safe-to-measure'\)/);

    // fetch-depth: 0 fetches every branch: the base commit and the data branch with the baseline.
    const checkout = job.steps.find((s) => s.uses?.startsWith('actions/checkout@'))!;
    expect(checkout.with?.['fetch-depth']).toBe(0);
    // The checkout's token is not left in .git/config for the pull request's code to read.
    expect(checkout.with?.['persist-credentials']).toBe(false);
    const action = job.steps.find((s) => s.uses && ACTION.test(s.uses))!;
    expect(action.with).toMatchObject({ mode: 'pull-request', publish: 'artifact', comment: 'never', 'publish-branch': 'ngcc-perf-data' });
    expect(action.with?.token).toBeUndefined();
    expect(job.steps.some((s) => s.run?.includes('refs/remotes/origin/ngcc-perf-data'))).toBe(true);

    const stage = job.steps.find((s) => s.run?.includes('pr-number'))!;
    expect(stage.env?.PR_NUMBER).toBe('${{ github.event.pull_request.number }}');
    expect(stage.run).toMatch(/comparison\.json/);
    expect(stage.run).toMatch(/comment\.md/);
    const uploads = job.steps.filter((s) => s.uses?.startsWith('actions/upload-artifact@'));
    const upload = uploads.find((s) => s.with?.path === 'ngcc-perf-pr/')!;
    expect(String(upload.with?.name)).toMatch(/^ngcc-perf-pr-/);
    // The PR's evidence (KAT logs, build errors) too, under a name the comment poster does not download.
    const evidence = uploads.find((s) => s.with?.path === '${{ steps.perf.outputs.artifact-dir }}')!;
    expect(String(evidence.with?.name)).not.toMatch(/^ngcc-perf-pr-/);
  });

  it('pr.yml: a label cannot cancel a measurement (concurrency per job, not per workflow)', () => {
    const wf = yamlOf('pr.yml');
    // At workflow level a run skipped by the job's `if:` (any other label) would still join the
    // group and cancel the running measurement.
    expect(wf.concurrency).toBeUndefined();
    const job = wf.jobs.measure!;
    expect(job.concurrency?.group).toBe('ngcc-perf-pr-${{ github.event.pull_request.number }}-${{ matrix.system }}');
    expect(job.concurrency?.['cancel-in-progress']).toBe("${{ github.event.action != 'labeled' }}");
    // Other labels do not pass the job's gate.
    expect(job.if).toMatch(/github\.event\.action != 'labeled' \|\|\s*\(github\.event\.label\.name == 'safe-to-measure'/);
  });

  it('pr.yml and docs/action.md say that the real fork gate is the approval setting, and that pr-comment posts what the run produced', () => {
    const header = text('pr.yml')
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join(' ')
      .replace(/#\s*/g, ' ')
      .replace(/\s+/g, ' ');
    expect(header).toContain('Require approval for all outside collaborators');
    expect(header).toMatch(/a fork can edit the `if:` and `allow-forks`/);
    expect(header).toMatch(/second gate against accidental runs/);
    expect(header).toMatch(/artifact that pr-comment\.yml posts/);
    const page = actionSection().replace(/\s+/g, ' ');
    expect(page).toContain('Require approval for all outside collaborators');
    expect(page).toMatch(/The real gate for fork code on self-hosted runners is the repository setting/);
    expect(page).toMatch(/second gate against accidental runs/);
  });

  it('pr-comment.yml: runs on workflow_run of the PR workflow, on a GitHub-hosted runner, validates the number', async () => {
    const wf = yamlOf('pr-comment.yml');
    const pr = yamlOf('pr.yml');
    expect(Object.keys(wf.on)).toEqual(['workflow_run']);
    expect(wf.on.workflow_run).toEqual({ workflows: [pr.name], types: ['completed'] });
    expect(wf.permissions).toEqual({ 'pull-requests': 'write', actions: 'read' });
    for (const job of Object.values(wf.jobs)) {
      expect(runsOn(job).some((l) => /self-hosted/.test(l))).toBe(false);
      expect(job.permissions).toBeUndefined();
      // No checkout: nothing of the pull request's is executed here.
      expect(job.steps.some((s) => s.uses?.startsWith('actions/checkout@'))).toBe(false);
    }
    const steps = allSteps(wf);
    const download = steps.find((s) => s.uses?.startsWith('actions/download-artifact@'))!;
    expect(download.with?.['run-id']).toBe('${{ github.event.workflow_run.id }}');
    const script = String(steps.find((s) => s.uses?.startsWith('actions/github-script@'))!.with?.script);
    expect(script).toContain("'pr-number'");
    expect(script).toContain('/^[1-9][0-9]{0,9}$/.test(raw)');
    expect(script).toContain('run.head_sha');
    expect(script).toContain('updateComment');
  });

  it('nightly.yml: a 2×3 matrix of shards, then a job that needs it and alone may write', async () => {
    const wf = yamlOf('nightly.yml');
    expect(Object.keys(wf.on).sort()).toEqual(['schedule', 'workflow_dispatch']);
    expect(wf.permissions).toEqual({ contents: 'read' });
    const { template } = await parseActions('nightly.yml');

    const [matrixId, matrixJob] = Object.entries(wf.jobs).find(([, j]) => j.strategy?.matrix?.shard !== undefined)!;
    expect(matrixJob.strategy!.matrix!.system).toEqual(['x86_1', 'arm_1']);
    expect(matrixJob.strategy!.matrix!.shard).toEqual([1, 2, 3]);
    expect(runsOn(matrixJob)).toContain('self-hosted');
    expect(matrixJob.permissions).toBeUndefined();
    const measure = matrixJob.steps.find((s) => s.uses && ACTION.test(s.uses))!;
    expect(measure.with).toMatchObject({ mode: 'nightly', shard: '${{ matrix.shard }}/3', publish: 'artifact' });

    // The parser's own view of the dependency.
    const merge = template.jobs.find((j) => (j.needs ?? []).some((n) => n.value === matrixId));
    expect(merge?.id.value).toBe('merge-and-publish');
    const mergeJob = wf.jobs['merge-and-publish']!;
    expect(mergeJob.permissions).toEqual({ contents: 'write' });
    expect(runsOn(mergeJob).some((l) => /self-hosted/.test(l))).toBe(false);
    expect(mergeJob.steps.some((s) => s.uses?.startsWith('actions/download-artifact@'))).toBe(true);
    expect(mergeJob.steps.some((s) => /\bmerge\b/.test(s.run ?? ''))).toBe(true);
    const publish = mergeJob.steps.find((s) => s.uses && ACTION.test(s.uses))!;
    expect(publish.with).toMatchObject({ mode: 'report', publish: 'commit' });
  });

  it('nightly.yml: the systems it shows in a comment are valid ngcc-perf.yml, each with several timing cores, core 0 in none', () => {
    const lines = text('nightly.yml').split('\n');
    const start = lines.indexOf('#   systems:');
    expect(start).toBeGreaterThan(0);
    const block = lines.slice(start, lines.indexOf('#', start)).map((l) => l.replace(/^# {2}/, ''));
    const settings = settingsSchema.parse({ ...parseYaml(block.join('\n')) });
    const systems = Object.entries(settings.systems);
    expect(systems.map(([id]) => id)).toEqual(['x86_1', 'arm_1']);
    for (const [id, system] of systems) {
      expect([id, system.cpus!.length > 1, system.cpus!.includes(0), system.side_by_side]).toEqual([id, true, false, undefined]);
    }
  });
});

describe('action.yml', () => {
  const action = parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as {
    runs: { using: string; main: string };
    inputs: Record<string, unknown>;
  };
  const reader = readFileSync(join(repoRoot, 'src', 'github', 'inputs.ts'), 'utf8');

  it('runs the committed bundle on node24', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
  });

  it('declares exactly the inputs the action reads', () => {
    const read = [...reader.matchAll(/(?:getInput|withDefault|oneOf|positive|bool|count)\('([a-z-]+)'/g)].map((m) => m[1]);
    expect(new Set(read)).toEqual(ACTION_INPUTS);
  });
});

describe("docs/action.md: the action's inputs and outputs", () => {
  const action = parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { default?: string; required?: boolean }>;
    outputs: Record<string, unknown>;
  };
  const tree = parsePage(actionSection());
  const tables = tree.children.filter((n): n is Table => n.type === 'table');
  const rowsOf = (first: string): string[][] => {
    const t = tables.find((x) => plain(x.children[0]!.children[0]!) === first);
    expect(t, `a table whose first column is '${first}'`).toBeDefined();
    return t!.children.slice(1).map((r) => r.children.map((c) => plain(c).trim()));
  };

  it('lists every input of action.yml with the same default, and no other', () => {
    const shown = (v: { default?: string; required?: boolean }) => (v.required ? 'required' : v.default ? String(v.default) : '—');
    const expected = Object.fromEntries(Object.entries(action.inputs).map(([name, v]) => [name, shown(v)]));
    const rows = rowsOf('input');
    expect(Object.fromEntries(rows.map((r) => [r[0], r[1]]))).toEqual(expected);
    expect(rows).toHaveLength(Object.keys(expected).length);
    for (const r of rows) expect(r[2], r[0]).not.toBe('');
  });

  it('lists every output of action.yml, and no other', () => {
    const rows = rowsOf('output');
    expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(action.outputs).sort());
    for (const r of rows) expect(r[1], r[0]).not.toBe('');
  });

  it('has no raw HTML in its tables (GFM would swallow a <data-dir> written outside code)', () => {
    const html = (n: Nodes): string[] => (n.type === 'html' ? [n.value] : 'children' in n ? (n.children as Nodes[]).flatMap(html) : []);
    expect(tables.flatMap(html)).toEqual([]);
    // The check bites: an unescaped placeholder in a cell is HTML to GFM.
    expect(html(parsePage('| a |\n|---|\n| <data-dir>/x |\n'))).toEqual(['<data-dir>']);
  });
});

describe('pr-comment.yml: its script against the loopback GitHub API', () => {
  const TOKEN = 'ghs_prCommentScriptToken';
  const script = String(allSteps(yamlOf('pr-comment.yml')).find((s) => s.uses?.startsWith('actions/github-script@'))!.with?.script);
  const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
    ...args: string[]
  ) => (...args: unknown[]) => Promise<void>;

  /** Runs the script as actions/github-script would: (require, github, context, core), in `cwd`. */
  async function runScript(cwd: string, apiUrl: string, headSha: string): Promise<string[]> {
    const said: string[] = [];
    const core = { info: (m: string) => said.push(m), warning: (m: string) => said.push(`warning: ${m}`) };
    const context = {
      payload: { workflow_run: { head_sha: headSha, html_url: 'https://github.example/run/1' } },
      repo: { owner: 'ngcc', repo: 'submissions' },
    };
    const here = process.cwd();
    process.chdir(cwd);
    try {
      await new AsyncFunction('require', 'github', 'context', 'core', script)(
        createRequire(import.meta.url),
        makeOctokit(TOKEN, apiUrl),
        context,
        core,
      );
    } finally {
      process.chdir(here);
    }
    return said;
  }

  it("updates only the bot's sticky comment, never a person's comment that carries the marker", async () => {
    const gh = await startFakeGithub({ token: TOKEN });
    try {
      const marker = '<!-- ngcc-perf:x86_1 -->';
      const dir = tempDir();
      const artifact = join(dir, 'ngcc-perf-pr', 'ngcc-perf-pr-x86_1');
      mkdirSync(artifact, { recursive: true });
      writeFileSync(join(artifact, 'pr-number'), '5\n');
      writeFileSync(join(artifact, 'comment.md'), `${marker}\nfirst numbers\n`);
      gh.setPull('ngcc', 'submissions', 5, 'c0ffee');
      const pasted = gh.addComment('ngcc', 'submissions', 5, `${marker}\nquoted by a person`, 'mallory');

      await runScript(dir, gh.url, 'c0ffee');
      const afterFirst = gh.comments('ngcc', 'submissions', 5);
      expect(afterFirst).toHaveLength(2);
      const bot = afterFirst.find((c) => c.id !== pasted.id)!;
      expect(bot.user.type).toBe('Bot');
      expect(bot.body).toBe(`${marker}\nfirst numbers\n`);

      // A newer pasted copy does not attract the update either.
      gh.addComment('ngcc', 'submissions', 5, `${marker}\nme again`, 'mallory');
      writeFileSync(join(artifact, 'comment.md'), `${marker}\nsecond numbers\n`);
      await runScript(dir, gh.url, 'c0ffee');
      expect(gh.comments('ngcc', 'submissions', 5).map((c) => c.body)).toEqual([
        `${marker}\nquoted by a person`,
        `${marker}\nsecond numbers\n`,
        `${marker}\nme again`,
      ]);
      expect(gh.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    } finally {
      await gh.stop();
    }
  });

  it('posts nothing for a run whose head is no longer the pull request head', async () => {
    const gh = await startFakeGithub({ token: TOKEN });
    try {
      const dir = tempDir();
      const artifact = join(dir, 'ngcc-perf-pr', 'ngcc-perf-pr-x86_1');
      mkdirSync(artifact, { recursive: true });
      writeFileSync(join(artifact, 'pr-number'), '6\n');
      writeFileSync(join(artifact, 'comment.md'), '<!-- ngcc-perf:x86_1 -->\nnumbers\n');
      gh.setPull('ngcc', 'submissions', 6, 'newer');
      const said = await runScript(dir, gh.url, 'older');
      expect(said.join('\n')).toMatch(/warning: pull request #6 is at newer/);
      expect(gh.comments('ngcc', 'submissions', 6)).toHaveLength(0);
    } finally {
      await gh.stop();
    }
  });
});
