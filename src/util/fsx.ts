import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  writeFileSync,
  existsSync,
  openSync,
  fsyncSync,
  closeSync,
  lstatSync,
  rmSync,
  statfsSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../errors.js';

let tmpCounter = 0;

/** The name writeFileAtomic gives the file it writes before the rename: `<file>.tmp-<pid>-<n>`. */
export const ATOMIC_TEMP = /\.tmp-(\d+)-\d+$/;

/**
 * Temporary files of atomic writes under `dir` that a process left (killed, or the disk full before
 * its rename), as '/'-separated relative paths; `removing` also removes them (only safe when no
 * other process may be writing there: under the evidence lock).
 */
export function leftoverTempFiles(dir: string, removing = false): string[] {
  // Found with lstat, as a link is never followed out of the folder to a file removed elsewhere.
  const left = regularFilesUnder(dir).filter((rel) => ATOMIC_TEMP.test(rel));
  if (removing) for (const rel of left) rmSync(join(dir, rel), { force: true });
  return left;
}

/**
 * Writes a file so that readers see either the old or the new content, never a torn one: a write
 * that fails leaves no temporary file behind, and a full disk is the user's to mend (an InputError
 * naming the file and the space it needs).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${tmpCounter++}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, data);
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw diskFullError(e, path, Buffer.byteLength(data)) ?? e;
  }
}

/** True while a process of that id runs (ours or another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Bytes free to this user on the device that holds `path` (or its nearest existing folder). */
export function freeBytes(path: string): number | undefined {
  for (let p = path; ; p = dirname(p)) {
    try {
      const s = statfsSync(p);
      return s.bavail * s.bsize;
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

const DISK_FULL = new Set(['ENOSPC', 'EDQUOT']);

/**
 * A write that failed for want of space, as an input error naming the file and what it needed (exit
 * 2: the host's to mend, not a bug); undefined for any other failure.
 */
export function diskFullError(e: unknown, path?: string, bytes?: number): InputError | undefined {
  const err = e as NodeJS.ErrnoException | undefined;
  if (!err?.code || !DISK_FULL.has(err.code)) return undefined;
  const file = path ?? err.path ?? '.';
  const free = freeBytes(file);
  const needs = bytes === undefined ? '' : `: writing it needs ${bytes} bytes`;
  const has = free === undefined ? '' : `${needs ? ',' : ':'} ${free} bytes are free there`;
  return new InputError(
    file,
    '',
    `no space left on its device (${err.code})${needs}${has}; free some space and run again (a run resumes where it stopped)`,
  );
}

/** JSON as the ngcc-harness writes it (Python json.dumps(indent=1) plus a newline). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 1)}\n`);
}

/**
 * The one JSON reader: a missing or broken file is an input error that names it (`shown`, when
 * the caller prints paths relative to something, else the path itself).
 */
export function readJson<T>(path: string, shown = path): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new InputError(shown, '', 'cannot read the file');
  }
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new InputError(shown, '', `not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

export function readJsonIfExists<T>(path: string, shown = path): T | undefined {
  return existsSync(path) ? readJson<T>(path, shown) : undefined;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function sha256File(path: string): string {
  return sha256Hex(readFileSync(path));
}

/** Files below `dir`/`rel`, as sorted paths relative to `dir` joined with '/'; none when it does not exist. */
export function filesUnder(dir: string, rel = ''): string[] {
  const abs = rel ? join(dir, rel) : dir;
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return [rel];
  return readdirSync(abs)
    .sort()
    .flatMap((name) => filesUnder(dir, rel ? `${rel}/${name}` : name));
}

/** Every entry below `dir` but its folders, found with lstat (nothing followed), in sorted '/'-separated paths. */
function entriesUnder(dir: string, rel = ''): Array<{ rel: string; st: ReturnType<typeof lstatSync> }> {
  const abs = rel ? join(dir, rel) : dir;
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return [];
  if (!st.isDirectory()) return rel === '' ? [] : [{ rel, st }];
  return readdirSync(abs)
    .sort()
    .flatMap((name) => entriesUnder(dir, rel ? `${rel}/${name}` : name));
}

const regularFilesUnder = (dir: string): string[] => entriesUnder(dir).flatMap((e) => (e.st?.isFile() ? [e.rel] : []));

/**
 * Entries below `dir` (itself excluded) that are not regular files or folders: links, FIFOs,
 * sockets, devices. Found with lstat, so nothing is followed; '/'-separated relative paths.
 */
export function nonRegularEntries(dir: string): string[] {
  return entriesUnder(dir).flatMap((e) => (e.st?.isFile() ? [] : [e.rel]));
}
