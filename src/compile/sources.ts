import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { globSync } from 'tinyglobby';
import { InputError } from '../errors.js';
import type { InstanceSpec } from '../config/schemas.js';

/** Driver and test files that are not library code (the independent harness's rule). */
export const DRIVER_FILE =
  /^(KAT_|PQCgenKAT|main|test|bench|speed|cpucycles|osfreq|run_bench|selftest|self_test|example|demo|kat\.c|kat_)|(_test|test_|_bench|bench_|_main|_kat)\./;

export interface ResolvedSources {
  dir: string;
  sources: string[];
  includes: string[];
}

function expand(base: string, patterns: string[], field: string, display: string): string[] {
  const files: string[] = [];
  for (const pattern of patterns) {
    const matches = globSync(pattern, { cwd: base, absolute: true, expandDirectories: false, onlyFiles: true });
    if (matches.length === 0) throw new InputError(display, field, `'${pattern}' matches no file (relative to ${base})`);
    files.push(...matches.sort());
  }
  return files;
}

/** The C files and include folders of one instance; `display` names candidate.yml in errors. */
export function resolveSources(candidateFolder: string, inst: InstanceSpec, index: number, display: string): ResolvedSources {
  const dir = resolve(candidateFolder, inst.dir);
  const field = `instances[${index}]`;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(display, `${field}.dir`, `folder '${inst.dir}' not found`);
  const own = inst.sources
    ? expand(dir, inst.sources, `${field}.sources`, display)
    : readdirSync(dir)
        .filter((f) => f.endsWith('.c') && !DRIVER_FILE.test(f))
        .sort()
        .map((f) => join(dir, f));
  const extra = expand(dir, inst.extra_sources, `${field}.extra_sources`, display);
  const includes = inst.include.map((p, i) => {
    const abs = isAbsolute(p) ? p : resolve(dir, p);
    if (!existsSync(abs)) throw new InputError(display, `${field}.include[${i}]`, `folder '${p}' not found`);
    return abs;
  });
  const sources = [...new Set([...own, ...extra])];
  if (sources.length === 0) throw new InputError(display, `${field}.sources`, `no C source files in '${inst.dir}'`);
  return { dir, sources, includes: [dir, ...includes] };
}
