import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../sandbox/runProcess.js';
import { readJson, readJsonIfExists, sha256File, sha256Hex, writeJsonAtomic } from '../util/fsx.js';
import { nativeDir } from '../util/paths.js';
import { compilerVersion, HARNESS_CC, systemToolPath } from '../env/toolchain.js';
import { InputError } from '../errors.js';

export interface HarnessTools {
  dir: string;
  /** Hash of the harness's native sources and the compiler: part of every build key. */
  version: string;
  /** ngcc_driver: the KAT, timing and profiling jobs, one binary with one command line (`driver LIB`). */
  driver: string;
  /** ngcc_mem: its own binary, since it replaces malloc, which must not sit in the timed path. */
  mem: string;
  /** Reports the cycle counter and pinning where it runs (the sandbox check at the start of a run). */
  probe: string;
}

/**
 * native/binaries.json: for each binary the harness builds, and each unit it links into the library
 * under test, the sources and the headers they include (relative to native/). The one list of them:
 * every build here, in src/ct/ and in bench/ and test/ reads it.
 */
export const NATIVE_MANIFEST = 'binaries.json';

/** The binaries of native/binaries.json, by the names the rest of the system knows them by. */
export type NativeBinary = 'ngcc_driver' | 'ngcc_mem' | 'ngcc_probe' | 'ngcc_ct';

/** One entry of native/binaries.json. */
export interface NativeUnit {
  about?: string;
  sources: string[];
  headers: string[];
  /** A binary's linker arguments. */
  link?: string[];
}

export interface NativeManifest {
  binaries: Record<NativeBinary, NativeUnit & { link: string[] }>;
  /** What is compiled into the library under test: the ct build's generator wrappers, the profile build's wrappers and accounting, the NIST shim. */
  linked: {
    ct_wrap: NativeUnit;
    hashprof: NativeUnit;
    /** `generators`: the KAT generator behind randombytes for each kat_rng. */
    nist: NativeUnit & { generators: Record<'nist' | 'hqc', string> };
  };
  /** The other C files under native/, with what builds them. */
  other: Record<string, NativeUnit & { include?: string[] }>;
}

export const nativeManifest = (): NativeManifest => readJson<NativeManifest>(join(nativeDir(), NATIVE_MANIFEST));

/** A path of native/binaries.json, made absolute. */
export const nativePath = (file: string): string => join(nativeDir(), file);

/** A binary's sources (absolute paths) and linker arguments, as native/binaries.json lists them. */
export function nativeBinary(name: NativeBinary): { sources: string[]; link: string[] } {
  const b = nativeManifest().binaries[name];
  return { sources: b.sources.map(nativePath), link: b.link };
}

/**
 * What the harness version hashes: every .c and .h under native/ (sorted) and native/binaries.json,
 * which says what each binary is built from. Every file the manifest names is a .c or .h under
 * native/, so the walk covers them all, and any file it does not name too.
 */
export function harnessInputs(): string[] {
  const root = nativeDir();
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(c|h)$/.test(e.name) || p === join(root, NATIVE_MANIFEST)) files.push(p);
    }
  };
  walk(root);
  return files;
}

/** Hash over the harness's inputs (harnessInputs) and the compiler, so any harness change rebuilds libraries. */
export function harnessVersion(): string {
  const root = nativeDir();
  const parts = harnessInputs().map((f) => `${f.slice(root.length)}\n${sha256Hex(readFileSync(f))}`);
  return sha256Hex(`${parts.join('\n')}\n${compilerVersion(HARNESS_CC)}`).slice(0, 16);
}

/** The binaries built together into the harness folder (ngcc_ct is built beside them when needed: src/ct/tools.ts). */
const NAMES = ['ngcc_driver', 'ngcc_mem', 'ngcc_probe'] as const satisfies readonly NativeBinary[];
/** Each binary's SHA-256, written with the set: a binary that no longer matches is rebuilt. */
const MANIFEST = 'sha256.json';

/**
 * The cache root, `$TMPDIR/ngcc-perf-<uid>` unless NGCC_CACHE_DIR names one: ours alone. In a
 * shared /tmp another user could create it first and plant drivers there, so a root that is not
 * owned by us or that others may write is refused.
 */
export function cacheRoot(): string {
  const root = process.env.NGCC_CACHE_DIR ?? join(tmpdir(), `ngcc-perf-${process.getuid?.() ?? 0}`);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const st = lstatSync(root);
  const uid = process.getuid?.();
  const problem = !st.isDirectory()
    ? 'not a folder (a link or a file)'
    : uid !== undefined && st.uid !== uid
      ? `owned by uid ${st.uid}, not this user (${uid})`
      : (st.mode & 0o022) !== 0
        ? `others may write it (mode ${(st.mode & 0o777).toString(8)})`
        : undefined;
  // The host's setting, like a bad argument: the user's to mend (exit 2), not a fault of ngcc-perf.
  if (problem)
    throw new InputError(
      root,
      '',
      `the driver cache must be a folder of this user that only it may write, but ${problem}: remove it, or set NGCC_CACHE_DIR to such a folder`,
    );
  return root;
}

/** True when every binary of the set is there and matches the hash written when it was built. */
function intact(dir: string): boolean {
  const manifest = readJsonIfExists<Record<string, string>>(join(dir, MANIFEST));
  if (!manifest) return false;
  return NAMES.every((name) => {
    const file = join(dir, name);
    return existsSync(file) && manifest[name] === sha256File(file);
  });
}

/**
 * The drivers, built once per harness version into a content-addressed folder of a shared cache
 * (named by the hash of the native sources and the compiler). Each call checks every binary
 * against the hashes written with it and rebuilds a set that differs. Sandboxed processes see
 * the one driver they run, read-only.
 */
export async function harnessTools(): Promise<HarnessTools> {
  const version = harnessVersion();
  const dir = join(cacheRoot(), `harness-${version}`);
  const tools = {
    dir,
    version,
    driver: join(dir, 'ngcc_driver'),
    mem: join(dir, 'ngcc_mem'),
    probe: join(dir, 'ngcc_probe'),
  };
  if (!intact(dir)) await compileTools(dir);
  return tools;
}

async function compileTools(dir: string): Promise<void> {
  const n = nativeDir();
  const staging = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  const common = ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-Werror', `-I${n}`];
  const manifest: Record<string, string> = {};
  for (const name of NAMES) {
    // What each is built from, and its linker arguments (ngcc_mem's -z now among them): native/binaries.json.
    const { sources, link } = nativeBinary(name);
    // The harness's own sources: trusted, built outside the sandbox.
    const r = await runProcess([systemToolPath(HARNESS_CC), ...common, '-o', join(staging, name), ...sources, ...link], {
      timeoutMs: 120_000,
    });
    if (r.exitCode !== 0) throw new Error(`building the native harness (${name}) failed:\n${r.stderr}`);
    manifest[name] = sha256File(join(staging, name));
  }
  writeJsonAtomic(join(staging, MANIFEST), manifest);
  try {
    renameSync(staging, dir);
  } catch {
    // Another process won the race (its tools are identical), or a damaged set is in the way:
    // replace that one.
    if (!intact(dir)) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    } else rmSync(staging, { recursive: true, force: true });
  }
}
