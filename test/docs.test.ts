import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Code, Nodes, Root } from 'mdast';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { claimProblems } from './helpers/claims.js';
import { parsePage, plain } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * The documentation's promises: every command block runs as written (or says why it cannot), every
 * relative link leads somewhere, the README stays short and leads to every page of docs/.
 */

const README = 'README.md';
const DOCS = readdirSync(join(repoRoot, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);
const FILES = [README, ...DOCS];
const README_LIMIT = 6_144;

const source = (file: string): string => readFileSync(join(repoRoot, file), 'utf8');

function nodes(tree: Nodes): Nodes[] {
  return [tree, ...('children' in tree ? (tree.children as Nodes[]).flatMap(nodes) : [])];
}

interface Block {
  file: string;
  line: number;
  lang: string;
  meta: string;
  value: string;
}

function codeBlocks(file: string, tree: Root = parsePage(source(file))): Block[] {
  return nodes(tree)
    .filter((n): n is Code => n.type === 'code')
    .map((n) => ({ file, line: n.position?.start.line ?? 0, lang: n.lang ?? '', meta: n.meta ?? '', value: n.value }));
}

/** `sh not-run: <reason>`: the reason, or undefined for a block that runs. */
function notRunReason(b: Block): string | undefined {
  const m = /^not-run:(.*)$/s.exec(b.meta.trim());
  return m ? m[1]!.trim() : undefined;
}

const SHELL_LANGS = new Set(['bash', 'shell', 'console', 'zsh', 'shell-session', 'shellsession']);
const commandBlocks = (file: string) => codeBlocks(file).filter((b) => b.lang === 'sh');

/** A fresh copy of the working tree (node_modules linked, not copied): commands may write freely. */
function freshCopy(): string {
  const dest = tempDir('ngcc-docs-');
  const skip = new Set(['node_modules', '.git', 'out', 'coverage', '.ngcc-cache'].map((d) => join(repoRoot, d)));
  cpSync(repoRoot, dest, { recursive: true, filter: (src) => !skip.has(src) });
  symlinkSync(join(repoRoot, 'node_modules'), join(dest, 'node_modules'), 'dir');
  return dest;
}

function runBlock(b: Block, cwd: string): { status: number | null; output: string } {
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', b.value], { cwd, encoding: 'utf8', timeout: 240_000 });
  // Both streams' ends: a run's verdict ("exit 1: …") is on stdout, its progress on stderr.
  const tail = (s: string | null) => (s ?? '').slice(-2000);
  return { status: r.status, output: `${tail(r.stdout)}\n--- stderr ---\n${tail(r.stderr)}${r.error ? `\n${r.error.message}` : ''}` };
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const n of nodes(parsePage(markdown))) {
    if (n.type !== 'heading') continue;
    const base = plain(n)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    out.add(k === 0 ? base : `${base}-${k}`);
  }
  return out;
}

/** Relative links of a Markdown file that lead nowhere: a missing file, or a missing heading. */
function brokenLinks(file: string, markdown: string, exists: (path: string) => boolean, read: (path: string) => string): string[] {
  const problems: string[] = [];
  for (const n of nodes(parsePage(markdown))) {
    if (n.type !== 'link' && n.type !== 'definition' && n.type !== 'image') continue;
    const url = n.url;
    if (/^[a-z][a-z0-9+.-]*:/i.test(url)) continue;
    const [path, anchor] = url.split('#', 2) as [string, string | undefined];
    const target = path === '' ? file : join(dirname(file), decodeURIComponent(path));
    const where = `${file}:${n.position?.start.line}: ${url}`;
    if (!exists(target)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor))
      problems.push(`${where}: no heading #${anchor} in ${target}`);
  }
  return problems;
}

const inRepo = (p: string) => existsSync(join(repoRoot, p));

