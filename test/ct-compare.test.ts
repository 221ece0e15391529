import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { List, Table } from 'mdast';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareEvidence } from '../src/compare/compare.js';
import { newCtFindings } from '../src/compare/ctChanges.js';
import { failReasons, parseFailOn } from '../src/compare/failOn.js';
import { renderComparison } from '../src/compare/markdown.js';
import type { CompareReport, PullRequestContext } from '../src/compare/compareReport.js';
import { readCtEvidence } from '../src/evidence/ctEvidence.js';
import { COMPILER_MADE_NOTE, CT_KIND_MEANING } from '../src/ct/findingKinds.js';
import { deliverResults, postComment } from '../src/github/deliver.js';
import { runCli } from './helpers/cli.js';
import { type SyntheticCtOperation, writeSyntheticCt, writeSyntheticSystem } from './helpers/dataset.js';
import { startFakeGithub, type FakeGithub } from './helpers/fakeGithub.js';
import { parsePage, plain, tableShapeProblems } from './helpers/pages.js';
import { tempDir } from './helpers/tmp.js';

const INSTANCES = [
  { id: 'kem-1', label: 'good' },
  { id: 'kem-2', label: 'good' },
];
const OPS = INSTANCES.flatMap((i) => ['keygen', 'enc', 'dec'].map((op) => ({ ...i, op, trials: [10_000, 10_010, 9_990, 10_005, 9_995] })));

/** What the base's ct check of kem-1 found: one known branch, one suppressed table lookup. */
const BASE_CT: Record<string, SyntheticCtOperation> = {
  keygen: {
    findings: [{ kind: 'index', function: 'rej_uniform', file: 'poly.c', line: 40, count: 12, suppressed: true, reason: 'public seed' }],
  },
  enc: { findings: [] },
  dec: { findings: [{ kind: 'branch', function: 'poly_tomsg', file: 'poly.c', line: 88, count: 256 }] },
};

/** Base and head systems; `headCt` is head's ct check of kem-1 (kem-2's is the base's on both sides). */
function systems(
  headCt: Record<string, SyntheticCtOperation> | undefined,
  baseCt: Record<string, SyntheticCtOperation> | undefined = BASE_CT,
) {
  const root = tempDir();
  const base = writeSyntheticSystem(join(root, 'base'), 'x86_1', INSTANCES, OPS);
  const head = writeSyntheticSystem(join(root, 'head'), 'x86_1', INSTANCES, OPS);
  if (baseCt) writeSyntheticCt(base, 'kem-1', 'good', baseCt);
  if (headCt) writeSyntheticCt(head, 'kem-1', 'good', headCt);
  for (const dir of [base, head]) writeSyntheticCt(dir, 'kem-2', 'good', { keygen: {}, enc: {}, dec: {} });
  return { baseDir: join(root, 'base'), headDir: join(root, 'head'), base, head };
}

/** Head with a secret-dependent branch added in kem_dec's verify, on the line after the known one. */
const WITH_NEW_BRANCH: Record<string, SyntheticCtOperation> = {
  ...BASE_CT,
  dec: {
    findings: [
      { kind: 'branch', function: 'poly_tomsg', file: 'poly.c', line: 88, count: 256 },
      { kind: 'branch', function: 'verify', file: 'verify.c', line: 17, count: 3 },
    ],
  },
};

const compare = (s: { baseDir: string; headDir: string }): CompareReport =>
  compareEvidence({ baseDir: s.baseDir, headDir: s.headDir, system: 'x86_1' });

