import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type CampaignSummary } from '../src/campaign/runCampaign.js';
import { buildArgv, flagsFor } from '../src/compile/compile.js';
import { loadCandidate } from '../src/config/campaign.js';
import { resolveSources } from '../src/config/sources.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { readPublished } from './helpers/pqclean.js';
import { buildRequestFor } from './helpers/build.js';
import { tempDir, testData } from './helpers/tmp.js';

// Real code nobody here wrote (pq-crystals Kyber ref/, copied unchanged with its licence), checked
// against digests nobody here computed (PQClean's published ML-KEM nistkat-sha256).
const KYBER = join(testData, 'pq-crystals-kyber');
const REF = join(KYBER, 'ref');
const published = readPublished(join(testData, 'reference', 'pqclean-kat.sha256'));

const SETS = [
  { k: 2, bits: 512, scheme: 'ml-kem-512', sk: 1632 },
  { k: 3, bits: 768, scheme: 'ml-kem-768', sk: 2400 },
  { k: 4, bits: 1024, scheme: 'ml-kem-1024', sk: 3168 },
] as const;

/**
 * One instance per parameter set: K=2 through a defines map and the sizes of api.h, K=3 through a
 * defines list and the KYBER_* macros of params.h, K=4 through a map again.
 */
function instanceYaml(set: (typeof SETS)[number]): string {
  const ns = `pqcrystals_kyber${set.bits}`;
  const fromParams = set.k === 3;
  return [
    `  - label: kyber${set.bits}`,
    `    dir: ${REF}`,
    fromParams ? `    defines: [KYBER_K=${set.k}]` : `    defines: {KYBER_K: ${set.k}}`,
    '    nist_names:',
    ...(fromParams ? ['      headers: [api.h, params.h]'] : []),
    `      keypair: ${ns}_ref_keypair`,
    `      enc: ${ns}_ref_enc`,
    `      dec: ${ns}_ref_dec`,
    `      pk_bytes: ${fromParams ? 'KYBER_PUBLICKEYBYTES' : `${ns}_PUBLICKEYBYTES`}`,
    `      sk_bytes: ${fromParams ? 'KYBER_SECRETKEYBYTES' : `${ns}_SECRETKEYBYTES`}`,
    `      ct_bytes: ${fromParams ? 'KYBER_CIPHERTEXTBYTES' : `${ns}_CIPHERTEXTBYTES`}`,
    `      ss_bytes: ${fromParams ? 'KYBER_SSBYTES' : `${ns}_BYTES`}`,
  ].join('\n');
}

function writeKyberCampaign(root: string, extra = ''): string {
  const folder = join(root, 'kem-1');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'candidate.yml'),
    `id: kem-1\ntype: kem\nalgorithm: Kyber (pq-crystals ref)\napi: nist\ninstances:\n${SETS.map(instanceYaml).join('\n')}\n${extra}`,
  );
  const lines = SETS.map((s) => {
    const digest = published.find((p) => p.scheme === s.scheme);
    if (!digest) throw new Error(`no published digest for ${s.scheme}`);
    return `${digest.sha256} strict:${digest.records ?? 1} kyber${s.bits}/PQCkemKAT_${s.sk}.rsp`;
  });
  writeFileSync(join(folder, 'kat.sha256'), `${lines.join('\n')}\n`);
  return folder;
}

