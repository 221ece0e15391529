import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign.js';
import type { HashProfile, MemoryRecord } from '../src/evidence/types.js';
import { validateDataset } from '../src/evidence/validate.js';
import { callsPerOperation, hashShares } from '../src/report/profile.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/render.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'campaign');
const examples = join(repoRoot, 'examples', 'campaign');

describe('the profile phase', () => {
  const data = tempDir();
  const sys = join(data, 's');
  const profile = (id: string, label: string, op: string) => JSON.parse(readFileSync(join(sys, 'profile', id, `${label}__${op}.json`), 'utf8')) as HashProfile;
  const memory = (id: string, label: string, op: string) => JSON.parse(readFileSync(join(sys, 'memory', id, `${label}__${op}.json`), 'utf8')) as MemoryRecord;

  beforeAll(async () => {
    const phases = new Set(['build', 'kat', 'measure', 'profile'] as const);
    await runCampaign({ campaignDir: fixtures, system: 's', dataDir: data, phases, only: /^kem-1\/good$/ });
    await runCampaign({ campaignDir: examples, system: 's', dataDir: data, phases, only: /^kem-(80\/ml-kem-512|90)/, trialTarget: 0.05 });
  });

  it('counts every wrapped call of the toy KEM exactly as its source makes them', () => {
    // keygen: r from the DRNG, SM3(r), pseudoXOF(r); enc: m from the DRNG, the mask, SM3(pk||m); dec: mask, SM3.
    expect(callsPerOperation(profile('kem-1', 'good', 'keygen'))).toBe('drng 1, pseudoXOF 1, sm3hash 1');
    expect(callsPerOperation(profile('kem-1', 'good', 'enc'))).toBe('drng 1, pseudoXOF 1, sm3hash 1');
    expect(callsPerOperation(profile('kem-1', 'good', 'dec'))).toBe('pseudoXOF 1, sm3hash 1');
    const enc = profile('kem-1', 'good', 'enc');
    expect(enc.calls.find((c) => c.fn === 'sm3hash')).toMatchObject({ in_bits: 768, out_bits: 256 });
    expect(enc.calls.find((c) => c.fn === 'pseudoXOF')).toMatchObject({ in_bits: 512, out_bits: 256 });
    expect(enc.meta?.tick_source).toBe(process.arch === 'x64' ? 'rdtsc' : expect.any(String));
  });

  it('measures the ICCS-helper share of ML-KEM-512 behind the ICCS API, and PQClean’s own Keccak share', () => {
    for (const op of ['keygen', 'enc', 'dec']) {
      const iccs = hashShares(profile('kem-90', 'ML-KEM-512-ICCS', op));
      expect(iccs.hash, op).toBeGreaterThan(0.3);
      expect(iccs.hash + iccs.drng, op).toBeLessThan(1);
      const pq = hashShares(profile('kem-80', 'ml-kem-512', op));
      expect(pq.hash, op).toBeGreaterThan(0.1);
      expect(pq.hash, op).toBeLessThan(0.8);
    }
    expect(hashShares(profile('kem-80', 'ml-kem-512', 'keygen')).drng).toBeGreaterThan(0);
    expect(hashShares(profile('kem-80', 'ml-kem-512', 'dec')).drng).toBe(0);
    expect(callsPerOperation(profile('kem-90', 'ML-KEM-512-ICCS', 'dec'))).not.toMatch(/drng/);
  });

  it('records the stack and heap of each operation alone', () => {
    for (const op of ['keygen', 'enc', 'dec']) {
      const m = memory('kem-80', 'ml-kem-512', op);
      expect(m.status).toBe('complete');
      // PQClean ML-KEM-512 keeps its polynomials on the stack (a few KiB) and its Keccak
      // contexts on the heap (a few hundred bytes); massif agrees within a few dozen bytes (README).
      expect(m.stack_net_bytes!).toBeGreaterThan(4 * 1024);
      expect(m.stack_net_bytes!).toBeLessThan(32 * 1024);
      expect(m.heap_peak_bytes!).toBeGreaterThan(0);
      expect(m.heap_peak_bytes!).toBeLessThan(4096);
    }
    expect(memory('kem-80', 'ml-kem-512', 'dec').stack_net_bytes!).toBeGreaterThan(memory('kem-80', 'ml-kem-512', 'keygen').stack_net_bytes!);
  });

  it('the evidence validates, shares included, and the pages show it', () => {
    expect(validateDataset(sys)).toEqual([]);
    const pages = renderPages(loadReportModel(sys, examples));
    const resources = sections(pages.get('kem-80/perf_s.md')!).find((s) => s.heading === '5. Resource consumption')!;
    expect(resources.tables).toHaveLength(2);
    expect(resources.tables[1]![0]).toEqual(['instance', 'operation', 'peak stack (bytes)', 'peak heap (bytes)', 'static .text / .data / .bss']);
    expect(resources.tables[1]![1]![2]).toMatch(/^\d+$/);
    const sym = sections(pages.get('kem-80/perf_s.md')!).find((s) => s.heading === 'Symmetric primitives')!.tables[0]!;
    expect(sym[0]![2]).toBe('hash (SHA-3/SHAKE/SHA-2)');
    expect(sym[1]![2]).toMatch(/^\d+(\.\d)?%$/);
  });
});
