import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CampaignSummary } from '../src/campaign/context.js';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

// The example key exchange kex-80 (ML-KEM-512, examples/campaign/kex-80/README.md) against truth from
// outside the harness and the candidate: ML-KEM-512 from a program linked against PQClean alone
// (test/helpers/mlkem512_oracle.c), the ICCS DRNG and KAT_KEX generator from a Python model
// (test/helpers/mlkem_kex_kat.py), SHA3-256 from Python's hashlib.
const example = join(repoRoot, 'examples', 'campaign');
const pqclean = join(repoRoot, 'node_modules', 'pqclean', 'deps', 'PQClean');
const model = join(repoRoot, 'test', 'helpers', 'mlkem_kex_kat.py');
const KEX_FILE = 'KAT_KEX_ML-KEM-512-KEX.txt';

describe('the example key exchange kex-80 (ML-KEM-512)', () => {
  const data = tempDir();
  const oracle = join(tempDir(), 'mlkem512_oracle');
  let summary: CampaignSummary;
  let katFile: string;
  let build: { kat: string; sizes: Record<string, number> };

  beforeAll(async () => {
    const kem = join(pqclean, 'crypto_kem', 'ml-kem-512', 'clean');
    const sources = ['cbd', 'indcpa', 'kem', 'ntt', 'poly', 'polyvec', 'reduce', 'symmetric-shake', 'verify'];
    execFileSync('gcc', [
      ...['-O2', '-std=c99', '-D_GNU_SOURCE', `-I${kem}`, `-I${join(pqclean, 'common')}`, '-o', oracle],
      join(repoRoot, 'test', 'helpers', 'mlkem512_oracle.c'),
      ...sources.map((s) => join(kem, `${s}.c`)),
      join(pqclean, 'common', 'fips202.c'),
    ]);
    summary = await runCampaign({
      campaignDir: example,
      system: 'ex',
      dataDir: data,
      phases: new Set(['build', 'kat']),
      only: /^kex-80\//,
    });
    katFile = join(data, 'ex', 'kat', 'kex-80', 'ML-KEM-512-KEX', KEX_FILE);
    build = JSON.parse(readFileSync(join(data, 'ex', 'build.json'), 'utf8')).instances['kex-80/ML-KEM-512-KEX'];
  }, 300_000);

  const python = (...args: string[]) => spawnSync('python3', [model, args[0]!, oracle, ...args.slice(1)], { encoding: 'latin1' });

  it('passes the kat.sha256 digest, which the independent generator gives too', () => {
    expect(summary.instances.map((i) => `${i.key} ${i.kat}`)).toEqual(['kex-80/ML-KEM-512-KEX PASS']);
    const line = readFileSync(join(example, 'kex-80', 'kat.sha256'), 'utf8')
      .split('\n')
      .find((l) => l.endsWith(KEX_FILE))!;
    expect(python('digest').stdout.trim()).toBe(line.split(' ')[0]);
    // Not only the digest: the harness's file is the model's, byte for byte.
    expect(readFileSync(katFile, 'latin1')).toBe(python('generate').stdout);
  });

  it('each record: B’s secret from decapsulations with the file’s keys, and the messages the ML-KEM-512 sizes', () => {
    const r = python('check', katFile);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('10 records checked');
    // ML-KEM-512: pk 800, sk 1632, ct 768 bytes; M1 = ek || c1, M2 = c2.
    expect(build.sizes).toMatchObject({
      kex_passes: 2,
      pk_bytes: 800,
      sk_bytes: 1632,
      msg1_bytes: 800 + 768,
      msg2_bytes: 768,
      total_msg_bytes: 800 + 768 + 768,
      ss_bytes: 32,
    });
    const records = readFileSync(katFile, 'latin1').trim().split('\n\n');
    for (const rec of records) {
      expect(rec).toMatch(/^M1_Len = 1568$/m);
      expect(rec).toMatch(/^M2_Len = 768$/m);
      expect(rec).toMatch(/^SS_Len = 32$/m);
    }
  });

  it('the check fails on a file whose secret is one bit off', () => {
    const text = readFileSync(katFile, 'latin1');
    const bad = join(tempDir(), KEX_FILE);
    writeFileSync(
      bad,
      text.replace(/^SS = (.)/m, (_m, c: string) => `SS = ${c === '0' ? '1' : '0'}`),
      'latin1',
    );
    const r = python('check', bad);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/record 0: SS is not SHA3-256\(K1 \|\| K2\)/);
  });
});
