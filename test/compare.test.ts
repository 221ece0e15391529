import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { annotations } from '../src/compare/annotations.js';
import { compareEvidence, judge, measuredTogether, undecidedRows } from '../src/compare/compare.js';
import { failReasons } from '../src/compare/failOn.js';
import { hasFindings, headline, renderComparison } from '../src/compare/markdown.js';
import { historyCv, permutationPValue, rankPValue, signedRankPValue } from '../src/compare/stats.js';
import type { CompareReport, CompareRow, PullRequestContext } from '../src/compare/compareReport.js';
import { ADAPTIVE_MIN_TRIALS, DEFAULT_ALPHA, DEFAULT_THRESHOLD_PCT } from '../src/config/defaults.js';
import type { TimingRecord } from '../src/evidence/fileTypes.js';
import { NOISY_TRIAL_SPREAD } from '../src/measure/stats.js';
import { runCli } from './helpers/cli.js';
import { writeSyntheticSystem } from './helpers/dataset.js';
import { tempDir } from './helpers/tmp.js';

describe('paired sides: trial pairs measured side by side in one run', () => {
  // The machine's speed drifts from trial to trial by up to 1.5×, alike for both trials of a pair.
  const drift = [1.0, 1.3, 0.95, 1.5, 1.1, 1.0, 1.4, 0.98, 1.2, 1.05];
  const sideOf = (factors: number[], paired = true) => {
    const trial_cycles = factors.map((f) => 10_000 * f);
    return {
      mean_cycles: trial_cycles.reduce((a, b) => a + b, 0) / trial_cycles.length,
      trial_cycles,
      ...(paired ? { paired: true } : {}),
    };
  };

  it('gives the exact signed-rank p-value: n pairs all one way reach 2/2^n', () => {
    expect(signedRankPValue([1, 2, 3, 4, 5])).toBeCloseTo(2 / 32, 12);
    expect(signedRankPValue(Array.from({ length: 10 }, (_, i) => 0.1 + i))).toBeCloseTo(2 / 1024, 12);
    expect(signedRankPValue([1, -1, 2, -2])).toBe(1);
    expect(signedRankPValue([])).toBe(1);
    // One pair moved however far changes only its own rank.
    const oneFar = (x: number) => signedRankPValue([0.01, -0.02, 0.03, -0.01, 0.02, -0.03, x, 0.015]);
    expect(oneFar(5)).toBe(oneFar(500));
  });

  it('tells a +12 % change from drift that makes each side spread 1.5×, where unpaired sides are only noisy', () => {
    const base = sideOf(drift);
    const head = sideOf(drift.map((f, i) => f * (1.12 + (i % 3) * 0.005)));
    const row = judge(base, head, 3, 0.01, null);
    expect(row.verdict).toBe('regression');
    expect(row.paired).toBe(true);
    expect(row.delta_pct).toBeCloseTo(12.5, 0);
    expect(row.p_value).toBeCloseTo(2 / 1024, 12);
    // The same trials without the pairing: each side spreads 1.5×, so nothing can be told.
    expect(
      judge(
        sideOf(drift, false),
        sideOf(
          drift.map((f) => f * 1.12),
          false,
        ),
        3,
        0.01,
        null,
      ).verdict,
    ).toBe('noisy');
  });

  it('calls the same code unchanged through the drift, and one pair 2× slower moves nothing', () => {
    const base = sideOf(drift);
    const same = sideOf(drift.map((f, i) => f * (1 + ((i % 5) - 2) * 0.004)));
    expect(judge(base, same, 3, 0.01, null).verdict).toBe('unchanged');
    const oneSlow = sideOf(drift.map((f, i) => (i === 3 ? 2 * f : f * (1 + ((i % 5) - 2) * 0.004))));
    const row = judge(base, oneSlow, 3, 0.01, null);
    expect(row.verdict).toBe('unchanged');
    expect(Math.abs(row.delta_pct!)).toBeLessThan(1);
  });

  it('is noisy when the pairs themselves disagree, and leaves out a pair with a trial off the CPU', () => {
    const base = sideOf(drift);
    const scattered = sideOf(drift.map((f, i) => f * [0.8, 1.3, 1.0, 1.25, 0.85, 1.2, 0.9, 1.35, 1.1, 0.75][i]!));
    const row = judge(base, scattered, 3, 0.01, null);
    expect(row.verdict).toBe('noisy');
    expect(row.reason).toMatch(/^10 trial pairs, the middle half of their ratios spread \d\.\d\d× \(noisy from 1\.25×\) and straddle 1/);
    // Pair 0 on head was half off the CPU: it goes, the other nine decide.
    const onCpu = drift.map((_, i) => (i === 0 ? 0.5 : 1));
    const head = { ...sideOf(drift.map((f, i) => (i === 0 ? f * 3 : f * 1.1))), trial_on_cpu: onCpu };
    const kept = judge(base, head, 3, 0.01, null);
    expect(kept.verdict).toBe('regression');
    expect(kept.reason).toContain('9 trial pairs');
    expect(kept.reason).toContain('1 pair with a trial off the CPU left out');
    expect(kept.delta_pct).toBeCloseTo(10, 6);
    // With every pair but one disturbed nothing is left to judge: noisy, still a paired row.
    const allOff = { ...sideOf(drift.map((f) => f * 1.5)), trial_on_cpu: drift.map((_, i) => (i === 0 ? 1 : 0.5)) };
    const none = judge(base, allOff, 3, 0.01, null);
    expect(none).toMatchObject({ verdict: 'noisy', paired: true });
    expect(none.reason).toMatch(/^fewer than 2 trial pairs without a trial off the CPU, judged side against side: trials spread/);
    // ... unless the change is larger than all of that noise: 20× slower, each trial at least 90 % on the CPU.
    const far = { ...sideOf(drift.map((f) => f * 20)), trial_on_cpu: drift.map(() => 0.9) };
    const offBase = { ...base, trial_on_cpu: drift.map(() => 0.9) };
    const called = judge(offBase, far, 3, 0.01, null);
    expect(called).toMatchObject({ verdict: 'regression', paired: true, noisy: true });
    expect(called.reason).toMatch(/judged side against side: .*but their worst-case ranges do not overlap/);
  });

  it("says in an inconclusive row's reason the smallest change its pairs could show, never below the threshold, or that they are too few", () => {
    // Tight pairs +10 %, held back by a nightly spread of ±5 %: they could show far less than the threshold.
    const tight = judge(sideOf(drift), sideOf(drift.map((f, i) => f * 1.1 * (1 + ((i % 5) - 2) * 0.002))), 3, 0.01, 0.05);
    expect(tight.verdict).toBe('inconclusive');
    expect(tight.mde_pct).toBeLessThan(3);
    expect(tight.reason).toMatch(
      /^within 3× the nightly spread ±5\.0%; 10 trial pairs, .*; the smallest change these pairs could show: ±3\.0%$/,
    );
    // Loose pairs, +6 % but not significant: the figure itself, above the threshold.
    const jitter = [1.0, 0.93, 1.08, 0.97, 1.06, 0.95, 1.1, 1.02, 0.96, 1.07];
    const loose = judge(sideOf(drift), sideOf(drift.map((f, i) => f * 1.05 * jitter[i]!)), 3, 0.01, null);
    expect(loose.verdict).toBe('inconclusive');
    expect(loose.mde_pct).toBeGreaterThan(3);
    expect(loose.reason).toMatch(
      /^p = 0\.02 > 0\.01: within the spread of the trials; .*; the smallest change these pairs could show: ±(\d+\.\d)%$/,
    );
    expect(loose.reason).toContain(`±${loose.mde_pct!.toFixed(1)}%`);
    // 6 pairs cannot reach p ≤ 0.01 (2/2^6): no figure, the reason says so.
    const six = drift.slice(0, 6);
    const few = judge(sideOf(six), sideOf(six.map((f, i) => f * 1.1 * (1 + ((i % 3) - 1) * 0.002))), 3, 0.01, null);
    expect(few).toMatchObject({ verdict: 'inconclusive', paired: true });
    expect(few.mde_pct).toBeUndefined();
    expect(few.reason).toMatch(
      /^p = 0\.031 > 0\.01: within the spread of the trials; 6 trial pairs, .*; too few pairs to reach the significance level$/,
    );
  });
});

