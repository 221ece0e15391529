import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { globSync } from 'tinyglobby';
import { InputError } from '../errors.js';
import type { InstanceSpec } from './schemas.js';

/** Driver and test files that are not library code (the independent harness's rule). */
const DRIVER_FILE =
  /^(KAT_|PQCgenKAT|main|test|bench|speed|cpucycles|osfreq|run_bench|selftest|self_test|example|demo|kat\.c|kat_)|(_test|test_|_bench|bench_|_main|_kat)\./;

export interface ResolvedSources {
  dir: string;
  sources: string[];
  includes: string[];
  /**
   * `own_generator` of an `api: nist` instance, resolved: the sources candidate.yml says are its own
   * generator. Absent, the build judges by symbols (compile/ownGenerator.ts).
   */
  ownGenerator?: string[];
}

/**
 * Where a submission's build may read: the repository that holds its campaign and the harness
 * itself (its ICCS helper library, the example's PQClean sources). candidate.yml names the paths,
 * and the sandbox shows the compiler what it names: without this bound, `include: [/]` would show
 * it the whole runner.
 */
export function readableRoots(campaignRoot: string, toolRoot: string): string[] {
  let dir = realpathSync(campaignRoot);
  for (let up = dir; ; up = dirname(up)) {
    if (existsSync(join(up, '.git'))) {
      dir = up;
      break;
    }
    if (dirname(up) === up) break;
  }
  // The harness's native/ and its dependencies (the example builds PQClean from node_modules) may
  // be links of their own, e.g. a copy of the harness sharing a checkout's.
  const parts = ['native', 'node_modules'].map((name) => join(toolRoot, name)).filter((p) => existsSync(p));
  return [dir, realpathSync(toolRoot), ...parts.map((p) => realpathSync(p))];
}

/** Whether `path` (links resolved) is one of `roots` or lies below one. */
export const underAny = (path: string, roots: readonly string[]): boolean =>
  roots.some((root) => path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`));

/** The path itself when, links resolved, it lies under one of `roots`; else an error naming the field. */
function confined(path: string, roots: readonly string[] | undefined, display: string, field: string, written: string): string {
  if (!roots) return path;
  const real = realpathSync(path);
  if (underAny(real, roots)) return path;
  const shown = real === path ? `'${written}'` : `'${written}' (${real})`;
  throw new InputError(display, field, `${shown} is outside the campaign's repository and the harness; a build may read only those`);
}

function expand(base: string, patterns: string[], field: string, display: string, roots?: readonly string[]): string[] {
  const files: string[] = [];
  for (const [i, pattern] of patterns.entries()) {
    const matches = globSync(pattern, { cwd: base, absolute: true, expandDirectories: false, onlyFiles: true });
    if (matches.length === 0) throw new InputError(display, field, `'${pattern}' matches no file (relative to ${base})`);
    for (const m of matches.sort()) files.push(confined(m, roots, display, `${field}[${i}]`, relative(base, m) || m));
  }
  return files;
}

/** The sources a build compiles: C, and assembly with or without the preprocessor. */
const COMPILED = /\.(c|s|S)$/;

/**
 * The C files and include folders of one instance; `display` names candidate.yml in errors. With
 * `roots`, every path must lie under one of them (see readableRoots). Which of them an `api: nist`
 * build leaves out as the submission's own generator is the build's to judge (compile/ownGenerator.ts).
 */
export function resolveSources(
  candidateFolder: string,
  inst: InstanceSpec,
  index: number,
  display: string,
  roots?: readonly string[],
): ResolvedSources {
  const dir = resolve(candidateFolder, inst.dir);
  const field = `instances[${index}]`;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(display, `${field}.dir`, `folder '${inst.dir}' not found`);
  confined(dir, roots, display, `${field}.dir`, inst.dir);
  const own = inst.sources
    ? expand(dir, inst.sources, `${field}.sources`, display, roots)
    : readdirSync(dir)
        .filter((f) => f.endsWith('.c') && !DRIVER_FILE.test(f))
        .sort()
        .map((f) => confined(join(dir, f), roots, display, `${field}.dir`, join(inst.dir, f)));
  const extra = expand(dir, inst.extra_sources, `${field}.extra_sources`, display, roots);
  const includes = inst.include.map((p, i) => {
    const abs = isAbsolute(p) ? p : resolve(dir, p);
    if (!existsSync(abs)) throw new InputError(display, `${field}.include[${i}]`, `folder '${p}' not found`);
    return confined(abs, roots, display, `${field}.include[${i}]`, p);
  });
  // Another language is another compiler, with options of its own that start programs (C++ modules' mapper).
  for (const [list, where] of [
    [own, `${field}.sources`],
    [extra, `${field}.extra_sources`],
  ] as const)
    for (const f of list)
      if (!COMPILED.test(f)) throw new InputError(display, where, `'${relative(dir, f)}' is not a C or assembly source (.c, .s, .S)`);
  const sources = [...new Set([...own, ...extra])];
  if (sources.length === 0) throw new InputError(display, `${field}.sources`, `no C source files in '${inst.dir}'`);
  const ownGenerator = inst.own_generator?.map((p, i) => {
    const abs = resolve(dir, p);
    if (!sources.includes(abs))
      throw new InputError(
        display,
        `${field}.own_generator[${i}]`,
        `'${p}' is not one of the instance's sources (relative to ${inst.dir})`,
      );
    return abs;
  });
  return { dir, sources, includes: [dir, ...includes], ...(ownGenerator ? { ownGenerator } : {}) };
}
