import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from 'simple-statistics';
import { beforeAll, describe, expect, it } from 'vitest';
import { divisorOf, generate, model, operationRows, ROUND1 } from '../bench/synthetic/generate.mjs';
import { loadCampaign } from '../src/config/campaign.js';
import type { TimingRecord } from '../src/evidence/fileTypes.js';
import { trialCanary } from '../src/measure/canary.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

// The synthetic Round-1 campaign of bench/round1.mjs (bench/synthetic/README.md).
describe('synthetic Round-1 campaign: the generator', () => {
  it('writes 119 candidates the harness reads, 41 KEM, 34 signatures, 9 KEX and 35 hashes, each with 1–4 instances', () => {
    const dir = tempDir();
    const g = generate(dir, { seed: 1, scale: 100 });
    const { candidates, invalid } = loadCampaign(dir);
    expect(invalid).toEqual([]);
    const count = (type: string) => candidates.filter((c) => c.type === type).length;
    expect({ kem: count('kem'), sig: count('sig'), kex: count('kex'), hash: count('hash') }).toEqual(ROUND1);
    const sizes = candidates.map((c) => c.instances.length);
    expect(Math.min(...sizes)).toBe(1);
    expect(Math.max(...sizes)).toBe(4);
    expect(new Set(sizes).size).toBeGreaterThan(2);
    // Each instance's spins are its modelled cycles / scale / 4 cycles per iteration.
    const kem = g.candidates.find((c) => c.type === 'kem')!;
    const inst = kem.instances[0]!;
    const loaded = candidates.find((c) => c.id === kem.id)!.instances[0]!;
    expect(loaded.defines).toEqual(
      Object.entries(inst.ops).map(([op, cycles]) => `SYNTH_${op.toUpperCase()}=${Math.round(cycles / 100 / 4)}`),
    );
  });

  it('with keepBelow, keeps costs up to it at their modelled size and scales larger ones no lower than it', () => {
    const g = generate(tempDir(), { seed: 1, scale: 1000, keepBelow: 1e6 });
    let [kept, clamped, scaled] = [0, 0, 0];
    for (const c of g.candidates)
      for (const inst of c.instances) {
        const largest = Math.max(...Object.values(inst.ops));
        for (const [op, cycles] of Object.entries(inst.ops)) {
          const spun = inst.scaled_ops![op]!;
          // A hash scales all its messages alike, by its largest message's divisor: its per-byte cost stays linear.
          const divisor = c.type === 'hash' ? divisorOf(largest, 1000, 1e6) : divisorOf(cycles, 1000, 1e6);
          expect(spun, `${c.id}/${inst.label}/${op}`).toBe(Math.round(cycles / divisor));
          if (c.type === 'hash') continue;
          if (cycles <= 1e6) {
            expect(spun).toBe(cycles);
            kept++;
          } else if (cycles < 1e9) {
            expect(spun).toBe(1e6);
            clamped++;
          } else {
            expect(spun).toBe(Math.round(cycles / 1000));
            scaled++;
          }
        }
      }
    // The model has operations of all three kinds (many fast, some between, a few extreme).
    expect(kept).toBeGreaterThan(100);
    expect(clamped).toBeGreaterThan(10);
    expect(scaled).toBeGreaterThan(0);
    // The order of the costs holds: a dearer operation never spins less.
    const rows = g.candidates
      .filter((c) => c.type !== 'hash')
      .flatMap((c) => c.instances.flatMap((i) => Object.entries(i.ops).map(([op, cy]) => [cy, i.scaled_ops![op]!] as const)));
    for (const [a, sa] of rows) for (const [b, sb] of rows.slice(0, 50)) if (a < b) expect(sa).toBeLessThanOrEqual(sb);
    // Without it, every cost is divided by the scale, as before.
    expect(divisorOf(5e5, 1000)).toBe(1000);
  });

  it('spreads operation costs like Round 1: many of 10^5–10^6 cycles, tens near 10^8, a few of 10^10 or more', () => {
    for (const seed of [1, 2, 3]) {
      const rows = operationRows(model({ seed }));
      const within = (lo: number, hi: number) => rows.filter((r) => r.cycles >= lo && r.cycles < hi).length;
      const decades = [3, 4, 5, 6, 7, 8, 9, 10].map((d) => within(10 ** d, 10 ** (d + 1)));
      expect(within(1e5, 1e6)).toBe(Math.max(...decades));
      expect(within(1e5, 1e6)).toBeGreaterThan(300);
      expect(within(10 ** 7.5, 10 ** 9.5)).toBeGreaterThanOrEqual(20);
      expect(within(10 ** 7.5, 10 ** 9.5)).toBeLessThan(100);
      expect(within(1e10, Infinity)).toBeGreaterThanOrEqual(3);
      expect(within(1e10, Infinity)).toBeLessThanOrEqual(30);
    }
  });

  it('is reproducible from its seed, and another seed gives another campaign', () => {
    expect(model({ seed: 7 })).toEqual(model({ seed: 7 }));
    expect(model({ seed: 7 })).not.toEqual(model({ seed: 8 }));
  });
});

