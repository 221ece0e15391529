import { basename } from 'node:path';
import { firstLineOf } from '../sandbox/run.js';

let compilerVersion: string | undefined;

export const CC = process.env.NGCC_CC ?? 'gcc';

/**
 * The nm of the compiler's target: a cross compiler's own (`aarch64-linux-gnu-gcc` →
 * `aarch64-linux-gnu-nm`), the host's for a plain `gcc` or `cc`.
 */
export const NM = `${/^(.*-)(?:gcc|cc)(?:-[0-9.]+)?$/.exec(basename(CC))?.[1] ?? ''}nm`;

/** First line of `gcc --version`: part of every build key and of the environment record. */
export function ccVersion(): string {
  compilerVersion ??= firstLineOf([CC, '--version']) ?? 'unknown';
  return compilerVersion;
}