describe('which records are pairs (measuredTogether)', () => {
  const record = (paired: boolean, starts: string[]) =>
    ({ paired, processes: starts.map((started_utc) => ({ started_utc })) }) as unknown as TimingRecord;
  const night1 = ['2026-12-01T01:00:00Z', '2026-12-01T01:00:02Z', '2026-12-01T01:00:04Z'];
  const night1Base = ['2026-12-01T01:00:01Z', '2026-12-01T01:00:03Z', '2026-12-01T01:00:05Z'];
  const night2 = ['2026-12-02T01:00:00Z', '2026-12-02T01:00:02Z'];

  it('pairs two paired records measured in one span, never two nights of a paired row', () => {
    expect(measuredTogether(record(true, night1Base), record(true, night1))).toBe(true);
    expect(measuredTogether(record(true, night1), record(true, night2))).toBe(false);
    expect(measuredTogether(record(false, night1Base), record(true, night1))).toBe(false);
    // Older evidence without its processes' starts is taken at its word.
    expect(measuredTogether(record(true, []), record(true, night2))).toBe(true);
  });
});

describe('the rows a pull request measures again (undecidedRows)', () => {
  const row = (operation: string, verdict: CompareRow['verdict'], extra: Partial<CompareRow> = {}): CompareRow => ({
    candidate: 'kem-1',
    label: 'good',
    operation,
    verdict,
    reason: '',
    paired: true,
    ...extra,
  });
  it('takes inconclusive, noisy, and unchanged rows whose pairs could not have shown the threshold; no unpaired row', () => {
    const report = {
      threshold_pct: 3,
      rows: [
        row('a', 'inconclusive'),
        row('b', 'noisy'),
        row('c', 'unchanged', { mde_pct: 1.5 }),
        row('d', 'unchanged', { mde_pct: 4.2 }),
        row('e', 'unchanged'),
        row('f', 'regression', { mde_pct: 9 }),
        row('g', 'inconclusive', { paired: undefined }),
      ],
    } as unknown as CompareReport;
    expect(undecidedRows(report).map((r) => r.operation)).toEqual(['a', 'b', 'd', 'e']);
  });
});

