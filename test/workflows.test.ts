import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { join } from 'node:path';
import type { WorkflowTemplate } from '@actions/workflow-parser';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from './helpers/tmp.js';

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
  needs?: string | string[];
  'runs-on': string | string[];
  permissions?: Record<string, string> | string;
  strategy?: { matrix?: Record<string, unknown[]> };
  steps: Step[];
}
interface Workflow {
  name: string;
  on: Record<string, unknown>;
  permissions?: Record<string, string> | string;
  jobs: Record<string, Job>;
}

const text = (file: string): string => readFileSync(join(repoRoot, 'workflows-example', file), 'utf8');
const yamlOf = (file: string): Workflow => parseYaml(text(file)) as Workflow;

/** Parses with GitHub's own workflow parser; the errors it reports, and the converted template. */
async function parseActions(file: string): Promise<{ errors: string[]; template: WorkflowTemplate }> {
  const result = parseWorkflow({ name: file, content: text(file) }, new NoOperationTraceWriter());
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (result.value === undefined) return { errors: [...errors, 'no workflow value'], template: { events: {}, jobs: [] } as unknown as WorkflowTemplate };
  const template = await convertWorkflowTemplate(result.context, result.value);
  return { errors: [...new Set([...errors, ...(template.errors ?? []).map((e) => e.Message)])], template };
}

const allSteps = (wf: Workflow): Step[] => Object.values(wf.jobs).flatMap((j) => j.steps);
const runsOn = (j: Job): string[] => (Array.isArray(j['runs-on']) ? j['runs-on'] : [j['runs-on']]);
const permissionValues = (p: Workflow['permissions']): string[] => (p === undefined ? [] : typeof p === 'string' ? [p] : Object.values(p));

describe('workflows-example: GitHub\'s workflow parser', () => {
  for (const file of FILES) {
    it(`${file} parses and converts without errors`, async () => {
      const { errors, template } = await parseActions(file);
      expect(errors).toEqual([]);
      expect(template.jobs.length).toBeGreaterThan(0);
    });
  }

  it('reports errors it finds (the check is not vacuous)', async () => {
    const broken = text('pr.yml').replace('permissions:\n  contents: read', 'permissions:\n  contents: maybe').replace('runs-on:', 'runs-onn:');
    const result = parseWorkflow({ name: 'broken.yml', content: broken }, new NoOperationTraceWriter());
    expect(result.context.errors.getErrors().length).toBeGreaterThan(0);
  });
});

/** The parser accepts any string as a permission level: check scopes and levels ourselves. */
const PERMISSION_SCOPES = new Set([
  'actions', 'attestations', 'checks', 'contents', 'deployments', 'discussions', 'id-token', 'issues', 'models',
  'packages', 'pages', 'pull-requests', 'repository-projects', 'security-events', 'statuses',
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
      const header = text(file).split('\n').filter((_l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith('#')));
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
    expect((wf.on.pull_request as { paths: string[] }).paths).toContain('submissions/**');
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

    const checkout = job.steps.find((s) => s.uses?.startsWith('actions/checkout@'))!;
    expect(checkout.with?.['fetch-depth']).toBe(0);
    const action = job.steps.find((s) => s.uses && ACTION.test(s.uses))!;
    expect(action.with).toMatchObject({ mode: 'pull-request', publish: 'none', comment: 'never' });
    expect(action.with?.token).toBeUndefined();

    const stage = job.steps.find((s) => s.run?.includes('pr-number'))!;
    expect(stage.env?.PR_NUMBER).toBe('${{ github.event.pull_request.number }}');
    expect(stage.run).toMatch(/comparison\.json/);
    expect(stage.run).toMatch(/comment\.md/);
    const upload = job.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    expect(String(upload.with?.name)).toMatch(/^ngcc-perf-pr-/);
    expect(upload.with?.path).toBe('ngcc-perf-pr/');
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
});

describe('action.yml', () => {
  const action = parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as { runs: { using: string; main: string }; inputs: Record<string, unknown> };
  const reader = readFileSync(join(repoRoot, 'src', 'github', 'inputs.ts'), 'utf8');

  it('runs the committed bundle on node24', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
  });

  it('declares exactly the inputs the action reads', () => {
    const read = [...reader.matchAll(/(?:getInput|oneOf|positive|bool)\('([a-z-]+)'/g)].map((m) => m[1]);
    expect(new Set(read)).toEqual(ACTION_INPUTS);
  });
});
