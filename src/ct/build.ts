import { relinkSteps } from '../compile/relink.js';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildArgv, type BuildRequest } from '../compile/compile.js';
import { nativeManifest, nativePath } from '../compile/harnessTools.js';
import { readJsonIfExists, sha256File, sha256Hex, writeFileAtomic, writeJsonAtomic } from '../util/fsx.js';
import { nativeDir } from '../util/paths.js';

/** The generators whose output native/linked/ct_wrap.c marks secret, wherever a library's own objects define them. */
const CT_GENERATORS = ['get_random_number', 'randombytes', 'PQCLEAN_randombytes'] as const;

/** Which relink of the library: its folder under the build, and the flags added to the instance's. */
export interface CtBuildVariant {
  dir: string;
  extra: readonly string[];
}
/** The build memcheck runs: debug lines, and no LTO (see buildCt). */
const CT_CHECK_BUILD: CtBuildVariant = { dir: 'ct', extra: ['-gdwarf-4', '-fno-lto'] };
/**
 * The build the coverage of the same calls is counted in (ct/coverage.ts): gcov's counters at -O0,
 * after the instance's own -O. Coverage is of the source lines the calls took, which the inputs
 * decide; an optimising build folds inlined functions into their callers, and gcov then counts
 * their lines, and the functions, as never run although their code ran.
 */
export const CT_COVERAGE_BUILD: CtBuildVariant = { dir: 'ct-coverage', extra: ['--coverage', '-fno-lto', '-O0'] };

export interface CtBuildResult {
  ok: boolean;
  library: string;
  /** The generators wrapped (those the library defines). */
  wrapped: string[];
  /** The compile flags of the ct build: the instance's, then the variant's (-g and -fno-lto). */
  flags: string[];
  /** The objects' folder (their .gcno files, in a coverage build). */
  objDir?: string;
  log: string;
  librarySha256?: string;
  /** What the build read of the submission (its folder, include folders, sources): where a finding's source line may be read. */
  sourceRoots: string[];
}

/**
 * The library relinked for the constant-time check: the instance's own flags (same optimisation)
 * plus `-gdwarf-4`, so memcheck and the division finder can name file and line (with gcc 12's default
 * DWARF 5, binutils 2.40's objdump names the including `.c` file for code of an `#include`d one), and `-fno-lto`, under which GCC would bypass the
 * link-time wrappers (`-Wl,--wrap=`) that mark every generator's output secret (native/linked/ct_wrap.c).
 * Built in the instance's build folder under `ct/`, in the compiler's sandbox; an unchanged build
 * is kept.
 */
export async function buildCt(req: BuildRequest, flags: string[], variant: CtBuildVariant = CT_CHECK_BUILD): Promise<CtBuildResult> {
  const outDir = join(req.outDir, variant.dir);
  const objDir = join(outDir, 'obj');
  mkdirSync(objDir, { recursive: true });
  const library = join(outDir, `lib${req.instance.label}.so`);
  const plain = await buildArgv(req, flags, library);
  const extra = [...variant.extra];
  const compileFlags = [...plain.flags, ...extra, ...plain.defines, ...plain.includes];
  // plain.key covers the sources, the flags and the harness version (native/linked/ct_wrap.c included).
  const key = sha256Hex([plain.key, ...extra, variant.dir].join('\n'));
  const keyFile = join(outDir, 'ct-key.json');
  const previous = readJsonIfExists<CtBuildResult & { key: string; library_sha256?: string }>(keyFile);
  const shownFlags = [...plain.flags, ...extra];
  const sourceRoots = plain.readOnly.filter((p) => p !== nativeDir());
  if (previous?.key === key && (!previous.ok || (existsSync(library) && sha256File(library) === previous.library_sha256)))
    return {
      ok: previous.ok,
      library,
      objDir,
      wrapped: previous.wrapped,
      flags: shownFlags,
      sourceRoots,
      log: previous.log,
      ...(previous.library_sha256 ? { librarySha256: previous.library_sha256 } : {}),
    };

  const log: string[] = [];
  const { cc, run, compileEach, definedFunctions } = relinkSteps(req, plain, outDir, log);
  const finish = (ok: boolean, wrapped: string[]): CtBuildResult => {
    const librarySha256 = ok ? sha256File(library) : undefined;
    const result = { ok, library, objDir, wrapped, flags: shownFlags, log: log.join('\n'), ...(librarySha256 ? { librarySha256 } : {}) };
    writeFileAtomic(join(outDir, 'build.log'), result.log);
    writeJsonAtomic(keyFile, { ...result, key, library_sha256: librarySha256 });
    return { ...result, sourceRoots };
  };
  const objects = await compileEach(compileFlags, objDir);
  if (!objects) return finish(false, []);
  const defined = await definedFunctions(objects);
  const wrapped = CT_GENERATORS.filter((s) => defined.has(s));
  const wrapObj = join(objDir, 'ct_wrap.o');
  const wrapArgv = [
    cc,
    ...plain.flags,
    ...extra,
    ...wrapped.map((s) => `-DNGCC_CT_WRAP_${s}`),
    '-c',
    ...nativeManifest().linked.ct_wrap.sources.map(nativePath),
    '-o',
    wrapObj,
  ];
  if ((await run(wrapArgv)).exitCode !== 0) return finish(false, wrapped);
  const link = await run([
    cc,
    ...plain.flags,
    ...extra,
    '-shared',
    ...plain.linkFlags,
    ...wrapped.map((s) => `-Wl,--wrap=${s}`),
    '-o',
    library,
    ...objects,
    wrapObj,
    ...plain.libs,
  ]);
  return finish(link.exitCode === 0 && existsSync(library), wrapped);
}