describe('new constant-time sites against the baseline', () => {
  it('a new unsuppressed branch site is a finding, with its function, file, line and operations', () => {
    const report = compare(systems(WITH_NEW_BRANCH));
    expect(report.ct_findings).toEqual([
      {
        key: 'kem-1/good',
        kind: 'branch',
        function: 'verify',
        file: 'verify.c',
        line: 17,
        count: 3,
        operations: ['dec'],
        baseline_checked: true,
      },
    ]);
    expect(report.counts.ct_findings).toBe(1);
  });

  it('the same sites, their lines moved by an edit above them, are nothing new; one more site in the same function is one', () => {
    const moved = {
      ...BASE_CT,
      dec: { findings: [{ kind: 'branch' as const, function: 'poly_tomsg', file: 'poly.c', line: 95, count: 256 }] },
    };
    expect(compare(systems(moved)).ct_findings).toEqual([]);
    const more = (first: number) => ({
      ...BASE_CT,
      dec: {
        findings: [
          { kind: 'branch' as const, function: 'poly_tomsg', file: 'poly.c', line: first, count: 256 },
          { kind: 'branch' as const, function: 'poly_tomsg', file: 'poly.c', line: 101, count: 256 },
        ],
      },
    });
    expect(compare(systems(more(88))).ct_findings?.map((f) => `${f.function} ${f.file}:${f.line}`)).toEqual(['poly_tomsg poly.c:101']);
    // Moved and added at once: one new site in the function, though which of the two is a guess.
    expect(compare(systems(more(95))).ct_findings?.map((f) => f.function)).toEqual(['poly_tomsg']);
  });

  it('a new site that is suppressed with a reason, or a suppression lifted from a known site, is judged by what is unsuppressed', () => {
    const suppressedNew = {
      ...BASE_CT,
      enc: {
        findings: [{ kind: 'index' as const, function: 'gen_matrix', file: 'indcpa.c', line: 9, suppressed: true, reason: 'public seed' }],
      },
    };
    expect(compare(systems(suppressedNew)).ct_findings).toEqual([]);
    const lifted = {
      ...BASE_CT,
      keygen: { findings: [{ kind: 'index' as const, function: 'rej_uniform', file: 'poly.c', line: 40, count: 12 }] },
    };
    expect(compare(systems(lifted)).ct_findings?.map((f) => f.function)).toEqual(['rej_uniform']);
  });

  it('an instance the baseline never checked has all its unsuppressed sites new, marked so', () => {
    const found = newCtFindings([], readCtEvidence(systems(WITH_NEW_BRANCH).head).files);
    expect(found.map((f) => [f.key, f.function, f.baseline_checked])).toEqual([
      ['kem-1/good', 'poly_tomsg', false],
      ['kem-1/good', 'verify', false],
    ]);
  });

  it('without ct evidence on either side the comparison has no ct fields at all', () => {
    const root = tempDir();
    writeSyntheticSystem(join(root, 'b'), 'x86_1', INSTANCES, OPS);
    writeSyntheticSystem(join(root, 'h'), 'x86_1', INSTANCES, OPS);
    const report = compareEvidence({ baseDir: join(root, 'b'), headDir: join(root, 'h'), system: 'x86_1' });
    expect('ct_findings' in report).toBe(false);
    expect('ct_findings' in report.counts).toBe(false);
  });

  it('an unreadable ct file of head is an input error naming it, not a silent pass', () => {
    const s = systems(WITH_NEW_BRANCH);
    writeFileSync(join(s.head, 'ct', 'kem-1', 'good.json'), '{"schema": 1, "operations": ');
    expect(() => compare(s)).toThrow(/ct\/kem-1\/good\.json.*unreadable head evidence/);
  });
});

