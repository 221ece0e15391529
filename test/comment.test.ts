import type { Html, Root, RootContent, Table } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotations } from '../src/compare/annotations.js';
import { failReasons } from '../src/compare/failOn.js';
import { hasFindings } from '../src/compare/markdown.js';
import type { CompareReport, CompareRow, PullRequestContext, Verdict } from '../src/compare/compareReport.js';
import { COMMENT_MARKER, renderComment, renderJobSummary } from '../src/github/comment.js';
import { GithubApiError, makeOctokit, upsertStickyComment } from '../src/github/githubApi.js';
import { formatCycles } from '../src/text/format.js';
import { type FakeGithub, startFakeGithub } from './helpers/fakeGithub.js';

// ---------------------------------------------------------------------------------------------
// Reports built by hand.

function row(
  candidate: string,
  label: string,
  operation: string,
  base: number | undefined,
  head: number | undefined,
  verdict: Verdict,
): CompareRow {
  const side = (c: number) => ({ mean_cycles: c, trial_cycles: [c * 0.99, c, c * 1.01] });
  return {
    candidate,
    label,
    operation,
    base: base === undefined ? undefined : side(base),
    head: head === undefined ? undefined : side(head),
    delta_pct: base !== undefined && head !== undefined ? ((head - base) / base) * 100 : undefined,
    p_value: verdict === 'unchanged' ? 0.6 : 0.008,
    verdict,
    reason: verdict === 'unchanged' ? 'within ±5.0%' : 'beyond ±5.0% at p = 0.008',
  };
}

function sampleReport(): CompareReport {
  const rows: CompareRow[] = [
    row('kem-01', 'kem-01-128', 'keygen', 120_000, 120_500, 'unchanged'),
    row('kem-01', 'kem-01-128', 'encaps', 150_000, 181_000, 'regression'),
    row('kem-01', 'kem-01-128', 'decaps', 170_000, 170_200, 'unchanged'),
    row('sign-10', 'sign-10-2', 'sign', 2_400_000, 1_900_000, 'improvement'),
    row('sign-10', 'sign-10-2', 'verify', 90_000, 90_100, 'unchanged'),
    row('sign-10', 'sign-10-3', 'keygen', undefined, 5_000_000, 'new'),
  ];
  return {
    system: 'x86_1',
    threshold_pct: 5,
    alpha: 0.05,
    rows,
    kat_changes: [{ key: 'kem-09/kem-09-1', base: 'PASS', head: 'MISMATCH' }],
    build_failures: [],
    invalid_candidates: [],
    size_changes: [{ key: 'sign-10/sign-10-2', item: 'signature_bytes', base: 2420, head: 2436 }],
    memory_changes: [],
    size_mismatches: [{ id: 'kem-01', instance: 'kem-01-128', item: 'ciphertext', catalog: 1088, api: 1096, basis: 'fixed' }],
    counts: { regressions: 1, improvements: 1, kat_failures: 1, size_mismatches: 1 },
  };
}

