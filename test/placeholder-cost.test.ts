import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadReportModel } from '../src/report/model.js';
import { placeholderBaseline, placeholderCost, priceCall, sm3Blocks } from '../src/report/placeholderCost.js';
import { renderPages } from '../src/report/pages/render.js';
import type { ReportModel } from '../src/report/views.js';
import { goldenKexHashPages, sections, tableShapeProblems } from './helpers/pages.js';
import { repoRoot, testData, tempDir } from './helpers/tmp.js';

// The existing harness's kex-01 and its ICCS helper baseline, measured on one ARM system
// (test/data/golden-kex-hash/SOURCE.md): the baseline's timings and the profile's wrapper ticks are
// two independent measurements of the same helper cost.
const goldenKexHash = join(testData, 'golden-kex-hash', 'performance', 'data', 'arm_1');

function placeholderTable(page: string): string[][] | undefined {
  const section = sections(page).find((s) => s.heading === 'Symmetric primitives');
  return section?.tables.find((t) => t[0]!.includes('placeholder cycles (baseline)'));
}

const percent = (cell: string) => Number(cell.replace(/%.*$/, '')) / 100;

describe('what the placeholder costs', () => {
  let model: ReportModel;
  let pages: Map<string, string>;

  beforeAll(() => {
    ({ model, pages } = goldenKexHashPages());
  });

  it('counts the SM3 blocks of a message as the padding does', () => {
    expect([0, 55, 56, 119, 120].map(sm3Blocks)).toEqual([1, 1, 2, 2, 3]);
  });

  it('prices a call at a timed length at exactly the baseline’s mean, and a longer pseudoXOF per output block', () => {
    const base = placeholderBaseline(model.iccsBaseline)!;
    const record = (label: string, bytes: number) =>
      JSON.parse(readFileSync(join(goldenKexHash, 'records', 'iccs', `${label}__hash_${bytes}.json`), 'utf8')).mean_cycles as number;
    expect(priceCall(base, 'sm3hash', 32 * 8, 256)!.cycles).toBeCloseTo(record('sm3hash-256', 32), 6);
    expect(priceCall(base, 'pseudoXOF', 1024 * 8, 512)!.cycles).toBeCloseTo(record('pseudoXOF-512', 1024), 6);
    expect(priceCall(base, 'pseudohash', 4096 * 8, 768)!.cycles).toBeCloseTo(record('pseudohash-768', 4096), 6);
    // Between two timed lengths the price lies between their means; 4096 output bits is 16 SM3 blocks, pseudoXOF-2048's 8.
    const mid = priceCall(base, 'sm3hash', 700 * 8, 256)!.cycles;
    expect(mid).toBeGreaterThan(record('sm3hash-256', 512));
    expect(mid).toBeLessThan(record('sm3hash-256', 1024));
    const scaled = priceCall(base, 'pseudoXOF', 128 * 8, 4096)!;
    expect(scaled.scaledFrom).toBe('pseudoXOF-2048');
    expect(scaled.cycles).toBeCloseTo(2 * record('pseudoXOF-2048', 128), 6);
    // pseudohash is defined at 512, 768 and 1024 bits only: nothing prices another length.
    expect(priceCall(base, 'pseudohash', 256, 640)).toBeUndefined();
    const cost = placeholderCost(
      {
        schema: 2,
        candidate: 'x',
        label: 'y',
        operation: 'z',
        status: 'complete',
        total: { operations: 10, ticks: 1 },
        calls: [
          { fn: 'pseudohash', in_bits: 256, out_bits: 640, calls: 10, ticks: 1 },
          { fn: 'drng', in_bits: 0, out_bits: 256, calls: 10, ticks: 1 },
          { fn: 'sm3hash', in_bits: 256, out_bits: 256, calls: 20, ticks: 1 },
        ],
      },
      base,
    );
    expect(cost).toEqual({ calls: 3, cycles: 2 * record('sm3hash-256', 32), unpriced: ['pseudohash 640-bit'], scaledFrom: [] });
  });

  it('agrees with the wrapper-measured share of kex-01 within 5 points, on every instance', () => {
    const page = pages.get('kex-01/perf_arm_1.md')!;
    expect(tableShapeProblems(page)).toEqual([]);
    const rows = placeholderTable(page)!.slice(1);
    expect(rows.map((r) => r[0])).toEqual(['ADKEX-128', 'ADKEX-256', 'ADKEX-512']);
    for (const r of rows) {
      expect(r[1]).toBe('exchange');
      const [estimated, measured] = [percent(r[5]!), percent(r[6]!)];
      expect(estimated, r[0]).toBeGreaterThan(0.5);
      expect(Math.abs(estimated - measured), `${r[0]}: ${r[5]} against ${r[6]}`).toBeLessThan(0.05);
    }
  });

  it('says how to get a baseline where the system has none, and stays off hash and NIST-API pages', () => {
    const golden = join(testData, 'golden', 'ngcc-harness-arm_1');
    const campaign = tempDir();
    cpSync(join(repoRoot, 'test', 'fixtures', 'golden-campaign'), campaign, { recursive: true });
    const noBaseline = renderPages(loadReportModel(join(golden, 'performance', 'data', 'arm_1'), campaign));
    const kem = noBaseline.get('kem-09/perf_arm_1.md')!;
    expect(kem).toContain('### What the placeholder costs');
    expect(kem).toContain('no ICCS helper baseline');
    expect(placeholderTable(kem)).toBeUndefined();
    expect(pages.get('hash-26/perf_arm_1.md')!).not.toContain('What the placeholder costs');
  });
});
