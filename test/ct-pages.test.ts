import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { COMPILER_MADE_NOTE, CT_KIND_MEANING } from '../src/ct/findingKinds.js';
import { MISSING } from '../src/text/format.js';
import { type SyntheticCtOperation, writeSyntheticCt, writeSyntheticSystem } from './helpers/dataset.js';
import { sections, tableShapeProblems } from './helpers/pages.js';
import { tempDir } from './helpers/tmp.js';

const INSTANCES = [
  { id: 'kem-1', label: 'fast' },
  { id: 'kem-1', label: 'small' },
  { id: 'kem-2', label: 'good' },
];
const OPS = INSTANCES.flatMap((i) => ['keygen', 'enc', 'dec'].map((op) => ({ ...i, op, trials: [10_000, 10_010, 9_990, 10_005, 9_995] })));

const FAST: Record<string, SyntheticCtOperation> = {
  keygen: {
    findings: [
      {
        kind: 'index',
        function: 'rej_uniform',
        file: 'poly.c',
        line: 40,
        count: 12,
        suppressed: true,
        reason: 'rejection sampling on the public seed',
      },
    ],
  },
  enc: { status: 'skipped', calls: 0, reason: 'predicted 95 s under valgrind, budget 60 s' },
  dec: {
    coverage: {
      functions: 12,
      functions_run: 9,
      lines: 400,
      lines_run: 301,
      never_run: ['poly.c:poly_frommsg', 'poly.c:poly_tobytes', 'rng.c:reseed'],
      untaken: ['poly.c:rej_uniform:41-43', 'poly.c:poly_tomsg:90'],
      untaken_lines: 4,
      paths: { asked: 64, calls: 64, needed: 9, beyond: ['poly.c:rej_uniform:44'], beyond_lines: 1 },
    },
    findings: [
      { kind: 'branch', function: 'poly_tomsg', file: 'poly.c', line: 88, count: 256 },
      { kind: 'branch', function: 'poly_tomsg', file: 'poly.c', line: 88, count: 256 },
      { kind: 'division', function: 'poly_tomsg', file: 'poly.c', line: 87, count: 1 },
      { kind: 'branch', function: 'base_mul', file: 'gf2x.c', line: 50, count: 1, compiler_made: 'loop-bound' },
    ],
  },
};
const DIVISIONS = [
  { function: 'poly_tomsg', instruction: 'div', address: '0x1107', file: 'poly.c', line: 87, tainted: true },
  { function: 'poly_compress', instruction: 'div', address: '0x1200', file: 'poly.c', line: 120, tainted: false },
];

function render(withCt: boolean): { pages: Map<string, string>; systemDir: string } {
  const root = tempDir();
  const systemDir = writeSyntheticSystem(root, 'x86_1', INSTANCES, OPS);
  if (withCt) {
    writeSyntheticCt(systemDir, 'kem-1', 'fast', FAST, { divisions: DIVISIONS });
    writeSyntheticCt(
      systemDir,
      'kem-1',
      'small',
      { keygen: { coverage: { failure: 'gcov failed (exit code 1)' } }, enc: {}, dec: {} },
      { divisions: [] },
    );
  }
  return { pages: renderPages(loadReportModel(systemDir)), systemDir };
}

const section = (md: string, title: string) => sections(md).find((s) => s.heading === title);