function bigReport(n: number): CompareReport {
  const rows: CompareRow[] = [];
  for (let i = 0; i < n; i++) {
    const verdict: Verdict = i % 50 === 0 ? 'regression' : i % 70 === 0 ? 'improvement' : 'unchanged';
    const base = 100_000 + i * 37;
    const head = verdict === 'regression' ? base * 1.2 : verdict === 'improvement' ? base * 0.8 : base * 1.001;
    rows.push(
      row(`kem-${String(i % 41).padStart(2, '0')}`, `kem-${i}-instance`, ['keygen', 'encaps', 'decaps'][i % 3]!, base, head, verdict),
    );
  }
  return {
    system: 'arm_1',
    threshold_pct: 5,
    alpha: 0.05,
    rows,
    kat_changes: [],
    build_failures: [],
    invalid_candidates: [],
    size_changes: [],
    memory_changes: [],
    size_mismatches: [],
    counts: {
      regressions: rows.filter((r) => r.verdict === 'regression').length,
      improvements: rows.filter((r) => r.verdict === 'improvement').length,
      kat_failures: 0,
      size_mismatches: 0,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Reading the Markdown back the way GitHub does (GFM).

const parse = (md: string): Root => unified().use(remarkParse).use(remarkGfm).parse(md);

/** The plain text of a node. */
function plain(node: unknown): string {
  const n = node as { value?: string; children?: unknown[] };
  if (typeof n.value === 'string') return n.value;
  return (n.children ?? []).map(plain).join('');
}

const cellsOf = (t: Table): string[][] => t.children.map((r) => r.children.map(plain));

function tables(tree: Root): Table[] {
  return tree.children.filter((c): c is Table => c.type === 'table');
}

/** The table right after the block that satisfies `before`. */
function tableAfter(tree: Root, before: (n: RootContent) => boolean): Table | undefined {
  const i = tree.children.findIndex(before);
  const next = i >= 0 ? tree.children[i + 1] : undefined;
  return next?.type === 'table' ? next : undefined;
}

const isDetailsOpen = (n: RootContent) => n.type === 'html' && (n as Html).value.includes('<details>');
const isChangedTitle = (n: RootContent) => n.type === 'paragraph' && plain(n) === 'Changed measurements';

function expectConsistentTables(tree: Root): void {
  for (const t of tables(tree)) {
    const width = t.children[0]!.children.length;
    for (const r of t.children) expect(r.children.length).toBe(width);
  }
}

// ---------------------------------------------------------------------------------------------

describe('renderComment', () => {
  const report = sampleReport();
  const md = renderComment(report, { reportUrl: 'https://example.org/pages/x86_1', runUrl: 'https://github.com/o/r/actions/runs/1' });
  const tree = parse(md);

  it('puts the marker alone on the first line', () => {
    expect(md.split('\n')[0]).toBe('<!-- ngcc-perf:x86_1 -->');
    expect(COMMENT_MARKER('x86_1')).toBe('<!-- ngcc-perf:x86_1 -->');
    expect(md.indexOf('<!-- ngcc-perf:')).toBe(0);
    expect(md.lastIndexOf('<!-- ngcc-perf:')).toBe(0);
  });

  it('states the verdict in the headline', () => {
    const h = tree.children.find((c) => c.type === 'heading');
    expect(plain(h)).toBe('ngcc-perf x86_1: ❌ KAT: 1 failure, ⚠ 1 regression, ⚠ 1 size mismatch, 1 improvement, 1 new');
  });

  it('parses as GFM into tables whose rows all have the header width', () => {
    expect(tables(tree).length).toBeGreaterThanOrEqual(4);
    expectConsistentTables(tree);
  });

  it('lists only the changed rows in the changed table, regressions first, with formatted numbers', () => {
    const changed = tableAfter(tree, isChangedTitle);
    expect(changed).toBeDefined();
    const cells = cellsOf(changed!);
    expect(cells[0]).toEqual(['candidate', 'instance', 'operation', 'base', 'head', 'Δ%', 'verdict']);
    expect(cells.slice(1)).toEqual([
      ['kem-01', 'kem-01-128', 'encaps', formatCycles(150_000), formatCycles(181_000), '+20.7%', '⚠ regression'],
      ['sign-10', 'sign-10-2', 'sign', formatCycles(2_400_000), formatCycles(1_900_000), '-20.8%', '✅ improvement'],
      ['sign-10', 'sign-10-3', 'keygen', '—', formatCycles(5_000_000), '—', '🆕 new'],
    ]);
  });

  it('keeps every row in the details block', () => {
    const opening = tree.children.find(isDetailsOpen) as Html;
    expect(opening.value).toContain('<summary>All 6 operations</summary>');
    const all = tableAfter(tree, isDetailsOpen);
    expect(all).toBeDefined();
    expect(all!.children.length).toBe(1 + report.rows.length);
    expect(
      cellsOf(all!)
        .slice(1)
        .map((c) => `${c[1]} ${c[2]}`),
    ).toEqual(report.rows.map((r) => `${r.label} ${r.operation}`));
    // The closing tag follows the table as its own block, so GitHub renders the table inside.
    const i = tree.children.indexOf(all!);
    expect(tree.children[i + 1]).toMatchObject({ type: 'html', value: '</details>' });
  });

  it('shows KAT and size-audit findings', () => {
    const kat = tables(tree).find((t) => plain(t.children[0]).startsWith('instancebase KAT'));
    expect(cellsOf(kat!)[1]).toEqual(['kem-09/kem-09-1', 'PASS', 'MISMATCH']);
    const mismatch = tables(tree).find((t) => plain(t.children[0]).includes('catalog (bytes)'));
    expect(cellsOf(mismatch!)[1]).toEqual(['kem-01', 'kem-01-128', 'ciphertext', '1088', '1096', 'fixed']);
    const sizes = tables(tree).find((t) => cellsOf(t)[1]?.[1] === 'signature_bytes');
    expect(cellsOf(sizes!)[1]).toEqual(['sign-10/sign-10-2', 'signature_bytes', '2420', '2436', '+0.7%']);
  });

  it('links the full report and the run', () => {
    expect(md).toContain('[Full report](https://example.org/pages/x86_1)');
    expect(md).toContain('[Workflow run](https://github.com/o/r/actions/runs/1)');
    expect(md).not.toContain('more rows not shown');
  });

  it('says so when nothing changed', () => {
    const quiet: CompareReport = {
      ...sampleReport(),
      rows: sampleReport().rows.filter((r) => r.verdict === 'unchanged'),
      kat_changes: [],
      size_changes: [],
      size_mismatches: [],
      counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 0 },
    };
    const out = parse(renderComment(quiet, {}));
    expect(plain(out.children.find((c) => c.type === 'heading'))).toBe('ngcc-perf x86_1: ✅ no significant change');
    expect(tableAfter(out, isChangedTitle)).toBeUndefined();
    expect(tables(out)).toHaveLength(1);
  });

  it("keeps a 5,000-row report under GitHub's 65,536 characters without breaking a row", () => {
    const big = bigReport(5000);
    const started = performance.now();
    const text = renderComment(big, { reportUrl: 'https://example.org/pages/arm_1' });
    const ms = performance.now() - started;
    expect(text.length).toBeLessThanOrEqual(65_536);
    expect(text.length).toBeGreaterThan(60_000); // fills the space rather than dropping everything
    expect(text.split('\n')[0]).toBe(COMMENT_MARKER('arm_1'));
    const lastLine = text.trimEnd().split('\n').at(-1)!;
    expect(lastLine).toMatch(
      /^… \d+ more rows not shown \(comment size limit\); see the \[full report\]\(https:\/\/example\.org\/pages\/arm_1\)$/,
    );
    // Every table line is a whole row: starts and ends with a pipe.
    for (const line of text.split('\n')) if (line.startsWith('|')) expect(line.endsWith('|')).toBe(true);
    const tree2 = parse(text);
    expectConsistentTables(tree2);
    // The changed rows all survive: only the tail of the full listing went.
    const changed = tableAfter(tree2, isChangedTitle)!;
    expect(changed.children.length - 1).toBe(big.counts.regressions + big.counts.improvements);
    const all = tableAfter(tree2, isDetailsOpen)!;
    const shown = all.children.length - 1;
    const dropped = Number(/… (\d+) more rows/.exec(lastLine)![1]);
    expect(shown + dropped).toBe(5000);
    expect(cellsOf(all)[shown]![1]).toBe(big.rows[shown - 1]!.label);
    expect(ms).toBeLessThan(20_000);
  });

  it('drops changed rows after the full listing when the limit is tight', () => {
    const big = bigReport(400);
    const text = renderComment(big, { maxChars: 1000 });
    expect(text.length).toBeLessThanOrEqual(1000);
    const tree2 = parse(text);
    expect(tree2.children.some(isDetailsOpen)).toBe(false);
    const changed = tableAfter(tree2, isChangedTitle)!;
    expect(changed.children.length - 1).toBeLessThan(big.counts.regressions + big.counts.improvements);
    expectConsistentTables(tree2);
    expect(text.trimEnd()).toMatch(/… \d+ more rows not shown \(comment size limit\); see the full report$/);
  });

  it('renders the job summary with the same content and no marker', () => {
    const summary = renderJobSummary(report, { reportUrl: 'https://example.org/pages/x86_1' });
    expect(summary).not.toContain('<!--');
    expect(summary.startsWith('### ngcc-perf x86_1:')).toBe(true);
    expect(renderComment(report, { reportUrl: 'https://example.org/pages/x86_1' })).toBe(`${COMMENT_MARKER('x86_1')}\n${summary}`);
    const big = renderJobSummary(bigReport(5000));
    expect(big).not.toContain('more rows not shown');
    expect(Buffer.byteLength(big)).toBeLessThanOrEqual(1 << 20);
  });

  it('refuses a system id that could break out of the marker', () => {
    expect(() => COMMENT_MARKER('x86_1 --> <script>')).toThrow(RangeError);
  });
});

const BASE_SHA = 'a'.repeat(40);
const DATA_SHA = '3c4d5e6f'.padEnd(40, '0');

/** What the pull-request run adds: kem-01 measured, sign-10 carried over, baseline from the data branch. */
function prContext(over: Partial<PullRequestContext> = {}): PullRequestContext {
  return {
    baseline: { source: 'data branch', ref: 'ngcc-perf-data', sha: DATA_SHA },
    looked: { baseRef: 'main', baseSha: BASE_SHA, dataBranch: 'ngcc-perf-data' },
    measured: ['kem-01'],
    historyRuns: 8,
    buildErrors: {},
    stillFailing: [],
    campaign: 'submissions',
    ...over,
  };
}

const headingOf = (md: string): string => plain(parse(md).children.find((c) => c.type === 'heading'));
const textOf = (md: string): string => parse(md).children.map(plain).join('\n');

describe('renderComment in a pull request', () => {
  it('names the baseline and states the rule as applied, with the nightly spread when there is history', () => {
    const md = textOf(renderComment(sampleReport(), { pr: prContext() }));
    expect(md).toContain('baseline: evidence on the data branch ngcc-perf-data@3c4d5e6');
    expect(md).toContain(
      'Δ is the change of the median trial; a change counts when |Δ| ≥ 5.0%, a rank permutation test of the trials gives p ≤ 0.05, and |Δ| is more than 3× the run-to-run spread of the operation over its last 8 nightly evidence versions',
    );
    // The comparison's own count of distinct measurements wins over the versions read.
    const counted = textOf(renderComment({ ...sampleReport(), history_runs: 5 }, { pr: prContext() }));
    expect(counted).toContain('over its last 5 distinct nightly measurements');
    const few = textOf(renderComment({ ...sampleReport(), history_runs: 1 }, { pr: prContext() }));
    expect(few).toContain('(1 distinct nightly measurement of history, fewer than 3: no spread rule)');
    const none = textOf(renderComment(sampleReport(), { pr: prContext({ historyRuns: 0 }) }));
    expect(none).toContain('(no nightly history on the data branch: no spread rule)');
    expect(none).not.toContain('3×');
  });

  it('says loudly that nothing was compared when there is no baseline, never ✅', () => {
    const onlyNew: CompareReport = {
      ...sampleReport(),
      rows: [row('kem-01', 'kem-01-128', 'keygen', undefined, 120_000, 'new')],
      kat_changes: [],
      size_changes: [],
      size_mismatches: [],
      counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 0 },
    };
    const md = renderComment(onlyNew, { pr: prContext({ baseline: undefined }) });
    expect(headingOf(md)).toBe('ngcc-perf x86_1: ⚠ no baseline evidence for x86_1: nothing was compared');
    expect(md).not.toContain('✅');
    expect(textOf(md)).toContain('No evidence for x86_1 on the base commit main@aaaaaaa nor on the data branch ngcc-perf-data');
    expect(hasFindings(onlyNew, prContext({ baseline: undefined }))).toBe(true);
    expect(annotations(onlyNew, prContext({ baseline: undefined })).map((a) => `${a.level} ${a.title}`)).toContain(
      'warning No baseline: x86_1',
    );
  });

  it('counts as compared only the rows measured on both sides, and reads the carried-over ones as not measured', () => {
    // kem-01 measured (three rows); sign-10 untouched: its two rows are the baseline's, unchanged.
    const carried = (r: CompareRow): CompareRow => ({ ...r, head: r.base, delta_pct: 0, verdict: 'unchanged' });
    const report: CompareReport = {
      ...sampleReport(),
      rows: sampleReport()
        .rows.filter((r) => r.verdict !== 'new')
        .map((r) => (r.candidate === 'sign-10' ? carried(r) : r)),
      counts: { regressions: 1, improvements: 0, kat_failures: 1, size_mismatches: 1 },
    };
    const md = renderComment(report, { pr: prContext() });
    expect(textOf(md)).toContain(
      '3 measurements compared, 1 changed; 2 of untouched candidates carried over from the baseline, not measured.',
    );
    const all = cellsOf(tableAfter(parse(md), isDetailsOpen)!);
    expect(all.filter((c) => c[0] === 'sign-10')).toEqual([
      ['sign-10', 'sign-10-2', 'sign', formatCycles(2_400_000), '—', '—', 'not measured (unchanged inputs)'],
      ['sign-10', 'sign-10-2', 'verify', formatCycles(90_000), '—', '—', 'not measured (unchanged inputs)'],
    ]);
    expect(md).not.toMatch(/sign-10.*0\.0%/);
    // Without the context: every row with two sides (the new one has none).
    expect(textOf(renderComment(sampleReport()))).toContain('5 measurements compared, 3 changed.');
    // A row of an untouched candidate that differs anyway keeps its verdict: nothing is hidden.
    expect(textOf(renderComment(sampleReport(), { pr: prContext() }))).toContain('✅ improvement');
  });

  it('mentions inconclusive rows in the headline', () => {
    const quiet: CompareReport = {
      ...sampleReport(),
      rows: [
        row('kem-01', 'kem-01-128', 'keygen', 120_000, 120_500, 'unchanged'),
        row('kem-01', 'kem-01-128', 'encaps', 150_000, 160_000, 'inconclusive'),
        row('kem-01', 'kem-01-128', 'decaps', 170_000, 180_000, 'inconclusive'),
      ],
      kat_changes: [],
      size_changes: [],
      size_mismatches: [],
      counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 0 },
    };
    expect(headingOf(renderComment(quiet, { pr: prContext() }))).toBe('ngcc-perf x86_1: ✅ no significant change · 2 inconclusive');
    expect(hasFindings(quiet, prContext())).toBe(false);
  });

  it("shows a build failure's first compiler error, still-failing KATs, and how to reproduce", () => {
    const report = { ...sampleReport(), build_failures: ['kem-01/kem-01-128'] };
    const pr = prContext({
      buildErrors: { 'kem-01/kem-01-128': "\nsrc/kem.c:12:3: error: expected ';' before '}' token\nsrc/kem.c:14:1: error: second" },
      stillFailing: [{ key: 'kem-01/kem-01-256', status: 'CRYPTOFAIL', detail: 'record 0: shared secrets differ' }],
    });
    const md = renderComment(report, { pr });
    expect(md).toContain("- `kem-01/kem-01-128`: `src/kem.c:12:3: error: expected ';' before '}' token`");
    expect(md).not.toContain('second');
    expect(md).toContain('- `kem-01/kem-01-256`: CRYPTOFAIL (record 0: shared secrets differ)');
    expect(headingOf(md)).toContain('⚠ 1 KAT still failing');
    expect(md).toContain(
      "Reproduce locally: `node ngcc-perf/dist/cli.js run submissions --system x86_1 --out data --only '^(kem-01)/'`, then `node ngcc-perf/dist/cli.js compare --base baseline --head data --system x86_1 --campaign submissions`",
    );
    const a = annotations(report, pr);
    expect(a.find((x) => x.title === 'Build failed: kem-01/kem-01-128')!.message).toContain("error: expected ';'");
    expect(a.find((x) => x.title === 'KAT still CRYPTOFAIL: kem-01/kem-01-256')!.level).toBe('warning');
  });

  it("keeps a 5,000-row report with long build errors under GitHub's 65,536 characters", () => {
    const big = { ...bigReport(5000), build_failures: Array.from({ length: 300 }, (_, i) => `kem-${i}/kem-${i}-1`) };
    const buildErrors = Object.fromEntries(big.build_failures.map((k) => [k, `src/${k}.c:1:1: error: ${'x'.repeat(1000)}`]));
    const text = renderComment(big, { pr: prContext({ measured: big.rows.map((r) => r.candidate), buildErrors }) });
    expect(text.length).toBeLessThanOrEqual(65_536);
    expect(text.length).toBeGreaterThan(60_000);
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/^… \d+ more rows not shown \(comment size limit\); see the full report$/);
    // A build error is cut to its first 300 characters; the --only filter of 41 candidates is left out.
    const cut = /`(src\/kem-0\/kem-0-1\.c:1:1: error: x+…)`/.exec(text)![1]!;
    expect(cut.length).toBe(300);
    expect(text).toContain('`node ngcc-perf/dist/cli.js run submissions --system arm_1 --out data`');
    expectConsistentTables(parse(text));
  });
});