describe('documentation: command blocks', () => {
  it('every shell block is marked sh, and each sh block either runs or gives a reason not to', () => {
    const all = FILES.flatMap((f) => codeBlocks(f));
    expect(all.filter((b) => SHELL_LANGS.has(b.lang)).map((b) => `${b.file}:${b.line}: \`\`\`${b.lang}`)).toEqual([]);
    const sh = all.filter((b) => b.lang === 'sh');
    const badMeta = sh.filter((b) => b.meta.trim() !== '' && notRunReason(b) === undefined).map((b) => `${b.file}:${b.line}: sh ${b.meta}`);
    expect(badMeta, 'an sh block carries nothing but an optional "not-run: <reason>"').toEqual([]);
    const notRun = sh.filter((b) => notRunReason(b) !== undefined);
    console.log(`sh blocks not run by this test:\n${notRun.map((b) => `  ${b.file}:${b.line}: ${notRunReason(b)}`).join('\n')}`);
    for (const b of notRun) expect(notRunReason(b)!.length, `${b.file}:${b.line}: a not-run block says why`).toBeGreaterThan(10);
    // Not vacuous: the README and the command reference have blocks that run.
    for (const f of [README, 'docs/cli.md'])
      expect(commandBlocks(f).filter((b) => notRunReason(b) === undefined).length, f).toBeGreaterThan(0);
  });

  it('the marker is read as meant (a reason-less marker is caught)', () => {
    const [b] = codeBlocks('x.md', parsePage('```sh not-run:\nnpm ci\n```\n'));
    expect(b).toMatchObject({ lang: 'sh', meta: 'not-run:' });
    expect(notRunReason(b!)).toBe('');
    expect(notRunReason(codeBlocks('x.md', parsePage('```sh\nls\n```\n'))[0]!)).toBeUndefined();
  });

  const copies = new Map<string, string>();
  for (const file of FILES) {
    const runnable = commandBlocks(file).filter((b) => notRunReason(b) === undefined);
    if (runnable.length === 0) continue;
    it(`${file}: its sh blocks run as written, in order, in a fresh copy of the repository`, () => {
      const cwd = freshCopy();
      copies.set(file, cwd);
      for (const b of runnable) {
        const { status, output } = runBlock(b, cwd);
        expect(status, `${file}:${b.line} exited ${status}:\n${b.value}\n--- stdout (end) ---\n${output}`).toBe(0);
      }
    });
  }

  it("README's page excerpt has the header and rows of the page its own commands render", () => {
    const cwd = copies.get(README);
    expect(cwd, "the README's blocks ran").toBeDefined();
    const page = readFileSync(join(cwd!, 'out', 'pages', 'kem-90', 'perf_local.md'), 'utf8').split('\n');
    const excerpt = codeBlocks(README).find((b) => b.lang === 'markdown' && b.value.includes('mean cycles'));
    expect(excerpt).toBeDefined();
    const lines = excerpt!.value.split('\n');
    // Header and delimiter verbatim; each row's instance and operation as the page has them.
    expect(page).toContain(lines[0]);
    expect(page).toContain(lines[1]);
    for (const row of lines.slice(2)) {
      const key = row.split('|').slice(0, 3).join('|');
      expect(
        page.some((l) => l.startsWith(`${key}|`)),
        row,
      ).toBe(true);
    }
  });
});

describe("documentation: README's Round-1 projection", () => {
  it('every figure in hours it states is one bench/project-round1.mjs prints', () => {
    const run = spawnSync(process.execPath, [join(repoRoot, 'bench', 'project-round1.mjs')], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const printed = new Set([...run.stdout.matchAll(/(\d+\.\d) h/g)].map((m) => m[1]));
    const readme = source(README);
    const section = readme.slice(readme.indexOf('## A nightly of Round 1'), readme.indexOf('## Documentation'));
    const stated = [...section.matchAll(/(\d+\.\d)(?:–(\d+\.\d))? h/g)].flatMap((m) => m.slice(1).filter((x) => x !== undefined));
    expect(stated.length).toBeGreaterThan(3);
    expect(stated.filter((x) => !printed.has(x))).toEqual([]);
    // Each figure where the bench prints it: the two plans' walls, with and without the extremes, and the ct work.
    const [withoutCt, withCt] = run.stdout.split(/^with ct:/m) as [string, string];
    const walls = (text: string, plan: string) => {
      const m = text.match(new RegExp(`${plan}[^\\n]*wall ≈ (\\d+\\.\\d) h[^\\n]*\\n[^\\n]*wall ≈ (\\d+\\.\\d) h`));
      expect(m, plan).not.toBeNull();
      return { all: m![1]!, trimmed: m![2]! };
    };
    const [fixed, adaptive] = [walls(withoutCt, 'fixed 5 × 1 s'), walls(withoutCt, 'adaptive ±1 %')];
    const [fixedCt, adaptiveCt] = [walls(withCt, 'fixed 5 × 1 s'), walls(withCt, 'adaptive ±1 %')];
    const ct = withCt.match(/under memcheck: (\d+\.\d) h, its runs \d+\.\d h and its \d+ compiles (\d+\.\d) h/)!;
    const text = section.replace(/\s+/g, ' ');
    // One wall for both plans, with ct and without: what the README says as one figure.
    expect(new Set([adaptive.all, fixed.all, adaptiveCt.all, fixedCt.all]).size).toBe(1);
    expect(text).toContain(`**about ${adaptiveCt.all} h**, with the ct check or without, adaptive or fixed plan`);
    const bound = withCt.match(/adaptive ±1 %[^\n]*bound by the chain of (\S+);[^\n]*a key pair each: (\d+\.\d) h\)/)!;
    expect(text).toContain(`the model's ${bound[1]},`);
    expect(text).toContain(`(${bound[2]} h of its ${adaptiveCt.all} h)`);
    expect(text).toContain(`adds ${ct[1]} h of work on the pool's cores (${ct[2]} h of it compiles)`);
    expect(text).toContain(`candidates: ${adaptive.trimmed}–${fixed.trimmed} h (${adaptiveCt.trimmed}–${fixedCt.trimmed} h with ct)`);
  });
});