describe('the trial-level test', () => {
  it('gives the exact permutation p-value', () => {
    // Complete separation of 5 against 5: 2 of the 252 splits are as extreme.
    expect(permutationPValue([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).toBeCloseTo(2 / 252, 12);
    expect(permutationPValue([5, 5, 5], [5, 5, 5])).toBe(1);
    const mixed = permutationPValue([100, 102, 99, 101, 100], [101, 100, 102, 99, 100]);
    expect(mixed).toBeGreaterThan(0.5);
  });

  it('falls back to a seeded Monte Carlo estimate for large samples, reproducibly', () => {
    const a = Array.from({ length: 20 }, (_, i) => 100 + (i % 5));
    const b = Array.from({ length: 20 }, (_, i) => 103 + (i % 5));
    const p = permutationPValue(a, b);
    expect(p).toBeLessThan(0.01);
    expect(permutationPValue(a, b)).toBe(p);
  });

  it('ranks the trials, so that one trial moved however far changes the p-value at most by its own rank', () => {
    const base = [100, 101, 102, 103, 104];
    expect(rankPValue(base, [105, 106, 107, 108, 109])).toBeCloseTo(2 / 252, 12);
    // One head trial among the base ones: the same p wherever that trial goes above them all.
    const oneSlow = (x: number) => rankPValue(base, [x, 100.5, 101.5, 102.5, 103.5]);
    expect(oneSlow(200)).toBe(oneSlow(1e9));
    expect(oneSlow(200)).toBeGreaterThan(0.3);
    // Ties share their mean rank: identical samples are no evidence at all.
    expect(rankPValue([5, 5, 5], [5, 5, 5])).toBe(1);
  });

  it('needs a minimum effect, significance, and to exceed the nightly spread', () => {
    const base = { mean_cycles: 100, trial_cycles: [99, 100, 101, 100, 100] };
    const slow = { mean_cycles: 110, trial_cycles: [109, 110, 111, 110, 110] };
    const slightly = { mean_cycles: 101, trial_cycles: [100.5, 101, 101.5, 101, 101] };
    expect(judge(base, slow, 3, 0.01, null).verdict).toBe('regression');
    expect(judge(slow, base, 3, 0.01, null).verdict).toBe('improvement');
    expect(judge(base, slightly, 3, 0.01, null).verdict).toBe('unchanged');
    // 10% but the nightly runs of this operation vary by 5% (3σ = 15%): not called.
    expect(judge(base, slow, 3, 0.01, 0.05).verdict).toBe('inconclusive');
    // Trials spread 1.75×: noisy, not a verdict on a change.
    const noisy = { mean_cycles: 110, trial_cycles: [80, 140, 95, 125, 110] };
    expect(judge(base, noisy, 3, 0.01, null).verdict).toBe('noisy');
    // Large but not significant, and tight: inconclusive.
    const mixed = { mean_cycles: 105, trial_cycles: [99, 110, 108, 100.5, 109] };
    expect(judge(base, mixed, 3, 0.01, null).verdict).toBe('inconclusive');
    expect(historyCv([100, 100])).toBeNull();
  });

  it("cannot reach alpha with fewer than 5 trials a side, the adaptive plan's least (3 a side: p ≥ 2/20)", () => {
    // Complete separation of n against n: the smallest p the rank test can give, 2 / C(2n, n).
    const best = (n: number) =>
      rankPValue(
        Array.from({ length: n }, (_, i) => 100 + i),
        Array.from({ length: n }, (_, i) => 200 + i),
      );
    expect(best(3)).toBeCloseTo(2 / 20, 12);
    expect(best(4)).toBeCloseTo(2 / 70, 12);
    expect(best(5)).toBeCloseTo(2 / 252, 12);
    const fewest = [2, 3, 4, 5, 6].find((n) => best(n) <= DEFAULT_ALPHA);
    expect(fewest).toBe(5);
    expect(ADAPTIVE_MIN_TRIALS).toBe(fewest);
  });
});

describe('one disturbed trial against the robust verdict', () => {
  const steady = [100_000, 100_500, 99_800, 100_200, 99_900];
  const key = (r: CompareReport) => r.rows.find((x) => x.candidate === 'kem-1')!;

  function compareTrials(baseTrials: number[], headTrials: number[]): CompareReport {
    const base = tempDir();
    const head = tempDir();
    const inst = [{ id: 'kem-1', label: 'a' }];
    writeSyntheticSystem(base, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: baseTrials }]);
    writeSyntheticSystem(head, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: headTrials }]);
    return compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
  }

  it('calls evidence that differs in exactly one trial, 2× slower, noisy: no regression, and says so with the spread', () => {
    const headTrials = steady.map((c, i) => (i === 2 ? c * 2 : c));
    const r = compareTrials(steady, headTrials);
    const row = key(r);
    expect(row.verdict).toBe('noisy');
    expect(row.noisy).toBe(true);
    // The median trial moves by one place (100.0 k → 100.2 k), the mean by a fifth: the verdict uses the median.
    expect(row.delta_pct).toBeCloseTo(0.2, 6);
    expect(row.mean_delta_pct).toBeCloseTo((99_800 / 500_400) * 100, 9);
    expect(row.base!.trial_spread).toBeCloseTo(100_500 / 99_800, 9);
    expect(row.head!.trial_spread).toBeCloseTo(199_600 / 99_900, 9);
    expect(r.counts).toMatchObject({ regressions: 0, improvements: 0, noisy: 1 });
    expect(failReasons(r, new Set(['regression', 'kat']))).toEqual([]);
    // Not a clean pass either: the headline, the findings, the noisy table and an annotation say it.
    expect(headline(r)).toBe('ngcc-perf x86_1: 〰 1 noisy measurement');
    expect(hasFindings(r)).toBe(true);
    const md = renderComparison(r);
    expect(md).toContain('**Noisy measurements**');
    expect(md).toContain('| kem-1 | a | keygen | 1.01× | 2.00× | +0.2% | 〰 noisy |');
    expect(md).toContain('No measurement changed significantly; the noisy ones below could not be judged.');
    expect(annotations(r).map((a) => `${a.level} ${a.title}: ${a.message}`)).toEqual([
      'warning Noisy: kem-1 a keygen: trials spread 1.01× on base, 2.00× on head on x86_1 (median trial +0.2%): not judged, re-run to compare',
    ]);
  });

  it('still calls a uniform +10% across all trials a regression, and a uniform +5% with tight trials', () => {
    for (const factor of [1.1, 1.05]) {
      const r = compareTrials(
        steady,
        steady.map((c) => c * factor),
      );
      expect(key(r).verdict).toBe('regression');
      expect(key(r).noisy).toBeUndefined();
      expect(key(r).delta_pct).toBeCloseTo((factor - 1) * 100, 6);
      expect(r.counts.regressions).toBe(1);
      expect(failReasons(r, new Set(['regression']))).toEqual(['1 regression(s)']);
    }
    // The defaults these verdicts depend on: +5% is above the threshold, 5 trials a side separate at p = 2/252.
    expect(DEFAULT_THRESHOLD_PCT).toBeLessThan(5);
  });

  it('still finds a +12% regression when one of its trials was disturbed, since the two sides do not overlap', () => {
    const headTrials = steady.map((c, i) => c * 1.12 * (i === 4 ? 2 : 1));
    const row = key(compareTrials(steady, headTrials));
    expect(row.verdict).toBe('regression');
    expect(row.noisy).toBe(true);
    expect(row.reason).toMatch(/trials spread 1\.01× on base, 2\.\d\d× on head, but their worst-case ranges do not overlap/);
  });

  describe("with the kernel's view of each trial (time off the CPU)", () => {
    function compareOffCpu(baseOff: number[], headTrials: number[], headOff: number[]): CompareRow {
      const base = tempDir();
      const head = tempDir();
      const inst = [{ id: 'kem-1', label: 'a' }];
      writeSyntheticSystem(base, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady, offCpu: baseOff }]);
      writeSyntheticSystem(head, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: headTrials, offCpu: headOff }]);
      return key(compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' }));
    }
    const quiet = [0.001, 0.002, 0.001, 0.001, 0.002];

    it('calls a whole run on a shared core noisy, though its trials agree with each other', () => {
      // Head's trials are tight and all 10% slower, but each spent a fifth of its time off the CPU.
      const row = compareOffCpu(
        quiet,
        steady.map((c) => c * 1.1),
        steady.map(() => 0.2),
      );
      expect(row.head!.trial_spread).toBeLessThan(NOISY_TRIAL_SPREAD);
      expect(row.verdict).toBe('noisy');
      expect(row.reason).toContain('on base, 1.01× (5 of 5 trials off the CPU > 2% of their time) on head');
    });

    it('still finds a +12% regression when one head trial lost half its time off the CPU', () => {
      const headTrials = steady.map((c, i) => (c * 1.12) / (i === 1 ? 0.5 : 1));
      const row = compareOffCpu(quiet, headTrials, [0.001, 0.5, 0.001, 0.002, 0.001]);
      expect(row.noisy).toBe(true);
      expect(row.verdict).toBe('regression');
      expect(row.head!.trial_on_cpu![1]).toBeCloseTo(0.5, 9);
    });

    it('leaves tight, quiet trials alone: +10% is a regression, and the row is not noisy', () => {
      const row = compareOffCpu(
        quiet,
        steady.map((c) => c * 1.1),
        quiet,
      );
      expect(row.verdict).toBe('regression');
      expect(row.noisy).toBeUndefined();
    });

    it('lists the disturbed trials with the spread in the comment', () => {
      const base = tempDir();
      const head = tempDir();
      const inst = [{ id: 'kem-1', label: 'a' }];
      writeSyntheticSystem(base, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady, offCpu: quiet }]);
      writeSyntheticSystem(head, 'x86_1', inst, [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: steady, offCpu: [0.001, 0.3, 0.001, 0.1, 0.001] },
      ]);
      const md = renderComparison(compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' }));
      expect(md).toContain('| kem-1 | a | keygen | 1.01× | 1.01×, 2/5 off-CPU | 0.0% | 〰 noisy |');
    });
  });

  it("does not call the issue's unchanged kem-80 keygen (one trial 2×) a +24.5% regression", () => {
    // Base and head trials of an unchanged build measured while something else ran on the core.
    const r = compareTrials([69_600, 69_200, 69_100, 68_900, 69_600], [138_900, 70_700, 70_600, 70_600, 80_700]);
    const row = key(r);
    expect(row.mean_delta_pct).toBeCloseTo(24.57, 2);
    expect(row.delta_pct).toBeCloseTo(2.2, 1);
    expect(row.verdict).toBe('unchanged');
    expect(row.noisy).toBe(true);
    expect(r.counts.regressions).toBe(0);
    // Listed with its spread even so: the reader sees the core was shared.
    expect(renderComparison(r)).toContain('| kem-1 | a | keygen | 1.01× | 1.97× | +2.2% | unchanged |');
  });

  it("reuses the measure phase's noise rule", () => {
    const spread = NOISY_TRIAL_SPREAD * 0.99;
    const justUnder = compareTrials(steady, [100_000, 100_000, 100_000, 100_000, 100_000 * spread]);
    expect(key(justUnder).verdict).toBe('unchanged');
    const justOver = compareTrials(steady, [100_000, 100_000, 100_000, 100_000, (100_000 * NOISY_TRIAL_SPREAD) / 0.99]);
    expect(key(justOver).verdict).toBe('noisy');
  });
});

