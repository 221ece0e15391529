import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Candidate } from '../config/campaign.js';
import type { InstanceSpec } from '../config/schemas.js';
import type { SandboxMode, SandboxSpec } from '../sandbox/bwrap.js';
import { runProcess } from '../sandbox/runProcess.js';
import { diskFullError, freeBytes, sha256File, sha256Hex, writeFileAtomic, readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import { nativeDir, toolRoot } from '../util/paths.js';
import { HARNESS_DEFAULT, guideFlags, hostArch, type FlagVariant } from './flags.js';
import { resolveSources, type ResolvedSources } from '../config/sources.js';
import { compilerVersion, toolchainOf } from '../env/toolchain.js';
import { instanceFlags, nistEntryPrefix, nistShim } from './nistShim.js';
import type { BuildStep } from './objects.js';
import { GENERATOR_SYMBOLS, GENERATOR_PROBE_FLAGS, ownGeneratorVerdicts, type GeneratorVerdict } from './ownGenerator.js';

export type FlagSet = 'guide' | 'harness-default';

export interface BuildResult {
  ok: boolean;
  flagSet: FlagSet;
  /** The flag set's flags, then the instance's own cflags and defines. */
  flags: string[];
  library: string;
  log: string;
  /** The compiler's first error line, for the BUILDFAIL row. */
  firstError?: string;
  key: string;
}

/** A store of build folders across runs (the action's @actions/cache); may fail, never fatally. */
export interface BuildCache {
  restore(dir: string, key: string): Promise<boolean>;
  save(dir: string, key: string): Promise<void>;
}

export interface BuildRequest {
  candidate: Candidate;
  instance: InstanceSpec;
  index: number;
  /** Folder that receives lib<label>.so, its log and its key. */
  outDir: string;
  flagSet: FlagSet;
  variant: FlagVariant;
  extraFlags: string[];
  harnessVersion: string;
  timeoutMs: number;
  /** Address-space cap of every compiler process (planning.memory_limit_mb): a header that is a link to /dev/zero ends there. */
  memoryLimitBytes?: number;
  cache?: BuildCache;
  /** How the compiler is isolated (default bwrap): it reads only what `readOnly` lists. */
  sandbox?: SandboxMode;
  /** The compiler's name (ngcc-perf.yml `compiler`): `gcc`, `clang`, a versioned name; run by its system path (env/toolchain.ts). */
  compiler: string;
}

/** Symbols a library may export: the APIs and the harness hooks, nothing of its internals. */
function versionScript(prefix: string | undefined): string {
  const globals = [
    'kem_*',
    'sig_*',
    'kex_*',
    'CryptHash',
    'init_random_number',
    'get_random_number',
    'drng_algorithm',
    'sm3hash',
    'pseudohash',
    'pseudoXOF',
    ...GENERATOR_SYMBOLS,
    'ngcc_*',
  ];
  if (prefix !== undefined) globals.push(`${prefix}crypto_kem_*`, `${prefix}crypto_sign*`);
  return `{\n  global:\n${globals.map((g) => `    ${g};`).join('\n')}\n  local: *;\n};\n`;
}

/**
 * Every file each source reads: what the preprocessor reports (`-MM`: the source, headers, included
 * .inc files, wherever they are), or — when preprocessing fails, a build that will fail — the
 * source and the headers of the include folders.
 */
async function dependencies(
  cc: string,
  src: ResolvedSources,
  compileArgs: string[],
  sandbox: SandboxSpec,
  memoryLimitBytes: number | undefined,
): Promise<Map<string, string[]>> {
  const cwd = src.dir;
  const r = await runProcess([cc, ...compileArgs, '-MM', ...src.sources], {
    cwd,
    timeoutMs: 120_000,
    maxOutputBytes: 16 << 20,
    memoryLimitBytes,
    sandbox,
  });
  const out = new Map<string, string[]>();
  if (r.exitCode === 0) {
    // One rule per source, in the sources' order: "x.o: <the source> <what it includes> …".
    const rules = r.stdout
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((rule) => rule.trim() !== '');
    for (const rule of rules) {
      const files = rule
        .split(':')
        .slice(1)
        .join(':')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((f) => resolve(cwd, f));
      if (files[0] !== undefined) out.set(files[0], files);
    }
    if (src.sources.every((s) => out.has(s))) return out;
  }
  const headers: string[] = [];
  for (const dir of src.includes) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith('.h')) headers.push(join(dir, f));
  }
  return new Map(src.sources.map((s) => [s, [s, ...headers]]));
}

/**
 * The repository that holds a candidate (the nearest folder with a `.git`), else its campaign
 * folder: vendored code outside the campaign is named relative to it in the build key.
 */
function repositoryOf(candidateFolder: string): string {
  for (let dir = resolve(candidateFolder); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return dirname(resolve(candidateFolder));
  }
}

/**
 * The build key: contents of every file read, the command line and the tools. Paths are written
 * relative to the output, the instance folder, the tool and the candidate's repository, so the
 * key (and the build cache) carries over to a runner with another workspace, also for sources
 * that live outside the instance folder.
 */
