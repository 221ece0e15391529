import { join } from 'node:path';
import { type PqcleanScheme, pqcleanSchemes, readPublishedDigests } from '../../src/catalogs/pqclean.js';
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

/** A file of published digests: `<sha256> <scheme>` or kat.sha256 lines (catalogs/pqclean.ts reads both). */
export const readPublished = (path: string): PublishedKat[] => readPublishedDigests(path);