describe('documentation: size, links, references', () => {
  it(`README.md is under ${README_LIMIT} bytes`, () => {
    expect(statSync(join(repoRoot, README)).size).toBeLessThan(README_LIMIT);
  });

  it('README.md links every page of docs/', () => {
    expect(DOCS.length).toBeGreaterThan(5);
    const linked = new Set(
      nodes(parsePage(source(README)))
        .flatMap((n) => (n.type === 'link' || n.type === 'definition' ? [n.url.split('#')[0]!] : []))
        .map((u) => relative(repoRoot, resolve(repoRoot, u))),
    );
    expect(DOCS.filter((d) => !linked.has(d))).toEqual([]);
  });

  it('every relative link in README.md and docs/ leads to an existing file and heading', () => {
    const problems = FILES.flatMap((f) => brokenLinks(f, source(f), inRepo, source));
    expect(problems).toEqual([]);
  });

  it('the link check bites: a missing file and a missing heading are reported', () => {
    const md =
      '[a](docs/nope.md) [b](docs/cli.md#no-such-heading) [c](docs/cli.md#exit-codes) [d](#top) [e](https://example.org/x)\n\n# Top\n';
    expect(
      brokenLinks(
        'README.md',
        md,
        (p) => p === 'README.md' || inRepo(p),
        (p) => (p === 'README.md' ? md : source(p)),
      ),
    ).toEqual([
      'README.md:1: docs/nope.md: no such file',
      'README.md:1: docs/cli.md#no-such-heading: no heading #no-such-heading in docs/cli.md',
    ]);
  });

  it('nothing cites a design file the repository does not hold', () => {
    for (const f of FILES) {
      expect(source(f), f).not.toMatch(/CONTRACT\s*§|CONTRACT\.md|\.\.\/shared|shared\/design/);
    }
  });

  it('every use of the action in README.md and docs/ passes only inputs action.yml declares, and the required ones', () => {
    const action = parseYaml(source('action.yml')) as { inputs: Record<string, { required?: boolean }> };
    const inputs = new Set(Object.keys(action.inputs));
    const required = Object.entries(action.inputs)
      .filter(([, v]) => v.required)
      .map(([k]) => k);
    const uses = FILES.flatMap((f) => codeBlocks(f))
      .filter((b) => b.lang === 'yaml' && /ngcc-dev\/ngcc-perf@/.test(b.value))
      .flatMap((b) => {
        const wf = parseYaml(b.value) as { jobs?: Record<string, { steps?: Array<{ uses?: string; with?: Record<string, unknown> }> }> };
        return Object.values(wf.jobs ?? {})
          .flatMap((j) => j.steps ?? [])
          .filter((s) => s.uses?.startsWith('ngcc-dev/ngcc-perf@'))
          .map((s) => ({ where: `${b.file}:${b.line}`, keys: Object.keys(s.with ?? {}) }));
      });
    expect(uses.some((u) => u.where.startsWith('docs/action.md'))).toBe(true);
    for (const u of uses) {
      expect(
        u.keys.filter((k) => !inputs.has(k)),
        u.where,
      ).toEqual([]);
      expect(
        required.filter((k) => !u.keys.includes(k)),
        u.where,
      ).toEqual([]);
    }
  });
});

describe('documentation: every claim backed (docs/testing.md#claims)', () => {
  const PAGES = ['docs/security.md', 'docs/method.md', 'docs/statistics.md'];

  it.each(PAGES)('%s: every claim sentence carries the mark of the test that backs it, or is a stated limit', (file) => {
    expect(claimProblems(source(file), file, repoRoot)).toEqual([]);
  });

  it('the check bites: an unmarked claim, a mark whose test is gone and a mark without a name are reported; a limit is not', () => {
    const page = [
      '# A page',
      '',
      'The run refuses a path. It is fast.',
      '',
      'The run refuses a link [test](../test/faults.test.ts "no such test at all").',
      '',
      'Validate reports a FIFO [test](../test/evidence.test.ts).',
      '',
      'Merge refuses a shard that holds a link [test](../test/evidence.test.ts "merge refuses a shard that holds one").',
      '',
      'A second algorithm is never caught [limit](security.md#the-limits-today).',
      '',
      '## The limits today',
      '',
      'Nothing catches lines forged everywhere.',
    ].join('\n');
    expect(claimProblems(page, 'docs/x.md', repoRoot)).toEqual([
      'docs/x.md:3: a claim with no mark: The run refuses a path.',
      'docs/x.md:5: no test "no such test at all" in test/faults.test.ts',
      "docs/x.md:7: a test mark names no test (its link's title): test/evidence.test.ts",
    ]);
  });
});