describe('pq-crystals Kyber ref/, built unchanged through defines and nist_names', () => {
  let summary: CampaignSummary;
  let build: BuildJson;
  const root = tempDir();

  beforeAll(async () => {
    writeKyberCampaign(root);
    summary = await runCampaign({ campaignDir: root, system: 'test', dataDir: tempDir(), phases: new Set(['build', 'kat']) });
    build = JSON.parse(readFileSync(join(summary.systemDir, 'build.json'), 'utf8')) as BuildJson;
  }, 600_000);

  it.each(SETS.map((s) => [s.k, s.bits, s.scheme] as const))('KYBER_K=%i (Kyber%i) passes the published %s digest', (k, bits) => {
    const inst = summary.instances.find((i) => i.key === `kem-1/kyber${bits}`);
    expect(inst?.detail ?? '').toBe('');
    expect(inst?.kat).toBe('PASS');
    const entry = build.instances[`kem-1/kyber${bits}`]!;
    // Under the guide's flags (no fallback), with the define in the flags build.json records.
    expect(entry.flags).toBe('guide');
    expect(entry.build_flags?.split(' ')).toContain(`-DKYBER_K=${k}`);
  });

  it('left out ref/randombytes.c, which defines randombytes, as the build log says', async () => {
    const c = loadCandidate(join(root, 'kem-1'), 'kem-1/candidate.yml');
    const all = resolveSources(c.folder, c.instances[0]!, 0, 'kem-1/candidate.yml').sources;
    expect(all.map((f) => f.split('/').pop())).toContain('randombytes.c');
    const req = buildRequestFor(c, 0, { sandbox: 'none' });
    const built = await buildArgv(req, flagsFor(req), join(req.outDir, 'guide', 'libkyber512.so'));
    const own = built.sources.filter((f) => f.startsWith(REF));
    expect(own.map((f) => f.split('/').pop())).not.toContain('randombytes.c');
    expect(own.length).toBe(all.length - 1);
    expect(built.notes).toEqual(["# left out randombytes.c: it defines randombytes, which the harness's KAT generator provides"]);
    // The campaign's build says so at the top of its log.
    const log = readFileSync(join(summary.systemDir, 'build', 'kem-1', 'kyber512', 'guide', 'build.log'), 'utf8');
    expect(log.split('\n')[0]).toBe(built.notes[0]);
  });

  it('changes the build key when a define or a cflags entry changes, and only then', async () => {
    const c = loadCandidate(join(root, 'kem-1'), 'kem-1/candidate.yml');
    const key = async (defines: string[], cflags: string[] = []) => {
      const req = buildRequestFor(c, 1, { instance: { ...c.instances[1]!, defines, cflags }, sandbox: 'none' });
      return (await buildArgv(req, flagsFor(req), join(req.outDir, 'guide', 'libkyber768.so'))).key;
    };
    const three = await key(['KYBER_K=3']);
    expect(await key(['KYBER_K=3'])).toBe(three);
    expect(await key(['KYBER_K=4'])).not.toBe(three);
    expect(await key(['KYBER_K=3'], ['-O3'])).not.toBe(three);
  });
});

describe('a define the code refuses', () => {
  it('is a BUILDFAIL naming the compiler error', async () => {
    const root = tempDir();
    const folder = writeKyberCampaign(root);
    const yml = readFileSync(join(folder, 'candidate.yml'), 'utf8').replace('defines: {KYBER_K: 2}', 'defines: {KYBER_K: 5}');
    writeFileSync(join(folder, 'candidate.yml'), yml);
    const s = await runCampaign({
      campaignDir: root,
      system: 'test',
      dataDir: tempDir(),
      phases: new Set(['build', 'kat']),
      only: /kyber512$/,
    });
    const inst = s.instances.find((i) => i.key === 'kem-1/kyber512');
    expect(inst?.kat).toBe('BUILDFAIL');
    expect(inst?.detail).toMatch(/KYBER_K must be in \{2,3,4\}/);
  }, 300_000);
});

describe('the copy in test/data', () => {
  it('is the one SOURCE.md lists, file by file', () => {
    const listed = new Map(
      [...readFileSync(join(KYBER, 'SOURCE.md'), 'utf8').matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)].map((m) => [m[2]!, m[1]!]),
    );
    const files = ['LICENSE', 'AUTHORS', ...readdirSync(REF).map((f) => `ref/${f}`)];
    expect([...listed.keys()].sort()).toEqual(files.sort());
    for (const f of files)
      expect(
        createHash('sha256')
          .update(readFileSync(join(KYBER, f)))
          .digest('hex'),
        f,
      ).toBe(listed.get(f));
  });
});