describe('the comment’s headings', () => {
  /** A report with a finding of every kind, so that every heading of the comment appears. */
  function everything(): CompareReport {
    const noisy: CompareRow = {
      ...row('kem-01', 'kem-01-256', 'keygen', 200_000, 201_000, 'noisy'),
      noisy: true,
      reason: 'trials spread 1.01× on base, 1.97× on head',
    };
    noisy.head = { ...noisy.head!, trial_spread: 1.97 };
    noisy.base = { ...noisy.base!, trial_spread: 1.01 };
    const base = sampleReport();
    return {
      ...base,
      rows: [...base.rows, noisy],
      build_failures: ['kem-02/kem-02-1'],
      invalid_candidates: [{ id: 'kem-03', problem: 'candidate.yml: line 2: type: expected kem or sign' }],
      memory_changes: [
        { key: 'kem-01/kem-01-128', item: 'elf_load_bytes', base: 30_000, head: 31_000 },
        { key: 'kem-01/kem-01-128/keygen', item: 'peak_rss_bytes', base: 1_500_000, head: 2_000_000 },
      ],
      counts: { ...base.counts, noisy: 1 },
    };
  }

  /** The comment cut at its titles (a paragraph that is one bold phrase): each title with what follows it. */
  function sectionsOf(tree: Root): Array<{ title: string; blocks: RootContent[] }> {
    const out: Array<{ title: string; blocks: RootContent[] }> = [];
    for (const n of tree.children) {
      const isTitle = n.type === 'paragraph' && n.children.length === 1 && n.children[0]!.type === 'strong';
      if (isTitle) out.push({ title: plain(n), blocks: [] });
      else if (n.type === 'html' && isDetailsOpen(n)) out.push({ title: '<details>', blocks: [] });
      else out.at(-1)?.blocks.push(n);
    }
    return out;
  }

  const tablesIn = (blocks: RootContent[]) => blocks.filter((b): b is Table => b.type === 'table').map(cellsOf);
  const column = (t: string[][], name: string) => t.slice(1).map((r) => r[t[0]!.indexOf(name)]!);

  it('puts every finding under a title that names it, and nothing else there', () => {
    const tree = parse(renderComment(everything(), { pr: prContext({ measured: ['kem-01', 'sign-10'] }) }));
    const sections = sectionsOf(tree);
    expect(sections.map((x) => x.title)).toEqual([
      'Changed measurements',
      'Noisy measurements',
      'KAT and build',
      'Size audit',
      'Size changes',
      'Memory changes',
      '<details>',
    ]);
    const of = (title: string) => sections.find((x) => x.title === title)!.blocks;
    const [changed] = tablesIn(of('Changed measurements'));
    expect(new Set(column(changed!, 'verdict'))).toEqual(new Set(['⚠ regression', '✅ improvement', '🆕 new']));
    const [noisy] = tablesIn(of('Noisy measurements'));
    expect(noisy).toEqual([
      ['candidate', 'instance', 'operation', 'base spread', 'head spread', 'Δ%', 'verdict'],
      ['kem-01', 'kem-01-256', 'keygen', '1.01×', '1.97×', '+0.5%', '〰 noisy'],
    ]);
    const kat = of('KAT and build').map(plain).join('\n');
    expect(kat).toContain('kem-09/kem-09-1');
    expect(kat).toContain('kem-02/kem-02-1');
    expect(kat).toContain('kem-03: INVALID');
    // The size audit is the catalog against the API: no size or memory change under it.
    const audit = tablesIn(of('Size audit'));
    expect(audit).toHaveLength(1);
    expect(audit[0]![0]).toEqual(['candidate', 'instance', 'item', 'catalog (bytes)', 'API (bytes)', 'basis']);
    expect(of('Size audit').map(plain).join(' ')).not.toMatch(/elf_load_bytes|peak_rss_bytes|signature_bytes/);
    expect(column(tablesIn(of('Size changes'))[0]!, 'item')).toEqual(['signature_bytes']);
    expect(column(tablesIn(of('Memory changes'))[0]!, 'item')).toEqual(['elf_load_bytes', 'peak_rss_bytes']);
    // elf_load_bytes appears under "Memory changes" and nowhere else.
    const where = sections.filter((x) => x.blocks.map(plain).join(' ').includes('elf_load_bytes')).map((x) => x.title);
    expect(where).toEqual(['Memory changes']);
  });

  it('puts a row under one heading: a change measured on noisy sides is under "Changed" alone, marked there', () => {
    const report = everything();
    const noisyRegression: CompareRow = {
      ...row('kem-90', 'kem-90-512', 'dec', 100_000, 142_500, 'regression'),
      noisy: true,
      reason: "trials spread 1.02× on base, 1.60× on head, but the sides' worst-case ranges do not overlap",
    };
    report.rows.push(noisyRegression);
    report.counts = { ...report.counts, regressions: report.counts.regressions + 1 };
    const sections = sectionsOf(parse(renderComment(report, { pr: prContext({ measured: ['kem-01', 'kem-90', 'sign-10'] }) })));
    const headings = sections.filter((x) => x.title !== '<details>');
    const under = headings.filter((x) => tablesIn(x.blocks).some((t) => t.some((cells) => cells[0] === 'kem-90'))).map((x) => x.title);
    expect(under).toEqual(['Changed measurements']);
    const [changed] = tablesIn(sections.find((x) => x.title === 'Changed measurements')!.blocks);
    const kem90 = changed!.find((cells) => cells[0] === 'kem-90')!;
    expect(kem90[changed![0]!.indexOf('verdict')]).toBe('⚠ regression (noisy sides, ranges apart)');
    // The noisy table keeps the row whose verdict is noisy, and only it.
    expect(column(tablesIn(sections.find((x) => x.title === 'Noisy measurements')!.blocks)[0]!, 'candidate')).toEqual(['kem-01']);
  });

  it('gives each title only when it has content, and the headline counts what the sections show', () => {
    const tree = parse(renderComment(everything(), { pr: prContext({ measured: ['kem-01', 'sign-10'] }) }));
    expect(plain(tree.children.find((c) => c.type === 'heading'))).toBe(
      'ngcc-perf x86_1: ❌ KAT: 1 failure, ❌ 1 invalid candidate, ❌ 1 build failure, ⚠ 1 regression, ⚠ 1 size mismatch, 〰 1 noisy measurement, 1 improvement, 1 new',
    );
    const onlyMemory: CompareReport = {
      ...everything(),
      rows: [],
      kat_changes: [],
      build_failures: [],
      invalid_candidates: [],
      size_changes: [],
      size_mismatches: [],
      counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 0, noisy: 0 },
    };
    const titles = sectionsOf(parse(renderComment(onlyMemory))).map((x) => x.title);
    expect(titles).toEqual(['Memory changes']);
  });

  it('a paired comparison says how many trial pairs each row took, and why an undecided one stays so', () => {
    const paired = (r: CompareRow, rounds?: number[]): CompareRow => ({ ...r, paired: true, ...(rounds ? { rounds } : {}) });
    const base = sampleReport();
    const undecided: CompareRow = paired(
      {
        ...row('kem-01', 'kem-01-256', 'decaps', 100_000, 104_000, 'inconclusive'),
        reason:
          'p = 0.02 > 0.01: within the spread of the trials; rounds of 16 + 16 pairs; the smallest change these pairs could show: ±5.1%',
      },
      [16, 16],
    );
    const report: CompareReport = {
      ...base,
      rows: [paired(base.rows[0]!), paired(base.rows[1]!, [16, 18]), undecided],
      kat_changes: [],
      size_changes: [],
      size_mismatches: [],
      counts: { regressions: 1, improvements: 0, kat_failures: 0, size_mismatches: 0 },
    };
    const tree = parse(renderComment(report, { pr: prContext({ measured: ['kem-01'], paired: 3, extraRounds: { rows: 2, pairs: 16 } }) }));
    expectConsistentTables(tree);
    const sections = sectionsOf(tree);
    expect(sections.map((x) => x.title)).toEqual(['Changed measurements', 'Inconclusive measurements', '<details>']);
    const of = (title: string) => sections.find((x) => x.title === title)!.blocks;
    expect(tablesIn(of('Changed measurements'))[0]).toEqual([
      ['candidate', 'instance', 'operation', 'base', 'head', 'Δ%', 'verdict', 'trial pairs'],
      ['kem-01', 'kem-01-128', 'encaps', formatCycles(150_000), formatCycles(181_000), '+20.7%', '⚠ regression', '16 + 18'],
    ]);
    expect(tablesIn(of('Inconclusive measurements'))[0]).toEqual([
      ['candidate', 'instance', 'operation', 'Δ%', 'trial pairs', 'why'],
      ['kem-01', 'kem-01-256', 'decaps', '+4.0%', '16 + 16', undecided.reason],
    ]);
    // A row decided in the first rounds: its pairs, one round.
    expect(column(tablesIn(of('<details>'))[0]!, 'trial pairs')).toEqual(['3', '16 + 18', '16 + 16']);
    expect(plain(tree)).toContain(
      '2 rows the first rounds could not decide (inconclusive, noisy, or unchanged on too few pairs to show a change of the threshold) got 16 more trial pairs each',
    );
  });

  it('lists noisy rows with their spread as a finding, never as a pass', () => {
    const report = everything();
    const quiet: CompareReport = {
      ...report,
      rows: report.rows.filter((r) => r.verdict === 'noisy' || r.verdict === 'unchanged'),
      kat_changes: [],
      build_failures: [],
      invalid_candidates: [],
      size_changes: [],
      size_mismatches: [],
      memory_changes: [],
      counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 0, noisy: 1 },
    };
    const md = renderComment(quiet, { pr: prContext({ measured: ['kem-01', 'sign-10'] }) });
    expect(headingOf(md)).toBe('ngcc-perf x86_1: 〰 1 noisy measurement');
    expect(md).not.toContain('✅');
    expect(md).toContain('| kem-01 | kem-01-256 | keygen | 1.01× | 1.97× | +0.5% | 〰 noisy |');
    expect(hasFindings(quiet)).toBe(true);
    expect(failReasons(quiet, new Set(['regression', 'kat', 'size-audit']))).toEqual([]);
    expect(annotations(quiet).map((a) => `${a.level} ${a.title}`)).toEqual(['warning Noisy: kem-01 kem-01-256 keygen']);
  });
});