describe('synthetic Round-1 campaign: the toys pass the KAT driver and cost what they are told', () => {
  const campaign = tempDir();
  const data = tempDir();
  let build: Record<string, { kat: string; kat_detail?: string; sizes?: Record<string, number> }>;

  beforeAll(async () => {
    generate(campaign, { seed: 1, scale: 1000, perCategory: 1 });
    const r = await runCli(['run', campaign, '--system', 'synth', '--out', data, '--phases', 'build,kat']);
    // Exit 1: without kat.sha256 lines every instance is NOKAT, after the driver's own checks passed.
    expect(r.code, r.err.join('\n')).toBe(1);
    build = JSON.parse(readFileSync(join(data, 'synth', 'build.json'), 'utf8')).instances;
  }, 600_000);

  it('builds every instance of one candidate per category, and each passes the honest checks (NOKAT, not CRYPTOFAIL)', () => {
    expect(Object.keys(build).sort()).toEqual([
      'hash-01/H1',
      'hash-01/H2',
      'kem-01/L1',
      'kem-01/L2',
      'kem-01/L3',
      'kex-01/L1',
      'kex-01/L2',
      'kex-01/L3',
      'sign-01/L1',
      'sign-01/L2',
      'sign-01/L3',
    ]);
    // The driver checks enc/dec secrets, fresh signatures, both sides' KEX secrets and hash
    // determinism before it looks for a kat.sha256 line: a toy failing one would be CRYPTOFAIL.
    for (const [key, e] of Object.entries(build)) expect(e.kat, `${key}: ${e.kat_detail}`).toBe('NOKAT');
    expect(build['kem-01/L1']!.kat_detail).toBe('no line for this instance in kat.sha256');
    expect(build['kex-01/L1']!.sizes).toMatchObject({ kex_passes: 2, ss_actual_bytes: 32 });
    expect(build['hash-01/H1']!.sizes).toMatchObject({ digest_bits: 256 });
  });

  it('an instance modelled k times dearer measures about k times the cycles (unscaled, through the timing phase)', async () => {
    const unscaled = tempDir();
    const out = tempDir();
    const g = generate(unscaled, {
      seed: 1,
      scale: 1,
      perCategory: 1,
      planning: { trials: 3, trial_target_s: 0.02, op_budget_s: 2, warmups: 1 },
    });
    const r = await runCli([
      'run',
      unscaled,
      '--system',
      'synth',
      '--out',
      out,
      '--only',
      '^kem-01/L(1|3)$',
      '--phases',
      'build,kat,measure',
    ]);
    expect(r.code, r.err.join('\n')).toBe(1);
    const kem = g.candidates.find((c) => c.id === 'kem-01')!;
    // Each trial's cycles per call over its canary's, the fixed work timed on the same core around it:
    // the host's invisible slowdowns (up to 2× on this VM) stretch both, so the ratio holds across them.
    const perCanary = (label: string, op: string) => {
      const r = JSON.parse(readFileSync(join(out, 'synth', 'records', 'kem-01', `${label}__${op}.json`), 'utf8')) as TimingRecord;
      const canaries = r.trials.map((t) => trialCanary(t.canary_cycles));
      expect(
        canaries.every((c) => c !== undefined && c > 0),
        `${label} ${op}: a trial without its canary`,
      ).toBe(true);
      return median(r.trials.map((t, i) => t.cycles / t.measurements / canaries[i]!));
    };
    for (const op of ['keygen', 'enc', 'dec']) {
      const modelled = kem.instances[2]!.ops[op]! / kem.instances[0]!.ops[op]!;
      const measured = perCanary('L3', op) / perCanary('L1', op);
      const says = `${op}: modelled ${modelled.toFixed(2)}×, measured ${measured.toFixed(2)}×`;
      // A property of the spin (cycles in proportion to iterations); an instance that did not scale
      // would give about 1/modelled (0.33–0.40 here), below the band.
      expect(modelled, says).toBeGreaterThan(2);
      expect(measured / modelled, says).toBeGreaterThan(0.6);
      expect(measured / modelled, says).toBeLessThan(1.6);
    }
  }, 600_000);
});
