import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import type { ReportModel } from '../src/report/views.js';
import { sections, tableShapeProblems } from './helpers/pages.js';
import { repoRoot, testData } from './helpers/tmp.js';

// The ngcc-harness's hash candidate hash-26 and its ICCS helper baseline (records, KAT logs,
// build.json entries) with the pages it rendered from them: test/data/golden-kex-hash/SOURCE.md.
const golden = join(testData, 'golden-kex-hash');
const data = join(golden, 'performance', 'data', 'arm_1');
const campaign = join(repoRoot, 'test', 'fixtures', 'golden-hash-campaign');

/** Without the column our pages add (the trial spread; checked on its own below). */
const withoutSpread = (table: string[][]): string[][] => {
  const spread = table[0]!.indexOf('trial spread');
  return spread < 0 ? table : table.map((row) => row.filter((_, i) => i !== spread));
};

const summaryTable = (text: string, heading: string) => sections(text).find((s) => s.heading === heading)?.tables[0];

describe('rendering the ngcc-harness hash and ICCS-baseline golden data', () => {
  let model: ReportModel;
  let pages: Map<string, string>;

  beforeAll(() => {
    model = loadReportModel(data, campaign);
    pages = renderPages(model);
  });

  it('hash-26: every table cell of sections 2–7 equals the published page; no §6 and no symmetric primitives', () => {
    const ours = sections(pages.get('hash-26/perf_arm_1.md')!);
    const theirs = sections(readFileSync(join(golden, 'hash-26', 'perf_arm_1.md'), 'utf8'));
    const compared = theirs.filter((s) => /^[2-7]\./.test(s.heading));
    expect(compared.map((s) => s.heading)).toEqual([
      '2. Assessment environment',
      '3. Functional testing (KAT)',
      '4. Performance',
      '5. Resource consumption',
      '7. Raw evidence index',
    ]);
    expect(ours.map((s) => s.heading).filter((h) => /^[2-7]\.|Symmetric/.test(h))).toEqual(compared.map((s) => s.heading));
    for (const section of compared) {
      const mine = ours.find((s) => s.heading === section.heading)!;
      // The environment table gains the counter rate after the clock; everything else is cell for cell.
      const tables = mine.tables.slice(0, section.tables.length).map(withoutSpread);
      const expected = section.tables;
      if (section.heading.startsWith('2.')) expect(tables[0]!.filter((r) => r[0] !== 'counter rate')).toEqual(expected[0]);
      else expect(tables, section.heading).toEqual(expected);
    }
  });

  it('hash-26: cycles/byte and MB/s follow from the records (not copied from the page)', () => {
    const inst = model.candidates.find((c) => c.id === 'hash-26')!.instances.find((i) => i.label === 'CHIME-512')!;
    const r = inst.records.hash_4096!;
    expect(r.operation).toBe('hash');
    expect(((r.mean_cycles as number) / 4096).toFixed(1)).toBe('34.2');
    const timing = sections(pages.get('hash-26/perf_arm_1.md')!).find((s) => s.heading === '4. Performance')!.tables[0]!;
    expect(timing[0]!.at(-1)).toBe('trial spread');
    expect(timing.find((row) => row[0] === 'CHIME-512' && row[1] === '4096 B')!.slice(2, 6)).toEqual(['140.2 k', '34.2', '52 µs', '78.7']);
  });

  it('the ICCS baseline is no candidate page, and the summary rows of ICCS hash helpers and Hash functions are the published ones', () => {
    expect([...pages.keys()].some((p) => p.startsWith('iccs/'))).toBe(false);
    expect(model.iccsBaseline?.instances).toHaveLength(12);
    const ours = pages.get('performance/summary_arm_1.md')!;
    const theirs = readFileSync(join(golden, 'performance', 'summary_arm_1.md'), 'utf8');
    // Order as the harness: the helpers, then the hash functions.
    const headings = sections(ours).map((s) => s.heading);
    expect(headings.indexOf('ICCS hash helpers')).toBeGreaterThan(-1);
    expect(headings.indexOf('Hash functions')).toBe(headings.indexOf('ICCS hash helpers') + 1);
    expect(summaryTable(ours, 'ICCS hash helpers')).toEqual(summaryTable(theirs, 'ICCS hash helpers'));
    const mine = summaryTable(ours, 'Hash functions')!;
    const published = summaryTable(theirs, 'Hash functions')!;
    expect(mine[0]).toEqual(published[0]);
    const rows = published.filter((row) => row[0] === 'hash-26');
    expect(rows).toHaveLength(2);
    expect(mine.slice(1)).toHaveLength(2);
    for (const [i, row] of rows.entries()) {
      const got = mine[i + 1]!;
      // The algorithm cell links the campaign's page for the algorithm where the harness linked its PDF.
      expect(got[1]!.startsWith('The Hash Function CHIME')).toBe(true);
      expect([got[0], ...got.slice(2)]).toEqual([row[0], ...row.slice(2)]);
    }
  });

  it('a hash row without the pseudoXOF of its width says so', () => {
    const bare = { ...model, iccsBaseline: undefined };
    const text = renderPages(bare).get('performance/summary_arm_1.md')!;
    expect(summaryTable(text, 'ICCS hash helpers')).toBeUndefined();
    const row = summaryTable(text, 'Hash functions')!.find((r) => r[2] === 'CHIME-512')!;
    expect(row.slice(3, 6)).toEqual(['1690 (ratio –)', '32.1 k (ratio –)', '1.96 M (ratio –)']);
  });

  it('every page parses back as GFM with consistent tables', () => {
    for (const [path, text] of pages) expect(tableShapeProblems(text), path).toEqual([]);
  });
});