describe('the comparison text and fail-on: ct', () => {
  it('lists the new site under its own title in a table that parses, and counts it in the headline', () => {
    const md = renderComparison(compare(systems(WITH_NEW_BRANCH)));
    expect(md.split('\n')[0]).toBe('### ngcc-perf x86_1: ⚠ 1 new constant-time finding');
    const tree = parsePage(md);
    const title = tree.children.findIndex((n) => n.type === 'paragraph' && plain(n) === 'Constant-time findings');
    expect(title).toBeGreaterThan(0);
    const t = tree.children.slice(title).find((n) => n.type === 'table') as Table;
    expect(t.children.map((r) => r.children.map((c) => plain(c)))).toEqual([
      ['instance', 'kind', 'function', 'site', 'operations', 'reports'],
      ['kem-1/good', 'branch', 'verify', 'verify.c:17', 'dec', '3'],
    ]);
    // What the kind means, once, for the kinds the table shows only.
    const meanings = tree.children.slice(title).find((n) => n.type === 'list') as List;
    expect(meanings.children.map((i) => plain(i))).toEqual([`branch: ${CT_KIND_MEANING.branch}.`]);
    expect(tableShapeProblems(md)).toEqual([]);
  });

  it('a new branch the source does not make says so beside its operations', () => {
    const madeByCompiler = {
      ...BASE_CT,
      dec: {
        findings: [
          { kind: 'branch' as const, function: 'poly_tomsg', file: 'poly.c', line: 88, count: 256 },
          { kind: 'branch' as const, function: 'base_mul', file: 'gf2x.c', line: 50, count: 2, compiler_made: 'loop-bound' as const },
        ],
      },
    };
    const report = compare(systems(madeByCompiler));
    expect(report.ct_findings).toEqual([expect.objectContaining({ function: 'base_mul', compiler_made: 'loop-bound' })]);
    const md = renderComparison(report);
    const tree = parsePage(md);
    const title = tree.children.findIndex((n) => n.type === 'paragraph' && plain(n) === 'Constant-time findings');
    const t = tree.children.slice(title).find((n) => n.type === 'table') as Table;
    expect(t.children[1]!.children.map((c) => plain(c))[4]).toBe(`dec; ${COMPILER_MADE_NOTE['loop-bound']}`);
  });

  it("holds each other build against the baseline's build of its name: a site new in several is one finding, and a build the baseline lacks says so", () => {
    const s = systems(WITH_NEW_BRANCH);
    const opsOf = (o: Record<string, SyntheticCtOperation>) =>
      (JSON.parse(readFileSync(writeSyntheticCt(tempDir(), 'kem-1', 'good', o), 'utf8')) as { operations: unknown }).operations;
    const withBuilds = (systemDir: string, builds: Array<{ name: string; operations: Record<string, SyntheticCtOperation> }>) => {
      const file = join(systemDir, 'ct', 'kem-1', 'good.json');
      const ct = JSON.parse(readFileSync(file, 'utf8')) as object;
      writeFileSync(file, JSON.stringify({ ...ct, builds: builds.map((b) => ({ name: b.name, operations: opsOf(b.operations) })) }));
    };
    // The base checked its gcc performance build only; head has the new branch there too, and a division at -Os.
    withBuilds(s.base, [{ name: 'gcc performance', operations: BASE_CT }]);
    const division = { kind: 'division' as const, function: 'poly_tomsg', file: 'poly.c', line: 90 };
    withBuilds(s.head, [
      { name: 'gcc performance', operations: WITH_NEW_BRANCH },
      { name: 'gcc resource', operations: { ...BASE_CT, dec: { findings: [division] } } },
    ]);
    const report = compare(s);
    expect(report.ct_findings?.map((f) => [f.function, f.line, f.build, f.also_in, f.baseline_checked])).toEqual([
      ['verify', 17, undefined, ['gcc performance'], true],
      ['poly_tomsg', 90, 'gcc resource', undefined, false],
    ]);
    const md = renderComparison(report);
    const tree = parsePage(md);
    const title = tree.children.findIndex((n) => n.type === 'paragraph' && plain(n) === 'Constant-time findings');
    const t = tree.children.slice(title).find((n) => n.type === 'table') as Table;
    expect(t.children.slice(1).map((r) => r.children.map((c) => plain(c)))).toEqual([
      ['kem-1/good', 'branch', 'verify', 'verify.c:17', 'dec; new in gcc performance too', '3'],
      [
        'kem-1/good',
        'division',
        'poly_tomsg',
        'poly.c:90',
        'dec (gcc resource build)',
        '1 (the baseline did not check its gcc resource build)',
      ],
    ]);
  });

  it('a build of the matrix that failed to build is named in the headline and the comment; fail-on ct fails only on the campaign’s own', () => {
    const s = systems(BASE_CT);
    const file = join(s.head, 'ct', 'kem-1', 'good.json');
    const ct = JSON.parse(readFileSync(file, 'utf8')) as { operations: Record<string, unknown> };
    const failed = (name: string, campaign_build?: boolean) => ({
      name,
      compiler: 'Debian clang version 16.0.6',
      variant: name.split(' ')[1],
      operations: Object.fromEntries(
        Object.keys(ct.operations).map((op) => [op, { status: 'failed', calls: 0, findings: [], reason: 'not built' }]),
      ),
      failure:
        "its ct build failed: randombytes.c:12: multiple definition of `randombytes' (see build/kem-1/good/ct-builds/x/ct/build.log)",
      ...(campaign_build ? { campaign_build } : {}),
    });
    writeFileSync(file, JSON.stringify({ ...ct, builds: [failed('clang-16 performance')] }));
    const other = compare(s);
    expect(other.ct_build_failures?.map((f) => [f.key, f.build])).toEqual([['kem-1/good', 'clang-16 performance']]);
    const md = renderComparison(other);
    expect(md.split('\n')[0]).toBe('### ngcc-perf x86_1: ⚠ 1 ct build not built');
    expect(md).toMatch(
      /\*\*Constant-time builds not checked\*\*[\s\S]*- `kem-1\/good` `clang-16 performance`: its ct build failed: randombytes\.c:12: multiple definition/,
    );
    // Another compiler's flag set only: shown, not failing.
    expect(failReasons(other, parseFailOn('ct', 'input'))).toEqual([]);
    writeFileSync(file, JSON.stringify({ ...ct, builds: [failed('clang-16 performance'), failed('clang-16 reference', true)] }));
    expect(failReasons(compare(s), parseFailOn('ct', 'input'))).toEqual([
      "1 ct build(s) of the campaign's own compiler and flag set failed to build",
    ]);
    // A build that failed on the baseline too is no news of the change: not listed, not failing.
    const baseFile = join(s.base, 'ct', 'kem-1', 'good.json');
    const baseCt = JSON.parse(readFileSync(baseFile, 'utf8')) as object;
    writeFileSync(baseFile, JSON.stringify({ ...baseCt, builds: [failed('clang-16 performance'), failed('clang-16 reference', true)] }));
    const old = compare(s);
    expect(old.ct_build_failures).toBeUndefined();
    expect(failReasons(old, parseFailOn('ct', 'input'))).toEqual([]);
  });

  it('without new sites there is no such title and the headline is clean', () => {
    const md = renderComparison(compare(systems(BASE_CT)));
    expect(md).not.toMatch(/Constant-time/);
    expect(md.split('\n')[0]).toBe('### ngcc-perf x86_1: ✅ no significant change');
  });

  it('fail-on ct fails on a new site and only then; the other checks ignore it', () => {
    const report = compare(systems(WITH_NEW_BRANCH));
    expect(failReasons(report, parseFailOn('ct', 'input'))).toEqual(['1 new constant-time finding(s)']);
    expect(failReasons(report, parseFailOn('regression,kat', 'input'))).toEqual([]);
    expect(failReasons(compare(systems(BASE_CT)), parseFailOn('ct', 'input'))).toEqual([]);
  });

  it('compare --fail-on ct exits 1 on a new site and 0 without', async () => {
    const bad = systems(WITH_NEW_BRANCH);
    const run = await runCli(['compare', '--base', bad.baseDir, '--head', bad.headDir, '--system', 'x86_1', '--fail-on', 'ct']);
    expect(run.code).toBe(1);
    expect(run.out.join('\n')).toMatch(/\| kem-1\/good \| branch \| `verify` \| `verify.c:17` \| dec \| 3 \|/);
    const ok = systems(BASE_CT);
    expect((await runCli(['compare', '--base', ok.baseDir, '--head', ok.headDir, '--system', 'x86_1', '--fail-on', 'ct'])).code).toBe(0);
  });
});

