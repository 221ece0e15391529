import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * Which vitest project a test file may be in (vitest.config.ts), judged from what its code does,
 * never from its name. Every file is read as top-level statements; each statement's code (comments
 * and the contents of strings blanked) uses names, which resolve through the imports to statements
 * of src/, test/helpers/, bench/ and scripts/, followed as far as they go. Using a file also runs
 * what its top level calls when it loads.
 *
 * - pure: the file starts no child process: it reaches no package that starts one
 *   (PROCESS_PACKAGES), itself or through anything it calls. Compilers, git, sandboxed drivers,
 *   python3 and biome all start there.
 * - untimed: the file times nothing: no driver timing job (TIMED_JOBS) in its own code or in
 *   anything it calls, and no campaign run with a timed phase (timedPhases(): the phases whose steps
 *   launch a timing job); a run that names no phases runs the default ones, which measure.
 *
 * The CLI's entry point and the campaign runner do both or neither depending on their arguments, so
 * their calls are judged one by one: `main(['compare', …])` (or a test helper that only wraps main)
 * as the CLI dispatches that command, `--help` as nothing; a campaign run (the runner, or an
 * argument list holding the CLI's `run`, in this process or a child) by the phases it names.
 */

/**
 * Packages whose use starts a child process: esbuild runs its own binary as a service, @actions/exec
 * is a process runner, and @actions/cache archives with tar through it. (Of the other dependencies,
 * only happy-dom's synchronous fetch and the development tools themselves start one.)
 */
const PROCESS_PACKAGES = new Set(['node:child_process', 'child_process', 'esbuild', '@actions/exec', '@actions/cache']);
/** The driver's jobs that time the library (native/bin/driver.c): a timing trial, a profile round. */
const TIMED_JOBS = ['time', 'prof'];
/** A timing job's arguments: the job's name as an element of a list, then the driver's TYPE (a literal one, or any expression). */
const TIMED_JOB = new RegExp(`[[(,]\\s*'(${TIMED_JOBS.join('|')})'\\s*,\\s*('(kem|sig|kex|hash(:\\d+)?)'|[^'\\s])`);
const repoRoot = join(import.meta.dirname, '..', '..');
/** The CLI's entry point, which does what its command does. */
const CLI = { file: 'src/cliMain.ts', name: 'main' };
/** The campaign runner, which times when one of its phases does. */
const RUNNER = { file: 'src/campaign/runCampaign.ts', name: 'runCampaign' };
/** Where the runner's phase steps are (each names its `phase`). */
const STEPS_DIR = 'src/campaign';
/** The pseudo-name of what a file runs when it loads. */
const TOP = '<top>';

// ---- Reading code ----

interface Statement {
  /** Original text, comments blanked. */
  raw: string;
  /** The same text with the contents of strings blanked too (offsets kept). */
  code: string;
}

/**
 * `src` with comments and the text of template literals blanked, and with the contents of strings
 * and regular expressions too unless `keepStrings` (a template's text is data, never an argument list).
 */
function blank(src: string, keepStrings = false): string {
  const out = src.split('');
  const clear = (a: number, b: number, kept = keepStrings) => {
    if (kept) return;
    for (let k = a; k < b; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  const templates: number[] = [];
  let depth = 0;
  let prev = '';
  let i = 0;
  /** Template text from `j` to its closing backtick or its next `${`; returns where code resumes. */
  const templateText = (j: number): number => {
    const start = j;
    while (j < src.length && src[j] !== '`' && !(src[j] === '$' && src[j + 1] === '{')) j += src[j] === '\\' ? 2 : 1;
    clear(start, j, false);
    prev = 'x';
    if (src[j] !== '$') return j + 1;
    templates.push(depth);
    depth += 1;
    return j + 2;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '/' && (src[i + 1] === '/' || src[i + 1] === '*')) {
      const end = src[i + 1] === '/' ? src.indexOf('\n', i) : src.indexOf('*/', i + 2) + 2;
      const stop = end < (src[i + 1] === '/' ? 0 : 2) ? src.length : end;
      clear(i, stop, false);
      i = stop;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      clear(i + 1, j);
      prev = 'x';
      i = j + 1;
    } else if (c === '`') i = templateText(i + 1);
    else if (c === '/' && /^$|[(,=:[!&|?{};]/.test(prev)) {
      let j = i + 1;
      for (let inClass = false; j < src.length && src[j] !== '\n' && (inClass || src[j] !== '/'); j += src[j] === '\\' ? 2 : 1)
        if (src[j] === '[' || src[j] === ']') inClass = src[j] === '[';
      clear(i + 1, j);
      prev = 'x';
      i = j + 1;
    } else {
      if (c === '{') depth += 1;
      else if (c === '}') {
        depth -= 1;
        if (templates.at(-1) === depth) {
          templates.pop();
          i = templateText(i + 1);
          continue;
        }
      }
      if (c !== ' ' && c !== '\n' && c !== '\t' && c !== '\r') prev = c;
      i += 1;
    }
  }
  return out.join('');
}

/** The index of the bracket closing the one at `open`. */
function closing(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if ('([{'.includes(code[i]!)) depth += 1;
    else if (')]}'.includes(code[i]!) && --depth === 0) return i;
  }
  return code.length - 1;
}

/** Top-level statements: each starts at a line's first column outside any bracket (the code is Biome-formatted). */
function statements(source: string): Statement[] {
  const raw = blank(source, true);
  const code = blank(source);
  const starts: number[] = [];
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if ((i === 0 || code[i - 1] === '\n') && depth === 0 && !/[\s)\]}]/.test(c)) starts.push(i);
    if ('([{'.includes(c)) depth += 1;
    else if (')]}'.includes(c)) depth -= 1;
  }
  return starts.map((s, k) => ({ raw: raw.slice(s, starts[k + 1]), code: code.slice(s, starts[k + 1]) }));
}

