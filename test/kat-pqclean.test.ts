import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type CampaignSummary } from '../src/campaign/runCampaign.js';
import { buildInstance } from '../src/compile/compile.js';
import { harnessTools } from '../src/compile/harnessTools.js';
import { loadCandidate } from '../src/config/campaign.js';
import { parseManifest } from '../src/config/katManifest.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { canonicalDigest } from '../src/kat/manifest.js';
import { runKat } from '../src/kat/runKat.js';
import { answerUnseenSeed } from '../src/kat/unseen.js';
import { nistEntryPrefix } from '../src/compile/nistShim.js';
import { buildRequestFor } from './helpers/build.js';
import { runCli } from './helpers/cli.js';
import { packageSchemes, readPublished, schemeInfo } from './helpers/pqclean.js';
import { testData, tempDir } from './helpers/tmp.js';

// Ground truth nobody here wrote: PQClean's published first-record digests (META.yml's
// nistkat-sha256; liboqs's kats.json for McEliece; two Falcon variants as quoted beside code
// written elsewhere), for every scheme the pqclean package ships.
const reference = readPublished(join(testData, 'reference', 'pqclean-kat.sha256'));
const more = readPublished(join(testData, 'pqclean-more-kat.txt'));
const catalogue = readPublished(join(testData, 'reference', 'pqclean-kat-catalogue.sha256'));
const falconQuoted = readPublished(join(testData, 'pqclean-falcon-kat.txt'));
const hqcPublished = readPublished(join(testData, 'reference', 'pqclean-kat-hqc.sha256'));
const SOURCES = [reference, more, catalogue, falconQuoted];

const ALL = packageSchemes();
const HQC = ALL.filter((s) => s.startsWith('hqc-'));
/** One digest per scheme, from whichever source has it (the sources agree where they overlap: tested). */
const published = [...new Map(SOURCES.flat().map((k) => [k.scheme, k])).values()].filter((k) => !HQC.includes(k.scheme));
const unpublished = ALL.filter((s) => !published.some((k) => k.scheme === s) && !hqcPublished.some((k) => k.scheme === s));
/** Records the determinism check compares (of the 100 a KAT without a manifest line writes). */
const REPEAT_RECORDS = 10;

async function katOnly(root: string, data: string): Promise<CampaignSummary> {
  return runCampaign({ campaignDir: root, system: 'test', dataDir: data, phases: new Set(['build', 'kat']) });
}

