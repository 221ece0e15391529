import { constants, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { runDriver, runProcess } from '../sandbox/runProcess.js';
import { nativeDir } from '../util/paths.js';
import { ctJob, type CtRunRequest } from './runCtOperation.js';
import type { CtCoverage } from './findingKinds.js';

/** Never-run functions a ct file names (the rest are counted). */
const NEVER_RUN_SHOWN = 40;
/** Ranges of untaken lines inside entered functions a ct file names (the rest are counted). */
export const UNTAKEN_SHOWN = 40;

export type CoverageRequest = Pick<CtRunRequest, 'driver' | 'type' | 'operation' | 'calls' | 'rng' | 'publicSkBytes' | 'timeoutMs'> & {
  /** The coverage build (CT_COVERAGE_BUILD) and its objects' folder, where the .gcno files are. */
  library: string;
  objDir: string;
  sandbox: SandboxMode;
  /** An empty folder of this run's own for the counters. */
  scratch: string;
  /** gcov (default: the one on PATH, which must match the compiler). */
  gcov?: string;
};

/** gcov's JSON (`--json-format --stdout`, format 1), the fields read here. */
export interface GcovFile {
  file: string;
  functions: Array<{ name: string; demangled_name?: string; execution_count: number }>;
  /** `function_name`: the function gcov puts the line in (gcc 10 and later). */
  lines: Array<{ line_number: number; count: number; function_name?: string; unexecuted_block?: boolean }>;
}

/**
 * gcov's report of the library's own files (the harness's left out) after the request's calls in the
 * coverage build, or why there is none. The driver runs sandboxed as every run of submission code
 * does, writing its counters only into `scratch` (GCOV_PREFIX); gcov reads them in the sandbox too:
 * they are the library's output.
 */
export async function countLines(req: CoverageRequest): Promise<{ files: GcovFile[] } | { failure: string }> {
  rmSync(req.scratch, { recursive: true, force: true });
  mkdirSync(req.scratch, { recursive: true });
  // The counters go to GCOV_PREFIX + the object's path less its first STRIP components: the scratch folder itself.
  const strip = normalize(resolve(req.objDir)).split(sep).filter(Boolean).length;
  const run = await runDriver([req.driver, req.library], ctJob(req), {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 1 << 20,
    env: { GCOV_PREFIX: req.scratch, GCOV_PREFIX_STRIP: String(strip) },
    sandbox: { mode: req.sandbox, readOnly: [req.driver, req.library], writable: [req.scratch] },
  });
  if (run.rejected) return { failure: `the coverage run did not finish: ${run.rejected.reason}` };
  if (run.output.status !== 'complete')
    return { failure: `the coverage run ended ${run.output.status ?? `with exit code ${run.run.exitCode}`}` };
  const counters = placeNotes(req.scratch, req.objDir);
  if (counters.length === 0) return { failure: 'the coverage run left no counters (.gcda)' };
  const gcov = await runProcess([req.gcov ?? 'gcov', '--json-format', '--stdout', ...counters], {
    cwd: req.scratch,
    timeoutMs: 60_000,
    maxOutputBytes: 64 << 20,
    sandbox: { mode: req.sandbox, readOnly: [], writable: [req.scratch] },
  });
  if (gcov.exitCode !== 0) return { failure: `gcov failed (exit code ${gcov.exitCode}): ${gcov.stderr.trim().split('\n')[0] ?? ''}` };
  try {
    return { files: ownFiles(parseGcovJson(gcov.stdout), nativeDir()) };
  } catch (e) {
    return { failure: `gcov's report is not readable: ${(e as Error).message}` };
  }
}

/**
 * The counters files the run left in `scratch` (regular files only), each with its notes file
 * (.gcno) from the build placed beside it for gcov. `scratch` was writable by the library: a name
 * it planted there (a link to a host file, say) is removed, never written through.
 */
export function placeNotes(scratch: string, objDir: string): string[] {
  const counters = readdirSync(scratch).filter((f) => f.endsWith('.gcda') && lstatSync(join(scratch, f)).isFile());
  for (const f of counters) {
    const notes = join(objDir, `${basename(f, '.gcda')}.gcno`);
    if (!existsSync(notes)) continue;
    const into = join(scratch, basename(notes));
    rmSync(into, { force: true, recursive: true });
    copyFileSync(notes, into, constants.COPYFILE_EXCL);
  }
  return counters;
}

/** gcov's output: one JSON document per counters file, one per line. */
export function parseGcovJson(text: string): GcovFile[] {
  return text
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .flatMap((l) => (JSON.parse(l) as { files?: GcovFile[] }).files ?? []);
}

/**
 * The library's own files: those under `harnessDir` (the NIST shim, the generator wrappers) are the
 * harness's, not the candidate's.
 */
export function ownFiles(files: readonly GcovFile[], harnessDir: string): GcovFile[] {
  const harness = normalize(resolve(harnessDir)) + sep;
  return files.filter((f) => !(isAbsolute(f.file) && normalize(f.file).startsWith(harness)));
}

/**
 * Functions and lines of the library's own files (ownFiles). A line gcov lists under several
 * functions (inlined code) counts once, as run if it ran in any.
 */
export function coverageOf(own: readonly GcovFile[]): CtCoverage {
  const fns = new Map<string, boolean>();
  const lines = new Map<string, boolean>();
  for (const f of own) {
    for (const fn of f.functions) {
      const key = `${f.file}:${fn.demangled_name ?? fn.name}`;
      fns.set(key, (fns.get(key) ?? false) || fn.execution_count > 0);
    }
    for (const l of f.lines) {
      const key = `${f.file}:${l.line_number}`;
      lines.set(key, (lines.get(key) ?? false) || l.count > 0);
    }
  }
  const never = [...fns].filter(([, ran]) => !ran).map(([key]) => key.replace(/^.*\//, ''));
  const untaken = untakenInEntered(own, fns, lines);
  return {
    functions: fns.size,
    functions_run: [...fns.values()].filter(Boolean).length,
    lines: lines.size,
    lines_run: [...lines.values()].filter(Boolean).length,
    never_run: never.sort().slice(0, NEVER_RUN_SHOWN),
    untaken: untaken.ranges.slice(0, UNTAKEN_SHOWN),
    untaken_lines: untaken.lines,
  };
}

/**
 * The lines no call ran, or ran only in part, inside functions some call entered. A line is untaken
 * if it ran under no function (`lines`, keyed `file:line`), or gcov marks a block of it never run
 * (`unexecuted_block`: `if (bad) return -1;` on one line, whose return never ran).
 */
function untakenInEntered(
  files: readonly GcovFile[],
  fns: ReadonlyMap<string, boolean>,
  lines: ReadonlyMap<string, boolean>,
): { ranges: string[]; lines: number } {
  return lineRanges(
    files,
    (f, l) =>
      fns.get(`${f.file}:${l.function_name}`) === true &&
      (lines.get(`${f.file}:${l.line_number}`) === false || l.unexecuted_block === true),
  );
}

/**
 * The paths a run took, as keys: `file:line` for every line that ran, and `file:line:whole` for one
 * that ran with none of its blocks left out. Runs of the same job with more calls take a superset
 * (the calls are a prefix of theirs: the same generator and seed).
 */
export function pathsTaken(files: readonly GcovFile[]): Set<string> {
  const taken = new Set<string>();
  for (const f of files)
    for (const l of f.lines)
      if (l.count > 0) {
        taken.add(`${f.file}:${l.line_number}`);
        if (l.unexecuted_block !== true) taken.add(`${f.file}:${l.line_number}:whole`);
      }
  return taken;
}

/** The lines of `more` (a run of more calls) that took a path `fewer` did not: a line it ran that `fewer` did not, or ran whole where `fewer` ran it in part. */
export function takenBeyond(more: readonly GcovFile[], fewer: ReadonlySet<string>): { ranges: string[]; lines: number } {
  const newly = [...pathsTaken(more)].filter((k) => !fewer.has(k));
  const lines = new Set(newly.map((k) => k.replace(/:whole$/, '')));
  return lineRanges(more, (f, l) => l.function_name !== undefined && lines.has(`${f.file}:${l.line_number}`));
}

/**
 * Lines `pick` chooses, as ranges of consecutive lines of one function (`file:function:first-last`,
 * the file's base name), in file and line order, each line once.
 */
function lineRanges(
  files: readonly GcovFile[],
  pick: (f: GcovFile, l: GcovFile['lines'][number]) => boolean,
): { ranges: string[]; lines: number } {
  const ranges: Array<{ file: string; fn: string; first: number; last: number }> = [];
  const seen = new Set<string>();
  let count = 0;
  for (const f of [...files].sort((a, b) => a.file.localeCompare(b.file))) {
    const candidates = f.lines.filter((l) => l.function_name !== undefined && pick(f, l)).sort((a, b) => a.line_number - b.line_number);
    for (const l of candidates) {
      const key = `${f.file}:${l.line_number}`;
      if (seen.has(key)) continue;
      seen.add(key);
      count += 1;
      const last = ranges[ranges.length - 1];
      // Lines without code between two picked ones do not split a range (gcov lists only lines
      // with code); a line with code between them, not picked or of another function, does.
      const previous = f.lines.filter((x) => x.line_number > (last?.last ?? 0) && x.line_number < l.line_number);
      if (last && last.file === f.file && last.fn === l.function_name && previous.length === 0) last.last = l.line_number;
      else ranges.push({ file: f.file, fn: l.function_name!, first: l.line_number, last: l.line_number });
    }
  }
  const name = (file: string) => file.replace(/^.*\//, '');
  return {
    ranges: ranges.map((r) => `${name(r.file)}:${r.fn}:${r.first === r.last ? r.first : `${r.first}-${r.last}`}`),
    lines: count,
  };
}