/** Where a function's or method's body starts: `) {`, or `): Type {`. */
const METHOD_BODY = /\)\s*(:\s*[^{};=]+?)?\s*\{/y;

/** `code` with the bodies of the functions and methods it defines blanked: what runs when the code itself runs. */
function outsideFunctions(code: string): string {
  const out = code.split('');
  const clear = (a: number, b: number) => {
    for (let k = a; k <= b; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  for (let i = 0; i < code.length; i++) {
    METHOD_BODY.lastIndex = i;
    const method = code[i] === ')' ? METHOD_BODY.exec(code) : null;
    if (method) {
      const end = closing(code, i + method[0].length - 1);
      clear(i + 1, end);
      i = end;
    } else if (code.startsWith('=>', i)) {
      let j = i + 2;
      while (/\s/.test(code[j] ?? '')) j += 1;
      let end = j;
      if (code[j] === '{') end = closing(code, j);
      else {
        for (let depth = 0; end < code.length; end++) {
          const c = code[end]!;
          if ('([{'.includes(c)) depth += 1;
          else if (')]}'.includes(c) && depth-- === 0) break;
          else if ((c === ',' || c === ';') && depth === 0) break;
        }
        end -= 1;
      }
      clear(j, end);
      i = end;
    }
  }
  return out.join('');
}

/** The elements of the list (array or arguments) whose bracket is at `open`: a string literal's value, else undefined. */
function elements(st: Statement, open: number): Array<string | undefined> {
  const end = closing(st.code, open);
  const items: Array<string | undefined> = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i <= end; i++) {
    const c = st.code[i]!;
    if ('([{'.includes(c)) depth += 1;
    else if (')]}'.includes(c)) depth -= 1;
    if ((c === ',' && depth === 1) || i === end) {
      const item = st.raw.slice(start, i).trim();
      if (item !== '') items.push(/^'([^'\\]*)'$/.exec(item)?.[1]);
      start = i + 1;
    }
  }
  return items;
}

// ---- Modules ----

interface Binding {
  /** A resolved file (absolute), or a package's name. */
  from: string;
  /** The imported name; '*' for a namespace import. */
  name: string;
}

interface Module {
  file: string;
  statements: Statement[];
  imports: Map<string, Binding>;
  reexports: Map<string, Binding>;
  stars: string[];
  /** Files imported for their side effects alone (`import './x.js'`). */
  sideEffects: string[];
  /** Top-level declarations by name; TOP holds what runs when the module loads. */
  symbols: Map<string, Statement[]>;
}

function resolveSpecifier(from: string, spec: string): string {
  if (!spec.startsWith('.') && !isAbsolute(spec)) return spec;
  const base = resolve(dirname(from), spec);
  const found = [base.replace(/\.js$/, '.ts'), `${base}.ts`, base].find((f) => existsSync(f));
  // A file it cannot read would count as doing nothing: a renamed module must fail the check, not pass it.
  if (found === undefined) throw new Error(`${from} imports '${spec}', which is no file`);
  return found;
}

/** Names of an import or export list: `a, b as c, type T` → [['a', 'a'], ['b', 'c']] (types left out). */
function listNames(list: string): Array<[string, string]> {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '' && !part.startsWith('type '))
    .map((part) => {
      const [name, alias] = part.split(/\s+as\s+/) as [string, string | undefined];
      return [name.trim(), (alias ?? name).trim()];
    });
}

