import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';

/**
 * The PQClean catalogue as a campaign (`ngcc-perf pqclean-campaign`): every scheme of a PQClean tree
 * (the `pqclean` npm package ships one under deps/PQClean/) built through the NIST API, with a
 * kat.sha256 line for each scheme whose published first-record digest is known.
 */

/** Sources of PQClean's common/ that the schemes call. */
const COMMON = ['fips202.c', 'sha2.c', 'sp800-185.c', 'aes.c', 'nistseedexpander.c'];

export interface PqcleanScheme {
  scheme: string;
  kind: 'kem' | 'sig';
  /** The clean implementation's folder. */
  dir: string;
  /** PQCLEAN_<NAME>_CLEAN_ */
  prefix: string;
  /** The NIST generator's file name (PQCkemKAT_<sk bytes>.rsp, PQCsignKAT_…). */
  file: string;
  /** HQC's KAT is made with its own SHAKE-256 generator (META.yml nistkat-rng: hqc). */
  katRng?: 'hqc';
}

/** A published digest of a scheme's first `records` KAT records (strict mode). */
export interface PublishedDigest {
  scheme: string;
  sha256: string;
  records: number;
}

/** Every scheme of a PQClean tree, KEMs then signatures, each by name. */
export function pqcleanSchemes(pqclean: string): PqcleanScheme[] {
  return (['kem', 'sig'] as const).flatMap((kind) => {
    const base = join(pqclean, kind === 'kem' ? 'crypto_kem' : 'crypto_sign');
    if (!existsSync(base)) throw new InputError(base, '', 'no such folder: not a PQClean tree');
    return readdirSync(base)
      .sort()
      .filter((scheme) => existsSync(join(base, scheme, 'clean', 'api.h')))
      .map((scheme) => schemeOf(base, scheme, kind));
  });
}

function schemeOf(base: string, scheme: string, kind: 'kem' | 'sig'): PqcleanScheme {
  const dir = join(base, scheme, 'clean');
  const prefix = `PQCLEAN_${scheme.replace(/-/g, '').toUpperCase()}_CLEAN_`;
  const api = readFileSync(join(dir, 'api.h'), 'utf8');
  const sk = new RegExp(`${prefix}CRYPTO_SECRETKEYBYTES\\s+(\\d+)`).exec(api)?.[1];
  if (sk === undefined) throw new InputError(join(dir, 'api.h'), `${prefix}CRYPTO_SECRETKEYBYTES`, 'not defined as a number');
  const file = `${kind === 'kem' ? 'PQCkemKAT' : 'PQCsignKAT'}_${sk}.rsp`;
  return { scheme, kind, dir, prefix, file, ...(scheme.startsWith('hqc-') ? { katRng: 'hqc' as const } : {}) };
}

/**
 * Published digests from a file of lines `<sha256> <scheme>` or, in kat.sha256's syntax,
 * `<sha256> strict[:N] <scheme>/<file>`; `#` starts a comment.
 */
export function readPublishedDigests(path: string): PublishedDigest[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l, i) => [l.trim(), i + 1] as const)
    .filter(([l]) => l !== '' && !l.startsWith('#'))
    .map(([text, line]) => {
      // A line's own comment (kat.sha256 allows one) is no field; one kat-manifest recorded is no published digest.
      const [l, comment] = [text.replace(/\s+#.*$/, ''), /\s#\s*(.*)$/.exec(text)?.[1] ?? ''];
      if (/^recorded by the harness\b/.test(comment))
        throw new InputError(path, `line ${line}`, 'recorded by the harness (kat-manifest), not a published digest');
      const f = l.split(/\s+/);
      if (!/^[0-9a-f]{64}$/.test(f[0] ?? '') || (f.length !== 2 && f.length !== 3))
        throw new InputError(path, `line ${line}`, 'expected "<sha256> <scheme>" or "<sha256> strict[:N] <scheme>/<file>"');
      if (f.length === 2) return { sha256: f[0]!, scheme: f[1]!, records: 1 };
      return { sha256: f[0]!, scheme: f[2]!.split('/')[0]!, records: Number(f[1]!.split(':')[1] ?? 1) };
    });
}

/** The candidate a scheme goes into: NIST's DRBG for KEMs and signatures, HQC's generator apart. */
const candidateOf = (s: PqcleanScheme): string => (s.katRng === 'hqc' ? 'kem-2' : s.kind === 'kem' ? 'kem-1' : 'sign-1');

/**
 * Writes the campaign into `out`: kem-1 (KEMs under NIST's DRBG), kem-2 (HQC, `kat_rng: hqc`) and
 * sign-1, each with its kat.sha256 lines for the schemes `digests` names. Returns the schemes
 * written without a line (their KAT is generated, NOKAT).
 */
export function writePqcleanCampaign(out: string, schemes: PqcleanScheme[], digests: PublishedDigest[], pqclean: string): string[] {
  const unlisted: string[] = [];
  for (const id of [...new Set(schemes.map(candidateOf))]) {
    const members = schemes.filter((s) => candidateOf(s) === id);
    const folder = join(out, id);
    mkdirSync(folder, { recursive: true });
    const instances = members.map((s) =>
      [
        `  - label: ${s.scheme}`,
        `    dir: ${s.dir}`,
        `    extra_sources: [${COMMON.map((c) => join(pqclean, 'common', c)).join(', ')}]`,
        `    include: [${join(pqclean, 'common')}]`,
        `    nist_prefix: ${s.prefix}`,
        // Falcon's secret key starts with a public format byte (0x50 + logn), which its signer checks.
        ...(s.scheme.startsWith('falcon') ? ['    ct:', '      public_sk_bytes: 1'] : []),
      ].join('\n'),
    );
    const kind = members[0]!.kind;
    writeFileSync(
      join(folder, 'candidate.yml'),
      [
        `# The PQClean catalogue (ngcc-perf pqclean-campaign): ${members.length} scheme(s), clean implementations.`,
        `id: ${id}`,
        `type: ${kind}`,
        `algorithm: PQClean ${kind === 'kem' ? 'KEMs' : 'signatures'}${id === 'kem-2' ? ' (HQC)' : ''}`,
        'api: nist',
        ...(id === 'kem-2' ? ['kat_rng: hqc'] : []),
        'instances:',
        ...instances,
        '',
      ].join('\n'),
    );
    const lines: string[] = [];
    for (const s of members) {
      const d = digests.find((p) => p.scheme === s.scheme);
      if (d) lines.push(`${d.sha256} strict:${d.records} ${s.scheme}/${s.file}`);
      else unlisted.push(s.scheme);
    }
    writeFileSync(
      join(folder, 'kat.sha256'),
      `# Published first-record digests (PQClean META.yml nistkat-sha256).\n${lines.map((l) => `${l}\n`).join('')}`,
    );
  }
  return unlisted;
}
