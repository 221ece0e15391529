import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './tmp.js';

export const PQCLEAN = join(repoRoot, 'node_modules', 'pqclean', 'deps', 'PQClean');

export interface PublishedKat {
  sha256: string;
  scheme: string;
  records?: number;
}

export function schemeInfo(scheme: string) {
  const kind = existsSync(join(PQCLEAN, 'crypto_kem', scheme)) ? 'kem' : 'sig';
  const dir = join(PQCLEAN, kind === 'kem' ? 'crypto_kem' : 'crypto_sign', scheme, 'clean');
  const prefix = `PQCLEAN_${scheme.replace(/-/g, '').toUpperCase()}_CLEAN_`;
  const api = readFileSync(join(dir, 'api.h'), 'utf8');
  const sk = Number(new RegExp(`${prefix}CRYPTO_SECRETKEYBYTES\\s+(\\d+)`).exec(api)![1]);
  const file = `${kind === 'kem' ? 'PQCkemKAT' : 'PQCsignKAT'}_${sk}.rsp`;
  return { kind, dir, prefix, file };
}

const COMMON = ['fips202.c', 'sha2.c', 'sp800-185.c', 'aes.c', 'nistseedexpander.c'];

/**
 * Writes a campaign with one candidate per kind (kem-1, sign-1) holding the given PQClean schemes
 * through the NIST API, and kat.sha256 lines built from published digests.
 */
export function writePqcleanCampaign(root: string, kats: PublishedKat[]): void {
  for (const kind of ['kem', 'sig'] as const) {
    const chosen = kats.filter((k) => schemeInfo(k.scheme).kind === kind);
    if (chosen.length === 0) continue;
    const id = kind === 'kem' ? 'kem-1' : 'sign-1';
    const folder = join(root, id);
    mkdirSync(folder, { recursive: true });
    const instances = chosen.map((k) => {
      const info = schemeInfo(k.scheme);
      return [
        `  - label: ${k.scheme}`,
        `    dir: ${info.dir}`,
        `    extra_sources: [${COMMON.map((c) => join(PQCLEAN, 'common', c)).join(', ')}]`,
        `    include: [${join(PQCLEAN, 'common')}]`,
        `    nist_prefix: ${info.prefix}`,
      ].join('\n');
    });
    writeFileSync(
      join(folder, 'candidate.yml'),
      `id: ${id}\ntype: ${kind}\nalgorithm: PQClean ${kind}\napi: nist\ninstances:\n${instances.join('\n')}\n`,
    );
    const lines = chosen.map((k) => `${k.sha256} strict:${k.records ?? 1} ${k.scheme}/${schemeInfo(k.scheme).file}`);
    writeFileSync(join(folder, 'kat.sha256'), `${lines.join('\n')}\n`);
  }
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
