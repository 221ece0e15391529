import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rateUpperBound95, summarizeCalibration, type Calibration } from '../src/evidence/calibration.js';
import { filesUnder, sha256File } from '../src/util/fsx.js';
import { validateDataset } from '../src/evidence/validate.js';
import { calibratePairedCheck, calibrationSides } from '../src/prcheck/calibrate.js';
import { judgePullRequest } from '../src/prcheck/pairedRounds.js';
import { pairCount, rowKey } from '../src/compare/compare.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const RUN = {
  started_utc: 'a',
  ended_utc: 'b',
  harness_version: 'h',
  cpus: [1],
  threshold_pct: 3,
  alpha: 0.01,
  rounds: 16,
  extra_rounds: 16,
};

describe('the calibration figures', () => {
  it('bounds a false-alarm rate as Clopper–Pearson does', () => {
    // One-sided 95 % upper bounds, from scipy.stats.beta.ppf(0.95, k + 1, n - k): table values, not this code's.
    expect(rateUpperBound95(0, 48)).toBeCloseTo(0.0605034, 5);
    expect(rateUpperBound95(1, 48)).toBeCloseTo(0.0950586, 5);
    expect(rateUpperBound95(3, 30)).toBeCloseTo(0.2385979, 5);
    // Thousands of comparisons, where (1 − p)^n alone underflows.
    expect(rateUpperBound95(400, 500)).toBeCloseTo(0.8290487, 5);
    expect(rateUpperBound95(700, 10000)).toBeCloseTo(0.0743403, 5);
    expect(rateUpperBound95(499, 500)).toBeCloseTo(0.9998974, 5);
    expect(rateUpperBound95(0, 0)).toBe(1);
  });

  it('counts alarms and undecided rows over the repeats, a row one repeat did not judge included', () => {
    const c = summarizeCalibration(
      [
        [
          { row: 'k/a/enc', verdict: 'unchanged', pairs: 16, mde_pct: 2 },
          { row: 'k/a/dec', verdict: 'regression', pairs: 32, mde_pct: 4 },
        ],
        [{ row: 'k/a/enc', verdict: 'inconclusive', pairs: 32, mde_pct: 6 }],
      ],
      RUN,
    );
    expect(c.comparisons).toBe(3);
    expect(c.false_alarms).toBe(1);
    expect(c.undecided).toBe(1);
    expect(c.rows.map((r) => [r.row, r.verdicts, r.pairs])).toEqual([
      ['k/a/dec', ['regression', 'missing'], [32, 0]],
      ['k/a/enc', ['unchanged', 'inconclusive'], [16, 32]],
    ]);
    // The 90th percentile interpolated between order statistics (R's type 7): 4 + 0.8 × (6 − 4).
    expect(c.mde_pct).toEqual({ median: 4, p90: 5.6, max: 6 });
  });
});

