import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Nodes, Table } from 'mdast';
import { describe, expect, it } from 'vitest';
import { loadCandidate } from '../src/config/campaign.js';
import { HASH_MESSAGE_BYTES, hashOperation } from '../src/measure/hashOperations.js';
import { formatCycles } from '../src/text/format.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { type SyntheticInstance, type SyntheticOp, writeSyntheticSystem } from './helpers/dataset.js';
import { mermaidBlocks, mermaidProblems } from './helpers/mermaid.js';
import { parsePage, plain } from './helpers/pages.js';
import { tempDir } from './helpers/tmp.js';

/**
 * The summary's rankings (docs/pages.md#rankings) from a campaign whose instances claim levels:
 * the page is read back with remark-gfm, and every chart with Mermaid's own parser.
 */

interface Inst {
  id: string;
  label: string;
  level?: number;
  bits?: number;
  kat?: string;
  /** Per operation, the trials' cycles per call. */
  ops: Record<string, number[]>;
}

const steady = (x: number) => [x, x * 1.01, x * 0.99];

const KEMS: Inst[] = [
  { id: 'kem-1', label: 'a', level: 1, ops: { keygen: steady(100e3), enc: steady(120e3), dec: steady(130e3) } },
  { id: 'kem-1', label: 'b', level: 1, bits: 128, ops: { keygen: steady(90e3), enc: steady(150e3), dec: steady(140e3) } },
  { id: 'kem-1', label: 'c', level: 3, ops: { keygen: steady(200e3), enc: steady(210e3), dec: steady(220e3) } },
  // Noisy dec: its trials spread 3×, so its place would be luck.
  { id: 'kem-1', label: 'n', level: 1, ops: { keygen: steady(10e3), enc: steady(10e3), dec: [100e3, 300e3, 110e3] } },
  { id: 'kem-1', label: 'f', level: 1, kat: 'FAIL', ops: {} },
  { id: 'kem-2', label: 'd', level: 1, ops: { keygen: steady(80e3), enc: steady(100e3), dec: steady(120e3) } },
  { id: 'kem-2', label: 'e', ops: { keygen: steady(50e3), enc: steady(50e3), dec: steady(50e3) } },
  { id: 'kem-2', label: 'g', bits: 192, ops: { keygen: steady(60e3), enc: steady(60e3), dec: steady(60e3) } },
  // Its claim is only in build.json: candidate.yml no longer lists the instance, its evidence remains.
  { id: 'kem-2', label: 'h', ops: { keygen: steady(300e3), enc: steady(300e3), dec: steady(300e3) } },
  { id: 'kem-2', label: 'z', level: 1, ops: { keygen: steady(1e3), enc: steady(1e3), dec: steady(1e3) } },
  // Two of level 3 alike to the cycle: they share a rank.
  { id: 'kem-2', label: 't', level: 3, ops: { keygen: steady(200e3), enc: steady(210e3), dec: steady(220e3) } },
];
const SIG: Inst = { id: 'sig-1', label: 's', level: 2, ops: { keygen: steady(1e6), sign: steady(2e6), verify: steady(5e5) } };
const HASH: Inst = {
  id: 'hash-1',
  label: 'x',
  bits: 128,
  ops: Object.fromEntries(HASH_MESSAGE_BYTES.map((n) => [hashOperation(n), steady(500 + 12 * n)])),
};
const KEX: Inst = { id: 'kex-1', label: 'k', level: 1, ops: { exchange: steady(400e3) } };
const ALL = [...KEMS, SIG, HASH, KEX];
const TYPES: Record<string, string> = { 'kem-1': 'kem', 'kem-2': 'kem', 'sig-1': 'sig', 'hash-1': 'hash', 'kex-1': 'kex' };

function writeCampaign(root: string): void {
  for (const id of Object.keys(TYPES)) {
    const lines = ALL.filter((i) => i.id === id && i.label !== 'h').flatMap((i) => [
      `  - label: ${i.label}`,
      '    dir: src',
      ...(i.level !== undefined ? [`    nist_level: ${i.level}`] : []),
      ...(i.bits !== undefined ? [`    security_bits: ${i.bits}`] : []),
    ]);
    mkdirSync(join(root, id, 'src'), { recursive: true });
    writeFileSync(
      join(root, id, 'candidate.yml'),
      [`id: ${id}`, `type: ${TYPES[id]}`, `algorithm: ${id}`, 'instances:', ...lines, ''].join('\n'),
    );
  }
}

