import { relinkSteps } from './relink.js';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readJsonIfExists, sha256File, sha256Hex, writeFileAtomic, writeJsonAtomic } from '../util/fsx.js';
import { nativeDir } from '../util/paths.js';
import type { BuildRequest } from './compile.js';
import { buildArgv } from './compile.js';
import { nativeManifest, nativePath } from './harnessTools.js';

/** The wrapper sources of the profile build, absolute: native/binaries.json's `linked.hashprof` (native/linked/hashprof/). */
const hashprofSources = (): string[] => nativeManifest().linked.hashprof.sources.map(nativePath);

/** The wrappable symbols: every `#ifdef NGCC_WRAP_<sym>` in the wrapper source of that name. */
export function wrapCatalog(file: 'wrap_iccs.c' | 'wrap_nist.c'): string[] {
  const source = hashprofSources().find((f) => basename(f) === file);
  if (!source) throw new Error(`native/binaries.json lists no ${file} among the hash-profile wrappers`);
  const text = readFileSync(source, 'utf8');
  return [...text.matchAll(/^#ifdef NGCC_WRAP_(\w+)/gm)].map((m) => m[1]!);
}

export interface ProfileBuildResult {
  ok: boolean;
  library: string;
  wrapped: string[];
  log: string;
}

/**
 * Relinks an instance with link-time wrappers (`-Wl,--wrap=`) around the symmetric entry points
 * its own objects define (a wrapper for a symbol nobody defines would not link), plus the
 * accounting core. LTO is switched off: under -flto GCC silently bypasses --wrap.
 */
export async function buildProfiled(req: BuildRequest, flags: string[], wanted: string[]): Promise<ProfileBuildResult> {
  const outDir = join(req.outDir, 'profile');
  const objDir = join(outDir, 'obj');
  mkdirSync(objDir, { recursive: true });
  const library = join(outDir, `lib${req.instance.label}.so`);
  const plain = await buildArgv(req, flags, library);
  const compileFlags = [...plain.flags, '-fno-lto', ...plain.defines, ...plain.includes];
  // plain.key covers the sources, the flags and the harness version (hashprof included).
  const key = sha256Hex([plain.key, '-fno-lto', wanted.join(',')].join('\n'));
  const keyFile = join(outDir, 'profile-key.json');
  const previous = readJsonIfExists<ProfileBuildResult & { key: string; library_sha256?: string }>(keyFile);
  if (previous?.key === key && (!previous.ok || (existsSync(library) && sha256File(library) === previous.library_sha256)))
    return { ok: previous.ok, library, wrapped: previous.wrapped, log: previous.log };

  const log: string[] = [];
  const { cc, run, compileEach, definedFunctions } = relinkSteps(req, plain, outDir, log);
  const finish = (ok: boolean, wrapped: string[]) => {
    const result = { ok, library, wrapped, log: log.join('\n') };
    writeFileAtomic(join(outDir, 'build.log'), result.log);
    writeJsonAtomic(keyFile, { ...result, key, library_sha256: ok ? sha256File(library) : undefined });
    return result;
  };
  const objects = await compileEach(compileFlags, objDir);
  if (!objects) return finish(false, []);
  const defined = await definedFunctions(objects);
  const wrapped = wanted.filter((s) => defined.has(s));
  const defines = wrapped.map((s) => `-DNGCC_WRAP_${s}`);
  // The accounting core and the wrappers (native/binaries.json), which include their headers by relative paths.
  for (const source of hashprofSources()) {
    const obj = join(objDir, `hashprof-${basename(source, '.c')}.o`);
    const includes = [`-I${nativeDir()}`];
    if ((await run([cc, ...plain.flags, '-fno-lto', ...defines, ...includes, '-c', source, '-o', obj])).exitCode !== 0)
      return finish(false, wrapped);
    objects.push(obj);
  }
  const link = await run([
    cc,
    ...plain.flags,
    '-fno-lto',
    '-shared',
    ...plain.linkFlags,
    ...wrapped.map((s) => `-Wl,--wrap=${s}`),
    '-o',
    library,
    ...objects,
    ...plain.libs,
  ]);
  return finish(link.exitCode === 0 && existsSync(library), wrapped);
}