describe("the pqclean package's whole catalogue through the NIST API", () => {
  let summary: CampaignSummary;
  const root = tempDir();
  const data = tempDir();
  const instance = (scheme: string) => summary.instances.find((i) => i.key.endsWith(`/${scheme}`));

  // `ngcc-perf pqclean-campaign` writes the campaign, with the digests of test/data; then it builds
  // and KAT-checks all 35 schemes: minutes on 2 cores, more when they are shared.
  beforeAll(async () => {
    const digests = join(tempDir(), 'published.sha256');
    writeFileSync(
      digests,
      [...published, ...hqcPublished]
        .map((k) => `${k.sha256} strict:${k.records ?? 1} ${k.scheme}/${schemeInfo(k.scheme).file}\n`)
        .join(''),
    );
    const written = await runCli(['pqclean-campaign', root, '--digests', digests]);
    expect(written.code, written.err.join('\n')).toBe(0);
    expect(written.out).toContain(
      `no published digest (their KAT is generated, NOKAT): ${[...unpublished].sort((a, b) => ALL.indexOf(a) - ALL.indexOf(b)).join(', ')}`,
    );
    summary = await katOnly(root, data);
  }, 1_500_000);

  it('covers every scheme of the package: 35, ML-KEM, HQC, Classic McEliece, ML-DSA, Falcon and SPHINCS+', () => {
    expect(ALL).toHaveLength(35);
    for (const family of ['ml-kem-', 'hqc-', 'mceliece', 'ml-dsa-', 'falcon-', 'sphincs-'])
      expect(
        ALL.some((s) => s.startsWith(family)),
        family,
      ).toBe(true);
    expect(summary.instances.map((i) => i.key.split('/')[1]).sort()).toEqual([...ALL].sort());
    // Only these have no digest to be found: their KATs are checked for determinism below.
    expect(unpublished.sort()).toEqual(['falcon-1024', 'hqc-192', 'hqc-256']);
  });

  it('the sources of published digests agree wherever two name one scheme', () => {
    const seen = new Map<string, string>();
    for (const k of [...SOURCES.flat(), ...hqcPublished]) {
      expect(seen.get(k.scheme) ?? k.sha256, k.scheme).toBe(k.sha256);
      seen.set(k.scheme, k.sha256);
    }
  });

  it.each([...published, ...hqcPublished].map((k) => k.scheme))('%s PASSes its published digest', (scheme) => {
    const inst = instance(scheme);
    expect(inst, scheme).toBeDefined();
    expect(inst!.detail ?? '').toBe('');
    expect(inst!.kat).toBe('PASS');
  });

  it.each(unpublished)(
    '%s, with no published digest, gives the same KAT in a second run and from the harness-default build',
    async (scheme) => {
      const inst = instance(scheme);
      expect(inst?.kat).toBe('NOKAT');
      const c = loadCandidate(join(root, inst!.key.split('/')[0]!), 'candidate.yml');
      const index = c.instances.findIndex((i) => i.label === scheme);
      const { file } = schemeInfo(scheme);
      const first = readFileSync(join(summary.systemDir, 'kat', c.id, scheme, file), 'latin1');
      const digest = canonicalDigest(first, 'strict', REPEAT_RECORDS);
      const manifest = parseManifest(`${digest} strict:${REPEAT_RECORDS} ${scheme}/${file}\n`, 'kat.sha256');
      const tools = await harnessTools();
      const kat = (library: string) =>
        runKat({
          candidate: c,
          label: scheme,
          nistPrefix: c.instances[index]!.nist_prefix,
          library,
          driver: tools.driver,
          outDir: tempDir(),
          manifest,
          timeoutMs: 300_000,
        });
      const guide = join(summary.systemDir, 'build', c.id, scheme, 'guide', `lib${scheme}.so`);
      expect((await kat(guide)).status).toBe('PASS');
      const fallback = await buildInstance(
        buildRequestFor(c, index, { flagSet: 'harness-default', harnessVersion: tools.version, timeoutMs: 600_000 }),
      );
      expect(fallback.ok, fallback.log).toBe(true);
      const build = JSON.parse(readFileSync(join(summary.systemDir, 'build.json'), 'utf8')) as BuildJson;
      expect(fallback.flags.join(' ')).not.toBe(build.instances[inst!.key]!.build_flags);
      expect((await kat(fallback.library)).status).toBe('PASS');
    },
    600_000,
  );

  // One scheme of each family and generator (HQC's own randombytes among them): the whole catalogue
  // took 399 s here, and passed (this test over ALL, 2026-12-06).
  const UNSEEN_FAMILIES = ['ml-kem-512', 'hqc-128', 'mceliece348864', 'ml-dsa-44', 'falcon-512', 'sphincs-shake-128f-simple'];
  it('answers an unseen seed by its KAT procedure: the published seed gives a scheme of each family its KAT text, another seed another', async () => {
    const tools = await harnessTools();
    const build = JSON.parse(readFileSync(join(summary.systemDir, 'build.json'), 'utf8')) as BuildJson;
    // PQCgenKAT's entropy, 00..2f (the 16 bytes after it are not read).
    const publishedSeed = Buffer.concat([Buffer.from([...Array(48).keys()]), Buffer.alloc(16)]);
    for (const scheme of UNSEEN_FAMILIES) {
      const inst = instance(scheme)!;
      const c = loadCandidate(join(root, inst.key.split('/')[0]!), 'candidate.yml');
      const spec = c.instances.find((i) => i.label === scheme)!;
      const e = build.instances[inst.key]!;
      const ask = (seed: Buffer) =>
        answerUnseenSeed({
          driver: tools.driver,
          library: join(root, e.library!),
          type: c.type,
          mode: 'nist',
          nistPrefix: nistEntryPrefix(spec),
          digestMode: 'strict',
          seed,
          records: 1,
          timeoutMs: 600_000,
        });
      const [same, other] = [await ask(publishedSeed), await ask(Buffer.from(publishedSeed.map((b) => b ^ 1)))];
      if ('failure' in same || 'failure' in other) throw new Error(`${scheme}: ${JSON.stringify([same, other])}`);
      const kat = readFileSync(join(summary.systemDir, e.kat_file!), 'latin1');
      expect(kat.startsWith(same.text) && same.text.includes('count = 0'), scheme).toBe(true);
      expect(other.digest, scheme).not.toBe(same.digest);
    }
  }, 1_500_000);

  it("falcon-1024's first key pair is falcon-padded-1024's, whose digest is published (one key generation, the same seed)", () => {
    const first = (label: string) => {
      const rsp = readFileSync(join(summary.systemDir, 'kat', 'sign-1', label, 'PQCsignKAT_2305.rsp'), 'latin1');
      return ['pk', 'sk', 'sm'].map((k) => new RegExp(`^${k} = ([0-9A-F]+)$`, 'm').exec(rsp)?.[1]);
    };
    const [pk, sk, sm] = first('falcon-1024');
    const [ppk, psk, psm] = first('falcon-padded-1024');
    expect(pk).toMatch(/^[0-9A-F]{3586}$/);
    expect([pk, sk]).toEqual([ppk, psk]);
    // The signatures differ in their encoding only: padded is fixed-length, so not the same bytes.
    expect(sm).not.toBe(psm);
  });
});

