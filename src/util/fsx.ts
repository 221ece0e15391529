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
} from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../errors.js';

let tmpCounter = 0;

/** Writes a file so that readers see either the old or the new content, never a torn one. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${tmpCounter++}`;
  writeFileSync(tmp, data);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
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

/**
 * Entries below `dir` (itself excluded) that are not regular files or folders: links, FIFOs,
 * sockets, devices. Found with lstat, so nothing is followed; '/'-separated relative paths.
 */
export function nonRegularEntries(dir: string, rel = ''): string[] {
  const abs = rel ? join(dir, rel) : dir;
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return [];
  if (st.isDirectory())
    return readdirSync(abs)
      .sort()
      .flatMap((name) => nonRegularEntries(dir, rel ? `${rel}/${name}` : name));
  return st.isFile() || rel === '' ? [] : [rel];
}