function writeEvidence(dataDir: string): string {
  const instances: SyntheticInstance[] = ALL.map((i) => ({ id: i.id, label: i.label, ...(i.kat ? { kat: i.kat } : {}) }));
  const ops: SyntheticOp[] = ALL.flatMap((i) => Object.entries(i.ops).map(([op, trials]) => ({ id: i.id, label: i.label, op, trials })));
  const dir = writeSyntheticSystem(dataDir, 'x', instances, ops);
  const buildFile = join(dir, 'build.json');
  const build = JSON.parse(readFileSync(buildFile, 'utf8'));
  build.instances['kem-2/h'].security = { nist_level: 5 };
  // An old claim build.json kept, which candidate.yml no longer makes: candidate.yml's stands.
  build.instances['kem-2/e'].security = { nist_level: 4 };
  build.instances['kem-2/z'].forged = { operation: 'dec', detail: 'FORGED: trial 1 calls 0-9 gave other outputs in the replay' };
  writeFileSync(buildFile, JSON.stringify(build));
  return dir;
}

/** The nodes of the section under the level-2 heading `title`, up to the next level-2 heading. */
function section(markdown: string, title: string): Nodes[] {
  const nodes = parsePage(markdown).children;
  const start = nodes.findIndex((n) => n.type === 'heading' && n.depth === 2 && plain(n) === title);
  expect(start, title).toBeGreaterThanOrEqual(0);
  const end = nodes.findIndex((n, i) => i > start && n.type === 'heading' && n.depth === 2);
  return nodes.slice(start + 1, end < 0 ? undefined : end);
}

const cells = (t: Table): string[][] => t.children.map((row) => row.children.map((c) => plain(c).trim()));

/** Per level-3 category: each level-4 heading's table. */
function tablesByHeading(nodes: Nodes[]): Map<string, Map<string, string[][]>> {
  const out = new Map<string, Map<string, string[][]>>();
  let category = '';
  let group = '';
  for (const n of nodes) {
    if (n.type === 'heading' && n.depth === 3) {
      category = plain(n);
      out.set(category, new Map());
    } else if (n.type === 'heading' && n.depth === 4) group = plain(n);
    else if (n.type === 'table') out.get(category)!.set(group, cells(n));
  }
  return out;
}

