import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type CampaignSummary } from '../src/campaign/run.js';
import { readPublished, writePqcleanCampaign } from './helpers/pqclean.js';
import { testData, tempDir } from './helpers/tmp.js';

// Ground truth nobody here wrote: PQClean's published first-record digests.
const reference = readPublished(join(testData, 'reference', 'pqclean-kat.sha256'));
const more = readPublished(join(import.meta.dirname, 'data', 'pqclean-more-kat.txt'));

async function katOnly(root: string, data: string): Promise<CampaignSummary> {
  return runCampaign({ campaignDir: root, system: 'test', dataDir: data, phases: new Set(['build', 'kat']) });
}

describe('NIST KAT of real PQClean code against published digests', () => {
  let summary: CampaignSummary;
  const root = tempDir();
  const data = tempDir();

  // Builds and KAT-checks every scheme: minutes on 2 cores, more when they are shared.
  beforeAll(async () => {
    writePqcleanCampaign(root, [...reference, ...more]);
    summary = await katOnly(root, data);
  }, 900_000);

  it.each([...reference, ...more].map((k) => k.scheme))('%s PASSes', (scheme) => {
    const inst = summary.instances.find((i) => i.key.endsWith(`/${scheme}`));
    expect(inst, scheme).toBeDefined();
    expect(inst!.detail ?? '').toBe('');
    expect(inst!.kat).toBe('PASS');
  });
});

describe('a published digest with one hex digit flipped', () => {
  it('gives MISMATCH for that instance only', async () => {
    const root = tempDir();
    writePqcleanCampaign(root, reference);
    const manifest = join(root, 'kem-1', 'kat.sha256');
    const text = readFileSync(manifest, 'utf8');
    const digit = text[5] === '0' ? '1' : '0';
    writeFileSync(manifest, `${text.slice(0, 5)}${digit}${text.slice(6)}`);
    const flipped = text.split('\n')[0]!.split(' ')[2]!.split('/')[0]!;
    const s = await katOnly(root, tempDir());
    expect(s.instances).toHaveLength(reference.length);
    for (const i of s.instances) expect(i.kat, i.key).toBe(i.key === `kem-1/${flipped}` ? 'MISMATCH' : 'PASS');
  });
});
