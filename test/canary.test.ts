// The canary (src/measure/canary.ts, native/core/canary.c): fixed reference work the driver's trusted half
// times before a trial's first window and after its last; a trial whose canary ran far beyond the
// host's recent reference is disturbed and measured again, and the trend page marks a slow night.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildToyKem } from './helpers/build.js';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { CANARY_MARGIN, CANARY_REFERENCE_MIN, CANARY_REFERENCE_TRIALS } from '../src/config/defaults.js';
import { planningSchema } from '../src/config/schemas.js';
import { allowedCpus } from '../src/env/cpus.js';
import { CanaryReference, canaryDisturbance, canaryOf, trialCanary } from '../src/measure/canary.js';
import { measureOperations } from '../src/measure/operation.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

describe('the canary line and rule', () => {
  it("reads the trusted half's CANARY line, and nothing else as one", () => {
    expect(canaryOf([['CANARY', '51234', '50999']])).toEqual({ before: 51234, after: 50999 });
    expect(canaryOf([['CANARY', '-', '50999']])).toEqual({ after: 50999 });
    for (const bad of [
      ['CANARY', '-', '-'],
      ['CANARY', '1'],
      ['CANARY', 'x', '2'],
      ['CANARY', '1', '2', '3'],
    ])
      expect(canaryOf([bad])).toBeUndefined();
  });

  it("takes a trial's canary as the faster of its two runs: only a slowdown across the whole trial counts", () => {
    expect(trialCanary({ before: 90_000, after: 50_000 })).toBe(50_000);
    expect(trialCanary({ after: 50_000 })).toBeUndefined();
    expect(trialCanary(undefined)).toBeUndefined();
  });

  it(`calls a trial disturbed from ${CANARY_MARGIN}× the median of the core's last ${CANARY_REFERENCE_TRIALS} canaries, once ${CANARY_REFERENCE_MIN} are in`, () => {
    const host = new CanaryReference();
    for (let i = 0; i < CANARY_REFERENCE_MIN - 1; i++) expect(canaryDisturbance(50_000, host)).toBeUndefined();
    // No reference yet: even a very slow canary is not judged.
    expect(canaryDisturbance(500_000, host)).toBeUndefined();
    // The reference is the median: the one slow canary among them moves it little.
    expect(canaryDisturbance(CANARY_MARGIN * 50_000 - 1, host)).toBeUndefined();
    expect(canaryDisturbance(CANARY_MARGIN * 50_000, host)).toBe(`the host ran slower: canary ${CANARY_MARGIN.toFixed(2)}× its reference`);
    // Margin 0 (planning.canary_margin) turns the rule off.
    expect(canaryDisturbance(1e9, host, 0)).toBeUndefined();
  });

  it('sees a slow stretch of trials, and takes a host that stays slow as its new reference', () => {
    const host = new CanaryReference();
    for (let i = 0; i < CANARY_REFERENCE_TRIALS; i++) canaryDisturbance(50_000, host);
    const calls = Array.from({ length: CANARY_REFERENCE_TRIALS }, () => canaryDisturbance(120_000, host) !== undefined);
    const flagged = calls.filter(Boolean).length;
    // Until the slow canaries are the median of the last trials, every one is flagged; then none.
    expect(calls.slice(0, flagged).every(Boolean)).toBe(true);
    expect(flagged).toBe(Math.floor(CANARY_REFERENCE_TRIALS / 2) + 1);
    expect(calls.at(-1)).toBe(false);
  });

  it('is Keccak-f[1600]: the zero state permuted gives the published first lane', () => {
    // FIPS 202's permutation; the Keccak team's KeccakF-1600 intermediate values give F1258F7940E1DDE7.
    const dir = tempDir();
    const main = join(dir, 'self.c');
    writeFileSync(
      main,
      '#include "core/canary.h"\n#include <stdio.h>\nint main(void) { printf("%016llx", (unsigned long long)canary_self_test()); return 0; }\n',
    );
    const exe = join(dir, 'self');
    const native = join(repoRoot, 'native');
    execFileSync('gcc', [
      '-std=gnu11',
      '-O2',
      `-I${native}`,
      '-o',
      exe,
      main,
      join(native, 'core', 'canary.c'),
      join(native, 'core', 'cpucycles.c'),
    ]);
    expect(execFileSync(exe, { encoding: 'utf8' }).trim()).toBe('f1258f7940e1dde7');
  });
});

describe('a trial whose canary ran beyond the host reference', () => {
  const cpu = (allowedCpus() ?? [0]).at(-1)!;
  let tools: HarnessTools;
  let lib: string;
  beforeAll(async () => {
    tools = await harnessTools();
    lib = buildToyKem(tempDir());
  }, 300_000);

  const measure = (canary: CanaryReference, canary_margin?: number) =>
    measureOperations([
      {
        type: 'kem',
        operation: 'keygen',
        cpu,
        rng: 'iccs-drng',
        sandbox: 'none',
        library: lib,
        driver: tools.driver,
        libraryShown: 'libgood.so',
        planning: planningSchema.parse({
          trials: 2,
          trial_target_s: 0.02,
          op_budget_s: 5,
          min_measurements: 10,
          warmups: 1,
          disturbed_retries: 1,
          ...(canary_margin !== undefined ? { canary_margin } : {}),
        }),
        canary,
      },
    ]);

  /** A host whose canary ran 1000 ticks a run before: no real canary (tens of thousands) comes near it. */
  const fastHost = () => {
    const host = new CanaryReference();
    for (let i = 0; i < CANARY_REFERENCE_TRIALS; i++) host.add(1000);
    return host;
  };

  it('is re-run up to disturbed_retries, then kept, marked and counted, and keeps its canary', async () => {
    const [r] = await measure(fastHost());
    expect(r!.status).toBe('complete');
    expect(r!.disturbed_retries).toBe(2);
    expect(r!.trials).toHaveLength(2);
    // Every trial's canary is far above the fast host's reference, so every trial is disturbed. A busy
    // host can make the off-CPU rule, which is judged first, name a trial before the canary does.
    for (const t of r!.trials) {
      expect(t.disturbed).toMatch(/^(the host ran slower: canary \d+\.\d\d× its reference|off the CPU .*)$/);
      expect(trialCanary(t.canary_cycles)).toBeGreaterThan(CANARY_MARGIN * 1000);
    }
  }, 120_000);

  it('with canary_margin 0, is not judged by it', async () => {
    const [r] = await measure(fastHost(), 0);
    expect(r!.status).toBe('complete');
    for (const t of r!.trials) expect(t.disturbed ?? '').not.toMatch(/canary/);
  }, 120_000);
});
