import { basename, join } from 'node:path';
import type { Toolchain } from '../env/toolchain.js';
import type { RunResult } from '../sandbox/runProcess.js';

/** Runs one command of a build in its sandbox, from `cwd` (the instance folder when absent). */
export type BuildStep = (argv: string[], cwd?: string) => Promise<RunResult>;

/**
 * Compiles each source to its own object in `objDir` and returns the objects in the sources'
 * order, or undefined when one does not compile. One compiler call for them all (gcc names each
 * object after its source), unless two sources share a name: then one call each, numbered.
 */
export async function compileObjects(
  run: BuildStep,
  tools: Toolchain,
  sources: string[],
  compileFlags: string[],
  objDir: string,
): Promise<string[] | undefined> {
  const names = sources.map((src) => `${basename(src).replace(/\.[csS]$/, '')}.o`);
  if (new Set(names).size === names.length) {
    if ((await run([tools.cc, ...compileFlags, '-c', ...sources], objDir)).exitCode !== 0) return undefined;
    return names.map((n) => join(objDir, n));
  }
  const objects: string[] = [];
  for (const [i, src] of sources.entries()) {
    const obj = join(objDir, `${i}-${names[i]}`);
    if ((await run([tools.cc, ...compileFlags, '-c', src, '-o', obj])).exitCode !== 0) return undefined;
    objects.push(obj);
  }
  return objects;
}

export interface ObjectSymbols {
  /** Global symbols the object defines, with nm's type letter (T, D, B, W, …). */
  defined: Map<string, string>;
  /** Symbols it uses and does not define. */
  undefined: Set<string>;
}

/**
 * Every object's symbols as `nm -A -g` reports them, keyed by object path; undefined when nm
 * fails. `nm -A` prefixes each line with its file, so one call serves any number of objects.
 */
export async function symbolsOf(run: BuildStep, tools: Toolchain, objects: string[]): Promise<Map<string, ObjectSymbols> | undefined> {
  const out = new Map<string, ObjectSymbols>(objects.map((o) => [o, { defined: new Map(), undefined: new Set() }]));
  if (objects.length === 0) return out;
  const nm = await run([tools.nm, '-A', '-g', ...objects]);
  if (nm.exitCode !== 0) return undefined;
  for (const line of nm.stdout.split('\n')) {
    // "<object>:<value> <type> <name>", or "<object>: <spaces> U <name>" for an undefined one.
    const m = /^(.*?):\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(\S+)$/.exec(line);
    const entry = m && out.get(m[1]!);
    if (!entry) continue;
    if (m[2] === 'U') entry.undefined.add(m[3]!);
    else entry.defined.set(m[3]!, m[2]!);
  }
  return out;
}
