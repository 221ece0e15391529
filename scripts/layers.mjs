#!/usr/bin/env node
// The layering rule of src/ (docs/architecture.md): each file imports only from its own layer or
// the layers below it, no files import each other in a circle, and no folders do either: two
// folders of one layer may tie one way only. `node scripts/layers.mjs`
// prints every violation and exits 1 when there is one; test/layers.test.ts runs the same check.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Lower layers first. A path prefix (folder/ or file) names each layer's members. */
export const LAYERS = [
  ['errors.ts', 'util/'],
  ['text/'],
  ['config/'],
  ['sandbox/'],
  ['env/'],
  ['compile/', 'kat/', 'measure/', 'profile/', 'ct/'],
  ['evidence/'],
  ['catalogs/'],
  ['compare/'],
  ['trend/'],
  ['report/'],
  ['github/', 'campaign/'],
  ['action/'],
  ['prcheck/'],
  ['cli.ts', 'cliMain.ts', 'cliHelp.ts', 'main.ts', 'index.ts', 'stoppable.ts'],
];

export function layerOf(file) {
  const i = LAYERS.findIndex((members) => members.some((m) => (m.endsWith('/') ? file.startsWith(m) : file === m)));
  return i;
}

function sourceFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name), base)
      : e.name.endsWith('.ts')
        ? [relative(base, join(dir, e.name)).split('\\').join('/')]
        : [],
  );
}

/** Relative imports of a file (static, dynamic and type-only alike), as src-relative .ts paths. */
function importsOf(srcDir, file) {
  const text = readFileSync(join(srcDir, file), 'utf8');
  const found = new Set();
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = posix.normalize(posix.join(posix.dirname(file), m[1])).replace(/\.js$/, '.ts');
    found.add(target);
  }
  return [...found];
}

/** Strongly connected components with more than one file (Tarjan). */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** A file's folder under src ('report/pages/' for report/pages/x.ts), or the file itself at the top. */
const folderOf = (file) => (file.includes('/') ? `${posix.dirname(file)}/` : file);

/** The file graph seen from its folders: an edge where a file of one folder imports a file of another. */
function folderGraph(graph) {
  const folders = new Map();
  for (const [f, targets] of graph) {
    const from = folderOf(f);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const t of targets) if (graph.has(t) && folderOf(t) !== from) folders.get(from).add(folderOf(t));
  }
  return new Map([...folders].map(([k, v]) => [k, [...v].sort()]));
}

/** One import per tie of a folder circle, so the line says where to cut it. */
function folderTies(graph, scc) {
  const inCircle = new Set(scc);
  const ties = [];
  for (const [f, targets] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    const t = targets.find((x) => graph.has(x) && inCircle.has(folderOf(x)) && folderOf(x) !== folderOf(f) && inCircle.has(folderOf(f)));
    if (t && !ties.some((s) => s.startsWith(`${folderOf(f)}`) && s.includes(` → ${folderOf(t)}`))) ties.push(`${f} → ${t}`);
  }
  return ties.join('; ');
}

/** Every violation of the rule in `srcDir`, one line each; empty when the tree is clean. */
export function checkLayers(srcDir) {
  const files = sourceFiles(srcDir).sort();
  const graph = new Map(files.map((f) => [f, importsOf(srcDir, f)]));
  const problems = [];
  for (const f of files) {
    const own = layerOf(f);
    if (own < 0) {
      problems.push(`${f}: in no layer (add its folder to LAYERS in scripts/layers.mjs)`);
      continue;
    }
    for (const t of graph.get(f)) {
      if (!graph.has(t)) continue;
      const theirs = layerOf(t);
      if (theirs > own) problems.push(`${f} imports ${t}, a higher layer (${LAYERS[theirs].join(' ')} above ${LAYERS[own].join(' ')})`);
    }
  }
  for (const scc of cycles(graph)) problems.push(`import circle: ${scc.join(' ↔ ')}`);
  for (const scc of cycles(folderGraph(graph))) problems.push(`folder circle: ${scc.join(' ↔ ')} (${folderTies(graph, scc)})`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', process.argv[2] ?? 'src');
  const problems = checkLayers(src);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`${problems.length} layering problem(s) in ${relative(process.cwd(), src) || '.'}`);
    process.exit(1);
  }
  console.log('layers: no upward import, no circle of files or folders');
}