describe('the summary ranks instances at each claimed security level', () => {
  const campaign = tempDir();
  writeCampaign(campaign);
  const system = writeEvidence(tempDir());
  const pages = renderPages(loadReportModel(system, campaign));
  const summary = pages.get('performance/summary_x.md')!;
  const ranked = tablesByHeading(section(summary, 'Fastest at each security level'));

  it('orders each level by the median trial of a key exchange, fastest first, with each operation’s place', () => {
    const kem = ranked.get('Ranking: key encapsulation')!;
    expect([...kem.keys()]).toEqual([
      'NIST level 1',
      'NIST level 3',
      'NIST level 5',
      '192-bit security (no NIST level)',
      'No declared level',
      'Not ranked',
    ]);
    const l1 = kem.get('NIST level 1')!;
    expect(l1[0]).toEqual(['rank', 'candidate', 'instance', 'claimed', 'keygen', 'enc', 'dec', 'keygen + enc + dec']);
    // d: 300 k, a: 350 k, b: 380 k; b's keygen is second, ahead of a's, though its exchange is last.
    expect(l1.slice(1).map((r) => [r[0], r[2], r[3]])).toEqual([
      ['1', 'd', 'L1'],
      ['2', 'a', 'L1'],
      ['3', 'b', 'L1 · 128 bits'],
    ]);
    expect(l1[3]!.slice(4)).toEqual([
      `${formatCycles(90e3)} (#2)`,
      `${formatCycles(150e3)} (#3)`,
      `${formatCycles(140e3)} (#3)`,
      formatCycles(380e3),
    ]);
    expect(l1[1]![7]).toBe(formatCycles(300e3));
    // Equal figures share a rank and a place; the tie is broken by name in the order only.
    expect(
      kem
        .get('NIST level 3')!
        .slice(1)
        .map((r) => [r[0], r[2], r[4]]),
    ).toEqual([
      ['1', 'c', `${formatCycles(200e3)} (#1)`],
      ['1', 't', `${formatCycles(200e3)} (#1)`],
    ]);
    // The claim only build.json holds still places the instance.
    expect(
      kem
        .get('NIST level 5')!
        .slice(1)
        .map((r) => r[2]),
    ).toEqual(['h']);
    expect(
      kem
        .get('No declared level')!
        .slice(1)
        .map((r) => [r[2], r[3]]),
    ).toEqual([['e', 'none']]);
  });

  it('ranks FORGED, failing and noisy instances apart, saying why', () => {
    const apart = ranked.get('Ranking: key encapsulation')!.get('Not ranked')!;
    expect(apart[0]).toEqual(['candidate', 'instance', 'claimed', 'why']);
    const why = Object.fromEntries(apart.slice(1).map((r) => [r[1], r[3]]));
    expect(why).toEqual({
      n: 'dec noisy (trials spread 3.00×)',
      f: 'KAT FAIL',
      z: 'FORGED: its outputs were not its own work',
    });
  });

  it('ranks signatures by sign + verify, key exchanges by their exchange and hashes by cycles per byte', () => {
    expect(ranked.get('Ranking: digital signatures')!.get('NIST level 2')![0]!.slice(4)).toEqual([
      'keygen',
      'sign',
      'verify',
      'sign + verify',
    ]);
    expect(ranked.get('Ranking: digital signatures')!.get('NIST level 2')![1]![7]).toBe(formatCycles(2.5e6));
    expect(ranked.get('Ranking: key exchange')!.get('NIST level 1')![1]!.slice(2)).toEqual(['k', 'L1', `${formatCycles(400e3)} (#1)`]);
    const hash = ranked.get('Ranking: hash functions')!.get('128-bit security (no NIST level)')!;
    expect(hash[0]!.slice(4)).toEqual(['32 B (cycles/byte)', '64 KiB (cycles/byte)']);
    // (500 + 12 × 65536) / 65536 cycles per byte.
    expect(hash[1]![5]).toBe('12.0 (#1)');
  });

  it('charts each category and operation across the levels, and every chart passes Mermaid’s parser', async () => {
    const charts = mermaidBlocks(summary);
    const kemKeygen = charts.find((c) => c.includes('title "Key encapsulation: keygen, median cycles"'))!;
    expect(kemKeygen).toContain(
      'x-axis ["kem-2/d L1", "kem-1/a L1", "kem-1/b L1", "kem-1/c L3", "kem-2/t L3", "kem-2/h L5", "kem-2/g 192 b", "kem-2/e (none)"]',
    );
    expect(kemKeygen).toContain('bar [80000, 100000, 90000, 200000, 200000, 300000, 60000, 50000]');
    expect(charts.filter((c) => c.startsWith('xychart-beta'))).toHaveLength(3 + 3 + 1 + 1);
    for (const [name, page] of pages) expect(await mermaidProblems(page), name).toEqual([]);
  });

  it('a hash candidate page charts cycles per byte against message length; one instance gets bars, not a one-point line', async () => {
    const hash = mermaidBlocks(pages.get('hash-1/perf_x.md')!);
    expect(hash).toHaveLength(1);
    expect(hash[0]).toContain('x-axis "message" ["32 B", "128 B", "512 B", "1024 B", "4096 B", "8192 B", "16384 B", "65536 B"]');
    expect(hash[0]).toMatch(/line \[27\.6, 15\.9, /);
    const sig = mermaidBlocks(pages.get('sig-1/perf_x.md')!);
    expect(sig).toEqual([expect.stringContaining('bar [1000000, 2000000, 500000]')]);
  });

  it('the parser check can fail: a chart Mermaid refuses is named', async () => {
    const broken = '```mermaid\nxychart-beta\n  x-axis ["a", "b"\n  bar [1, 2]\n```\n';
    expect(await mermaidProblems(broken)).toEqual([expect.stringMatching(/^Parse error/)]);
  });
});

describe('a claimed level in candidate.yml', () => {
  const root = tempDir();
  let n = 0;
  const load = (extra: string) => {
    const id = `kem-${++n}`;
    const dir = join(root, id);
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'candidate.yml'), `id: ${id}\ntype: kem\nalgorithm: X\ninstances:\n  - label: a\n    dir: src\n${extra}`);
    return () => loadCandidate(dir, `${id}/candidate.yml`);
  };

  it('is read as a NIST level and security bits', () => {
    expect(load('    nist_level: 3\n    security_bits: 192\n')().instances[0]).toMatchObject({ nist_level: 3, security_bits: 192 });
  });

  it('is refused outside 1–5 or as a typo, naming the line and field', () => {
    expect(load('    nist_level: 6\n')).toThrow(/kem-\d+\/candidate\.yml: line 7: instances\[0\]\.nist_level: .*5/);
    expect(load('    security_bits: 1280\n')).toThrow(/line 7: instances\[0\]\.security_bits: .*1024/);
    expect(load('    nist_levl: 1\n')).toThrow(/line 7: instances\[0\]\.nist_levl: unknown key 'nist_levl'; did you mean 'nist_level'\?$/);
  });
});
