import { execFileSync } from 'node:child_process';

let compilerVersion: string | undefined;

export const CC = process.env.NGCC_CC ?? 'gcc';

/** First line of `gcc --version`: part of every build key and of the environment record. */
export function ccVersion(): string {
  if (compilerVersion === undefined) {
    try {
      compilerVersion = execFileSync(CC, ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
    } catch {
      compilerVersion = 'unknown';
    }
  }
  return compilerVersion;
}