describe('compare between two evidence trees', () => {
  const inst = [
    { id: 'kem-1', label: 'a', sizes: { pk_bytes: 800, ct_bytes: 768 }, elf: 30000 },
    { id: 'kem-1', label: 'b', sizes: { pk_bytes: 800, ct_bytes: 768 } },
    { id: 'kem-2', label: 'c' },
  ];
  const steady = [100_000, 100_500, 99_800, 100_200, 99_900];
  const slow = steady.map((c) => c * 1.1);

  function trees() {
    const base = tempDir();
    const head = tempDir();
    writeSyntheticSystem(base, 'x86_1', inst, [
      { id: 'kem-1', label: 'a', op: 'keygen', trials: steady },
      { id: 'kem-1', label: 'b', op: 'keygen', trials: steady },
      { id: 'kem-2', label: 'c', op: 'keygen', trials: steady, peakRss: 1_500_000 },
    ]);
    writeSyntheticSystem(
      head,
      'x86_1',
      [{ ...inst[0]!, sizes: { pk_bytes: 800, ct_bytes: 800 }, elf: 31000 }, inst[1]!, { ...inst[2]!, kat: 'MISMATCH' }],
      [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: slow },
        { id: 'kem-1', label: 'b', op: 'keygen', trials: steady.map((c) => c * 1.001) },
        { id: 'kem-2', label: 'c', op: 'keygen', trials: steady, peakRss: 2_000_000 },
        { id: 'kem-2', label: 'c', op: 'enc', trials: steady },
      ],
    );
    return { base, head };
  }

  it('finds the slowed-down operation only, and reports KAT, size and memory changes', () => {
    const { base, head } = trees();
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    const verdicts = Object.fromEntries(r.rows.map((x) => [`${x.candidate}/${x.label}/${x.operation}`, x.verdict]));
    expect(verdicts).toEqual({
      'kem-1/a/keygen': 'regression',
      'kem-1/b/keygen': 'unchanged',
      'kem-2/c/keygen': 'unchanged',
      'kem-2/c/enc': 'new',
    });
    expect(r.rows.find((x) => x.verdict === 'regression')!.delta_pct).toBeCloseTo(10, 6);
    expect(r.kat_changes).toEqual([{ key: 'kem-2/c', base: 'PASS', head: 'MISMATCH' }]);
    expect(r.size_changes).toEqual([{ key: 'kem-1/a', item: 'ct_bytes', base: 768, head: 800 }]);
    expect(r.memory_changes).toEqual([
      { key: 'kem-1/a', item: 'elf_load_bytes', base: 30000, head: 31000 },
      { key: 'kem-2/c/keygen', item: 'peak_rss_bytes', base: 1_500_000, head: 2_000_000 },
    ]);
    expect(r.counts).toEqual({ regressions: 1, improvements: 0, kat_failures: 1, size_mismatches: 0, noisy: 0 });
  });

  it('reports a peak-RSS change of 64 KiB or more, and none below: 63, 64 and 65 KiB', () => {
    const rss = (change: number) => {
      const [base, head] = [tempDir(), tempDir()];
      writeSyntheticSystem(base, 'x86_1', [inst[0]!], [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady, peakRss: 1_500_000 }]);
      writeSyntheticSystem(
        head,
        'x86_1',
        [inst[0]!],
        [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady, peakRss: 1_500_000 + change }],
      );
      return compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' }).memory_changes;
    };
    expect(rss(63 * 1024)).toEqual([]);
    expect(rss(-63 * 1024)).toEqual([]);
    expect(rss(64 * 1024)).toEqual([{ key: 'kem-1/a/keygen', item: 'peak_rss_bytes', base: 1_500_000, head: 1_500_000 + 64 * 1024 }]);
    expect(rss(65 * 1024)).toHaveLength(1);
    expect(rss(-65 * 1024)).toEqual([{ key: 'kem-1/a/keygen', item: 'peak_rss_bytes', base: 1_500_000, head: 1_500_000 - 65 * 1024 }]);
  });

  it('says so at the top of the comment when the head run was not sandboxed, and nothing when it was', () => {
    const { base, head } = trees();
    const campaignJson = join(head, 'x86_1', 'campaign.json');
    const campaign = JSON.parse(readFileSync(campaignJson, 'utf8')) as Record<string, unknown>;
    writeFileSync(campaignJson, JSON.stringify({ ...campaign, sandbox: 'none' }));
    const open = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(open.sandbox).toBe('none');
    expect(renderComparison(open)).toMatch(
      /^### .*\n\n⚠ Not sandboxed: the campaign set `sandbox: none`, so the submissions' code ran with the rights of the runner user/,
    );
    writeFileSync(campaignJson, JSON.stringify({ ...campaign, sandbox: 'bwrap' }));
    const closed = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(closed.sandbox).toBe('bwrap');
    expect(renderComparison(closed)).not.toContain('sandbox');
  });

  it('exposes a size-catalog mismatch in compare --format json, and exits 1 on a regression', async () => {
    const { base, head } = trees();
    const campaign = tempDir();
    writeFileSync(
      join(campaign, 'external_sizes.csv'),
      'ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-1;b;800;769;;encoded\nkem-1;a;800;800;;encoded\n',
    );
    const { code, out } = await runCli([
      'compare',
      '--base',
      base,
      '--head',
      head,
      '--system',
      'x86_1',
      '--format',
      'json',
      '--campaign',
      campaign,
    ]);
    expect(code).toBe(1);
    const report = JSON.parse(out.join('\n')) as CompareReport;
    expect(report.size_mismatches).toEqual([{ id: 'kem-1', instance: 'b', item: 'ciphertext', catalog: 769, api: 768, basis: 'encoded' }]);
    expect(report.counts.regressions).toBe(1);
  });

  it('does not call a change that the nightly history of the operation shows as ordinary', () => {
    const { base, head } = trees();
    // Four earlier nightly runs of kem-1/a keygen spread by about ±8% around 100k.
    const history = [92_000, 108_000, 95_000, 106_000].map((level) => {
      const dir = tempDir();
      writeSyntheticSystem(dir, 'x86_1', inst, [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: steady.map((c) => (c * level) / 100_000) },
      ]);
      return dir;
    });
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history });
    const row = r.rows.find((x) => x.label === 'a')!;
    expect(row.verdict).toBe('inconclusive');
    expect(row.reason).toMatch(/nightly spread ±7\.\d%/);
  });

  it('counts distinct nightly measurements, not evidence versions: a record in several commits is one run', () => {
    const { base, head } = trees();
    // Four versions of the data branch; the three newest hold the same record (one commit per shard).
    const version = (level: number, startedUtc: string) => {
      const dir = tempDir();
      writeSyntheticSystem(dir, 'x86_1', inst, [
        {
          id: 'kem-1',
          label: 'a',
          op: 'keygen',
          trials: steady.map((c) => (c * level) / 100_000),
          startedUtc,
          librarySha256: 'ab'.repeat(32),
        },
      ]);
      return dir;
    };
    const repeated = [
      version(92_000, '2025-03-03T02:00:00.000Z'),
      version(92_000, '2025-03-03T02:00:00.000Z'),
      version(92_000, '2025-03-03T02:00:00.000Z'),
      version(108_000, '2025-03-02T02:00:00.000Z'),
    ];
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history: repeated });
    const row = r.rows.find((x) => x.label === 'a')!;
    // Two distinct measurements, fewer than the rule needs: no spread rule, the +10% is a regression.
    expect(row.history_runs).toBe(2);
    expect(r.history_runs).toBe(2);
    expect(row.verdict).toBe('regression');
    expect(row.reason).toContain('no nightly history');
    const pr: PullRequestContext = {
      looked: { baseRef: 'main', baseSha: 'a'.repeat(40), dataBranch: 'ngcc-perf-data' },
      baseline: { source: 'data branch', ref: 'ngcc-perf-data', sha: 'b'.repeat(40) },
      measured: ['kem-1', 'kem-2'],
      historyRuns: 4,
      buildErrors: {},
      stillFailing: [],
      campaign: '.',
    };
    expect(renderComparison(r, { pr })).toContain('(2 distinct nightly measurements of history, fewer than 3: no spread rule)');

    // Exactly three distinct measurements: the fewest the rule takes, and their spread covers +10%.
    const three = [92_000, 100_000, 108_000].map((level, i) => version(level, `2025-03-0${i + 1}T02:00:00.000Z`));
    const t = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history: three });
    expect(t.rows.find((x) => x.label === 'a')).toMatchObject({ history_runs: 3, verdict: 'inconclusive' });
    expect(renderComparison(t, { pr })).toContain('over its last 3 distinct nightly measurements');
    // The same levels measured at four different times: four runs, and a spread that covers +10%.
    const distinct = [92_000, 92_000, 92_000, 108_000].map((level, i) => version(level, `2025-03-0${i + 1}T02:00:00.000Z`));
    const d = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history: distinct });
    expect(d.rows.find((x) => x.label === 'a')!.history_runs).toBe(4);
    expect(d.rows.find((x) => x.label === 'a')!.verdict).toBe('inconclusive');
    expect(renderComparison(d, { pr })).toContain('over its last 4 distinct nightly measurements');
    // The same record built from another library is another measurement.
    const rebuilt = version(108_000, '2025-03-03T02:00:00.000Z');
    const dir = join(rebuilt, 'x86_1', 'records', 'kem-1', 'a__keygen.json');
    writeFileSync(dir, readFileSync(dir, 'utf8').replace('ab'.repeat(32), 'cd'.repeat(32)));
    expect(compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history: [...repeated, rebuilt] }).history_runs).toBe(3);
  });

  it('reads a row carried over from the baseline as not measured, never as unchanged 0.0%', () => {
    const base = tempDir();
    const head = tempDir();
    const both = [
      { id: 'kem-1', label: 'a' },
      { id: 'kem-2', label: 'c' },
    ];
    const carried = {
      id: 'kem-2',
      label: 'c',
      op: 'keygen',
      trials: steady,
      startedUtc: '2025-03-01T02:00:00.000Z',
      librarySha256: 'ef'.repeat(32),
    };
    writeSyntheticSystem(base, 'x86_1', both, [
      { id: 'kem-1', label: 'a', op: 'keygen', trials: steady, startedUtc: '2025-03-01T02:00:00.000Z' },
      carried,
    ]);
    writeSyntheticSystem(head, 'x86_1', both, [
      { id: 'kem-1', label: 'a', op: 'keygen', trials: steady.map((c) => c * 1.001), startedUtc: '2025-03-04T10:00:00.000Z' },
      carried,
    ]);
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    const row = (id: string) => r.rows.find((x) => x.candidate === id)!;
    expect(row('kem-2')).toMatchObject({ carried_over: true, verdict: 'unchanged' });
    expect(row('kem-2').delta_pct).toBeUndefined();
    expect(row('kem-2').p_value).toBeUndefined();
    expect(row('kem-1').carried_over).toBeUndefined();
    const md = renderComparison(r);
    expect(md).toContain('| kem-2 | c | keygen | 100.0 k | — | — | not measured (unchanged inputs) |');
    expect(md).toContain('| kem-1 | a | keygen | 100.0 k | 100.1 k | +0.1% | unchanged |');
    expect(md).toContain('1 measurement compared, 0 changed; 1 of untouched candidates carried over from the baseline, not measured.');
    expect(md).not.toMatch(/kem-2 \| c \| keygen .*0\.0%/);
    // In a pull request, the run's own list of measured candidates says the same of older records without a start time.
    const plainBase = tempDir();
    const plainHead = tempDir();
    const ops = both.map((i) => ({ id: i.id, label: i.label, op: 'keygen', trials: steady }));
    writeSyntheticSystem(plainBase, 'x86_1', both, ops);
    writeSyntheticSystem(plainHead, 'x86_1', both, ops);
    const pr: PullRequestContext = {
      looked: { baseRef: 'main', baseSha: 'a'.repeat(40), dataBranch: 'ngcc-perf-data' },
      baseline: { source: 'base commit', ref: 'main', sha: 'a'.repeat(40) },
      measured: ['kem-1'],
      historyRuns: 0,
      buildErrors: {},
      stillFailing: [],
      campaign: '.',
    };
    const prMd = renderComparison(compareEvidence({ baseDir: plainBase, headDir: plainHead, system: 'x86_1' }), { pr });
    expect(prMd).toContain('| kem-2 | c | keygen | 100.0 k | — | — | not measured (unchanged inputs) |');
    expect(prMd).toContain('| kem-1 | a | keygen | 100.0 k | 100.0 k | 0.0% | unchanged |');
  });

  it('checks every option before comparing: nothing is printed before the error', async () => {
    const { base, head } = trees();
    const runs = [
      await runCli(['compare', '--base', base, '--head', head, '--system', 'x86_1', '--fail-on', 'foo']),
      await runCli(['compare', '--base', base, '--head', head, '--system', 'x86_1', '--history', '/nonexistent']),
      await runCli(['compare', '--base', base, '--head', head, '--system', 'x86_1', '--history', tempDir()]),
    ];
    const codes = runs.map((r) => r.code);
    const out = runs.flatMap((r) => r.out);
    const err = runs.flatMap((r) => r.err);
    expect(codes).toEqual([2, 2, 2]);
    expect(out).toEqual([]);
    expect(err[0]).toBe("error: command line: --fail-on: unknown check 'foo' (known: regression, kat, size-audit, ct)");
    expect(err[1]).toBe("error: command line: --history: '/nonexistent': no such folder");
    expect(err[2]).toMatch(/^error: command line: --history: '.*' has no evidence for system x86_1/);
  });

  it('refuses unreadable history evidence instead of leaving it out', () => {
    const { base, head } = trees();
    const old = tempDir();
    const dir = writeSyntheticSystem(old, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady }]);
    const record = join(dir, 'records', 'kem-1', 'a__keygen.json');
    writeFileSync(record, readFileSync(record, 'utf8').slice(0, 50));
    expect(() => compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history: [old] })).toThrow(
      /a__keygen\.json: unreadable history evidence/,
    );
  });

  it('reports a build failure the change causes, not one the base already had', () => {
    const base = tempDir();
    const head = tempDir();
    const both = [
      { id: 'kem-1', label: 'old', kat: 'BUILDFAIL' },
      { id: 'kem-1', label: 'fresh', kat: 'PASS' },
    ];
    writeSyntheticSystem(base, 'x86_1', both, []);
    writeSyntheticSystem(
      head,
      'x86_1',
      both.map((i) => ({ ...i, kat: 'BUILDFAIL' })),
      [],
    );
    const report = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(report.build_failures).toEqual(['kem-1/fresh']);
  });

  it('names why a row is inconclusive: not significant, within the nightly spread, or measured with different build flags', () => {
    const tightBase = { mean_cycles: 100, trial_cycles: [99, 100, 101, 100, 100] };
    const mixed = { mean_cycles: 105, trial_cycles: [99, 110, 108, 100.5, 109] };
    expect(judge(tightBase, mixed, 3, 0.01, null).reason).toMatch(/^p = \S+ > 0\.01: within the spread of the trials$/);
    const slower = { mean_cycles: 110, trial_cycles: [109, 110, 111, 110, 110] };
    expect(judge(tightBase, slower, 3, 0.01, 0.05).reason).toBe('within 3× the nightly spread ±5.0%');
    // +10 % on tight trials, but head was built with other flags: not compared, whatever the trials say.
    const [base, head] = [tempDir(), tempDir()];
    writeSyntheticSystem(base, 'x86_1', [inst[0]!], [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady }]);
    writeSyntheticSystem(head, 'x86_1', [inst[0]!], [{ id: 'kem-1', label: 'a', op: 'keygen', trials: slow, flags: 'harness-default' }]);
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(r.rows[0]).toMatchObject({ verdict: 'inconclusive', reason: 'build flags differ (guide → harness-default)' });
    expect(r.rows[0]!.delta_pct).toBeCloseTo(10, 6);
    expect(r.rows[0]!.p_value).toBeUndefined();
    expect(r.counts.regressions).toBe(0);
  });

  it('names a missing side', () => {
    const { base } = trees();
    expect(() => compareEvidence({ baseDir: base, headDir: tempDir(), system: 'x86_1' })).toThrow(/no head evidence for system x86_1/);
  });
});

