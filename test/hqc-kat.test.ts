import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type CampaignSummary } from '../src/campaign/runCampaign.js';
import { harnessTools } from '../src/compile/harnessTools.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import { PQCLEAN, readPublished, schemeInfo } from './helpers/pqclean.js';
import { tempDir, testData } from './helpers/tmp.js';

// PQClean's published digest for HQC, whose KAT generator is HQC's own SHAKE-256 PRNG (META.yml
// nistkat-rng: hqc), not NIST's DRBG.
const [hqc] = readPublished(join(testData, 'reference', 'pqclean-kat-hqc.sha256'));
const SCHEME = 'hqc-128';
const COMMON = ['fips202.c', 'sha2.c', 'sp800-185.c', 'aes.c', 'nistseedexpander.c'];

/** kem-1 holds hqc-128 of the pqclean package, with the given kat_rng line (or none). */
function writeHqcCampaign(root: string, katRng: string | undefined): void {
  const info = schemeInfo(SCHEME);
  const folder = join(root, 'kem-1');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'candidate.yml'),
    [
      'id: kem-1',
      'type: kem',
      'algorithm: HQC (PQClean clean)',
      'api: nist',
      ...(katRng ? [`kat_rng: ${katRng}`] : []),
      'instances:',
      `  - label: ${SCHEME}`,
      `    dir: ${info.dir}`,
      `    extra_sources: [${COMMON.map((c) => join(PQCLEAN, 'common', c)).join(', ')}]`,
      `    include: [${join(PQCLEAN, 'common')}]`,
      `    nist_prefix: ${info.prefix}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(folder, 'kat.sha256'), `${hqc!.sha256} strict:${hqc!.records ?? 1} ${SCHEME}/${info.file}\n`);
}

const katOnly = (root: string) => runCampaign({ campaignDir: root, system: 'test', dataDir: tempDir(), phases: new Set(['build', 'kat']) });

describe('PQClean hqc-128 with kat_rng: hqc', () => {
  let summary: CampaignSummary;
  let build: BuildJson;
  const root = tempDir();

  beforeAll(async () => {
    expect(hqc?.scheme).toBe(SCHEME);
    writeHqcCampaign(root, 'hqc');
    summary = await katOnly(root);
    build = JSON.parse(readFileSync(join(summary.systemDir, 'build.json'), 'utf8')) as BuildJson;
  }, 600_000);

  it('passes its published digest', () => {
    const inst = summary.instances.find((i) => i.key === `kem-1/${SCHEME}`);
    expect(inst?.detail ?? '').toBe('');
    expect(inst?.kat).toBe('PASS');
  });

  it("draws record 0's seed from SHAKE-256(00..2f || 01), as OpenSSL computes it", () => {
    const entry = build.instances[`kem-1/${SCHEME}`]!;
    const text = readFileSync(join(summary.systemDir, entry.kat_file!), 'latin1');
    const seed = /^seed = ([0-9A-F]+)$/m.exec(text)?.[1];
    const input = Buffer.concat([Buffer.from(Array.from({ length: 48 }, (_, i) => i)), Buffer.from([1])]);
    expect(seed).toBe(createHash('shake256', { outputLength: 48 }).update(input).digest('hex').toUpperCase());
  });

  it('seeds the timing driver with the same generator', async () => {
    const entry = build.instances[`kem-1/${SCHEME}`]!;
    const tools = await harnessTools();
    // build.json names the library relative to the campaign folder.
    const library = join(root, entry.library!);
    const r = await runDriver([tools.driver, library], ['time', 'kem', 'keygen', '3', '1', '-1', 'hqc', '0'], {
      timeoutMs: 60_000,
      markAnswers: { seed: '5e'.repeat(48) },
    });
    expect(r.rejected).toBeUndefined();
    expect(r.output.status).toBe('complete');
    expect(r.output.meta.rng).toBe('hqc');
  });
});

describe('PQClean hqc-128 with the NIST DRBG (no kat_rng)', () => {
  it('is a MISMATCH: the published digest needs HQC’s generator', async () => {
    const root = tempDir();
    writeHqcCampaign(root, undefined);
    const s = await katOnly(root);
    expect(s.instances.find((i) => i.key === `kem-1/${SCHEME}`)?.kat).toBe('MISMATCH');
  }, 600_000);
});