describe('annotations', () => {
  it('makes KAT failures errors and regressions and size mismatches warnings', () => {
    const report = { ...sampleReport(), build_failures: ['kem-17/kem-17-1'] };
    const a = annotations(report);
    expect(a.filter((x) => x.level === 'error').map((x) => x.title)).toEqual([
      'KAT MISMATCH: kem-09/kem-09-1',
      'Build failed: kem-17/kem-17-1',
    ]);
    expect(a.filter((x) => x.level === 'warning').map((x) => x.title)).toEqual([
      'Regression: kem-01 kem-01-128 encaps',
      'Size mismatch: kem-01 kem-01-128 ciphertext',
    ]);
    expect(a.find((x) => x.title.startsWith('Regression'))!.message).toContain('+20.7%');
    expect(a.filter((x) => x.level === 'notice').map((x) => x.title)).toEqual(['Improvement: sign-10 sign-10-2 sign']);
  });

  it('makes an instance a replay found FORGED an error, as a failing KAT is', () => {
    const report = { ...sampleReport(), kat_changes: [{ key: 'kem-1/memo', base: 'PASS', head: 'FORGED' }] } as CompareReport;
    expect(annotations(report).filter((x) => x.level === 'error')).toEqual([
      { level: 'error', title: 'KAT FORGED: kem-1/memo', message: 'KAT status PASS → FORGED on x86_1' },
    ]);
  });

  it('fail-on size-audit fails a comparison on a size mismatch, and no other check does', () => {
    const mismatch = {
      ...sampleReport(),
      rows: [],
      kat_changes: [],
      counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 1 },
    };
    expect(failReasons(mismatch, new Set(['size-audit']))).toEqual(['1 size-audit mismatch(es)']);
    expect(failReasons(mismatch, new Set(['regression', 'kat', 'ct']))).toEqual([]);
    expect(
      failReasons({ ...mismatch, size_mismatches: [], counts: { ...mismatch.counts, size_mismatches: 0 } }, new Set(['size-audit'])),
    ).toEqual([]);
  });
});