describe('the constant-time check on the pages', () => {
  const { pages } = render(true);
  const page = pages.get('kem-1/perf_x86_1.md')!;

  it("the candidate page's section: per instance and operation the status and the counts by kind (distinct sites)", () => {
    const s = section(page, 'Constant-time check (machine)')!;
    expect(s.tables[0]).toEqual([
      ['instance', 'operation', 'status', 'branch', 'index', 'division', 'syscall', 'suppressed', 'calls', 'coverage'],
      ['fast', 'keygen', 'clean', '0', '0', '0', '0', '1', '3', MISSING],
      ['fast', 'enc', 'skipped: predicted 95 s under valgrind, budget 60 s', '0', '0', '0', '0', '0', '0', MISSING],
      [
        'fast',
        'dec',
        '⚠ flagged',
        '2',
        '0',
        '1',
        '0',
        '0',
        '3',
        '75% of lines, 9 of 12 functions; paths of 64 calls: 1 line only in later calls',
      ],
      ['small', 'keygen', 'clean', '0', '0', '0', '0', '0', '3', 'not counted: gcov failed (exit code 1)'],
      ['small', 'enc', 'clean', '0', '0', '0', '0', '0', '3', MISSING],
      ['small', 'dec', 'clean', '0', '0', '0', '0', '0', '3', MISSING],
    ]);
    // The functions the checked calls never entered, and the lines they never ran in those they did, by row.
    expect(section(page, 'Constant-time check (machine)')!.tables[1]).toEqual([
      ['instance', 'operation', 'never entered', 'not taken in functions that ran', 'taken only by later calls, not checked'],
      [
        'fast',
        'dec',
        'poly.c:poly_frommsg, poly.c:poly_tobytes, rng.c:reseed',
        'poly.c:rej_uniform:41-43, poly.c:poly_tomsg:90 (4 lines)',
        'poly.c:rej_uniform:44 (1 line)',
      ],
    ]);
  });

  it('the top sites with file:line and function, unsuppressed first, suppressed ones marked with their reason', () => {
    expect(section(page, 'Constant-time check (machine)')!.tables[2]).toEqual([
      ['instance', 'kind', 'function', 'site', 'operations', 'reports', 'note'],
      ['fast', 'branch', 'poly_tomsg', 'poly.c:88', 'dec, dec', '512', ''],
      ['fast', 'division', 'poly_tomsg', 'poly.c:87', 'dec', '1', ''],
      ['fast', 'branch', 'base_mul', 'gf2x.c:50', 'dec', '1', COMPILER_MADE_NOTE['loop-bound']],
      ['fast', 'index', 'rej_uniform', 'poly.c:40', 'keygen', '12', 'suppressed: rejection sampling on the public seed'],
    ]);
    // Below the sites, what each kind they show means, in the kinds' own order.
    const ct = page.slice(page.indexOf('## Constant-time check (machine)'));
    const meanings = ct.split('\n').filter((l) => /^- `(branch|index|division|syscall)`: /.test(l));
    expect(meanings).toEqual(
      ['branch', 'index', 'division'].map((k) => `- \`${k}\`: ${CT_KIND_MEANING[k as keyof typeof CT_KIND_MEANING]}.`),
    );
  });

  it('a branch the compiler made is a finding like any other: counted, flagged, never called benign, and Clangover named', () => {
    // dec's two branch sites: poly_tomsg's and base_mul's, which the compiler made from a fixed-count loop.
    const dec = section(page, 'Constant-time check (machine)')!.tables[0]!.find((r) => r[0] === 'fast' && r[1] === 'dec')!;
    expect(dec.slice(2, 4)).toEqual(['⚠ flagged', '2']);
    for (const note of [...Object.values(COMPILER_MADE_NOTE), CT_KIND_MEANING.branch])
      expect(note).not.toMatch(/benign|suppression candidate/);
    expect(COMPILER_MADE_NOTE['no-branch']).toMatch(/a real leak \(Clangover, CVE-2024-37880/);
    expect(COMPILER_MADE_NOTE['loop-bound']).toMatch(/a finding until the machine code shows the operand that decides it public$/);
  });

  it("the division list of evidence without the division check: tainted ones (by memcheck's findings in their function) as findings, the others as reachable with operands not shown tainted", () => {
    expect(section(page, 'Constant-time check (machine)')!.tables[3]).toEqual([
      ['instance', 'function', 'instruction', 'site', 'operands', 'build'],
      ['fast', 'poly_tomsg', 'div', 'poly.c:87', '⚠ operands tainted (memcheck flagged its function): a division finding', MISSING],
      ['fast', 'poly_compress', 'div', 'poly.c:120', 'division reachable, operands not shown tainted', MISSING],
    ]);
  });

  it('the evidence index names the ct files', () => {
    const index = section(page, '7. Raw evidence index')!.tables[0]!;
    expect(index).toContainEqual(['fast', 'constant-time check', 'ct/kem-1/fast.json']);
    expect(index).toContainEqual(['small', 'constant-time check', 'ct/kem-1/small.json']);
  });

  it('a candidate without ct evidence has no such section', () => {
    expect(section(pages.get('kem-2/perf_x86_1.md')!, 'Constant-time check (machine)')).toBeUndefined();
  });

  it("the summary's notes column: ct: N flagged, N the flagged operations, and what it means", () => {
    const summary = pages.get('performance/summary_x86_1.md')!;
    const t = section(summary, 'Key encapsulation')!.tables[0]!;
    expect(t[0]!.at(-1)).toBe('notes');
    expect(t.slice(1).map((r) => [r[1], r.at(-1)])).toEqual([
      ['fast', 'ct: 1 flagged, 1 not checked'],
      ['small', 'ct: 0 flagged'],
      ['good', '–'],
    ]);
    expect(summary).toMatch(/“ct: N flagged”: N operations of the instance/);
  });

  it('the method page says what the method is and that clean never means constant-time', () => {
    const method = pages.get('performance/method_x86_1.md')!;
    expect(section(method, 'Constant-time check (machine)')).toBeDefined();
    expect(method).toMatch(/memcheck sees the one execution path/);
    expect(method).toMatch(/never that the code is constant-time/);
    expect(method).toMatch(/stock valgrind does not flag them/);
  });

  it('every table of every page parses as GFM with rows as wide as the header', () => {
    for (const [path, md] of pages) expect(tableShapeProblems(md), path).toEqual([]);
  });

  it('without ct evidence: no section, no notes column, no method section', () => {
    const plain = render(false).pages;
    for (const md of plain.values()) expect(md).not.toMatch(/Constant-time|ct: [0-9]|ct\//);
    expect(section(plain.get('performance/summary_x86_1.md')!, 'Key encapsulation')!.tables[0]![0]).toEqual([
      'candidate',
      'instance',
      'KAT',
      'keygen',
      'enc',
      'dec',
    ]);
  });

  it('an unreadable ct file is said where its numbers would be and named in the evidence index', () => {
    const { systemDir } = render(true);
    writeFileSync(join(systemDir, 'ct', 'kem-1', 'small.json'), '{"schema": 1, "oper');
    const model = loadReportModel(systemDir);
    expect(model.unreadable.map((u) => u.path)).toEqual(['ct/kem-1/small.json']);
    const md = renderPages(model).get('kem-1/perf_x86_1.md')!;
    const rows = section(md, 'Constant-time check (machine)')!.tables[0]!;
    expect(rows.filter((r) => r[0] === 'small').map((r) => r[2])).toEqual(['not recorded (unreadable constant-time check file)']);
    expect(section(md, '7. Raw evidence index')!.tables[0]!.find((r) => r[2] === 'ct/kem-1/small.json')?.[1]).toMatch(
      /^constant-time check: ⚠ unreadable/,
    );
  });
});