/** Names a declaration binds (`function f`, `class C`, `const x`, `const { a, b: c }`), none for a type; undefined for other statements. */
function declared(code: string): string[] | undefined {
  const head = code.replace(/^export\s+(default\s+)?/, '').replace(/^(declare|abstract)\s+/, '');
  if (/^(interface|type|namespace|module)\s/.test(head)) return [];
  const named = /^(?:async\s+)?(?:function\*?|class|enum|const|let|var)\s+([\w$]+)/.exec(head);
  if (named) return [named[1]!];
  const pattern = /^(?:const|let|var)\s+([{[][^=]*)=/.exec(head);
  if (pattern) return [...pattern[1]!.matchAll(/([\w$]+)\s*(?=[,}\]]|$)/g)].map((m) => m[1]!);
  return /^export\s+default\s/.test(code) ? ['default'] : undefined;
}

/** Whether a variable's value is computed when the module loads (it is not a function). */
function computedOnLoad(code: string): boolean {
  const init = /^(?:export\s+)?(?:const|let|var)\s+[^=]+=\s*([\s\S]*)$/.exec(code)?.[1]?.trim();
  return init !== undefined && !/^(async\b|function\b|\([^)]*\)\s*(:[^=]*)?=>|[\w$]+\s*=>)/.test(init);
}

const modules = new Map<string, Module>();

function moduleOf(file: string): Module {
  const known = modules.get(file);
  if (known) return known;
  const source = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const m: Module = {
    file,
    statements: statements(source),
    imports: new Map(),
    reexports: new Map(),
    stars: [],
    sideEffects: [],
    symbols: new Map(),
  };
  modules.set(file, m);
  const add = (name: string, s: Statement) => m.symbols.set(name, [...(m.symbols.get(name) ?? []), s]);
  const localExports: Array<[string, string]> = [];
  for (const s of m.statements) {
    const text = s.raw.replace(/\s+/g, ' ').trim();
    const spec = /\sfrom ['"]([^'"]+)['"]/.exec(text)?.[1] ?? /^import ['"]([^'"]+)['"]/.exec(text)?.[1];
    const list = /\{([^}]*)\}/.exec(text)?.[1] ?? '';
    if (/^import\s/.test(s.code)) {
      if (text.startsWith('import type ') || spec === undefined) continue;
      const from = resolveSpecifier(file, spec);
      const clause = /^import (.*?) ?from /.exec(text)?.[1];
      if (clause === undefined) m.sideEffects.push(from);
      const ns = /\* as ([\w$]+)/.exec(clause ?? '')?.[1];
      if (ns) m.imports.set(ns, { from, name: '*' });
      const def = /^([\w$]+) ?(,|$)/.exec(clause ?? '')?.[1];
      if (def) m.imports.set(def, { from, name: 'default' });
      if (clause?.includes('{')) for (const [name, local] of listNames(list)) m.imports.set(local, { from, name });
    } else if (/^export (type )?\{/.test(text) || /^export \* from/.test(text)) {
      if (text.startsWith('export type ')) continue;
      if (spec === undefined) localExports.push(...listNames(list));
      else if (text.startsWith('export *')) m.stars.push(resolveSpecifier(file, spec));
      else for (const [name, alias] of listNames(list)) m.reexports.set(alias, { from: resolveSpecifier(file, spec), name });
    } else {
      const names = declared(s.code);
      if (names === undefined) add(TOP, s);
      for (const name of names ?? []) add(name, s);
      if (names && names.length > 0 && computedOnLoad(s.code)) add(TOP, { raw: s.raw, code: outsideFunctions(s.code) });
    }
  }
  // `export { name }` of an imported binding re-exports it.
  for (const [name, alias] of localExports) {
    const imported = m.imports.get(name);
    if (imported && !m.symbols.has(name)) m.reexports.set(alias, imported);
  }
  return m;
}

