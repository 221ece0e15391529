import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type ResolvedSources, underAny } from '../config/sources.js';
import type { Toolchain } from '../env/toolchain.js';
import { compileObjects, symbolsOf, type BuildStep, type ObjectSymbols } from './objects.js';

/**
 * What the harness's KAT generator defines for `api: nist` (native/linked/nist/nist_drbg.c, hqc_rng.c).
 * A submission's file that defines one of them would clash with it at link time.
 */
export const GENERATOR_SYMBOLS: readonly string[] = ['randombytes', 'randombytes_init', 'PQCLEAN_randombytes'];

/**
 * Added after the build's flags where suspects are compiled to be read: under -flto clang writes LLVM
 * bitcode, in which binutils' nm sees no symbol (or only through the plugin of one clang version),
 * and the generator would be kept to clash with the harness's at link time. LTO renames no symbol.
 */
export const GENERATOR_PROBE_FLAGS: readonly string[] = ['-fno-lto'];

/** A source the build leaves out, or keeps although it clashes, and why (for build.log). */
export interface GeneratorVerdict {
  file: string;
  left_out: boolean;
  why: string;
}

/** Bytes of a file read to see whether it can name a generator symbol at all. */
const TEXT_MAX = 16 << 20;

/**
 * Whether a file's text mentions `randombytes` (each generator symbol contains it). Read here, outside
 * the sandbox, only when it is a regular file of sane size and, links resolved, one the build's
 * sandbox shows (`roots`): a header that links to a runner's secret is not read.
 */
function mentionsGenerator(file: string, roots: readonly string[]): boolean {
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > TEXT_MAX || !underAny(realpathSync(file), roots)) return false;
    return readFileSync(file, 'latin1').includes('randombytes');
  } catch {
    return false;
  }
}

const shownNames = (names: Iterable<string>): string => [...names].sort().join(', ');

/**
 * The sources of an `api: nist` build that are the submission's own generator, judged by the symbols
 * the compiler reports, never by a file's name: a file is left out when it defines `randombytes`,
 * `randombytes_init` or `PQCLEAN_randombytes` and nothing else that the rest of the library uses.
 * One that also defines something the rest uses is kept, with a verdict saying why the link will
 * clash. `candidate.yml`'s `own_generator` decides instead when it is given.
 *
 * Only a source that could define such a symbol is compiled: one whose text, or that of a file it
 * includes (`deps`, from the preprocessor), mentions `randombytes`. The rest of the library is
 * compiled only when a generator file defines more than the generator. `readable` is what the build's
 * sandbox shows (the only files read here). Objects go to `workDir`,
 * removed afterwards. A compile or nm failure keeps every source: the build then says what failed.
 */
export async function ownGeneratorVerdicts(
  src: ResolvedSources,
  deps: ReadonlyMap<string, readonly string[]>,
  compileArgs: string[],
  run: BuildStep,
  workDir: string,
  readable: readonly string[],
  tools: Toolchain,
): Promise<GeneratorVerdict[]> {
  const shown = (f: string) => relative(src.dir, f) || f;
  if (src.ownGenerator) return src.ownGenerator.map((file) => ({ file, left_out: true, why: 'candidate.yml names it in own_generator' }));
  const roots = readable.map((r) => (existsSync(r) ? realpathSync(r) : r));
  compileArgs = [...compileArgs, ...GENERATOR_PROBE_FLAGS];
  const suspects = src.sources.filter((s) => [s, ...(deps.get(s) ?? [])].some((f) => mentionsGenerator(f, roots)));
  if (suspects.length === 0) return [];
  try {
    const compiled = await compiledSymbols(run, tools, suspects, compileArgs, join(workDir, 'suspects'));
    if (!compiled) return [];
    const verdicts: GeneratorVerdict[] = [];
    let restUses: Map<string, Set<string>> | undefined;
    for (const file of suspects) {
      const defined = compiled.get(file)!.defined;
      const generator = [...defined.keys()].filter((s) => GENERATOR_SYMBOLS.includes(s));
      if (generator.length === 0) continue;
      const others = [...defined.keys()].filter((s) => !GENERATOR_SYMBOLS.includes(s));
      const says = `it defines ${shownNames(generator)}, which the harness's KAT generator provides`;
      if (others.length === 0) {
        verdicts.push({ file, left_out: true, why: says });
        continue;
      }
      restUses ??= await usesOfRest(run, tools, src.sources, suspects, compiled, compileArgs, join(workDir, 'rest'));
      if (!restUses) return [];
      const elsewhere = [...restUses.entries()].filter(([f]) => f !== file);
      const needed = others.filter((s) => elsewhere.some(([, used]) => used.has(s)));
      if (needed.length === 0) {
        verdicts.push({ file, left_out: true, why: `${says}, and ${shownNames(others)}, which nothing else uses` });
        continue;
      }
      const users = elsewhere.filter(([, used]) => needed.some((s) => used.has(s))).map(([f]) => shown(f));
      verdicts.push({
        file,
        left_out: false,
        why: `${says}, but also ${shownNames(needed)}, which ${shownNames(users)} use: kept, and its generator will clash with the harness's; move those out of it, or name the file in own_generator`,
      });
    }
    return verdicts;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function compiledSymbols(
  run: BuildStep,
  tools: Toolchain,
  sources: string[],
  compileArgs: string[],
  objDir: string,
): Promise<Map<string, ObjectSymbols> | undefined> {
  mkdirSync(objDir, { recursive: true });
  const objects = await compileObjects(run, tools, sources, compileArgs, objDir);
  if (!objects) return undefined;
  const symbols = await symbolsOf(run, tools, objects);
  if (!symbols) return undefined;
  return new Map(sources.map((s, i) => [s, symbols.get(objects[i]!)!]));
}

/** The undefined symbols of every source of the library (the suspects' already known). */
async function usesOfRest(
  run: BuildStep,
  tools: Toolchain,
  sources: string[],
  suspects: string[],
  known: Map<string, ObjectSymbols>,
  compileArgs: string[],
  objDir: string,
): Promise<Map<string, Set<string>> | undefined> {
  const rest = sources.filter((s) => !suspects.includes(s));
  const compiled = rest.length > 0 ? await compiledSymbols(run, tools, rest, compileArgs, objDir) : new Map<string, ObjectSymbols>();
  if (!compiled) return undefined;
  return new Map([...known, ...compiled].map(([f, s]) => [f, s.undefined]));
}
