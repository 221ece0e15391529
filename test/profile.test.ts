import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools } from '../src/compile/harnessTools.js';
import { wrapCatalog } from '../src/compile/profileBuild.js';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { allowedCpus } from '../src/env/cpus.js';
import type { HashProfile, MemoryRecord } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { formatShare } from '../src/text/format.js';
import { callsPerOperation, hashShares } from '../src/report/profile.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'campaign');
const examples = join(repoRoot, 'examples', 'campaign');

describe('the profile phase', () => {
  const data = tempDir();
  const sys = join(data, 's');
  const profile = (id: string, label: string, op: string) =>
    JSON.parse(readFileSync(join(sys, 'profile', id, `${label}__${op}.json`), 'utf8')) as HashProfile;
  const memory = (id: string, label: string, op: string) =>
    JSON.parse(readFileSync(join(sys, 'memory', id, `${label}__${op}.json`), 'utf8')) as MemoryRecord;

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

  it('keeps the median of the undisturbed rounds of five, which validate checks', () => {
    for (const op of ['keygen', 'enc', 'dec']) {
      const p = profile('kem-80', 'ml-kem-512', op);
      // A round that shared its core is run again and left out (this machine may be busy).
      const kept = p.round_hash_shares!;
      expect(kept.length, op).toBeGreaterThanOrEqual(1);
      expect(kept.length, op).toBeLessThanOrEqual(5);
      for (const r of p.left_out_rounds ?? []) expect(r.disturbed, op).toMatch(/^off the CPU/);
      const sorted = [...kept].sort((a, b) => a - b);
      expect(p.hash_share, op).toBe(sorted[Math.floor((sorted.length - 1) / 2)]);
    }
  });

  it('leaves out rounds that shared the core with another process, and says so when every round did', async () => {
    const cpus = allowedCpus() ?? [0];
    const cpu = cpus.at(-1)!;
    // The profile rounds hold a core of their own: a pool core, or the timing core on a host with one.
    const roundsCore = cpus.find((c) => c !== cpu) ?? cpu;
    const shared = tempDir();
    const competitor = spawn('taskset', ['-c', String(roundsCore), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
    try {
      await runCampaign({
        campaignDir: fixtures,
        system: 's',
        dataDir: shared,
        // Timed first, so that each round lasts long enough (target_s / rounds) for the scheduler to share the core.
        phases: new Set(['build', 'kat', 'measure', 'profile'] as const),
        only: /^kem-1\/good$/,
        cpu,
      });
    } finally {
      competitor.kill('SIGKILL');
    }
    const p = JSON.parse(readFileSync(join(shared, 's', 'profile', 'kem-1', 'good__enc.json'), 'utf8')) as HashProfile;
    // Every round was disturbed and run again twice (disturbed_retries): 5 kept, 10 left out.
    expect(p.disturbed_rounds).toBe(5);
    expect(p.round_hash_shares).toHaveLength(5);
    expect(p.left_out_rounds).toHaveLength(10);
    for (const r of p.left_out_rounds!) expect(r.disturbed).toMatch(/^off the CPU \d+\.\d % of the time/);
    expect(validateDataset(join(shared, 's'))).toEqual([]);
  });

  it('validate refuses a profile whose shares are missing or are not its calls’', () => {
    const path = join(sys, 'profile', 'kem-80', 'ml-kem-512__enc.json');
    const original = readFileSync(path, 'utf8');
    const p = JSON.parse(original) as HashProfile;
    const problemsWith = (changed: object) => {
      writeFileSync(path, JSON.stringify(changed));
      try {
        return validateDataset(sys);
      } finally {
        writeFileSync(path, original);
      }
    };
    expect(problemsWith({ ...p, round_hash_shares: p.round_hash_shares!.map((x) => x + 0.01) })).toEqual([
      expect.stringMatching(/ml-kem-512__enc\.json: hash_share .* is not the median of round_hash_shares/),
    ]);
    const { share, hash_share, ...bare } = p;
    expect(problemsWith(bare)).toEqual([expect.stringMatching(/share missing/), expect.stringMatching(/hash_share missing/)]);
    const { sha3_256, ...partial } = share!;
    expect(sha3_256).toBeGreaterThan(0);
    expect(problemsWith({ ...p, share: partial })).toEqual([
      expect.stringMatching(/share\.sha3_256 missing != 0\.\d+ recomputed from calls/),
    ]);
    const inflated = { ...p, calls: p.calls.map((c) => (c.fn === 'sha3_256' ? { ...c, ticks: c.ticks * 5 } : c)) };
    expect(problemsWith(inflated)).toEqual([
      expect.stringMatching(/share\.sha3_256 .* recomputed from calls/),
      expect.stringMatching(/hash_share .* recomputed from calls/),
    ]);
    expect(hash_share).toBeGreaterThan(0);
  });

  it('counts the same outermost calls as valgrind callgrind sees in the same execution (PQClean ML-KEM-512)', async () => {
    const tools = await harnessTools();
    const lib = join(sys, 'build', 'kem-80', 'ml-kem-512', 'profile', 'libml-kem-512.so');
    const catalog = new Set(wrapCatalog('wrap_nist.c'));
    const recorded = (sym: string) => (sym === 'PQCLEAN_randombytes' ? 'randombytes' : sym);
    for (const op of ['keygen', 'enc', 'dec']) {
      const out = join(data, `callgrind-${op}.out`);
      // The prof job switches its accounting on and off with ngcc_prof_enable: the third dump, taken when it
      // switches off, holds exactly the measured loop.
      const printed = execFileSync(
        'valgrind',
        [
          '--tool=callgrind',
          '--zero-before=ngcc_prof_enable',
          '--dump-before=ngcc_prof_enable',
          '--compress-strings=no',
          '--compress-pos=no',
          `--callgrind-out-file=${out}`,
          tools.driver,
          lib,
          'prof',
          'kem',
          op,
          '3',
          '1',
          '-1',
          'nist-ctr-drbg',
          '0', // no spot checks: they switch the accounting off and on around the chosen calls
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const wrappers = new Map<string, number>();
      for (const l of printed.split('\n').map((x) => x.split('\t')))
        if (l[0] === 'CALL') wrappers.set(l[1]!, (wrappers.get(l[1]!) ?? 0) + Number(l[4]));
      // Calls from code outside the wrapped set into a wrapper, as callgrind's call graph records them.
      const seen = new Map<string, number>();
      let fn = '';
      let callee: string | undefined;
      for (const line of readFileSync(`${out}.3`, 'utf8').split('\n')) {
        if (line.startsWith('fn=')) fn = line.slice(3).replace(/^\(\d+\) ?/, '');
        else if (line.startsWith('cfn=')) callee = /__wrap_(\w+)/.exec(line)?.[1];
        else if (line.startsWith('calls=') && callee && catalog.has(callee) && !catalog.has(fn.replace(/^__wrap_/, '')))
          seen.set(recorded(callee), (seen.get(recorded(callee)) ?? 0) + Number(line.slice(6).split(' ')[0]));
        if (!line.startsWith('cfn=') && !line.startsWith('calls=')) callee = undefined;
      }
      expect(wrappers.size, op).toBeGreaterThanOrEqual(op === 'dec' ? 4 : 5);
      expect(Object.fromEntries(seen), op).toEqual(Object.fromEntries(wrappers));
    }
  });

  it('records the stack and heap of each operation alone', () => {
    for (const op of ['keygen', 'enc', 'dec']) {
      const m = memory('kem-80', 'ml-kem-512', op);
      expect(m.status).toBe('complete');
      // PQClean ML-KEM-512 keeps its polynomials on the stack (a few KiB); massif agrees within a few
      // dozen bytes (README). The net figure is the operation's alone: the empty call's use removed.
      expect(m.stack_net_bytes!).toBeGreaterThan(4 * 1024);
      expect(m.stack_net_bytes!).toBeLessThan(32 * 1024);
      expect(m.stack_net_bytes).toBe(m.stack_bytes! - m.stack_baseline_bytes!);
      // Its heap is the Keccak contexts of common/fips202.c: one malloc per shake128_absorb, shake256 and
      // shake256_inc_init, freed before the next, so the allocations are those calls (counted by the
      // wrappers, a different driver) and the peak is one context: 25 or 26 words, as malloc rounds them.
      const p = profile('kem-80', 'ml-kem-512', op);
      const allocating = p.calls
        .filter((c) => ['shake128_absorb', 'shake256', 'shake256_inc_init'].includes(c.fn))
        .reduce((a, c) => a + c.calls, 0);
      expect(m.heap_allocations, op).toBe(allocating / p.total.operations);
      expect(m.heap_peak_bytes!, op).toBeGreaterThanOrEqual(25 * 8);
      expect(m.heap_peak_bytes!, op).toBeLessThan(2 * 25 * 8);
    }
    expect(memory('kem-80', 'ml-kem-512', 'dec').stack_net_bytes!).toBeGreaterThan(
      memory('kem-80', 'ml-kem-512', 'keygen').stack_net_bytes!,
    );
  });

  it('the evidence validates, shares included, and the pages show it', () => {
    expect(validateDataset(sys)).toEqual([]);
    const pages = renderPages(loadReportModel(sys, examples));
    const resources = sections(pages.get('kem-80/perf_s.md')!).find((s) => s.heading === '5. Resource consumption')!;
    expect(resources.tables).toHaveLength(2);
    expect(resources.tables[1]![0]).toEqual([
      'instance',
      'operation',
      'peak stack (bytes)',
      'peak heap (bytes)',
      'static bytes: .text / .data, .rodata, .data.rel.ro / .bss',
    ]);
    const keygen = resources.tables[1]!.find((row) => row[0] === 'ml-kem-512' && row[1] === 'keygen')!;
    expect(keygen[2]).toBe(String(memory('kem-80', 'ml-kem-512', 'keygen').stack_net_bytes));
    // The static split, against binutils' own reading of the section headers.
    const build = JSON.parse(readFileSync(join(sys, 'build.json'), 'utf8')) as { instances: Record<string, { library: string }> };
    const sizeA = execFileSync('size', ['-A', join(examples, build.instances['kem-80/ml-kem-512']!.library)], { encoding: 'utf8' });
    const section = (name: string) => Number(new RegExp(`^\\${name}\\s+(\\d+)`, 'm').exec(sizeA)?.[1] ?? 0);
    expect(keygen[4]).toBe(`${section('.text')} / ${section('.data') + section('.rodata') + section('.data.rel.ro')} / ${section('.bss')}`);
    expect(section('.text')).toBeGreaterThan(1000);
    const index = sections(pages.get('kem-80/perf_s.md')!).find((s) => s.heading === '7. Raw evidence index')!.tables[0]!;
    expect(index).toContainEqual(['ml-kem-512', 'memory dec', 'memory/kem-80/ml-kem-512__dec.json']);
    expect(index).toContainEqual(['ml-kem-512', 'symmetric-primitive survey', 'survey/kem-80/ml-kem-512.json']);
    const sym = sections(pages.get('kem-80/perf_s.md')!).find((s) => s.heading === 'Symmetric primitives')!.tables[0]!;
    expect(sym[0]![2]).toBe('hash (SHA-3/SHAKE/SHA-2)');
    // The kept (median) share, and how far the rounds it comes from spread around it: the five
    // planned, fewer when some stayed disturbed after their re-runs (a busy host).
    const kept = profile('kem-80', 'ml-kem-512', 'keygen');
    const n = kept.round_hash_shares!.length;
    expect(n + (kept.left_out_rounds?.length ?? 0)).toBeGreaterThanOrEqual(5);
    const [lo, hi] = [Math.min(...kept.round_hash_shares!), Math.max(...kept.round_hash_shares!)];
    // One round kept (the others disturbed on a busy host) has no spread to show.
    const range =
      n < 2
        ? ''
        : formatShare(lo) === formatShare(hi)
          ? ` (${formatShare(lo)} in all ${n} rounds)`
          : ` (${formatShare(lo).replace('%', '')}–${formatShare(hi)} over ${n} rounds)`;
    expect(sym.find((r) => r[0] === 'ml-kem-512' && r[1] === 'keygen')![2]).toBe(`${formatShare(kept.hash_share!)}${range}`);
  });
});