describe('an invalid candidate', () => {
  const problem = "submissions/kem-05/kat.sha256: line 3: no instance is labelled 'x' in candidate.yml (labels: a, b)";
  const clean: CompareReport = {
    ...bigReport(3),
    rows: [],
    counts: { regressions: 0, improvements: 0, kat_failures: 0, size_mismatches: 0 },
  };
  const report: CompareReport = { ...clean, invalid_candidates: [{ id: 'kem-05', problem }] };

  it('is a finding in the headline, the body, the annotations and the verdict (fail-on kat)', () => {
    const md = renderComment(report);
    expect(md).toContain('❌ 1 invalid candidate');
    expect(md).toContain(
      "- `kem-05`: INVALID (`submissions/kem-05/kat.sha256: line 3: no instance is labelled 'x' in candidate.yml (labels: a, b)`)",
    );
    expect(hasFindings(report)).toBe(true);
    expect(hasFindings(clean)).toBe(false);
    expect(annotations(report)).toEqual([
      { level: 'error', title: 'Invalid candidate: kem-05', message: `kem-05 was not built on arm_1: ${problem}` },
    ]);
    expect(failReasons(report, new Set(['kat']))).toEqual(['1 invalid candidate(s)']);
    expect(failReasons(report, new Set(['regression']))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The sticky comment against a real HTTP server on loopback.

describe('upsertStickyComment', () => {
  const TOKEN = 'ghs_fakeTokenForLoopbackTests0123';
  let gh: FakeGithub;
  beforeAll(async () => {
    gh = await startFakeGithub({ token: TOKEN, maxPerPage: 25 });
  });
  afterAll(async () => {
    await gh?.stop();
  });

  const where = { owner: 'ngcc-dev', repo: 'submissions', issueNumber: 42 };
  const marker = COMMENT_MARKER('x86_1');
  const withMarker = () => gh.comments('ngcc-dev', 'submissions', 42).filter((c) => c.body.includes(marker));

  it('creates, then updates the same comment, then leaves it unchanged', async () => {
    // 60 unrelated comments first: with 25 per page ours lands on page 3.
    for (let i = 0; i < 60; i++) gh.addComment('ngcc-dev', 'submissions', 42, `LGTM ${i}`, `reviewer${i % 4}`);
    const other = gh.addComment('ngcc-dev', 'submissions', 42, `${COMMENT_MARKER('arm_1')}\nthe arm_1 comment`);
    const octokit = makeOctokit(TOKEN, gh.url);
    const body1 = renderComment(sampleReport(), {});

    const first = await upsertStickyComment(octokit, { ...where, system: 'x86_1', body: body1 });
    expect(first.action).toBe('created');
    expect(withMarker()).toHaveLength(1);
    expect(withMarker()[0]!.id).toBe(first.id);

    gh.requests.length = 0;
    const body2 = body1.replace('x86_1:', 'x86_1 (again):');
    const second = await upsertStickyComment(octokit, { ...where, system: 'x86_1', body: body2 });
    expect(second).toEqual({ id: first.id, action: 'updated' });
    expect(withMarker()).toHaveLength(1);
    expect(withMarker()[0]!.body).toBe(body2);
    // It read every page (62 comments, 25 a page) by following the Link header, then patched.
    const gets = gh.requests.filter((r) => r.method === 'GET');
    expect(gets).toHaveLength(3);
    expect(gets.map((r) => new URL(r.path, gh.url).searchParams.get('page') ?? '1')).toEqual(['1', '2', '3']);
    const patches = gh.requests.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.path)).toEqual([`/repos/ngcc-dev/submissions/issues/comments/${first.id}`]);
    expect(patches[0]!.body).toEqual({ body: body2 });
    expect(gh.requests.every((r) => r.headers.authorization === `token ${TOKEN}`)).toBe(true);

    gh.requests.length = 0;
    const third = await upsertStickyComment(octokit, { ...where, system: 'x86_1', body: body2 });
    expect(third).toEqual({ id: first.id, action: 'unchanged' });
    expect(gh.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);

    // The other system's comment and the reviewers' comments are untouched.
    const all = gh.comments('ngcc-dev', 'submissions', 42);
    expect(all).toHaveLength(62);
    expect(all.find((c) => c.id === other.id)!.body).toBe(`${COMMENT_MARKER('arm_1')}\nthe arm_1 comment`);
    expect(all.filter((c) => c.body.startsWith('LGTM'))).toHaveLength(60);
  });

  it('updates the newest of several marked comments and leaves the others', async () => {
    const older = gh.addComment('ngcc-dev', 'submissions', 7, `${marker}\nold`, 'ngcc-perf-app[bot]');
    const newer = gh.addComment('ngcc-dev', 'submissions', 7, `notes\n${marker}\nnewer`, 'github-actions[bot]');
    const result = await upsertStickyComment(makeOctokit(TOKEN, gh.url), {
      ...where,
      issueNumber: 7,
      system: 'x86_1',
      body: `${marker}\nfresh`,
    });
    expect(result).toEqual({ id: newer.id, action: 'updated' });
    const list = gh.comments('ngcc-dev', 'submissions', 7);
    expect(list.find((c) => c.id === older.id)!.body).toBe(`${marker}\nold`);
    expect(list.find((c) => c.id === newer.id)!.body).toBe(`${marker}\nfresh`);
  });

  it("never takes over a person's comment that carries the marker", async () => {
    const pasted = gh.addComment('ngcc-dev', 'submissions', 20, `quoting the bot:\n${marker}\nold numbers`, 'mallory');
    const octokit = makeOctokit(TOKEN, gh.url);
    const first = await upsertStickyComment(octokit, { ...where, issueNumber: 20, system: 'x86_1', body: `${marker}\nfresh` });
    expect(first.action).toBe('created');
    expect(first.id).not.toBe(pasted.id);
    // A later, newer pasted copy does not win over the bot's own comment either.
    gh.addComment('ngcc-dev', 'submissions', 20, `${marker}\nme again`, 'mallory');
    const second = await upsertStickyComment(octokit, { ...where, issueNumber: 20, system: 'x86_1', body: `${marker}\nfresher` });
    expect(second).toEqual({ id: first.id, action: 'updated' });
    const list = gh.comments('ngcc-dev', 'submissions', 20);
    expect(list.map((c) => c.body)).toEqual([`quoting the bot:\n${marker}\nold numbers`, `${marker}\nfresher`, `${marker}\nme again`]);
  });

  it('create: false updates an existing comment and creates none', async () => {
    const octokit = makeOctokit(TOKEN, gh.url);
    expect(await upsertStickyComment(octokit, { ...where, issueNumber: 21, system: 'x86_1', body: 'quiet', create: false })).toEqual({
      action: 'not-created',
    });
    expect(gh.comments('ngcc-dev', 'submissions', 21)).toHaveLength(0);
    const stale = gh.addComment('ngcc-dev', 'submissions', 21, `${marker}\n⚠ 3 regressions`);
    expect(await upsertStickyComment(octokit, { ...where, issueNumber: 21, system: 'x86_1', body: 'quiet', create: false })).toEqual({
      id: stale.id,
      action: 'updated',
    });
    expect(gh.comments('ngcc-dev', 'submissions', 21).map((c) => c.body)).toEqual([`${marker}\nquiet`]);
  });

  it('does not post twice when the answer to a POST that took effect is a 500', async () => {
    gh.requests.length = 0;
    gh.failNext('POST', 500, { applied: true });
    const r = await upsertStickyComment(makeOctokit(TOKEN, gh.url), {
      ...where,
      issueNumber: 22,
      system: 'x86_1',
      body: `${marker}\nonce`,
    });
    expect(r.action).toBe('created');
    expect(gh.comments('ngcc-dev', 'submissions', 22).map((c) => c.id)).toEqual([r.id]);
    expect(gh.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('does not retry a failed POST, and names the call', async () => {
    gh.requests.length = 0;
    gh.failNext('POST', 502);
    await expect(
      upsertStickyComment(makeOctokit(TOKEN, gh.url), { ...where, issueNumber: 23, system: 'x86_1', body: 'x' }),
    ).rejects.toThrow(/GitHub API: creating the x86_1 comment on ngcc-dev\/submissions#23 failed \(HTTP 502\)/);
    expect(gh.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    expect(gh.comments('ngcc-dev', 'submissions', 23)).toHaveLength(0);
  });

  it('puts the marker on a body that lacks it, so the next run finds the comment', async () => {
    const octokit = makeOctokit(TOKEN, gh.url);
    const a = await upsertStickyComment(octokit, { ...where, issueNumber: 8, system: 'arm_1', body: 'plain text' });
    expect(a.action).toBe('created');
    expect(gh.comments('ngcc-dev', 'submissions', 8)[0]!.body).toBe(`${COMMENT_MARKER('arm_1')}\nplain text`);
    const b = await upsertStickyComment(octokit, { ...where, issueNumber: 8, system: 'arm_1', body: 'plain text' });
    expect(b).toEqual({ id: a.id, action: 'unchanged' });
  });

  it('fails with a clear error on a wrong token and writes nothing', async () => {
    gh.requests.length = 0;
    const before = gh.comments('ngcc-dev', 'submissions', 42).length;
    const octokit = makeOctokit('ghs_wrong', gh.url);
    const attempt = upsertStickyComment(octokit, { ...where, system: 'x86_1', body: 'x' });
    await expect(attempt).rejects.toThrow(GithubApiError);
    await expect(upsertStickyComment(octokit, { ...where, system: 'x86_1', body: 'x' })).rejects.toThrow(
      /listing the comments of ngcc-dev\/submissions#42 failed \(HTTP 401\): Bad credentials — the token was refused/,
    );
    expect(gh.requests.every((r) => r.method === 'GET')).toBe(true);
    expect(gh.comments('ngcc-dev', 'submissions', 42)).toHaveLength(before);
  });

  it('names an unreachable API', async () => {
    const dead = await startFakeGithub({ token: TOKEN });
    const url = dead.url;
    await dead.stop();
    const octokit = makeOctokit(TOKEN, url, { retries: 0 });
    await expect(upsertStickyComment(octokit, { ...where, system: 'x86_1', body: 'x' })).rejects.toThrow(
      /GitHub API: listing the comments .* failed: no answer from http:\/\/127\.0\.0\.1/,
    );
  });
});
