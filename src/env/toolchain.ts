import { accessSync, constants, realpathSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';
import { firstLineOf } from '../sandbox/run.js';

/**
 * The compiler of the harness's own tools (the drivers, the ct driver, the sandbox probe): trusted
 * code, always the host's gcc. Submissions are built with the campaign's `compiler`
 * (ngcc-perf.yml, default gcc as well).
 */
export const HARNESS_CC = 'gcc';

/** The compiler a build runs, and the nm that reads its objects. */
export interface Toolchain {
  cc: string;
  nm: string;
}

/**
 * The toolchain of a compiler command: a cross compiler's own nm (`aarch64-linux-gnu-gcc` →
 * `aarch64-linux-gnu-nm`), the host's for a plain `gcc`, `cc` or `clang`.
 */
export function toolchainOf(cc: string): Toolchain {
  return { cc, nm: `${/^(.*-)(?:gcc|cc|clang)(?:-[0-9.]+)?$/.exec(basename(cc))?.[1] ?? ''}nm` };
}

/** Where a system's compilers live: folders every sandbox shows read-only (src/sandbox/bwrap.ts). */
const SYSTEM_FOLDERS = ['/usr/', '/bin/', '/sbin/'];

/**
 * The executable a compiler name resolves to on PATH, if it is one of the system's: ngcc-perf.yml
 * comes from the campaign repository, which a pull request can change, so a compiler that lives
 * anywhere else (the repository, a workspace) is never run, not even for its `--version` outside
 * the sandbox. Also what the sandbox needs: it shows only the system folders.
 */
export function systemCompiler(name: string): string | undefined {
  if (name.includes('/') || name === '') return undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync(candidate);
      if (SYSTEM_FOLDERS.some((f) => real.startsWith(f))) return real;
    } catch {
      /* not in this folder */
    }
  }
  return undefined;
}

const versions = new Map<string, string>();

/**
 * First line of `<cc> --version` (`unknown` when it does not run, or is not a system compiler): part
 * of every build key and record.
 */
export function compilerVersion(cc: string = HARNESS_CC): string {
  let v = versions.get(cc);
  if (v === undefined) {
    v = (systemCompiler(cc) !== undefined ? firstLineOf([cc, '--version']) : null) ?? 'unknown';
    versions.set(cc, v);
  }
  return v;
}