describe('the size audit page', () => {
  it('shows exactly the one wrong ciphertext size of the catalog', async () => {
    const { loadReportModel } = await import('../src/report/model.js');
    const { renderPages } = await import('../src/report/pages/render.js');
    const { sections } = await import('./helpers/pages.js');
    const data = tempDir();
    writeSyntheticSystem(
      data,
      'x86_1',
      [
        { id: 'kem-1', label: 'a', sizes: { pk_bytes: 800, ct_bytes: 768 } },
        { id: 'kem-1', label: 'b', sizes: { pk_bytes: 800, ct_bytes: 768 } },
        { id: 'sign-2', label: 'v', sizes: { pk_bytes: 1312, signature_bytes: 2420 } },
      ],
      [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: [1, 1, 1] },
        { id: 'kem-1', label: 'b', op: 'keygen', trials: [1, 1, 1] },
        { id: 'sign-2', label: 'v', op: 'sign', trials: [1, 1, 1] },
      ],
    );
    const campaign = tempDir();
    writeFileSync(
      join(campaign, 'external_sizes.csv'),
      'ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-1;a;800;768;;encoded\nkem-1;b;800;769;;encoded\nsign-2;v;1312;;2400;nominal-variable\n',
    );
    const pages = renderPages(loadReportModel(join(data, 'x86_1'), campaign));
    const page = pages.get('performance/size-audit_x86_1.md')!;
    const rows = sections(page)[0]!.tables[0]!.slice(1);
    expect(rows).toHaveLength(6);
    expect(rows.filter((r) => r[6] === 'MISMATCH ⚠')).toEqual([['kem-1', 'b', 'ciphertext', '769', '768', 'encoded', 'MISMATCH ⚠']]);
    // A nominal size of variable-length signatures is approximate, never a mismatch.
    expect(rows.find((r) => r[0] === 'sign-2' && r[2] === 'signature')!.slice(3)).toEqual([
      '≈ 2400',
      '2420',
      'nominal-variable',
      'approximate',
    ]);
    expect(page).toContain('1 mismatch in 6 compared sizes');
    // The candidate pages show the catalog's sizes, marking the one the code does not produce.
    const kemSizes = sections(pages.get('kem-1/perf_x86_1.md')!).find((s) => s.heading.startsWith('6.'))!.tables[0]!;
    expect(kemSizes[0]!.slice(0, 4)).toEqual(['instance', 'public key', 'secret key', 'ciphertext']);
    expect(kemSizes.slice(1).map((r) => [r[0], r[1], r[3]])).toEqual([
      ['a', '800', '768'],
      ['b', '800', '769 ⚠ (API: 768)'],
    ]);
    const sigSizes = sections(pages.get('sign-2/perf_x86_1.md')!).find((s) => s.heading.startsWith('6.'))!.tables[0]!;
    expect(sigSizes[1]).toContain('≈ 2400');
    // The summary page follows the same rule, so the two pages never disagree.
    const summarySizes = sections(pages.get('performance/summary_x86_1.md')!).flatMap((s) =>
      s.tables.filter((t) => t[0]![2] === 'public key'),
    );
    expect(summarySizes.flatMap((t) => t.slice(1))).toEqual(
      expect.arrayContaining([
        ['kem-1', 'b', '800', '769 ⚠ (API: 768)'],
        ['sign-2', 'v', '1312', '≈ 2400'],
      ]),
    );
  });
});
