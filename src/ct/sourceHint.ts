import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';

/**
 * What the source says of a branch finding's line, when the branch is the compiler's
 * (docs/method.md#constant-time-check): `loop-bound`, the line is a `for` loop whose condition
 * compares its counter with a fixed bound (a number or a macro's name), so the source's own branch is
 * public and the one memcheck saw is the compiler's rewrite of the loop (HQC's constant-time selects,
 * which gcc turns into a direct test of the secret index); `no-branch`, the line has no branch at all
 * in the source. Either is a branch on a secret in the machine code, and counted as such (Clangover).
 */
export type CompilerMade = 'loop-bound' | 'no-branch';

/** A finding's source line, without comments and string literals. */
const code = (line: string): string =>
  line
    .replace(/\/\*.*?\*\//g, ' ')
    .replace(/\/\/.*$/, '')
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/'(?:[^'\\]|\\.)*'/g, "''");

/** A bound that is fixed at compile time: numbers, macros' names (upper case), sizeof, and arithmetic of them. */
const FIXED_BOUND = /^(?:\s|\d+[uUlL]*|0x[0-9a-fA-F]+[uUlL]*|[A-Z_][A-Z0-9_]*|sizeof\s*\(\s*[A-Za-z_][\w\s*]*\)|[-+*/()<>])+$/;

/** The classification of a branch site's source line, or undefined when the source itself branches there on something else. */
export function compilerMade(sourceLine: string): CompilerMade | undefined {
  const text = code(sourceLine).trim();
  if (text === '') return undefined;
  const loop = /^for\s*\(([^;]*);([^;]*);([^)]*)\)/.exec(text);
  if (loop) {
    const cond = /^\s*([A-Za-z_]\w*)\s*(<=|<|!=|>=|>)\s*(.+?)\s*$/.exec(loop[2]!);
    return cond && FIXED_BOUND.test(cond[3]!) ? 'loop-bound' : undefined;
  }
  // A keyword or operator that branches in C: the source may branch here itself.
  if (/\b(if|else|for|while|do|switch|case|default|goto|break|continue)\b|\?|&&|\|\|/.test(text)) return undefined;
  return 'no-branch';
}

/** Lines read of a source file at most (a longer one is not the source of a C line). */
const MAX_LINE_BYTES = 4096;
/** Source files read at most (bytes): a finding's file larger than this is not read. */
const MAX_SOURCE_BYTES = 8 << 20;

/**
 * The text of line `line` of `dir/file` as the debug information names them, read only when the file
 * resolves (links followed) inside one of `roots`, or is one (what the build read of the submission):
 * the names come from the library's debug information, which its author controls, so a name of a
 * host file is never read.
 */
export function sourceLine(roots: readonly string[], dir: string | undefined, file: string, line: number): string | undefined {
  if (!file || line < 1) return undefined;
  const path = isAbsolute(file) ? file : dir ? join(dir, file) : undefined;
  if (!path) return undefined;
  try {
    const real = realpathSync(path);
    const inside = roots.some((root) => {
      const rel = relative(realpathSync(root), real);
      // '' is the root itself: a source file the build named.
      return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
    });
    if (!inside) return undefined;
    const stat = statSync(real);
    if (!stat.isFile() || stat.size > MAX_SOURCE_BYTES) return undefined;
    return readFileSync(real, 'utf8').split('\n')[line - 1]?.slice(0, MAX_LINE_BYTES);
  } catch {
    return undefined;
  }
}

/** A branch site's classification from its source line under `roots` (sourceLine), or undefined. */
export const compilerMadeIn =
  (roots: readonly string[]) =>
  (frame: { dir?: string; file?: string; line?: number }): CompilerMade | undefined => {
    const text = sourceLine(roots, frame.dir, frame.file ?? '', frame.line ?? 0);
    return text === undefined ? undefined : compilerMade(text);
  };