// The action's pull-request path from the comparison on: outputs, comparison.json, the verdict and
// the sticky comment posted to a fake GitHub API. Head's ct evidence is synthetic here: the ct
// phase that writes it in a pull-request run is not part of this branch.
describe('the action delivering a comparison with constant-time findings', () => {
  const TOKEN = 'ghs_ct_token';
  let api: FakeGithub;
  let saved: NodeJS.ProcessEnv;
  let outputFile: string;
  beforeEach(async () => {
    api = await startFakeGithub({ token: TOKEN });
    saved = { ...process.env };
    const dir = tempDir();
    outputFile = join(dir, 'output');
    writeFileSync(outputFile, '');
    writeFileSync(join(dir, 'summary'), '');
    Object.assign(process.env, {
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: join(dir, 'summary'),
      GITHUB_REPOSITORY: 'ngcc/submissions',
      GITHUB_API_URL: api.url,
    });
    process.exitCode = undefined;
  });
  afterEach(async () => {
    process.env = saved;
    process.exitCode = undefined;
    await api.stop();
  });

  const pr: PullRequestContext = {
    baseline: { source: 'base commit', ref: 'main', sha: '0123456789abcdef' },
    looked: { baseRef: 'main', baseSha: '0123456789abcdef', dataBranch: 'ngcc-perf-data' },
    measured: ['kem-1'],
    historyRuns: 0,
    buildErrors: {},
    stillFailing: [],
    campaign: 'submissions',
  };

  async function deliver(headCt: Record<string, SyntheticCtOperation>, failOn: string) {
    const report = compare(systems(headCt));
    const d = { system: 'x86_1', prNumber: 5, failOn: parseFailOn(failOn, 'fail-on'), work: tempDir() };
    const stdout = process.stdout.write.bind(process.stdout);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      const text = await deliverResults(report, pr, d);
      await postComment(report, pr, d, { comment: 'on-change', token: TOKEN }, text);
    } finally {
      process.stdout.write = stdout;
    }
    const failed = process.exitCode === 1;
    process.exitCode = undefined;
    const comparison = JSON.parse(readFileSync(join(d.work, 'artifact', 'comparison.json'), 'utf8')) as CompareReport;
    return { failed, comments: api.comments('ngcc', 'submissions', 5), comparison, outputs: readFileSync(outputFile, 'utf8') };
  }

  it('a pull request that adds a secret-dependent branch: the comment lists it, comparison.json has it, fail-on ct fails', async () => {
    const r = await deliver(WITH_NEW_BRANCH, 'regression,kat,ct');
    expect(r.failed).toBe(true);
    expect(r.comments).toHaveLength(1);
    const body = r.comments[0]!.body;
    expect(body).toMatch(/^<!-- ngcc-perf:x86_1 -->\n### ngcc-perf x86_1: ⚠ 1 new constant-time finding/);
    expect(body).toMatch(/\*\*Constant-time findings\*\*/);
    expect(body).toMatch(/\| kem-1\/good \| branch \| `verify` \| `verify.c:17` \| dec \| 3 \|/);
    expect(r.comparison.ct_findings?.map((f) => f.function)).toEqual(['verify']);
    expect(r.outputs).toMatch(/^ct-findings<<.*\n1\n/m);
  });

  it('the same finding without ct in fail-on is reported but does not fail the check', async () => {
    const r = await deliver(WITH_NEW_BRANCH, 'regression,kat');
    expect(r.failed).toBe(false);
    expect(r.comments[0]!.body).toMatch(/Constant-time findings/);
  });

  it('a pull request that adds no site: no finding, no comment (on-change), and fail-on ct passes', async () => {
    const r = await deliver(BASE_CT, 'regression,kat,ct');
    expect(r.failed).toBe(false);
    expect(r.comments).toHaveLength(0);
    expect(r.comparison.ct_findings).toEqual([]);
    expect(r.outputs).toMatch(/^ct-findings<<.*\n0\n/m);
  });
});
