import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

// A toy key exchange with one fault per instance (test/fixtures/kex/kex-1/common/toy_kex.inc), through the CLI.
describe('key-exchange fixtures: build, KAT and timing', () => {
  const campaign = tempDir();
  const out = tempDir();
  let build: Record<string, { kat: string; kat_detail?: string; sizes?: Record<string, number> }>;
  const system = join(out, 'local');

  beforeAll(async () => {
    cpSync(join(repoRoot, 'test', 'fixtures', 'kex'), campaign, { recursive: true });
    // The copy sits elsewhere: point the shared ICCS sources back at the repository's.
    const yml = join(campaign, 'kex-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replaceAll('../../../../../native', join(repoRoot, 'native')));
    const r = await runCli(['run', campaign, '--system', 'local', '--out', out, '--phases', 'build,kat,measure']);
    expect(r.code, r.err.join('\n')).toBe(1); // the faulty instances fail their KAT
    build = JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')).instances;
  }, 300_000);

  it('a KEX whose passes disagree with kex_get_passes_num(), and one whose secrets differ, are CRYPTOFAIL with the reason', () => {
    expect(build['kex-1/passes']).toMatchObject({
      kat: 'CRYPTOFAIL',
      kat_detail: 'record 0: kex_generate_pass2_msg_b returned 1 (exchange complete) after 2 passes, but kex_get_passes_num() is 3',
    });
    expect(build['kex-1/secrets']).toMatchObject({
      kat: 'CRYPTOFAIL',
      kat_detail: 'record 0: the shared secrets of A and B differ (32 and 32 bytes)',
    });
    expect(build['kex-1/overflow']).toMatchObject({ kat: 'OVERFLOW', kat_detail: 'M1: write 1 bytes past the claimed 64' });
  });

  it('writes KAT_KEX_<label>.txt in the generator layout, whose secrets an independent SM3 (OpenSSL) reproduces', () => {
    expect(build['kex-1/good']!.kat).toBe('NOKAT');
    expect(build['kex-1/good']!.sizes).toMatchObject({ kex_passes: 2, msg1_bytes: 32, msg2_bytes: 32, total_msg_bytes: 64, pk_bytes: 32 });
    const text = readFileSync(join(system, 'kat', 'kex-1', 'good', 'KAT_KEX_good.txt'), 'latin1');
    const records = text.trim().split('\n\n');
    expect(records).toHaveLength(10);
    const keys = records[0]!.split('\n').map((l) => l.split(' = ')[0]);
    expect(keys).toEqual([
      'Count',
      'Seed_Len',
      'Seed',
      'Pass_Num',
      'PKa_Len',
      'PKa',
      'SKa_Len',
      'SKa',
      'Init_Sta_Len',
      'Init_Sta',
      'PKb_Len',
      'PKb',
      'SKb_Len',
      'SKb',
      'Init_Stb_Len',
      'Init_Stb',
      'Pass1_Sta_Len',
      'Pass1_Sta',
      'M1_Len',
      'M1',
      'Pass2_Stb_Len',
      'Pass2_Stb',
      'M2_Len',
      'M2',
      'SS_Len',
      'SS',
    ]);
    for (const rec of records) {
      const f = Object.fromEntries(rec.split('\n').map((l) => l.split(' = ') as [string, string]));
      // The toy's secret is SM3(a || b), a = A's pass-1 state, b = B's message (toy_kex.inc).
      const sm3 = execFileSync('openssl', ['dgst', '-sm3', '-binary'], { input: Buffer.from(f.Pass1_Sta! + f.M2!, 'hex') });
      expect(f.SS).toBe(sm3.toString('hex').toUpperCase());
      expect(f.Pass_Num).toBe('2');
    }
  });

  it('times the exchange and every step, the steps counted inside full exchanges', () => {
    const ops = ['exchange', 'init_a', 'init_b', 'pass1', 'pass2', 'derive_a', 'derive_b'];
    const records = ops.map((op) => JSON.parse(readFileSync(join(system, 'records', 'kex-1', `good__${op}.json`), 'utf8')));
    for (const r of records) {
      expect(r.status, r.operation).toBe('complete');
      expect(r.kex).toEqual({ kex_passes: 2, kex_passes_run: 2 });
      expect(r.sizes).toMatchObject({ msg1_bytes: 32, msg2_bytes: 32, total_msg_bytes: 64 });
      // Every trial's counted span is part of its loop of whole exchanges.
      for (const t of r.trials) expect(t.cycles).toBeLessThanOrEqual(t.loop_cycles);
    }
    const [exchange, ...steps] = records;
    // Each step's trials cost whole exchanges, so all the operations get the exchange's plan.
    // Within each trial (the mean over trials would mix a quiet trial's loop with a disturbed one's step).
    for (const s of steps)
      for (const t of s.trials) expect(t.loop_cycles / t.measurements, s.operation).toBeGreaterThan(t.cycles / t.measurements);
    expect(exchange.timing_scope).toBe('loop');
    expect(steps.map((s) => s.timing_scope)).toEqual(Array(6).fill('per_call_step'));
    for (const s of [...steps, exchange]) expect(Number(s.processes[0].meta.span_overhead_cycles)).toBeGreaterThan(0);
    // The faulty instances were not timed.
    expect(() => readFileSync(join(system, 'records', 'kex-1', 'secrets__exchange.json'))).toThrow();
  });

  it('refuses a key exchange under the NIST API, naming the file and field', async () => {
    const bad = tempDir();
    cpSync(join(campaign, 'kex-1'), join(bad, 'kex-1'), { recursive: true });
    const yml = join(bad, 'kex-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace('type: kex', 'type: kex\napi: nist'));
    const r = await runCli(['run', bad, '--system', 'local', '--out', tempDir(), '--phases', 'build']);
    expect([...r.err, ...r.progress.split('\n')].join('\n')).toMatch(/kex-1\/candidate\.yml.*api.*only the ICCS API/);
  });
});
