import { accessSync, constants, realpathSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';
import { firstLineOf } from '../sandbox/runProcess.js';

/**
 * The compiler of the harness's own tools (the drivers, the ct driver, the sandbox probe): trusted
 * code, always the host's gcc. Submissions are built with the campaign's `compiler`
 * (ngcc-perf.yml, default gcc as well).
 */
export const HARNESS_CC = 'gcc';

/** The compiler a build runs, and the nm that reads its objects: absolute paths under the system folders. */
export interface Toolchain {
  cc: string;
  nm: string;
}

/** Where a system's compilers live: folders every sandbox shows read-only (src/sandbox/bwrap.ts). */
const SYSTEM_FOLDERS = ['/usr/', '/bin/', '/sbin/'];

/**
 * The executable a compiler name resolves to on PATH, if it is one of the system's: ngcc-perf.yml
 * comes from the campaign repository, which a pull request can change, so a compiler that lives
 * anywhere else (the repository, a workspace) is never run, not even for its `--version` outside
 * the sandbox. Also what the sandbox needs: it shows only the system folders. A PATH entry outside
 * them is passed over for a later one; systemToolPath() then runs what this found, by its path.
 */
export function systemCompiler(name: string): string | undefined {
  if (name.includes('/') || name === '') return undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = realpathSync(candidate);
    if (SYSTEM_FOLDERS.some((f) => real.startsWith(f))) return real;
  }
  return undefined;
}

const resolved = new Map<string, string>();

/**
 * The absolute path a compiler or binutils name is run by, resolved once: every process that runs
 * it (its `--version` outside the sandbox, every build inside one) runs this path, so the program
 * that was checked is the program that runs, whatever PATH says later or inside a sandbox.
 */
export function systemToolPath(name: string): string {
  let path = resolved.get(name);
  if (path === undefined) {
    path = systemCompiler(name);
    // ngcc-perf.yml's compiler is checked in campaign/runPlan.ts with the file's name; this is the backstop.
    if (path === undefined)
      throw new Error(`'${name}' is not a program of this system: no executable of that name on PATH lives under /usr, /bin or /sbin`);
    resolved.set(name, path);
  }
  return path;
}

/**
 * The toolchain of a compiler name: a cross compiler's own nm (`aarch64-linux-gnu-gcc` →
 * `aarch64-linux-gnu-nm`), the host's for a plain `gcc`, `cc` or `clang`.
 */
export function toolchainOf(name: string): Toolchain {
  const nm = `${/^(.*-)(?:gcc|cc|clang)(?:-[0-9.]+)?$/.exec(basename(name))?.[1] ?? ''}nm`;
  return { cc: systemToolPath(name), nm: systemToolPath(nm) };
}

const versions = new Map<string, string>();

/**
 * First line of `<cc> --version` (`unknown` when it does not run, or is not a system compiler): part
 * of every build key and record.
 */
export function compilerVersion(cc: string = HARNESS_CC): string {
  let v = versions.get(cc);
  if (v === undefined) {
    // Under its own name, as records have always shown it ("gcc (Debian 12.2.0-14) 12.2.0"), not the
    // name of the file its path resolves to.
    v = (systemCompiler(cc) !== undefined ? firstLineOf([systemToolPath(cc), '--version'], undefined, cc) : null) ?? 'unknown';
    versions.set(cc, v);
  }
  return v;
}