describe('ngcc-perf calibrate: the pull-request check on unchanged code', () => {
  it('judges the campaign paired against itself, writes calibration.json beside untouched evidence, and the method page shows it', async () => {
    const campaign = fixtureCampaign(['kem-1'], QUICK);
    const data = tempDir();
    const only = ['--only', '^kem-1/good$'];
    const run = await runCli(['run', campaign, '--system', 's', '--out', data, ...only, '--phases', 'build,kat,measure']);
    expect(run.code).toBe(0);
    const system = join(data, 's');
    const before = new Map(filesUnder(system).map((f) => [f, sha256File(join(system, f))]));

    const pagesBefore = tempDir();
    expect((await runCli(['report', system, '--out', pagesBefore])).code).toBe(0);
    const uncalibrated = sections(readFileSync(join(pagesBefore, 'performance', 'method_s.md'), 'utf8'));
    expect(uncalibrated.map((s) => s.heading)).toContain('Pull-request check on this system');
    expect(readFileSync(join(pagesBefore, 'performance', 'method_s.md'), 'utf8')).toContain('Not calibrated on this system');

    const cal = await runCli([
      'calibrate',
      campaign,
      '--system',
      's',
      '--out',
      data,
      ...only,
      '--repeat',
      '2',
      '--rounds',
      '6',
      '--extra-rounds',
      '4',
    ]);
    expect(cal.code).toBe(0);
    expect(cal.out.at(-1)).toBe(`calibration: ${join(system, 'calibration.json')}`);
    // The progress counts every repeat's steps on, never past its total.
    const counts = [...cal.progress.matchAll(/\[(\d+)\/(\d+)\]/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    expect(counts.length).toBeGreaterThan(6);
    for (const [done, total] of counts) expect(done).toBeLessThanOrEqual(total);
    expect(counts.map(([done]) => done)).toEqual(counts.map((_, i) => i + 1));

    // The system's own evidence is as it was: only calibration.json was added.
    const after = filesUnder(system);
    expect(after.filter((f) => !before.has(f))).toEqual(['calibration.json']);
    for (const [f, sha] of before) expect(sha256File(join(system, f)), f).toBe(sha);

    const c = JSON.parse(readFileSync(join(system, 'calibration.json'), 'utf8')) as Calibration;
    expect(c.repeats).toBe(2);
    expect(c.rows.map((r) => r.row)).toEqual(['kem-1/good/dec', 'kem-1/good/enc', 'kem-1/good/keygen']);
    expect(c.comparisons).toBe(6);
    // Each repeat gave the rows its first rounds left undecided 4 more pairs, as its log line says
    // (a pair whose trial stays disturbed is measured again, so a row may have more than asked).
    for (let i = 0; i < 2; i++) {
      const given = Number(cal.out.find((l) => l.startsWith(`calibrate: repeat ${i + 1} of 2`))!.match(/(\d+) given 4 more pairs/)![1]);
      expect(c.rows.filter((r) => r.pairs[i]! >= 10).length).toBeGreaterThanOrEqual(given);
      expect(c.rows.filter((r) => r.pairs[i]! < 6)).toEqual([]);
    }
    expect(c.false_alarms).toBe(c.rows.flatMap((r) => r.verdicts).filter((v) => v === 'regression' || v === 'improvement').length);
    expect(validateDataset(system)).toEqual([]);

    const pages = tempDir();
    expect((await runCli(['report', system, '--out', pages])).code).toBe(0);
    const page = readFileSync(join(pages, 'performance', 'method_s.md'), 'utf8');
    const section = sections(page).find((s) => s.heading === 'Pull-request check on this system')!;
    expect(page).toContain(`${c.false_alarms} of 6 comparisons called a regression or an improvement`);
    const [header, ...rows] = section.tables[0]!;
    expect(header).toEqual(['operation', 'A/A verdicts', 'trial pairs', 'smallest change it could call']);
    expect(rows.map((r) => r[0])).toEqual(c.rows.map((r) => r.row));
    expect(rows.map((r) => r[2])).toEqual(c.rows.map((r) => r.pairs.join(', ')));

    // validate recomputes the figures from the rows, and names a field that is wrong.
    writeFileSync(join(system, 'calibration.json'), JSON.stringify({ ...c, false_alarms: c.false_alarms + 1 }));
    expect(validateDataset(system)).toEqual([`calibration.json: false_alarms is ${c.false_alarms + 1}, its rows give ${c.false_alarms}`]);
    const [first] = c.rows;
    writeFileSync(join(system, 'calibration.json'), JSON.stringify({ ...c, rows: [{ ...first, verdicts: ['fine', 'unchanged'] }] }));
    expect(validateDataset(system)).toEqual([expect.stringMatching(/^calibration\.json: rows\.0\.verdicts\.0: /)]);
    writeFileSync(join(system, 'calibration.json'), JSON.stringify({ ...c, rows: [...c.rows, first] }));
    expect(validateDataset(system)).toContain(`calibration.json: rows["${first!.row}"]: listed twice`);
    writeFileSync(join(system, 'calibration.json'), JSON.stringify({ ...c, repeats: 5e9 }));
    expect(validateDataset(system)).toEqual([expect.stringMatching(/^calibration\.json: repeats: /)]);
    writeFileSync(join(system, 'calibration.json'), JSON.stringify({ ...c, rounds: 'sixteen' }));
    expect(validateDataset(system)).toEqual([expect.stringMatching(/^calibration\.json: rounds: /)]);
    // An unreadable calibration is said, and the pages are rendered all the same.
    const again = await runCli(['report', system, '--out', pages]);
    expect(again.code).toBe(1);
    expect(again.out.join('\n')).toMatch(/unreadable: .*calibration\.json: rounds: /);
    expect(readFileSync(join(pages, 'performance', 'method_s.md'), 'utf8')).toMatch(
      /`calibration\.json` could not be read \(rounds: .*\): its figures are not shown/,
    );
  });

  it("calls what the action's own judgement calls on the evidence it measured: one pair loop, one rule", async () => {
    const campaign = fixtureCampaign(['kem-1'], QUICK);
    const scratch = tempDir();
    const { calibration } = await calibratePairedCheck({
      campaignDir: campaign,
      system: 's',
      dataDir: tempDir(),
      only: /^kem-1\/good$/,
      repeats: 1,
      // Two pairs decide nothing: every row is given the extra rounds, so they are judged too.
      rounds: 2,
      extraRounds: 4,
      thresholdPct: 3,
      scratch,
    });
    // The evidence of that repeat, judged as the action judges a pull request (prcheck/pullRequest.ts).
    const { headData, baseData } = calibrationSides(scratch);
    const report = judgePullRequest({ baseDir: baseData, headDir: headData, system: 's', thresholdPct: 3 });
    const paired = report.rows.filter((r) => r.paired === true);
    expect(paired.map(rowKey)).toEqual(['kem-1/good/dec', 'kem-1/good/enc', 'kem-1/good/keygen']);
    expect(calibration.rows.map((r) => [r.row, r.verdicts[0], r.pairs[0], r.mde_pct[0] ?? undefined])).toEqual(
      paired.map((r) => [rowKey(r), r.verdict, pairCount(r), r.mde_pct]),
    );
    for (const r of paired) expect(pairCount(r)).toBeGreaterThanOrEqual(6);
  });

  it('is the one loop and judgement the action runs: neither caller keeps a copy of the rule', () => {
    // A copy of the loop or of its judgement in either caller would let the calibration describe a
    // rule the action does not run: both go through prcheck/pairedRounds.ts, and only it judges.
    for (const file of ['src/prcheck/pullRequest.ts', 'src/prcheck/calibrate.ts']) {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      expect(text, file).toMatch(/import \{[^}]*\bjudgePullRequest\b[^}]*\brunPairedRounds\b[^}]*\} from '\.\/pairedRounds\.js'/);
      expect(text, file).not.toMatch(/\b(compareEvidence|undecidedRows)\b/);
    }
  });

  it('refuses a repeat count out of range, naming the option', async () => {
    const r = await runCli(['calibrate', tempDir(), '--system', 's', '--out', tempDir(), '--repeat', '0']);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(/--repeat.*expected a whole number of repeats from 1 to 100, got '0'/);
  });
});