describe('a published digest with one hex digit flipped', () => {
  it('gives MISMATCH for that instance only', async () => {
    const root = tempDir();
    const digests = join(tempDir(), 'published.sha256');
    writeFileSync(
      digests,
      reference.map((k) => `${k.sha256} strict:${k.records ?? 1} ${k.scheme}/${schemeInfo(k.scheme).file}\n`).join(''),
    );
    const only = `^(${reference.map((k) => k.scheme).join('|')})$`;
    expect((await runCli(['pqclean-campaign', root, '--digests', digests, '--only', only])).code).toBe(0);
    const manifest = join(root, 'kem-1', 'kat.sha256');
    const lines = readFileSync(manifest, 'utf8').split('\n');
    const at = lines.findIndex((l) => /^[0-9a-f]{64} /.test(l));
    const flipped = lines[at]!.split(' ')[2]!.split('/')[0]!;
    lines[at] = `${lines[at]![0] === '0' ? '1' : '0'}${lines[at]!.slice(1)}`;
    writeFileSync(manifest, lines.join('\n'));
    const s = await katOnly(root, tempDir());
    expect(s.instances).toHaveLength(reference.length);
    for (const i of s.instances) expect(i.kat, i.key).toBe(i.key === `kem-1/${flipped}` ? 'MISMATCH' : 'PASS');
  });
});

describe('pqclean-campaign', () => {
  it('refuses a folder that is not empty, an --only that matches nothing and a malformed digest line, naming them', async () => {
    const full = tempDir();
    writeFileSync(join(full, 'x'), '');
    const r = await runCli(['pqclean-campaign', full]);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(/OUT_DIR: .* is not empty: name a new folder/);
    const none = await runCli(['pqclean-campaign', join(tempDir(), 'new'), '--only', '^nothing$']);
    expect(none.code).toBe(2);
    expect(none.err.join('\n')).toMatch(/--only: '\^nothing\$' matches no scheme/);
    const bad = join(tempDir(), 'digests.sha256');
    writeFileSync(bad, '# published\n0123 ml-kem-512\n');
    const wrong = await runCli(['pqclean-campaign', join(tempDir(), 'new'), '--digests', bad]);
    expect(wrong.code).toBe(2);
    expect(wrong.err.join('\n')).toMatch(/digests\.sha256: line 2: expected "<sha256> <scheme>"/);
  });
});
