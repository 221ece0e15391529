import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Heading, Nodes, PhrasingContent, Root } from 'mdast';
import { parsePage, plain } from './pages.js';

/**
 * The claims check of docs/security.md, method.md and statistics.md (docs/testing.md#claims). A
 * claim sentence is one that says what the tool does to what it is given: it uses a word of
 * CLAIM_WORDS. Each carries a mark, a link in the sentence:
 * - `[test](../test/<file>.test.ts "<the test's name>")`: the test that would fail were it false
 *   (part of its name will do; a hostile-corpus row is "mode: <its name>");
 * - `[bench](benchmarks.md#…)`: a figure measured, not asserted;
 * - `[limit](security.md#the-limits-today)` (or any heading of limits): what is not done, said so;
 * or stands under a heading of limits ("The limits today"), where every sentence is one.
 */

/** Words that make a sentence a claim: what the tool refuses, catches, checks, removes, stops. */
const CLAIM_WORDS =
  /\b(refuse[sd]?|refusal|reject(s|ed)?|catch(es)?|caught|detect(s|ed)?|stops|is stopped|kill(s|ed)?|removes|is removed|are removed|FORGED|CRYPTOFAIL|INVALID|flag(s|ged)|checks|is checked|are checked|verifie[sd]|reports|is reported|never|cannot|checked|fails|exit [123])\b/;

interface Mark {
  kind: 'test' | 'bench' | 'limit';
  /** For a test: the test file, relative to the repository. */
  file?: string;
  /** For a test: its name (the link's title). */
  name?: string;
  line: number;
}

interface Sentence {
  text: string;
  line: number;
  marks: Mark[];
  /** Under a heading of limits. */
  limits: boolean;
}

const TEST_LINK = /^(?:\.\.\/)?test\/[\w./-]+\.test\.ts$/;
/** Stands for a mark in a paragraph's text: a private-use character no page holds. */
const PLACEHOLDER = '\uE000';

function markOf(node: Extract<PhrasingContent, { type: 'link' }>, docFile: string): Mark | undefined {
  const text = plain(node).trim();
  const line = node.position?.start.line ?? 0;
  const path = node.url.split('#')[0]!;
  if (TEST_LINK.test(path)) return { kind: 'test', file: join(dirname(docFile), path), name: node.title ?? undefined, line };
  if (text === 'bench' && /(^|\/)benchmarks\.md$/.test(path)) return { kind: 'bench', line };
  if (text === 'limit') return { kind: 'limit', line };
  return undefined;
}

/** A paragraph's text with each mark replaced by a placeholder (inline code kept as a token: its words are not the prose's). */
function flatten(children: readonly Nodes[], docFile: string, marks: Mark[]): string {
  return children
    .map((n) => {
      if (n.type === 'text') return n.value;
      if (n.type === 'inlineCode') return 'CODE';
      if (n.type === 'link') {
        const mark = markOf(n, docFile);
        if (mark) {
          marks.push(mark);
          return `${PLACEHOLDER}${marks.length - 1}${PLACEHOLDER}`;
        }
      }
      return 'children' in n ? flatten(n.children as Nodes[], docFile, marks) : '';
    })
    .join('');
}

/** Sentences end at '.', '!' or '?' followed by a space and a capital, a code token, a mark or a parenthesis. */
const SENTENCE_END = /(?<=[.!?])\s+(?=[A-Z(“"\uE000]|CODE)/;

/** Every sentence of a page's prose (paragraphs, list items, table cells), with its marks. */
function sentencesOf(markdown: string, docFile: string): Sentence[] {
  const out: Sentence[] = [];
  const headings: string[] = [];
  const walk = (node: Nodes, depthOf: (h: Heading) => void): void => {
    if (node.type === 'heading') {
      depthOf(node);
      return;
    }
    if (node.type === 'code' || node.type === 'html') return;
    if (node.type === 'paragraph' || node.type === 'tableCell') {
      const marks: Mark[] = [];
      const text = flatten(node.children, docFile, marks);
      const limits = headings.some((h) => /limit/i.test(h));
      for (const part of text.split(SENTENCE_END)) {
        const own = [...part.matchAll(new RegExp(`${PLACEHOLDER}(\\d+)${PLACEHOLDER}`, 'g'))].map((m) => marks[Number(m[1])]!);
        out.push({
          text: part.replace(new RegExp(`${PLACEHOLDER}\\d+${PLACEHOLDER}`, 'g'), '').trim(),
          line: node.position?.start.line ?? 0,
          marks: own,
          limits,
        });
      }
      return;
    }
    if ('children' in node) for (const c of node.children as Nodes[]) walk(c, depthOf);
  };
  const tree: Root = parsePage(markdown);
  walk(tree, (h) => {
    headings.length = h.depth - 1;
    headings[h.depth - 1] = plain(h);
  });
  return out;
}

/**
 * The names a test file gives its tests and groups: the first argument of each it/test/describe
 * call (it.skipIf(…)(…), it.each(…)(…) included), as written (a template's `${…}` stays as it is).
 */
function testNames(source: string): string[] {
  const call = /\b(?:it|test|describe)(?:\.\w+(?:\((?:[^()]|\([^()]*\))*\))?)*\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*)\1/g;
  return [...source.matchAll(call)].map((m) => m[2]!.replace(/\\(.)/g, '$1'));
}

/**
 * True when the file has a test of that name. A table-driven file (the hostile corpus: one test per
 * row, named from it) is named by its row: "mode: <name>" for a row `name: '<name>'`.
 */
function declares(testFile: string, name: string): boolean {
  if (!existsSync(testFile)) return false;
  const source = readFileSync(testFile, 'utf8');
  const row = /^mode: (.+)$/.exec(name);
  if (row) return source.includes(`name: '${row[1]}',`);
  return testNames(source).some((n) => n.includes(name));
}

/** What is wrong with a page's claims: an unmarked claim, a mark without its test. */
export function claimProblems(markdown: string, docFile: string, root: string): string[] {
  const problems: string[] = [];
  for (const s of sentencesOf(markdown, docFile)) {
    for (const m of s.marks.filter((x) => x.kind === 'test')) {
      if (!m.name) problems.push(`${docFile}:${m.line}: a test mark names no test (its link's title): ${m.file}`);
      else if (!declares(join(root, m.file!), m.name)) problems.push(`${docFile}:${m.line}: no test "${m.name}" in ${m.file}`);
    }
    if (!s.limits && s.marks.length === 0 && CLAIM_WORDS.test(s.text))
      problems.push(`${docFile}:${s.line}: a claim with no mark: ${s.text.length > 160 ? `${s.text.slice(0, 157)}…` : s.text}`);
  }
  return problems;
}
