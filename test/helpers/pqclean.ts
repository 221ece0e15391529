import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PqcleanScheme, pqcleanSchemes } from '../../src/catalogs/pqclean.js';
import { repoRoot } from './tmp.js';

export const PQCLEAN = join(repoRoot, 'node_modules', 'pqclean', 'deps', 'PQClean');

export interface PublishedKat {
  sha256: string;
  scheme: string;
  records?: number;
}

let schemes: PqcleanScheme[] | undefined;

/** One scheme of the pqclean package: its kind, clean folder, NIST prefix and KAT file name. */
export function schemeInfo(scheme: string): PqcleanScheme {
  schemes ??= pqcleanSchemes(PQCLEAN);
  const found = schemes.find((s) => s.scheme === scheme);
  if (!found) throw new Error(`the pqclean package has no scheme ${scheme}`);
  return found;
}

/** Every scheme the pqclean package ships, KEMs then signatures. */
export function packageSchemes(): string[] {
  schemes ??= pqcleanSchemes(PQCLEAN);
  return schemes.map((s) => s.scheme);
}

export function readPublished(path: string): PublishedKat[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const f = l.trim().split(/\s+/);
      if (f.length === 2) return { sha256: f[0]!, scheme: f[1]! };
      // Manifest syntax: <sha> strict:N <label>/<file>
      return { sha256: f[0]!, scheme: f[2]!.split('/')[0]!, records: Number(f[1]!.split(':')[1] ?? 1) };
    });
}
