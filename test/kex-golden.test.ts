import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReportModel } from '../src/report/views.js';
import { stepSum } from '../src/report/pages/kexTables.js';
import { goldenKexHashPages, sections, tableShapeProblems } from './helpers/pages.js';
import { testData } from './helpers/tmp.js';

// The existing harness's key exchange kex-01 (ADKEX), its page and records, in the golden hash and
// KEX dataset (test/data/golden-kex-hash/SOURCE.md).
const golden = join(testData, 'golden-kex-hash');
const data = join(golden, 'performance', 'data', 'arm_1');
const COMPARED = /^([2-7]\.|Symmetric primitives)/;

/** A table without what our pages add: the counter-rate row, the trial-spread column. */
function withoutAdditions(table: string[][]): string[][] {
  const spread = table[0]!.indexOf('trial spread');
  return table.filter((row) => row[0] !== 'counter rate').map((row) => (spread < 0 ? row : row.filter((_, i) => i !== spread)));
}

describe('the golden key exchange kex-01', () => {
  let pages: Map<string, string>;
  let model: ReportModel;

  beforeAll(() => {
    ({ model, pages } = goldenKexHashPages());
  });

  it('renders every table cell of sections 2–7 and the symmetric primitives as the published page', () => {
    const page = pages.get('kex-01/perf_arm_1.md')!;
    expect(tableShapeProblems(page)).toEqual([]);
    const ours = sections(page);
    const theirs = sections(readFileSync(join(golden, 'kex-01', 'perf_arm_1.md'), 'utf8'));
    const compared = theirs.filter((s) => COMPARED.test(s.heading));
    expect(compared.map((s) => s.heading)).toEqual([
      '2. Assessment environment',
      '3. Functional testing (KAT)',
      '4. Performance',
      '5. Resource consumption',
      '6. Transmission and storage overhead',
      'Symmetric primitives',
      '7. Raw evidence index',
    ]);
    for (const section of compared) {
      const mine = ours.find((s) => s.heading === section.heading);
      expect(mine, section.heading).toBeDefined();
      expect(mine!.tables.slice(0, section.tables.length).map(withoutAdditions), section.heading).toEqual(section.tables);
    }
    // The sizes table is the key-exchange layout, with the messages of the exchange the harness ran.
    const sizes = ours.find((s) => s.heading.startsWith('6.'))!.tables[0]!;
    expect(sizes[1]).toEqual(['ADKEX-128', '2', '1600 / 800', '2400', '800 / 1600', '32']);
  });

  it("gives kex-01's rows of the summary's Key exchange section", () => {
    const ours = sections(pages.get('performance/summary_arm_1.md')!).find((s) => s.heading === 'Key exchange')!.tables[0]!;
    // The published summary's section, kex-01's rows: the dataset holds no other key exchange.
    const published = sections(readFileSync(join(golden, 'performance', 'summary_arm_1.md'), 'utf8')).find(
      (s) => s.heading === 'Key exchange',
    )!.tables[0]!;
    const theirs = published.filter((r, i) => i === 0 || r[0] === 'kex-01');
    expect(theirs).toHaveLength(4);
    expect(ours[0]).toEqual(theirs[0]);
    // The algorithm cell links our campaign's page where theirs linked the harness's PDF: the rest is the same.
    const skipAlgorithm = (rows: string[][]) => rows.map((r) => [r[0], ...r.slice(2)]);
    expect(skipAlgorithm(ours.slice(1))).toEqual(skipAlgorithm(theirs.slice(1)));
    expect(ours.slice(1).map((r) => r[1])).toEqual(theirs.slice(1).map((r) => r[1]!.replace(/ PDF$/, ' page')));
  });

  it("adds up the steps: each instance's step means sum to its exchange's within the allowance, shown on the method page", () => {
    const c = model.candidates.find((x) => x.id === 'kex-01')!;
    expect(c.operations).toEqual(['exchange', 'init_a', 'init_b', 'pass1', 'pass2', 'derive_a', 'derive_b']);
    for (const inst of c.instances) {
      const s = stepSum(c, inst)!;
      const records = c.operations.map((op) =>
        JSON.parse(readFileSync(join(data, 'records', 'kex-01', `${inst.label}__${op}.json`), 'utf8')),
      );
      const [exchange, ...steps] = records.map((r) => r.mean_cycles as number);
      expect(s.exchange).toBe(exchange);
      expect(s.sum).toBeCloseTo(
        steps.reduce((a, b) => a + b, 0),
        6,
      );
      // The published records: within half a percent, inside the exchange's own trial range.
      expect(Math.abs(s.sum - s.exchange) / s.exchange).toBeLessThan(0.005);
      expect(s.within).toBe(true);
    }
    const method = sections(pages.get('performance/method_arm_1.md')!).find(
      (x) => x.heading === 'Key exchange: steps against the exchange',
    );
    expect(method!.tables[0]!.map((r) => r.at(-1))).toEqual(['within', 'yes', 'yes', 'yes']);
    expect(method!.tables[0]![1]!.slice(0, 3)).toEqual(['kex-01', 'ADKEX-128', '1.33 M']);
  });
});
