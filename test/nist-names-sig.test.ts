import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { PQCLEAN, readPublished, schemeInfo } from './helpers/pqclean.js';
import { tempDir, testData } from './helpers/tmp.js';

// The signature half of nist_names: PQClean's ML-DSA-44 named by its whole entry points instead of
// nist_prefix, checked against its published digest (the KAT goes through the shim's exports).
const SCHEME = 'ml-dsa-44';
const published = readPublished(join(testData, 'reference', 'pqclean-kat.sha256')).find((k) => k.scheme === SCHEME);
const COMMON = ['fips202.c', 'sha2.c', 'sp800-185.c', 'aes.c', 'nistseedexpander.c'];

describe('nist_names for a signature', () => {
  it(`PQClean ${SCHEME} under its whole names passes its published digest`, async () => {
    const info = schemeInfo(SCHEME);
    const p = info.prefix;
    const root = tempDir();
    const folder = join(root, 'sign-1');
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, 'candidate.yml'),
      [
        'id: sign-1',
        'type: sig',
        'algorithm: ML-DSA (PQClean clean)',
        'api: nist',
        'instances:',
        `  - label: ${SCHEME}`,
        `    dir: ${info.dir}`,
        `    extra_sources: [${COMMON.map((c) => join(PQCLEAN, 'common', c)).join(', ')}]`,
        `    include: [${join(PQCLEAN, 'common')}]`,
        '    nist_names:',
        `      keypair: ${p}crypto_sign_keypair`,
        `      sign: ${p}crypto_sign`,
        `      open: ${p}crypto_sign_open`,
        `      signature: ${p}crypto_sign_signature`,
        `      verify: ${p}crypto_sign_verify`,
        `      pk_bytes: ${p}CRYPTO_PUBLICKEYBYTES`,
        `      sk_bytes: ${p}CRYPTO_SECRETKEYBYTES`,
        `      sig_bytes: ${p}CRYPTO_BYTES`,
        '',
      ].join('\n'),
    );
    writeFileSync(join(folder, 'kat.sha256'), `${published!.sha256} strict:${published!.records ?? 1} ${SCHEME}/${info.file}\n`);
    const s = await runCampaign({ campaignDir: root, system: 'test', dataDir: tempDir(), phases: new Set(['build', 'kat']) });
    const inst = s.instances.find((i) => i.key === `sign-1/${SCHEME}`);
    expect(inst?.detail ?? '').toBe('');
    expect(inst?.kat).toBe('PASS');
  }, 600_000);
});