// ---- The graph ----

/** A module's top-level name (`file#name`), or a package's export (`package#name`). */
type Node = string;
const node = (from: string, name: string): Node => `${from}#${name}`;
const split = (n: Node): [string, string] => [n.slice(0, n.lastIndexOf('#')), n.slice(n.lastIndexOf('#') + 1)];

/**
 * What code uses: the module's own names and its imports (`ns.x` for a namespace import).
 * `calledOnly`: only the names it calls or constructs (code run on load runs its calls; a function
 * it merely names, in a table, runs when someone calls it through that table).
 */
function references(m: Module, code: string, calledOnly = false): Node[] {
  const out = new Set<Node>();
  for (const match of code.matchAll(/[A-Za-z_$][\w$]*/g)) {
    const [name, at] = [match[0], match.index];
    if (code[at - 1] === '.' && code[at - 2] !== '.') continue;
    const after = code.slice(at + name.length, at + name.length + 200);
    if (calledOnly && !/^\s*(\.\s*[\w$]+\s*)?\(/.test(after) && !/\bnew\s+$/.test(code.slice(Math.max(0, at - 8), at))) continue;
    const imported = m.imports.get(name);
    if (imported?.name === '*') out.add(node(imported.from, /^\s*\.\s*([\w$]+)/.exec(after)?.[1] ?? TOP));
    else if (imported) out.add(node(imported.from, imported.name));
    else if (m.symbols.has(name)) out.add(node(m.file, name));
  }
  return [...out];
}

const edgesFound = new Map<Node, Node[]>();

/** The nodes a node leads to: what its code uses, and what its file runs on load. */
function edges(n: Node): Node[] {
  const known = edgesFound.get(n);
  if (known) return known;
  const found = edgesOf(n);
  edgesFound.set(n, found);
  return found;
}

function edgesOf(n: Node): Node[] {
  const [from, name] = split(n);
  if (!isAbsolute(from)) return [];
  const m = moduleOf(from);
  const out: Node[] = name === TOP ? m.sideEffects.map((f) => node(f, TOP)) : [node(from, TOP)];
  const exported = m.reexports.get(name);
  if (exported) out.push(node(exported.from, exported.name));
  else if (!m.symbols.has(name)) out.push(...m.stars.map((star) => node(star, name)));
  for (const s of m.symbols.get(name) ?? []) out.push(...references(m, s.code, name === TOP));
  return out.filter((e) => e !== n);
}

/** The shortest path from `start` to a node `isEnd` accepts, shown, or undefined. */
function pathTo(start: readonly Node[], isEnd: (n: Node) => boolean): string[] | undefined {
  const parent = new Map<Node, Node | null>(start.map((s) => [s, null]));
  const queue = [...start];
  for (let next = 0; next < queue.length; next++) {
    const n = queue[next]!;
    if (isEnd(n)) {
      const path: Node[] = [];
      for (let at: Node | null = n; at !== null; at = parent.get(at) ?? null) path.unshift(at);
      return path.map(show);
    }
    for (const e of edges(n).filter((e) => !parent.has(e))) {
      parent.set(e, n);
      queue.push(e);
    }
  }
  return undefined;
}

function show(n: Node): string {
  const [from, name] = split(n);
  if (!isAbsolute(from)) return `${from} ${name}`;
  return name === TOP ? `${relative(repoRoot, from)} (on load)` : `${relative(repoRoot, from)} ${name}`;
}

const startsProcess = (n: Node): boolean => PROCESS_PACKAGES.has(split(n)[0]);

function launchesTimedJob(n: Node): boolean {
  const [from, name] = split(n);
  return isAbsolute(from) && (moduleOf(from).symbols.get(name) ?? []).some((s) => TIMED_JOB.test(s.raw));
}

let timedPhasesFound: string[] | undefined;

/** The phases of the campaign runner whose steps (`phase: 'name'` in src/campaign/) launch a timing job. */
export function timedPhases(): string[] {
  if (timedPhasesFound) return timedPhasesFound;
  const phases = new Set<string>();
  const dir = join(repoRoot, STEPS_DIR);
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.ts')))
    for (const [name, body] of moduleOf(join(dir, f)).symbols)
      for (const s of body)
        for (const phase of s.raw.matchAll(/\bphase: '(\w+)'/g))
          if (name !== TOP && pathTo([node(join(dir, f), name)], launchesTimedJob)) phases.add(phase[1]!);
  timedPhasesFound = [...phases].sort();
  return timedPhasesFound;
}

// ---- A test file ----

/** What a test file does: how it starts a process, and how it times, when it does. */
export interface FileFacts {
  startsProcess?: string[];
  times?: string[];
}

/** A call whose first argument is a list: `(['compare', …])`. */
const LIST_ARGUMENT = /\(\s*\[/y;

const escaped = (name: string) => name.replace(/\$/g, '\\$');

/** Whether an import is a test helper that calls the CLI's entry point and, besides, starts nothing. */
function wrapsCli(b: Binding, cliNode: Node): boolean {
  if (!b.from.startsWith(join(repoRoot, 'test', 'helpers'))) return false;
  const next = edges(node(b.from, b.name));
  return (
    next.includes(cliNode) &&
    !pathTo(
      next.filter((n) => n !== cliNode),
      startsProcess,
    )
  );
}

/** Facts of one test file (absolute, or relative to the repository). */
export function factsOf(testFile: string): FileFacts {
  const file = resolve(repoRoot, testFile);
  const m = moduleOf(file);
  const body = m.statements.filter((s) => !/^import\s/.test(s.code));
  const cliNode = node(join(repoRoot, CLI.file), CLI.name);
  const runnerNode = node(join(repoRoot, RUNNER.file), RUNNER.name);
  const timed = timedPhases();
  // The file's names for the CLI (main, or a test helper whose only other work starts nothing) and for the runner.
  const cli = new Set<string>();
  const runner = new Set<string>();
  for (const [local, b] of m.imports) {
    const target = node(b.from, b.name);
    if (target === runnerNode) runner.add(local);
    if (target === cliNode || wrapsCli(b, cliNode)) cli.add(local);
  }
  const reaches: Node[] = [];
  const timings: string[][] = [];
  // Their calls are judged one by one; a name used otherwise (passed around, say) is followed as any other.
  const all = body.map((st) => st.code).join('\n');
  const judged = new Set([...cli, ...runner].filter((n) => !new RegExp(`(?<![\\w$.])${escaped(n)}(?![\\w$]|\\s*\\()`).test(all)));
  const isTimedRun = (phases: string[] | undefined) => phases === undefined || phases.some((p) => timed.includes(p));
  for (const s of body) {
    // Every list holding the CLI's `run` (to this process's CLI or a child's) is a campaign run.
    for (const open of [...s.code.matchAll(/\[/g)].map((x) => x.index)) {
      const items = elements(s, open);
      if (items.find((x) => x !== undefined) !== 'run') continue;
      const phases = items.includes('--phases') ? items[items.indexOf('--phases') + 1]?.split(',') : undefined;
      if (!items.includes('--help') && !items.includes('-h') && isTimedRun(phases))
        timings.push([`${relative(repoRoot, file)}: a campaign run with a timed phase`]);
    }
    if (TIMED_JOB.test(s.raw)) timings.push([`${relative(repoRoot, file)}: a driver timing job`]);
    for (const use of s.code.matchAll(/(?<![\w$.])[A-Za-z_$][\w$]*(?=\s*\()/g)) {
      const name = use[0];
      const open = s.code.indexOf('(', use.index + name.length);
      if (cli.has(name)) {
        LIST_ARGUMENT.lastIndex = open;
        const bracket = LIST_ARGUMENT.test(s.code) ? s.code.indexOf('[', open) : -1;
        const command = bracket < 0 ? undefined : elements(s, bracket).find((x) => x !== undefined);
        const help = bracket >= 0 && elements(s, bracket).some((x) => x === '--help' || x === '-h' || x === 'help');
        if (command === undefined) judged.delete(name);
        else if (help) continue;
        else if (command === 'run') reaches.push(runnerNode);
        else reaches.push(...(cliCommands().get(command) ?? [cliNode]));
      } else if (runner.has(name)) {
        reaches.push(runnerNode);
        if (isTimedRun(runnerPhases(m, s, open))) timings.push([`${show(runnerNode)} with a timed phase`]);
      }
    }
  }
  // All of the file's code runs (its describe and it blocks): what it uses from other files.
  const judgedNodes = new Set([...judged].map((local) => node(m.imports.get(local)!.from, m.imports.get(local)!.name)));
  const used = body.flatMap((s) => references(m, s.code)).filter((n) => !n.startsWith(`${file}#`) && !judgedNodes.has(n));
  const facts: FileFacts = {};
  const process = pathTo([...used, ...reaches], startsProcess);
  if (process) facts.startsProcess = process;
  const times = timings[0] ?? pathTo([...used, ...reaches.filter((n) => n !== runnerNode)], launchesTimedJob);
  if (times) facts.times = times;
  return facts;
}

/** The CLI's commands and what each runs: `case 'x':` … `return …;` in its entry point. */
function cliCommands(): Map<string, Node[]> {
  const m = moduleOf(join(repoRoot, CLI.file));
  const commands = new Map<string, Node[]>();
  for (const s of m.symbols.get(CLI.name) ?? [])
    for (const match of s.raw.matchAll(/((?:case\s+'[^']+':\s*)+)return\s+([^;]*);/g)) {
      const runs = references(m, match[2]!);
      for (const label of match[1]!.matchAll(/case\s+'([^']+)'/g)) commands.set(label[1]!, runs);
    }
  return commands;
}

/** The phases a runner call (its `(` at `open`) names: `phases: new Set([...])`, or a `const` of such a set in the file; undefined when not named. */
function runnerPhases(m: Module, s: Statement, open: number): string[] | undefined {
  const option = /\bphases\b\s*(:\s*(new\s+Set|[\w$]+))?/.exec(s.code.slice(open, closing(s.code, open) + 1));
  if (!option) return undefined;
  let where: { st: Statement; at: number } | undefined;
  if (option[2] !== undefined && /^new\s+Set$/.test(option[2])) where = { st: s, at: open + option.index + option[0].length };
  else {
    const decl = new RegExp(`\\bconst\\s+${escaped(option[2] ?? 'phases')}\\s*=\\s*new\\s+Set\\b`);
    for (const st of m.statements) {
      const found = decl.exec(st.code);
      if (found) where ??= { st, at: found.index + found[0].length };
    }
  }
  if (!where) return undefined;
  const bracket = where.st.code.indexOf('[', where.at);
  if (bracket < 0 || !/^(<[^>]*>)?\s*\(\s*$/.test(where.st.code.slice(where.at, bracket))) return undefined;
  const items = elements(where.st, bracket);
  return items.every((p) => p !== undefined) ? (items as string[]) : undefined;
}

/** Why each file of the pure and untimed projects does not belong there; empty when all do. */
export function misplaced(projects: { pure: readonly string[]; untimed: readonly string[] }): string[] {
  const problems: string[] = [];
  const name = (f: string) => relative(repoRoot, resolve(repoRoot, f));
  for (const f of projects.pure) {
    const facts = factsOf(f);
    if (facts.startsProcess) problems.push(`${name(f)} is listed as pure but starts a process: ${facts.startsProcess.join(' → ')}`);
    else if (facts.times) problems.push(`${name(f)} is listed as pure but times: ${facts.times.join(' → ')}`);
  }
  for (const f of projects.untimed) {
    const facts = factsOf(f);
    if (facts.times) problems.push(`${name(f)} is listed as untimed but times: ${facts.times.join(' → ')}`);
  }
  return problems;
}
