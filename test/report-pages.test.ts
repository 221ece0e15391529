import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sizeAudit } from '../src/catalogs/sizeAudit.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { deriveStatistics } from '../src/measure/stats.js';
import { formatMHz, formatSpread } from '../src/text/format.js';
import { loadReportModel } from '../src/report/model.js';
import { algorithmPageLabel } from '../src/report/pages/candidate.js';
import { renderPages } from '../src/report/pages/render.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { writeSyntheticSystem } from './helpers/dataset.js';
import { sections, tableShapeProblems } from './helpers/pages.js';
import { repoRoot, testData, tempDir } from './helpers/tmp.js';

const goldenData = join(testData, 'golden', 'ngcc-harness-arm_1', 'performance', 'data', 'arm_1');

describe("the algorithm's page link", () => {
  it('is named by the host it points to', () => {
    expect(algorithmPageLabel('https://www.niccs.org.cn/niccs/Round1Additional/pc/content/content_2101561077457833984.html')).toBe(
      'NICCS page',
    );
    expect(algorithmPageLabel('https://csrc.nist.gov/projects/post-quantum-cryptography')).toBe('NIST page');
    expect(algorithmPageLabel('https://nist.gov/pqc')).toBe('NIST page');
    expect(algorithmPageLabel('https://www.example.org/kem')).toBe('example.org');
    // A host that merely ends in the same letters is someone else's.
    expect(algorithmPageLabel('https://notnist.gov/pqc')).toBe('notnist.gov');
  });

  it('says NIST page on a candidate page whose link goes to NIST', () => {
    const model = loadReportModel(goldenData);
    const c = model.candidates.find((x) => x.id === 'kem-09')!;
    c.page = 'https://csrc.nist.gov/projects/pqc-dig-sig';
    const page = renderPages(model).get('kem-09/perf_arm_1.md')!;
    expect(page.split('\n')[2]).toBe(
      '[Performance arm_1](../performance/summary_arm_1.md) › `kem-09` · [method](../performance/method_arm_1.md) · [NIST page](https://csrc.nist.gov/projects/pqc-dig-sig)',
    );
    expect(page).not.toContain('NICCS page');
  });
});

describe('rendering', () => {
  it('reads nothing: the systems of DATA_DIR come with the model', () => {
    const dataDir = tempDir();
    cpSync(goldenData, join(dataDir, 'arm_1'), { recursive: true });
    mkdirSync(join(dataDir, 'x86_1'));
    writeFileSync(join(dataDir, 'x86_1', 'campaign.json'), JSON.stringify({ environment_latest: { architecture: 'x86_64' } }));
    writeFileSync(join(dataDir, 'x86_1', 'build.json'), JSON.stringify({ instances: { 'kem-1/a': {}, 'kem-1/b': {}, 'sign-2/c': {} } }));
    const model = loadReportModel(join(dataDir, 'arm_1'));
    expect(model.systems).toEqual([
      { id: 'arm_1', arch: 'AArch64', candidates: model.candidates.length },
      { id: 'x86_1', arch: 'x86-64', candidates: 2 },
    ]);
    rmSync(dataDir, { recursive: true, force: true });
    const index = renderPages(model).get('index.md')!;
    expect(index).toContain('| x86_1 | x86-64 | 2 | [summary](performance/summary_x86_1.md) · [method](performance/method_x86_1.md) |');
  });
});

describe('the size audit', () => {
  it('judges plain sizes against the catalog', () => {
    const line = 1;
    const findings = sizeAudit(
      [
        { candidate: 'kem-1', label: 'a', sizes: { pk_bytes: 800, ct_bytes: 768 } },
        { candidate: 'sign-2', label: 'b', sizes: { pk_bytes: 1312, signature_bytes: 2420 } },
      ],
      [
        { id: 'kem-1', instance: 'a', pk: 800, ct: 770, basis: 'encoded', line },
        { id: 'sign-2', instance: 'b', sig: 2400, basis: 'nominal-variable', line },
        { id: 'kem-3', instance: 'c', pk: 1, basis: 'encoded', line },
      ],
    );
    expect(findings.map((f) => [f.id, f.item, f.verdict])).toEqual([
      ['kem-1', 'public key', 'match'],
      ['kem-1', 'ciphertext', 'mismatch'],
      ['sign-2', 'signature', 'approximate'],
      ['kem-3', 'public key', 'not measured'],
    ]);
  });
});

