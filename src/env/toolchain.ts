import { firstLineOf } from '../sandbox/run.js';

let compilerVersion: string | undefined;

export const CC = process.env.NGCC_CC ?? 'gcc';

/** First line of `gcc --version`: part of every build key and of the environment record. */
export function ccVersion(): string {
  compilerVersion ??= firstLineOf([CC, '--version']) ?? 'unknown';
  return compilerVersion;
}
