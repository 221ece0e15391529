import { cpSync } from 'node:fs';
import { join } from 'node:path';
import type { Nodes, Root, Table } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { loadReportModel } from '../../src/report/model.js';
import { renderPages } from '../../src/report/pages/render.js';
import type { ReportModel } from '../../src/report/views.js';
import { repoRoot, testData, tempDir } from './tmp.js';

export function parsePage(markdown: string): Root {
  return unified().use(remarkParse).use(remarkGfm).parse(markdown);
}

export function plain(node: Nodes): string {
  if ('value' in node && typeof node.value === 'string') return node.value;
  if ('children' in node) return (node.children as Nodes[]).map(plain).join('');
  return '';
}

export interface Section {
  heading: string;
  tables: string[][][];
  tableNodes: Table[];
}

/** The page's sections (level-2 headings) with the cell texts of their tables. */
export function sections(markdown: string): Section[] {
  const out: Section[] = [{ heading: '', tables: [], tableNodes: [] }];
  for (const node of parsePage(markdown).children) {
    if (node.type === 'heading' && node.depth === 2) out.push({ heading: plain(node), tables: [], tableNodes: [] });
    else if (node.type === 'table') {
      out[out.length - 1]!.tables.push(node.children.map((row) => row.children.map((cell) => plain(cell).trim())));
      out[out.length - 1]!.tableNodes.push(node);
    }
  }
  return out;
}

/** Every table of a page parses as a GFM table with the header's width in every row. */
export function tableShapeProblems(markdown: string): string[] {
  const problems: string[] = [];
  const root = parsePage(markdown);
  const lines = markdown.split('\n');
  const tableLines = lines.filter((l) => l.startsWith('|'));
  const tables = root.children.filter((n): n is Table => n.type === 'table');
  for (const t of tables) {
    const width = t.children[0]!.children.length;
    t.children.forEach((row, i) => {
      if (row.children.length !== width) problems.push(`row ${i} has ${row.children.length} cells, header ${width}`);
    });
  }
  // A pipe lost from a cell would split it: every raw table line must have as many unescaped
  // pipes as the header line of its table.
  const rows = tables.reduce((a, t) => a + t.children.length + 1, 0);
  if (rows !== tableLines.length) problems.push(`${tableLines.length} table lines but ${rows} parsed rows (+ delimiters)`);
  return problems;
}

/**
 * The golden hash and KEX dataset (test/data/golden-kex-hash/SOURCE.md) loaded with its campaign
 * fixture, and the pages rendered from it.
 */
export function goldenKexHashPages(): { data: string; model: ReportModel; pages: Map<string, string> } {
  const data = join(testData, 'golden-kex-hash', 'performance', 'data', 'arm_1');
  const campaign = tempDir();
  cpSync(join(repoRoot, 'test', 'fixtures', 'kex', 'golden-campaign'), campaign, { recursive: true });
  const model = loadReportModel(data, campaign);
  return { data, model, pages: renderPages(model) };
}
