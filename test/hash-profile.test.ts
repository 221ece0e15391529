import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import type { HashProfile, MemoryRecord } from '../src/evidence/fileTypes.js';
import { HASH_OPERATIONS } from '../src/measure/hashOperations.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { ICCS, QUICK } from './helpers/campaigns.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * Two hashes: the example's SM3 (its own compression function, no ICCS helper) and a CryptHash that
 * calls nothing but the ICCS sm3hash helper. The profile must tell them apart.
 */
function hashCampaign(): string {
  const root = tempDir();
  cpSync(join(repoRoot, 'examples', 'campaign', 'hash-80'), join(root, 'hash-80'), { recursive: true });
  const yml = join(root, 'hash-80', 'candidate.yml');
  writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(\.\.\/)+native\/iccs/g, ICCS));
  mkdirSync(join(root, 'hash-81', 'src'), { recursive: true });
  // A partial last byte is hashed as the whole byte (its unused bits are zero): no KAT truth here, only a
  // CryptHash that the KAT generator can run, so that the instance is timed and profiled.
  writeFileSync(
    join(root, 'hash-81', 'src', 'helper_hash.c'),
    '#include "auxfunc.h"\nint CryptHash(int bits, const unsigned char *msg, unsigned long long len, unsigned char *digest);\n' +
      'int CryptHash(int bits, const unsigned char *msg, unsigned long long len, unsigned char *digest) {\n' +
      '    return sm3hash(bits, msg, (len + 7) / 8 * 8, digest);\n}\n',
  );
  writeFileSync(
    join(root, 'hash-81', 'candidate.yml'),
    `id: hash-81\ntype: hash\nalgorithm: sm3hash\ninstances:\n  - label: helper-256\n    dir: src\n    digest_bits: 256\n    extra_sources: [${ICCS}/auxfunc.c, ${ICCS}/drng.c]\n    include: [${ICCS}]\n`,
  );
  writeFileSync(join(root, 'ngcc-perf.yml'), `${QUICK}profile:\n  target_s: 0.02\n  rounds: 3\n`);
  return root;
}

describe('the profile phase of a hash', () => {
  it("measures the ICCS helpers' share of CryptHash and each message length's memory, and the page shows them", async () => {
    const root = hashCampaign();
    const data = tempDir();
    await runCampaign({ campaignDir: root, system: 'x', dataDir: data, phases: new Set(['build', 'kat', 'measure', 'profile']) });
    const read = <T>(kind: string, id: string, label: string, op: string) =>
      JSON.parse(readFileSync(join(data, 'x', kind, id, `${label}__${op}.json`), 'utf8')) as T;
    for (const op of HASH_OPERATIONS) {
      const own = read<HashProfile>('profile', 'hash-80', 'SM3-256', op);
      const helper = read<HashProfile>('profile', 'hash-81', 'helper-256', op);
      expect(own.status, `hash-80 ${op}: ${own.failure}`).toBe('complete');
      expect(helper.status, `hash-81 ${op}: ${helper.failure}`).toBe('complete');
      // The example's SM3 calls no helper; the other CryptHash is nothing but one.
      expect(own.hash_share, `hash-80 ${op}`).toBeLessThan(0.05);
      expect(helper.hash_share, `hash-81 ${op}`).toBeGreaterThan(0.8);
      expect(helper.calls.some((c) => c.fn === 'sm3hash' && c.calls > 0)).toBe(true);
      const memory = read<MemoryRecord>('memory', 'hash-80', 'SM3-256', op);
      expect(memory.status, op).toBe('complete');
      expect(memory.stack_bytes).toBeGreaterThan(0);
    }
    const pages = renderPages(loadReportModel(join(data, 'x'), root));
    const page = [...pages.entries()].find(([path]) => path.includes('hash-81'))![1];
    const symmetric = sections(page).find((s) => s.heading === 'Symmetric primitives')!;
    expect(symmetric.tables[0]!.slice(1).map((r) => r[1])).toEqual([...HASH_OPERATIONS]);
  });
});