/** The cells of the first table under a page's level-2 heading that starts with `heading`, parsed by remark-gfm. */
function tableOf(page: string, heading: string, index = 0): string[][] {
  const s = sections(page).find((x) => x.heading.startsWith(heading));
  expect(s, heading).toBeDefined();
  expect(s!.tableNodes[index]?.type, `${heading}: a GFM table`).toBe('table');
  return s!.tables[index]!;
}

const rowOf = (table: string[][], ...key: string[]) => table.find((r) => key.every((k, i) => r[i] === k));

/** A record of `trials` per-call cycles, each trial of 1000 calls at `hz` counts per second. */
function writeRecord(dir: string, id: string, label: string, op: string, trials: Array<{ cycles: number; hz: number }>): void {
  const raw = trials.map((t) => ({ measurements: 1000, seconds: (t.cycles * 1000) / t.hz, cycles: t.cycles * 1000 }));
  const record = { schema: 2, status: 'complete', candidate: id, label, operation: op, kat: 'PASS', trials: raw, ...deriveStatistics(raw) };
  mkdirSync(join(dir, 'records', id), { recursive: true });
  writeFileSync(join(dir, 'records', id, `${label}__${op}.json`), JSON.stringify(record));
}

describe('pages say what they know', () => {
  const kem = (label: string) => ({ id: 'kem-1', label });

  it('the counter rate next to the clock: the trials’ cycles over their seconds, with the configured fixed clock', () => {
    const dir = writeSyntheticSystem(tempDir(), 'x86_1', [kem('a')], []);
    for (const [op, hz] of [
      ['keygen', 2.0e9],
      ['enc', 2.1e9],
      ['dec', 2.1e9],
    ] as const)
      writeRecord(dir, 'kem-1', 'a', op, [
        { cycles: 1e5, hz },
        { cycles: 1e5, hz },
      ]);
    writeFileSync(
      join(dir, 'campaign.json'),
      JSON.stringify({ system_id: 'x86_1', environment_latest: { architecture: 'x86_64' }, fixed_clock_hz: 2.1e9 }),
    );
    const pages = renderPages(loadReportModel(dir));
    const rate = '2100.0 MHz (cycles ÷ seconds, median of 6 trials, 2000.0–2100.0 MHz); fixed clock configured at 2100.0 MHz';
    for (const path of ['kem-1/perf_x86_1.md', 'performance/summary_x86_1.md', 'performance/method_x86_1.md']) {
      const page = pages.get(path)!;
      const env = tableOf(page, path.startsWith('kem') ? '2.' : path.includes('method') ? 'Host state' : '');
      const clock = env.findIndex((r) => r[0] === 'clock');
      expect(env[clock]![1], path).toBe('frequency not recorded (no cpufreq)');
      expect(env[clock + 1], path).toEqual(['counter rate', rate]);
    }
    expect(pages.get('performance/method_x86_1.md')).toContain(`Counter rate: ${rate}.`);
  });

  it('every operation’s trial spread, and a noisy mark with its footnote on the candidate page and the summary', () => {
    const dir = writeSyntheticSystem(
      tempDir(),
      'x86_1',
      [kem('quiet'), kem('noisy')],
      [
        { ...kem('quiet'), op: 'keygen', trials: [100_000, 101_000, 100_500] },
        { ...kem('quiet'), op: 'enc', trials: [100_000, 124_000] },
        { ...kem('quiet'), op: 'dec', trials: [100_000] },
        // One trial twice as slow as the others: the run's progress line calls this noisy.
        { ...kem('noisy'), op: 'keygen', trials: [100_000, 200_000, 100_000, 100_000, 100_000] },
        { ...kem('noisy'), op: 'enc', trials: [100_000, 125_000] },
        { ...kem('noisy'), op: 'dec', trials: [100_000, 100_000] },
      ],
    );
    const pages = renderPages(loadReportModel(dir));
    const page = pages.get('kem-1/perf_x86_1.md')!;
    const timing = tableOf(page, '4.');
    expect(timing[0]).toEqual([
      'instance',
      'operation',
      'mean cycles',
      'mean time',
      'ops/s',
      'median trial',
      'n (trials × iters)',
      'trial spread',
    ]);
    // Then the precision: t(0.975, n−1)·s/√n over the mean of the per-call times, e.g. quiet keygen
    // 4.303 · 0.005 / √3 / 1.005 = 1.2 %, noisy keygen 2.776 · √0.2 / √5 / 1.2 = 46 %.
    expect(timing.slice(1).map((r) => [r[0], r[1], r[7]])).toEqual([
      ['quiet', 'keygen', '1.01× · ±1.2%'],
      ['quiet', 'enc', '1.24× · ±136%'],
      ['quiet', 'dec', '— (one trial)'],
      // Its mean, 120 k, is 20 % from its median trial: marked, the median given (report/spread.ts medianApart).
      ['noisy', 'keygen', '2.00× ⚠ noisy · ±46% ≠ median 100.0 k'],
      // The project's rule (NOISY_TRIAL_SPREAD): 1.25× is noisy, 1.24× is not.
      ['noisy', 'enc', '1.25× ⚠ noisy · ±141%'],
      ['noisy', 'dec', '1.00× · ±0.0%'],
    ]);
    const footnote = /⚠ noisy: the slowest trial took at least 1\.25× as long per call as the fastest\./;
    expect(page).toMatch(footnote);

    const summary = pages.get('performance/summary_x86_1.md')!;
    const cycles = tableOf(summary, 'Key encapsulation');
    expect(rowOf(cycles, 'kem-1', 'noisy')!.slice(3)).toEqual([
      '120.0 k ⚠ noisy 2.00× ≠ median 100.0 k',
      '112.5 k ⚠ noisy 1.25×',
      '100.0 k',
    ]);
    // The same mark on both pages, and the same note under their tables.
    for (const text of [page, summary]) expect(text).toContain('"≠ median": the mean lies more than 3 % from the median trial');
    expect(rowOf(cycles, 'kem-1', 'quiet')!.slice(3)).toEqual(['100.5 k', '112.0 k', '100.0 k']);
    expect(summary).toMatch(footnote);

    // Without a noisy record, no mark and no footnote.
    const quietOnly = renderPages(
      loadReportModel(writeSyntheticSystem(tempDir(), 'x86_1', [kem('quiet')], [{ ...kem('quiet'), op: 'keygen', trials: [1e5, 1e5] }])),
    );
    expect([...quietOnly.values()].join('\n')).not.toContain('noisy');
    for (const [path, text] of [...pages, ...quietOnly]) expect(tableShapeProblems(text), path).toEqual([]);
  });

  it('one row per distinct host check on the method page, counting the runs that found it', () => {
    const dir = writeSyntheticSystem(tempDir(), 'x86_1', [kem('a')], [{ ...kem('a'), op: 'keygen', trials: [1e5, 1e5] }]);
    const check = (utc: string, extra: Record<string, unknown> = {}) => ({
      phase: 'build,kat,measure',
      cpu: 1,
      utc,
      problems: [],
      ...extra,
    });
    const host_checks = [
      check('2026-01-02T10:00:00.000Z'),
      check('2026-01-01T09:00:00.000Z'),
      check('2026-01-03T11:00:00.000Z'),
      check('2026-01-03T12:00:00.000Z', { problems: ['governor powersave'] }),
      check('2026-01-03T12:00:01.000Z', { shard: '1/2' }),
      // Another tool's check without a problems list: nothing found, the same as the first.
      { phase: 'build,kat,measure', cpu: 1, utc: '2026-01-02T10:30:00.000Z' },
    ];
    writeFileSync(join(dir, 'campaign.json'), JSON.stringify({ system_id: 'x86_1', host_checks }));
    const checks = tableOf(renderPages(loadReportModel(dir)).get('performance/method_x86_1.md')!, 'Host state', 1);
    expect(checks).toEqual([
      ['phase', 'CPU', 'shard', 'problems', 'runs', 'UTC (first / last)'],
      ['build,kat,measure', '1', '—', 'none', '4', '2026-01-01T09:00:00 / 2026-01-03T11:00:00'],
      ['build,kat,measure', '1', '—', '⚠ governor powersave', '1', '2026-01-03T12:00:00'],
      ['build,kat,measure', '1', '1/2', 'none', '1', '2026-01-03T12:00:01'],
    ]);
  });

  it('a record that cannot be read is a "not recorded" row, named in the evidence index, and never a 0 in the chart', () => {
    const dir = writeSyntheticSystem(
      tempDir(),
      'x86_1',
      [kem('a'), kem('b')],
      ['a', 'b'].flatMap((label) => ['keygen', 'enc', 'dec'].map((op) => ({ ...kem(label), op, trials: [200_000, 200_000] }))),
    );
    const truncate = (file: string) => writeFileSync(file, readFileSync(file, 'utf8').slice(0, 60));
    truncate(join(dir, 'records', 'kem-1', 'b__enc.json'));
    // An instance nothing else knows of: its only evidence is a truncated record.
    writeRecord(dir, 'kem-1', 'c', 'dec', [{ cycles: 1e5, hz: 2e9 }]);
    truncate(join(dir, 'records', 'kem-1', 'c__dec.json'));
    // A record that holds no trial: the run says why.
    const failed = join(dir, 'records', 'kem-1', 'a__dec.json');
    writeFileSync(
      failed,
      JSON.stringify({ ...JSON.parse(readFileSync(failed, 'utf8')), status: 'failed', failure: 'CRASH (signal 11)', trials: [] }),
    );

    const model = loadReportModel(dir);
    expect(model.unreadable.map((u) => u.path).sort()).toEqual(['records/kem-1/b__enc.json', 'records/kem-1/c__dec.json']);
    const pages = renderPages(model);
    const page = pages.get('kem-1/perf_x86_1.md')!;
    const timing = tableOf(page, '4.');
    expect(timing.slice(1).map((r) => [r[0], r[1], r[2]])).toEqual([
      ['a', 'keygen', '200.0 k'],
      ['a', 'enc', '200.0 k'],
      ['a', 'dec', 'failed: CRASH (signal 11)'],
      ['b', 'keygen', '200.0 k'],
      ['b', 'enc', 'not recorded (unreadable timing file)'],
      ['b', 'dec', '200.0 k'],
      ['c', 'keygen', 'not measured'],
      ['c', 'enc', 'not measured'],
      ['c', 'dec', 'not recorded (unreadable timing file)'],
    ]);
    expect(rowOf(tableOf(page, '5.'), 'b', 'enc')![2]).toBe('not recorded (unreadable timing file)');
    const index = tableOf(page, '7.');
    expect(rowOf(index, 'b')).toBeDefined();
    expect(index.find((r) => r[2] === 'records/kem-1/b__enc.json')![1]).toMatch(/^timing enc: ⚠ unreadable \(not valid JSON/);
    expect(index.find((r) => r[2] === 'records/kem-1/c__dec.json')![1]).toMatch(/^timing dec: ⚠ unreadable/);

    // No instance here has a number for every operation: no chart, rather than one with made-up zeros.
    expect(page).not.toContain('xychart-beta');
    // With b's numbers complete but a's gap still there, only b is plotted and a is named.
    writeRecord(dir, 'kem-1', 'b', 'enc', [{ cycles: 2e5, hz: 2e9 }]);
    const chartPage = renderPages(loadReportModel(dir)).get('kem-1/perf_x86_1.md')!;
    const chart = /```mermaid\n([\s\S]*?)```/.exec(chartPage)![1]!;
    // One instance plotted: bars over its operations, not a line of one point.
    expect(chart).toContain('title "kem-1 b mean cycles per operation"');
    expect(chart).toContain('x-axis ["keygen", "enc", "dec"]');
    expect(chart).not.toMatch(/\b0\b/);
    expect(chartPage).toContain('Not plotted, lacking a number for some operation: `a`, `c`.');

    const summary = tableOf(pages.get('performance/summary_x86_1.md')!, 'Key encapsulation');
    expect(rowOf(summary, 'kem-1', 'a')!.slice(3)).toEqual(['200.0 k', '200.0 k', 'failed']);
    expect(rowOf(summary, 'kem-1', 'b')!.slice(3)).toEqual(['200.0 k', 'not recorded (unreadable timing file)', '200.0 k']);
    expect(rowOf(summary, 'kem-1', 'c')!.slice(3)).toEqual(['—', '—', 'not recorded (unreadable timing file)']);
    for (const [path, text] of pages) expect(tableShapeProblems(text), path).toEqual([]);
  });
});

describe('pages of a real run, and of a later run that keeps its records', () => {
  it('keep the noisy mark (it comes from the record), show the tool version, the counter rate and one row per distinct host check', async () => {
    const root = fixtureCampaign(['kem-1'], QUICK);
    const data = tempDir();
    const run = ['run', root, '--system', 's', '--out', data, '--only', '^kem-1/good$', '--phases', 'build,kat,measure'];
    expect((await runCli(run)).code).toBe(0);
    const system = join(data, 's');
    // Make keygen's first trial twice as slow, as a process sharing the core would, and keep the
    // record consistent (derived fields from its trials) so a later run keeps it.
    const file = join(system, 'records', 'kem-1', 'good__keygen.json');
    const record = JSON.parse(readFileSync(file, 'utf8')) as TimingRecord;
    const t0 = record.trials[0]!;
    record.trials[0] = { ...t0, seconds: t0.seconds * 2, cycles: t0.cycles * 2 };
    Object.assign(record, deriveStatistics(record.trials));
    writeFileSync(file, JSON.stringify(record, null, 1));
    const edited = readFileSync(file, 'utf8');

    const later = await runCli(run);
    expect(later.code).toBe(0);
    expect(later.progress).toMatch(/keygen: unchanged, kept/);
    expect(readFileSync(file, 'utf8')).toBe(edited);

    const out = tempDir();
    expect((await runCli(['report', system, '--campaign', root, '--out', out])).code).toBe(0);
    const page = readFileSync(join(out, 'kem-1', 'perf_s.md'), 'utf8');
    const perCall = record.trials.map((t) => t.seconds / t.measurements);
    const spread = Math.max(...perCall) / Math.min(...perCall);
    // Then its precision, unless a trial stayed disturbed on this busy host (one clean trial has no interval).
    expect(rowOf(tableOf(page, '4.'), 'good', 'keygen')![7]).toMatch(
      new RegExp(`^${formatSpread(spread).replace('.', '\\.')} ⚠ noisy( · ±\\d+(\\.\\d)?%)?$`),
    );
    expect(page).toMatch(/⚠ noisy: the slowest trial took at least 1\.25×/);
    const summary = readFileSync(join(out, 'performance', 'summary_s.md'), 'utf8');
    expect(rowOf(tableOf(summary, 'Key encapsulation'), 'kem-1', 'good')![3]).toContain(`⚠ noisy ${formatSpread(spread)}`);

    // The version of package.json, as every record's environment holds it, and the harness that checked the KAT.
    const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    const build = (JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson).instances['kem-1/good']!;
    expect((record.environment as Record<string, unknown>).ngcc_perf_version).toBe(version);
    const env = tableOf(page, '2.');
    expect(rowOf(env, 'measured with')).toEqual(['measured with', `ngcc-perf ${version}; native harness ${build.kat_harness_version}`]);

    // The counter rate is the trials' own: the median and range of every trial's cycles ÷ seconds in
    // the records the page shows, and each record's counter_hz (the mean of its trials) lies in that
    // range. A property of the records, whatever the host's load did to them.
    const records = ['keygen', 'enc', 'dec'].map(
      (op) => JSON.parse(readFileSync(join(system, 'records', 'kem-1', `good__${op}.json`), 'utf8')) as TimingRecord,
    );
    const rates = records.flatMap((r) => r.trials.map((t) => t.cycles / t.seconds)).sort((a, b) => a - b);
    const mid = rates.length / 2;
    const median = rates.length % 2 === 1 ? rates[Math.floor(mid)]! : (rates[mid - 1]! + rates[mid]!) / 2;
    const shown = rowOf(env, 'counter rate')![1]!;
    const range = `${formatMHz(rates[0]!).replace(' MHz', '')}–${formatMHz(rates.at(-1)!)}`;
    expect(shown.startsWith(`${formatMHz(median)} (cycles ÷ seconds, median of ${rates.length} trials`)).toBe(true);
    if (formatMHz(rates[0]!) !== formatMHz(rates.at(-1)!)) expect(shown).toContain(`, ${range})`);
    for (const r of records) {
      const recorded = (r.environment as { counter_hz: number }).counter_hz;
      expect(recorded).toBeGreaterThanOrEqual(rates[0]! * (1 - 1e-9));
      expect(recorded).toBeLessThanOrEqual(rates.at(-1)! * (1 + 1e-9));
    }

    // Two runs with the same phases on the same core found the same host: one row, two runs.
    const checks = tableOf(readFileSync(join(out, 'performance', 'method_s.md'), 'utf8'), 'Host state', 1);
    expect(checks.slice(1).map((r) => [r[0], r[4]])).toEqual([['build,kat,measure', '2']]);
  });
});
