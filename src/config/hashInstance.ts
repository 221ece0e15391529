import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { InstanceSpec } from './schemas.js';

/** The ICCS hash header every CryptHash submission ships (docs/campaign.md#hash-candidates). */
const HASH_HEADER = 'CryptHash_AlgorithmInstance.h';

const DEFINE = /^\s*#\s*define\s+DIGEST_BIT_LENGTH\s+\(?\s*([0-9]+)\s*\)?\s*(?:\/[/*].*)?$/m;

/**
 * The digest length of a hash instance in bits: `digest_bits` of candidate.yml, else the
 * DIGEST_BIT_LENGTH of its CryptHash_AlgorithmInstance.h (the instance folder first, then its
 * include folders). No symbol of the library carries it, and CryptHash takes it as an argument.
 * A problem names the file or the field, for the instance's KAT row.
 */
export function digestBitsOf(candidateFolder: string, inst: InstanceSpec, index: number): { bits: number } | { problem: string } {
  if (inst.digest_bits !== undefined) return { bits: inst.digest_bits };
  const dir = resolve(candidateFolder, inst.dir);
  const header = [dir, ...inst.include.map((p) => resolve(dir, p))].map((d) => join(d, HASH_HEADER)).find((f) => existsSync(f));
  const where = `candidate.yml instances[${index}]`;
  if (!header) return { problem: `${where}: no ${HASH_HEADER} in '${inst.dir}' or its include folders, and no digest_bits` };
  const m = DEFINE.exec(readFileSync(header, 'latin1'));
  const bits = m ? Number(m[1]) : Number.NaN;
  const shown = relative(candidateFolder, header);
  if (!m) return { problem: `${shown}: no '#define DIGEST_BIT_LENGTH <bits>' (or set digest_bits in ${where})` };
  if (bits < 8 || bits > 65536 || bits % 8 !== 0)
    return { problem: `${shown}: DIGEST_BIT_LENGTH ${bits} is not a multiple of 8 from 8 to 65536` };
  return { bits };
}