function buildKey(req: BuildRequest, src: ResolvedSources, files: string[], argv: string[], out: string): string {
  const repo = repositoryOf(req.candidate.folder);
  const portable = (s: string) =>
    s.replaceAll(out, '<out>').replaceAll(src.dir, '<dir>').replaceAll(toolRoot(), '<tool>').replaceAll(repo, '<repo>');
  const parts = files.map((f) => `${portable(f)}\n${contentDigest(f)}`);
  return sha256Hex([...parts, argv.map(portable).join(' '), compilerVersion(req.compiler), req.harnessVersion].join('\n'));
}

/** Below this much free space, a compiler that says its disk is full is believed. */
const LOW_DISK_BYTES = 64 << 20;

/** Bytes of one file the key hashes: far above any source or header. */
const KEY_FILE_MAX = 64 << 20;

/**
 * A file's digest for the build key, read only when it is a regular file of sane size: a
 * submission's header may be a link to /dev/zero or a FIFO, which must not hang or exhaust this
 * process (the build then fails on its own, inside its sandbox and memory cap).
 */
function contentDigest(file: string): string {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(file);
  } catch {
    return 'missing';
  }
  if (!st.isFile()) return 'not a regular file';
  if (st.size > KEY_FILE_MAX) return `over ${KEY_FILE_MAX} bytes: ${st.size} bytes, modified ${st.mtimeMs}`;
  return sha256Hex(readFileSync(file));
}

/** A build log's first line that says `error` (else its first line): what a failed build is named by. */
export function firstErrorLine(stderr: string): string | undefined {
  const lines = stderr.split('\n');
  return (lines.find((l) => /\berror\b/.test(l)) ?? lines.find((l) => l.trim() !== ''))?.trim();
}

export function displayFlags(flags: string[]): string {
  return flags.join(' ');
}

/** The pieces of an instance's build command, shared by the plain and the profiling build. */
export interface BuildArgv {
  cwd: string;
  flags: string[];
  defines: string[];
  includes: string[];
  sources: string[];
  /** --no-undefined and the version script. */
  linkFlags: string[];
  libs: string[];
  argv: string[];
  key: string;
  /**
   * What a build of this instance may read besides the system: the candidate's folder, its include
   * folders and sources (which candidate.yml may place elsewhere) and the harness's native sources.
   */
  readOnly: string[];
  /** Lines for build.log: which of the submission's sources were left out as its own generator, and why. */
  notes: string[];
}

/** The sandbox of one build step: reads `readOnly`, writes only into `outDir`. */
export function buildSandbox(req: Pick<BuildRequest, 'sandbox'>, readOnly: string[], outDir?: string): SandboxSpec {
  return { mode: req.sandbox ?? 'bwrap', readOnly, writable: outDir ? [outDir] : [] };
}

/** The flags of a flag set (the guide's for the host, or the permissive harness defaults). */
export function flagsFor(req: Pick<BuildRequest, 'flagSet' | 'variant' | 'extraFlags'>): string[] {
  return req.flagSet === 'guide' ? [...guideFlags(hostArch(), req.variant), ...req.extraFlags] : [...HARNESS_DEFAULT, ...req.extraFlags];
}

export async function buildArgv(req: BuildRequest, flags: string[], library: string): Promise<BuildArgv> {
  const { candidate, instance } = req;
  const resolved = resolveSources(candidate.folder, instance, req.index, `${candidate.id}/candidate.yml`);
  const shim = nistShim(candidate, instance);
  const scriptPath = join(dirname(library), 'exports.map');
  mkdirSync(dirname(library), { recursive: true });
  writeFileSync(scriptPath, versionScript(candidate.api === 'nist' ? nistEntryPrefix(instance) : undefined));
  const parts = {
    cwd: resolved.dir,
    // In the argv, hence in the build key and in build.json's build_flags.
    flags: [...flags, ...instanceFlags(instance)],
    defines: shim.defines,
    includes: resolved.includes.map((d) => `-I${d}`),
    linkFlags: ['-Wl,--no-undefined', `-Wl,--version-script=${scriptPath}`],
    libs: instance.libs.map((l) => `-l${l}`),
  };
  const compileArgs = [...parts.flags, ...parts.defines, ...parts.includes];
  const readOnly = [resolve(candidate.folder), ...resolved.includes, ...resolved.sources, nativeDir()];
  const { cc } = toolchainOf(req.compiler);
  const deps = await dependencies(cc, resolved, compileArgs, buildSandbox(req, readOnly), req.memoryLimitBytes);
  const generator = candidate.api === 'nist' ? await generatorVerdicts(req, resolved, deps, compileArgs, readOnly, library) : [];
  const leftOut = new Set(generator.filter((v) => v.left_out).map((v) => v.file));
  const sources = resolved.sources.filter((f) => !leftOut.has(f));
  const argv = [
    cc,
    ...parts.flags,
    ...parts.defines,
    ...parts.includes,
    '-shared',
    ...parts.linkFlags,
    '-o',
    library,
    ...sources,
    ...shim.sources,
    ...parts.libs,
  ];
  const files = [...new Set(sources.flatMap((s) => deps.get(s) ?? [s]))].sort();
  const key = buildKey(req, resolved, files, argv, dirname(library));
  const notes = generator.map((v) => `# ${v.left_out ? 'left out' : 'kept'} ${relative(resolved.dir, v.file) || v.file}: ${v.why}`);
  return { ...parts, sources: [...sources, ...shim.sources], argv, key, readOnly, notes };
}

