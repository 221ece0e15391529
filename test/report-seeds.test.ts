import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { sections } from './helpers/pages.js';
import { testData, tempDir } from './helpers/tmp.js';

// The x86_1 seed pages are plain-text dumps of published pages (tab-separated cells, or rows split
// over lines ending in ' |'). From their numbers we build evidence, render it, and compare cells.
const seedsDir = join(testData, 'reference', 'seeds');
const SECTIONS = ['4. Performance', '5. Resource consumption', '6. Transmission and storage overhead', 'Symmetric primitives'] as const;

function seedTables(text: string): Record<string, string[][]> {
  const lines = text.split('\n');
  const out: Record<string, string[][]> = {};
  let current: string | undefined;
  let pending: string[] = [];
  for (const raw of lines) {
    const line = raw.trimEnd();
    const title = SECTIONS.find((s) => line === s) ?? (/^(\d\. |7\.)/.test(line) ? 'other' : undefined);
    if (title) {
      current = title === 'other' ? undefined : title;
      if (current) out[current] = [];
      pending = [];
      continue;
    }
    if (!current) continue;
    if (line.includes('\t')) out[current]!.push(line.split('\t').map((c) => c.replace(/`/g, '').trim()));
    else if (/ \|$/.test(line) && !line.startsWith('|')) {
      pending.push(
        ...line
          .slice(0, -2)
          .split(' | ')
          .map((c) => c.trim()),
      );
      const width =
        current === '4. Performance' ? 7 : current === '5. Resource consumption' ? 5 : current === 'Symmetric primitives' ? 5 : 0;
      if (width > 0 ? pending.length >= width : pending.length >= 2 && !/^[A-Za-z]/.test(pending[1]!)) {
        out[current]!.push(pending);
        pending = [];
      }
    }
  }
  // Drop header rows (tab format keeps them).
  for (const k of Object.keys(out)) out[k] = out[k]!.filter((r) => r[0] !== 'instance');
  return out;
}

const UNITS: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9, s: 1, ms: 1e-3, µs: 1e-6, ns: 1e-9, KiB: 1024 };
const num = (cell: string): number => {
  const [v, unit] = cell.split(' ');
  return Number(v) * (unit ? UNITS[unit]! : 1);
};

function buildDataset(dir: string, id: string, t: Record<string, string[][]>): void {
  const records = new Map<string, Record<string, unknown>>();
  const instances: string[] = [];
  for (const [label, op, cycles, time, ops, median, n] of t['4. Performance']!) {
    if (!instances.includes(label!)) instances.push(label!);
    const m = /^(\d+) \((\d+) × (\d+)\)$/.exec(n!)!;
    const [trials, iters] = [Number(m[2]), Number(m[3])];
    records.set(`${label}__${op}`, {
      schema: 2,
      status: 'complete',
      candidate: id,
      label,
      operation: op,
      kat: 'PASS',
      plan: { iterations_per_trial: iters, trials },
      trials: Array.from({ length: trials }, () => ({ measurements: iters, seconds: num(time!) * iters, cycles: num(cycles!) * iters })),
      measurements: trials * iters,
      mean_cycles: num(cycles!),
      mean_seconds: num(time!),
      operations_per_second: num(ops!),
      median_trial_seconds: num(median!),
    });
  }
  const elf: Record<string, number> = {};
  for (const [label, op, image, base, peak] of t['5. Resource consumption']!) {
    elf[label!] = Number(image);
    Object.assign(records.get(`${label}__${op}`)!, { baseline_rss_bytes: num(base!), peak_rss_bytes: num(peak!) });
  }
  for (const [label, pk, sk, ct, ss] of t['6. Transmission and storage overhead']!)
    for (const op of ['keygen', 'enc', 'dec'])
      Object.assign(records.get(`${label}__${op}`)!, {
        sizes: { pk_bytes: Number(pk), sk_bytes: Number(sk), ct_bytes: Number(ct), ss_bytes: Number(ss) },
      });
  for (const [key, r] of records) {
    mkdirSync(join(dir, 'records', id), { recursive: true });
    writeFileSync(join(dir, 'records', id, `${key}.json`), JSON.stringify(r));
  }
  for (const [label, op, hash, drng, calls] of t['Symmetric primitives']!) {
    const ops = 1000;
    // '–' is the published page's mark for an operation that calls none of the helpers.
    const list = (calls === '–' ? [] : calls!.split(', ')).map((c) => {
      const [fn, per] = c.split(' ');
      return { fn: fn!, in_bits: 0, out_bits: 0, calls: Number(per) * ops, ticks: 0 };
    });
    mkdirSync(join(dir, 'profile', id), { recursive: true });
    const profile = {
      schema: 2,
      candidate: id,
      label,
      operation: op,
      status: 'complete',
      total: { operations: ops, ticks: 1e6 },
      calls: list,
      hash_share: num(hash!.replace('%', '')) / 100,
      share: { drng: num(drng!.replace('%', '')) / 100 },
    };
    writeFileSync(join(dir, 'profile', id, `${label}__${op}.json`), JSON.stringify(profile));
  }
  const build = Object.fromEntries(
    instances.map((l) => [
      `${id}/${l}`,
      { candidate: id, label: l, instance: l, variant: 'reference', flags: 'guide', kat: 'PASS', elf_load_bytes: elf[l] },
    ]),
  );
  writeFileSync(join(dir, 'build.json'), JSON.stringify({ instances: build }));
  writeFileSync(join(dir, 'campaign.json'), JSON.stringify({ system_id: 'x86_1', environment_at_end: { architecture: 'x86_64' } }));
}

describe('cells rendered from the numbers of the published x86_1 pages', () => {
  const seeds = readdirSync(seedsDir).filter((f) => f.endsWith('.txt'));

  it.each(seeds)('%s', (file) => {
    const text = readFileSync(join(seedsDir, file), 'utf8');
    const id = file.split('_')[0]!;
    const expected = seedTables(text);
    for (const name of SECTIONS) expect(expected[name]!.length, `${file} ${name}`).toBeGreaterThanOrEqual(3);
    const dir = join(tempDir(), 'x86_1');
    buildDataset(dir, id, expected);
    const page = renderPages(loadReportModel(dir)).get(`${id}/perf_x86_1.md`)!;
    const ours = sections(page);
    for (const name of SECTIONS) {
      let rows = ours.find((s) => s.heading === name)!.tables[0]!.slice(1);
      if (name === '4. Performance') {
        // Our column after the published ones: the trials built above are equal, so they spread
        // 1.00× and their mean is exact.
        expect(
          rows.map((r) => r.at(-1)),
          file,
        ).toEqual(rows.map(() => '1.00× · ±0.0%'));
        rows = rows.map((r) => r.slice(0, -1));
      }
      expect(rows, `${file} ${name}`).toEqual(expected[name]);
    }
  });
});