/** An `api: nist` build's verdicts on the submission's own generator, in the compiler's sandbox. */
async function generatorVerdicts(
  req: BuildRequest,
  src: ResolvedSources,
  deps: ReadonlyMap<string, readonly string[]>,
  compileArgs: string[],
  readOnly: string[],
  library: string,
): Promise<GeneratorVerdict[]> {
  // Kept beside the library, keyed by every file the sources read and the command line: an
  // unchanged instance (a re-run, its profile and ct builds) compiles nothing to be judged again.
  const all = [...new Set([...deps.values()].flat())].sort();
  const key = sha256Hex(
    [
      ...all.map((f) => `${f}\n${contentDigest(f)}`),
      compileArgs.join(' '),
      compilerVersion(req.compiler),
      JSON.stringify(src.ownGenerator ?? null),
      // The rule itself: objects probed without LTO (a verdict cached before, from bitcode, is judged again).
      GENERATOR_PROBE_FLAGS.join(' '),
    ].join('\n'),
  );
  const cacheFile = join(dirname(library), 'own-generator.json');
  const cached = readJsonIfExists<{ key: string; verdicts: GeneratorVerdict[] }>(cacheFile);
  if (cached?.key === key) return cached.verdicts;
  const workDir = join(dirname(library), 'own-generator');
  mkdirSync(workDir, { recursive: true });
  const sandbox = buildSandbox(req, readOnly, workDir);
  const run: BuildStep = (argv, cwd = src.dir) =>
    runProcess(argv, { cwd, timeoutMs: req.timeoutMs, memoryLimitBytes: req.memoryLimitBytes, maxOutputBytes: 1 << 20, sandbox });
  const verdicts = await ownGeneratorVerdicts(src, deps, compileArgs, run, workDir, readOnly, toolchainOf(req.compiler));
  writeJsonAtomic(cacheFile, { key, verdicts });
  return verdicts;
}

/** Compiles one instance into lib<label>.so; an unchanged instance is not rebuilt. */
export async function buildInstance(req: BuildRequest): Promise<BuildResult> {
  const { candidate } = req;
  const flags = flagsFor(req);
  // Each flag set builds into its own folder, so a fallback never overwrites the guide build.
  const outDir = join(req.outDir, req.flagSet);
  const library = join(outDir, `lib${req.instance.label}.so`);
  const { argv, key, cwd, readOnly, notes, flags: allFlags } = await buildArgv(req, flags, library);
  // A cached failure is as final as a cached success; a success counts only while the
  // library on disk is the one that build produced.
  const keyFile = join(outDir, 'build-key.json');
  const fromDisk = () => {
    const previous = readJsonIfExists<{ key: string; ok: boolean; log: string; firstError?: string; library_sha256?: string }>(keyFile);
    if (previous?.key === key && (!previous.ok || (existsSync(library) && sha256File(library) === previous.library_sha256)))
      return { ok: previous.ok, flagSet: req.flagSet, flags: allFlags, library, log: previous.log, firstError: previous.firstError, key };
    return undefined;
  };
  const cacheKey = `ngcc-perf-build-${req.flagSet}-${key}`;
  const local = fromDisk() ?? ((await req.cache?.restore(outDir, cacheKey).catch(() => false)) ? fromDisk() : undefined);
  if (local) return local;
  const r = await runProcess(argv, {
    cwd,
    timeoutMs: req.timeoutMs,
    memoryLimitBytes: req.memoryLimitBytes,
    maxOutputBytes: 256 * 1024,
    sandbox: buildSandbox(req, readOnly, outDir),
  });
  // A full disk is the host's, not the submission's: never cached as its BUILDFAIL. (A source can
  // print the words, but not empty the disk.)
  if (r.exitCode !== 0 && /No space left on device/.test(r.stderr) && (freeBytes(outDir) ?? Infinity) < LOW_DISK_BYTES)
    throw diskFullError(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }), library);
  const log = `${notes.map((n) => `${n}\n`).join('')}$ ${argv.join(' ')}\n${r.stdout}${r.stderr}${r.timedOut ? '\n[build timed out]\n' : ''}`;
  writeFileAtomic(join(outDir, 'build.log'), log);
  const ok = r.exitCode === 0 && existsSync(library);
  // Paths relative to the candidate keep the message short and free of this machine's layout.
  const firstError = ok ? undefined : r.timedOut ? 'build timed out' : firstErrorLine(r.stderr)?.replaceAll(`${candidate.folder}/`, '');
  writeJsonAtomic(keyFile, { key, ok, log, firstError, library_sha256: ok ? sha256File(library) : undefined });
  if (ok) await req.cache?.save(outDir, cacheKey).catch(() => undefined);
  return { ok, flagSet: req.flagSet, flags: allFlags, library, log, firstError, key };
}
