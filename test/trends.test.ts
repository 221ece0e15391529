// Trend pages from a history of nights (issue: nightly trends and change points). The nights are
// made from one real evidence folder (the toy KEM measured by a real campaign run): each night is a
// copy whose trials are scaled by that night's noise, and from night 20 on one operation is 10 %
// slower with a new build key, as a submission's update would make it.
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { mergeCampaignJson } from '../src/evidence/merge.js';
import { loadTrends, unstableRows } from '../src/trend/history.js';
import { compareEvidence } from '../src/compare/compare.js';
import { goodKemCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { mermaidProblems } from './helpers/mermaid.js';
import { parsePage, plain, tableShapeProblems } from './helpers/pages.js';
import { tempDir } from './helpers/tmp.js';

const NIGHTS = 30;
const STEP_NIGHT = 20; // counted from 1, as the pages count
const STEPPED = { label: 'good', operation: 'dec' };

/** A fixed sequence in [-1, 1) (mulberry32, 32-bit integer arithmetic): the nights' noise. */
function noise(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (2 * ((t ^ (t >>> 14)) >>> 0)) / 2 ** 32 - 1;
  };
}

/** The page's level-2 sections: title and the Markdown under it. */
function sections(markdown: string): Array<{ title: string; body: string }> {
  const out = [{ title: '', body: '' }];
  for (const line of markdown.split('\n'))
    if (line.startsWith('## ')) out.push({ title: line.slice(3), body: '' });
    else out.at(-1)!.body += `${line}\n`;
  return out;
}

const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
const writeJson = (p: string, v: unknown) => writeFileSync(p, JSON.stringify(v, null, 1));

function scaleRecord(path: string, factor: number, started: string): void {
  const r = readJson(path);
  // Each night measured anew (a record with the same start and library is one measurement carried over).
  r.started_utc = started;
  for (const t of r.trials) {
    t.cycles *= factor;
    t.seconds *= factor;
  }
  r.mean_cycles *= factor;
  r.mean_seconds *= factor;
  writeJson(path, r);
}

/**
 * A copy of `source` whose trials are those of a quiet core: each at its record's median per call
 * (±0.2 %, in a fixed pattern), all of its window on the CPU. The verdicts between nights then follow
 * the nights' factors alone, not how busy this host was when the source was measured.
 */
function quietCopy(source: string, into: string): string {
  cpSync(source, into, { recursive: true });
  const recordsDir = join(into, 'records');
  for (const candidate of readdirSync(recordsDir))
    for (const file of readdirSync(join(recordsDir, candidate))) {
      const path = join(recordsDir, candidate, file);
      const r = readJson(path);
      const perCall = r.trials
        .map((t: { cycles: number; measurements: number }) => t.cycles / t.measurements)
        .sort((a: number, b: number) => a - b);
      const median = perCall[Math.floor(perCall.length / 2)];
      r.trials.forEach((t: Record<string, number>, i: number) => {
        const rate = t.cycles! / t.seconds!;
        t.cycles = median * t.measurements! * (1 + 0.001 * ((i % 5) - 2));
        t.seconds = t.cycles / rate;
        if (t.window_s !== undefined) t.kernel_cpu_s = t.window_s;
        // (the kernel's view of the trial, which compare also reads for time off the CPU)
        delete t.os;
      });
      const sum = (k: string) => r.trials.reduce((a: number, t: Record<string, number>) => a + t[k]!, 0);
      r.mean_cycles = sum('cycles') / sum('measurements');
      r.mean_seconds = sum('seconds') / sum('measurements');
      writeJson(path, r);
    }
  return into;
}

/**
 * Night n (1-based) of a history: a copy of `source` with its own start time, each record's trials
 * scaled by `factor(file)`, and, when `updated`, a new build key for the stepped instance.
 */
function night(source: string, into: string, n: number, factor: (file: string) => number, updated = false): string {
  cpSync(source, into, { recursive: true });
  const campaign = readJson(join(into, 'campaign.json'));
  const started = new Date(Date.UTC(2026, 10, 1 + n, 1, 17)).toISOString();
  campaign.last_run = {
    ...campaign.last_run,
    started_utc: started,
    campaign_commit: `${String(n).padStart(2, '0')}c0ffee`.padEnd(40, '0'),
  };
  writeJson(join(into, 'campaign.json'), campaign);
  const recordsDir = join(into, 'records');
  for (const candidate of readdirSync(recordsDir))
    for (const file of readdirSync(join(recordsDir, candidate))) scaleRecord(join(recordsDir, candidate, file), factor(file), started);
  if (updated) {
    const build = readJson(join(into, 'build.json'));
    for (const e of Object.values(build.instances) as Array<Record<string, unknown>>)
      if (e.label === STEPPED.label) e.build_key = `updated-${e.build_key}`;
    writeJson(join(into, 'build.json'), build);
  }
  return into;
}

/** Night n of the history: ±2 % noise, and from STEP_NIGHT on the step with a new build key. */
function makeNight(source: string, into: string, n: number, rand: () => number, step = 0.1): string {
  const stepped = (file: string) => n >= STEP_NIGHT && file === `${STEPPED.label}__${STEPPED.operation}.json`;
  return night(source, into, n, (file) => (1 + 0.02 * rand()) * (stepped(file) ? 1 + step : 1), n >= STEP_NIGHT);
}

let source: string;
beforeAll(async () => {
  // Six short trials: enough for the pull-request rule's test to reach its level (two cannot).
  const root = goodKemCampaign(['good', 'twin'], QUICK.replace('trials: 2', 'trials: 6'));
  const data = tempDir();
  await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat', 'measure']) });
  source = join(data, 's');
}, 600_000);

describe('a history of 30 nights with a +10 % step at night 20', () => {
  let history: string[];
  let pagesDir: string;
  let cli: Awaited<ReturnType<typeof runCli>>;
  beforeAll(async () => {
    const work = tempDir();
    const rand = noise(7);
    // Quiet trials: the nights differ by their factors alone. (The source's own trials carry this
    // host's noise of the day; on a busy one a dec's trials spread so widely that the rule rightly
    // cannot see a 10 % step behind them, and the test would bet on the host.)
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    const nights = Array.from({ length: NIGHTS }, (_, i) => makeNight(quiet, join(work, `night-${i + 1}`, 's'), i + 1, rand));
    history = nights.slice(0, -1);
    pagesDir = join(work, 'pages');

    cli = await runCli(['report', nights.at(-1)!, '--out', pagesDir, '--history', history.join(',')]);
  }, 300_000);

  it('reports the change point at night 20, attributed to the submission, and no other', () => {
    expect(cli.code).toBe(0);
    const trends = loadTrends(
      join(pagesDir, '..', `night-${NIGHTS}`, 's'),
      's',
      history.map((dir) => ({ dir })),
    );
    expect(trends.nights).toHaveLength(NIGHTS);
    const withChanges = trends.series.filter((s) => s.changes.length > 0);
    expect(withChanges.map((s) => `${s.label} ${s.operation}`)).toEqual([`${STEPPED.label} ${STEPPED.operation}`]);
    const [change] = withChanges[0]!.changes;
    expect(change!.night + 1).toBe(STEP_NIGHT);
    expect(change!.causes).toEqual(['submission']);
    expect(change!.delta_pct).toBeGreaterThan(7);
    expect(change!.delta_pct).toBeLessThan(13);
    // Every other operation of the instance changed its build key too, and has no step: the
    // attribution follows the step, never the key alone.
    expect(trends.series.filter((s) => s.label === STEPPED.label).length).toBeGreaterThan(1);
  });

  it('writes a trend page whose tables parse as tables and whose chart has every night', async () => {
    const page = readFileSync(join(pagesDir, 'performance', 'trends_s.md'), 'utf8');
    expect(tableShapeProblems(page)).toEqual([]);
    expect(await mermaidProblems(page)).toEqual([]);
    const tree = parsePage(page);
    const charts = tree.children.filter((n) => n.type === 'code' && n.lang === 'mermaid') as Array<{ value: string }>;
    const dec = charts.find((c) => c.value.includes('title "kem-1 dec"'));
    expect(dec, 'a chart of kem-1 dec').toBeDefined();
    expect(dec!.value).toMatch(/^%%\{init: .*plotColorPalette/);
    expect(dec!.value).toContain(`x-axis [${Array.from({ length: NIGHTS }, (_, i) => i + 1).join(', ')}]`);
    const line = dec!.value.split('\n').find((l) => l.trim().startsWith('line ['))!;
    const values = JSON.parse(line.trim().slice('line '.length)) as number[];
    expect(values).toHaveLength(NIGHTS);
    // The chart's own numbers show the step: the nights after it are ~10 % above those before.
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(values.slice(STEP_NIGHT - 1)) / mean(values.slice(0, STEP_NIGHT - 1));
    expect(ratio).toBeGreaterThan(1.07);
    expect(ratio).toBeLessThan(1.13);
    const changeTable = sections(page).find((s) => s.title === 'Change points')!;
    expect(plain(parsePage(changeTable.body))).toMatch(/kem-1\s*good\s*dec\s*#20\s*\+\d+\.\d%\s*\d+\.\d sd\s*submission\s*build key/);
    // The page says what the rule can see over these nights.
    expect(plain(parsePage(changeTable.body))).toMatch(
      /With 30 nights and night-to-night noise \d+(\.\d)?% \(measured on \d+ pairs of unchanged nights\), the rule can find a step of unknown cause of at least \d+\.\d%/,
    );
  });

  it("opens the index with what moved since last night and the change points, and links each night's evidence", () => {
    const index = readFileSync(join(pagesDir, 'index.md'), 'utf8');
    expect(tableShapeProblems(index)).toEqual([]);
    const titles = sections(index).map((s) => s.title);
    expect(titles.slice(1, 3)).toEqual(['Since last night', `Change points in the last ${NIGHTS} nights`]);
    const changes = sections(index).find((s) => s.title.startsWith('Change points'))!.body;
    expect(plain(parsePage(changes))).toMatch(/s\s*kem-1\s*good\s*dec\s*#20/);
    expect(changes).toContain('](../night-20/s)');
    const trendPage = readFileSync(join(pagesDir, 'performance', 'trends_s.md'), 'utf8');
    expect(trendPage).toContain('[evidence](../../night-1/s)');
    const candidate = readFileSync(join(pagesDir, 'kem-1', 'perf_s.md'), 'utf8');
    const last = sections(candidate).find((s) => s.title === `Last ${NIGHTS} nights`);
    expect(last, 'the candidate page has its last nights').toBeDefined();
    expect(plain(parsePage(last!.body))).toMatch(/good\s*dec\s*[▁▂▃▄▅▆▇█]{30}\s*#20 \+\d+\.\d% \(submission\)/);
    expect(last!.body).toContain('../performance/trends_s.md#kem-1');
  });

  it('lists an unreadable or partial night and leaves it out, never failing the pages', async () => {
    const work = tempDir();
    const broken = makeNight(source, join(work, 'broken', 's'), 3, noise(1));
    writeFileSync(join(broken, 'build.json'), '{ not json');
    const partial = makeNight(source, join(work, 'partial', 's'), 4, noise(2));
    writeJson(join(partial, 'campaign.json'), { ...readJson(join(partial, 'campaign.json')), ended_utc: null });
    const current = makeNight(source, join(work, 'now', 's'), 5, noise(3));
    const r = await runCli(['report', current, '--out', join(work, 'pages'), '--history', [broken, partial].join(',')]);
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toContain(`history: left out ${broken}: 1 unreadable file(s), the first build.json`);
    expect(r.out.join('\n')).toContain(`history: left out ${partial}: partial: its run did not end`);
    const page = readFileSync(join(work, 'pages', 'performance', 'trends_s.md'), 'utf8');
    expect(plain(parsePage(sections(page).find((s) => s.title === 'Nights')!.body))).toContain('Left out (2)');
  });
});

/** `ngcc-perf report CURRENT --out PAGES --history H1,…`, as a user runs it. */
const reportWithHistory = (current: string, pages: string, history: string[]) =>
  runCli(['report', current, '--out', pages, '--history', history.join(',')]);

describe('unstable rows', () => {
  /** Sixteen nights of the same code, each within ±0.3 %; good's enc 50 % slower on the nights `disturbed` only. */
  function disturbedNights(disturbed: number[]): string[] {
    const work = tempDir();
    const rand = noise(3);
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    return Array.from({ length: 16 }, (_, i) =>
      night(
        quiet,
        join(work, `n${i + 1}`, 's'),
        i + 1,
        (file) => (1 + 0.003 * rand()) * (disturbed.includes(i + 1) && file === 'good__enc.json' ? 1.5 : 1),
      ),
    );
  }
  const trendsOf = (dirs: string[]) =>
    loadTrends(
      dirs.at(-1)!,
      's',
      dirs.slice(0, -1).map((dir) => ({ dir })),
    );

  it('one disturbed night and its return are one excursion: not unstable', () => {
    const enc = trendsOf(disturbedNights([8])).series.find((x) => x.label === 'good' && x.operation === 'enc')!;
    expect(enc.falseCalls.map((n) => n + 1)).toEqual([8, 9]);
    expect(enc.excursions).toBe(1);
    expect(enc.unstable).toBe(false);
  });

  it("a row called changed on two excursions of unchanged code is unstable, named on the pages, and its regression fails no pull request's check", async () => {
    // The rule calls a regression into each disturbed night and an improvement out of it. (A second
    // disturbance while the first is among the rule's last HISTORY_RUNS nights is within their spread:
    // not called, so the two lie further apart.)
    const dirs = disturbedNights([3, 14]);
    const t = trendsOf(dirs);
    const enc = t.series.find((x) => x.label === 'good' && x.operation === 'enc')!;
    expect(enc.falseCalls.map((n) => n + 1)).toEqual([3, 4, 14, 15]);
    expect(enc.excursions).toBe(2);
    expect(enc.unstable).toBe(true);
    expect(t.series.filter((x) => x.unstable).map((x) => `${x.label} ${x.operation}`)).toEqual(['good enc']);
    // The pages name it: the trend page's list, the candidate page's mark.
    const pages = join(tempDir(), 'pages');
    expect((await reportWithHistory(dirs.at(-1)!, pages, dirs.slice(0, -1))).code).toBe(0);
    const unstableSection = sections(readFileSync(join(pages, 'performance', 'trends_s.md'), 'utf8')).find(
      (x) => x.title === 'Unstable rows',
    );
    expect(plain(parsePage(unstableSection!.body))).toMatch(/kem-1\s*good\s*enc\s*#3, #4, #14, #15/);
    expect(readFileSync(join(pages, 'kem-1', 'perf_s.md'), 'utf8')).toContain('| `good` | enc (unstable) |');
    const unstable = unstableRows(dirs, 's');
    expect([...unstable]).toEqual(['kem-1/good/enc']);
    // The pull request's comparison of night 13 (base) with night 14 (head): a regression, counted only without the mark.
    const judged = (marks?: Set<string>) =>
      compareEvidence({
        baseDir: '',
        headDir: '',
        system: 's',
        systemDirs: { base: dirs[12]!, head: dirs[13]!, history: [] },
        unstable: marks,
      });
    const plainReport = judged();
    expect(plainReport.counts.regressions).toBe(1);
    const marked = judged(unstable);
    const row = marked.rows.find((r) => r.label === 'good' && r.operation === 'enc')!;
    expect(row.verdict).toBe('regression');
    expect(row.unstable).toBe(true);
    expect(row.reason).toContain('unstable');
    expect(marked.counts.regressions).toBe(0);
  });
});

describe('since last night', () => {
  it('claims only the rebuilt operation that moved, net of a host that ran 30 % slower that night, and says how the host moved', async () => {
    const work = tempDir();
    const rand = noise(21);
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    // Five nights of the same code within ±1 %; on the fifth the host runs 30 % slower for every row,
    // and good is rebuilt with its keygen 60 % slower (its enc and dec as they were).
    const dirs = Array.from({ length: 5 }, (_, i) =>
      night(
        quiet,
        join(work, `n${i + 1}`, 's'),
        i + 1,
        (file) => (1 + 0.01 * rand()) * (i === 4 ? 1.3 : 1) * (i === 4 && file === 'good__keygen.json' ? 1.6 : 1),
        i === 4,
      ),
    );
    const t = loadTrends(
      dirs.at(-1)!,
      's',
      dirs.slice(0, -1).map((dir) => ({ dir })),
    );
    expect(t.sinceLastNight.map((r) => `${r.label} ${r.operation} ${r.verdict} ${r.causes.join(',')}`)).toEqual([
      'good keygen regression submission',
    ]);
    expect(t.sinceLastNight[0]!.delta_pct).toBeGreaterThan(50);
    expect(t.sinceLastNight[0]!.delta_pct).toBeLessThan(70);
    expect(t.hostMove!.pct).toBeGreaterThan(27);
    expect(t.hostMove!.pct).toBeLessThan(33);
    const pages = join(work, 'pages');
    expect((await reportWithHistory(dirs.at(-1)!, pages, dirs.slice(0, -1))).code).toBe(0);
    const since = sections(readFileSync(join(pages, 'index.md'), 'utf8')).find((x) => x.title === 'Since last night')!;
    expect(plain(parsePage(since.body))).toMatch(
      /The host ran 3\d\.\d% slower than the night before \(seen on the 3 rows that kept their build across both nights/,
    );
    expect(plain(parsePage(since.body))).toMatch(/s\s*kem-1\s*good\s*keygen\s*regression\s*\+\d+\.\d%\s*submission/);
    // The trend page's nights say how the host ran each night, against the first: the fifth 30 % slower.
    const nightsSection = sections(readFileSync(join(pages, 'performance', 'trends_s.md'), 'utf8')).find((x) => x.title === 'Nights')!;
    expect(t.hostLevels[0]).toBe(0);
    expect(plain(parsePage(nightsSection.body))).toMatch(/#5\s*2026-11-06 01:17:00\s*\+(2[7-9]|3[0-3])\.\d%/);
    // Listed there, the same step is not listed again among the change points below it: one row, one place.
    const changes = sections(readFileSync(join(pages, 'index.md'), 'utf8')).find((x) => x.title.startsWith('Change points'))!;
    expect(plain(parsePage(changes.body))).not.toMatch(/good\s*keygen/);
    expect(t.series.find((x) => x.label === 'good' && x.operation === 'keygen')!.changes.map((c) => c.night + 1)).toEqual([5]);
  });
});

describe('odd folders in a history', () => {
  it('are listed and left out, never fatal: a corrupt ct file, a null record, a zero-cycle trial, a folder newer than the current one', async () => {
    const work = tempDir();
    const folder = (n: number) => makeNight(source, join(work, `n${n}`, 's'), n, noise(n));
    const ct = folder(2);
    mkdirSync(join(ct, 'ct', 'kem-1'), { recursive: true });
    writeFileSync(join(ct, 'ct', 'kem-1', 'good.json'), '{ truncated');
    const nullRecord = folder(3);
    writeFileSync(join(nullRecord, 'records', 'kem-1', 'good__enc.json'), 'null');
    const zero = folder(4);
    const dec = readJson(join(zero, 'records', 'kem-1', 'good__dec.json'));
    dec.trials[0].cycles = 0;
    writeJson(join(zero, 'records', 'kem-1', 'good__dec.json'), dec);
    const newer = folder(9);
    const current = folder(6);
    const r = await reportWithHistory(current, join(work, 'pages'), [folder(1), ct, nullRecord, zero, newer]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const out = r.out.join('\n');
    expect(out).toContain(`history: left out ${ct}: 1 unreadable file(s), the first ct/kem-1/good.json`);
    expect(out).toContain(`history: left out ${nullRecord}: 1 unreadable file(s), the first records/kem-1/good__enc.json`);
    expect(out).toContain(`history: left out ${newer}: not older than these pages' run`);
    expect(out).not.toContain('not compared');
    // The zero-cycle night stays, without a figure for the operation whose trial says 0 cycles.
    const t = loadTrends(current, 's', [{ dir: folder(1) }, { dir: zero }]);
    expect(t.nights).toHaveLength(3);
    const decSeries = t.series.find((s) => s.label === 'good' && s.operation === 'dec')!;
    expect(decSeries.points.map((p) => p !== undefined)).toEqual([true, false, true]);
  });

  it('a current folder that cannot be a night renders its pages without trends, saying why', async () => {
    const work = tempDir();
    const current = makeNight(source, join(work, 'now', 's'), 5, noise(5));
    writeJson(join(current, 'campaign.json'), { ...readJson(join(current, 'campaign.json')), ended_utc: null });
    const r = await reportWithHistory(current, join(work, 'pages'), [makeNight(source, join(work, 'then', 's'), 4, noise(4))]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toContain('history: no trends: ');
    expect(r.out.join('\n')).toContain('partial: its run did not end');
  });
});

describe("a merged night's name", () => {
  it('is the latest run that went into it', () => {
    const parts = [
      { started_utc: '2026-11-01T01:00:00Z', last_run: { started_utc: '2026-11-30T01:00:00Z', campaign_commit: 'a' } },
      { started_utc: '2026-12-01T01:00:00Z', last_run: { started_utc: '2026-12-01T01:00:00Z', campaign_commit: 'b' } },
    ];
    const merged = mergeCampaignJson(parts)!;
    expect(merged.started_utc).toBe('2026-11-01T01:00:00Z');
    expect(merged.last_run).toEqual(parts[1]!.last_run);
  });
});

/** Every trial of a night's records gets these canary ticks. */
function setCanary(dir: string, ticks: { before: number; after: number }): void {
  const recordsDir = join(dir, 'records');
  for (const candidate of readdirSync(recordsDir))
    for (const file of readdirSync(join(recordsDir, candidate))) {
      const path = join(recordsDir, candidate, file);
      const r = readJson(path);
      for (const t of r.trials) t.canary_cycles = ticks;
      writeJson(path, r);
    }
}

describe("the nights' canary", () => {
  it('marks a night whose trials ran a slow canary a slow host, on the trend page and in what moved since last night', async () => {
    const work = tempDir();
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    const rand = noise(5);
    const dirs = Array.from({ length: 6 }, (_, i) => night(quiet, join(work, `n${i + 1}`, 's'), i + 1, () => 1 + 0.003 * rand()));
    // Every trial of the last night ran its canary (before and after its windows) at 1.6× the others'.
    for (const [n, dir] of dirs.entries())
      setCanary(dir, n === dirs.length - 1 ? { before: 80_000, after: 80_000 } : { before: 50_000, after: 60_000 });
    const pages = join(work, 'pages');
    const r = await reportWithHistory(dirs.at(-1)!, pages, dirs.slice(0, -1));
    expect(r.code).toBe(0);
    const page = readFileSync(join(pages, 'performance', 'trends_s.md'), 'utf8');
    const rows = plain(parsePage(sections(page).find((s) => s.title === 'Nights')!.body));
    expect(rows).toMatch(/#5[^#]*\d%1\.00×05c0ffee/);
    expect(rows).toMatch(/#6[^#]*\d%1\.60× \(slow host\)06c0ffee/);
    const index = readFileSync(join(pages, 'index.md'), 'utf8');
    expect(plain(parsePage(sections(index).find((s) => s.title === 'Since last night')!.body))).toContain(
      "The last night's canary ran 1.60× the nights' median: a slow host.",
    );
  });
});

describe('a night that measured a rebuilt library beside the night before', () => {
  /** Writes the paired verdicts of a night's instance, as the nightly's paired run keeps them (evidence/pairedNight.ts). */
  function pairedVerdicts(dir: string, operations: Record<string, { verdict: string; delta_pct: number; mde_pct?: number }>): void {
    const started = readJson(join(dir, 'campaign.json')).last_run.started_utc;
    mkdirSync(join(dir, 'paired', 'kem-1'), { recursive: true });
    // Each verdict names the record it judged by that record's start.
    const recordStarted = (op: string) => readJson(join(dir, 'records', 'kem-1', `good__${op}.json`)).started_utc;
    const ops = Object.fromEntries(
      Object.entries(operations).map(([op, v]) => [op, { ...v, pairs: 10, reason: 'test', record_started_utc: recordStarted(op) }]),
    );
    writeJson(join(dir, 'paired', 'kem-1', 'good.json'), { night_started_utc: started, against_commit: 'ab'.repeat(20), operations: ops });
  }

  it("takes the pairs' verdict for that night: a step of the nights the pairs do not see is no claim, and one they call is, said so", async () => {
    const work = tempDir();
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    const rand = noise(9);
    // Nights 1-5 unchanged; night 6 rebuilds good, its enc 8 % and its dec 5 % slower on the nights' figures.
    const factor = (n: number) => (file: string) =>
      (1 + 0.002 * rand()) * (n === 6 && file === 'good__enc.json' ? 1.08 : n === 6 && file === 'good__dec.json' ? 1.05 : 1);
    const dirs = Array.from({ length: 6 }, (_, i) => night(quiet, join(work, `n${i + 1}`, 's'), i + 1, factor(i + 1), i + 1 === 6));
    const judged = () =>
      loadTrends(
        dirs.at(-1)!,
        's',
        dirs.slice(0, -1).map((dir) => ({ dir })),
      ).sinceLastNight;
    // Without pairs the night rule calls both.
    expect(
      judged()
        .map((r) => `${r.label} ${r.operation} ${r.verdict}`)
        .sort(),
    ).toEqual(['good dec regression', 'good enc regression']);
    // The pairs saw no change in enc, and a regression in dec.
    pairedVerdicts(dirs.at(-1)!, {
      enc: { verdict: 'unchanged', delta_pct: 0.4, mde_pct: 2 },
      dec: { verdict: 'regression', delta_pct: 4.6 },
    });
    const since = judged();
    expect(since.map((r) => `${r.label} ${r.operation} ${r.verdict} ${r.delta_pct}`)).toEqual(['good dec regression 4.6']);
    expect(since[0]!.paired).toEqual({ pairs: 10, against_commit: 'ab'.repeat(20) });
    // Pairs that could not have shown a change of the threshold decide nothing: the nights judge enc.
    pairedVerdicts(dirs.at(-1)!, {
      enc: { verdict: 'unchanged', delta_pct: 0.4, mde_pct: 6 },
      dec: { verdict: 'inconclusive', delta_pct: 4.6 },
    });
    expect(
      judged()
        .map((r) => `${r.label} ${r.operation} ${r.paired ? 'pairs' : 'nights'}`)
        .sort(),
    ).toEqual(['good dec nights', 'good enc nights']);
    // A verdict kept beside a record measured again since (an earlier run's) is not that record's.
    pairedVerdicts(dirs.at(-1)!, { enc: { verdict: 'unchanged', delta_pct: 0.4, mde_pct: 2 } });
    const path = join(dirs.at(-1)!, 'paired', 'kem-1', 'good.json');
    const file = readJson(path);
    file.operations.enc.record_started_utc = '2020-01-01T00:00:00.000Z';
    writeJson(path, file);
    expect(
      judged()
        .map((r) => `${r.label} ${r.operation}`)
        .sort(),
    ).toEqual(['good dec', 'good enc']);
  });

  it('drops a change point at a rebuilt night whose pairs called no change there', () => {
    const work = tempDir();
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    const rand = noise(11);
    // good rebuilt on night 3, its enc 8 % slower from then on.
    const dirs = Array.from({ length: 7 }, (_, i) =>
      night(
        quiet,
        join(work, `n${i + 1}`, 's'),
        i + 1,
        (file) => (1 + 0.002 * rand()) * (i + 1 >= 3 && file === 'good__enc.json' ? 1.08 : 1),
        i + 1 >= 3,
      ),
    );
    const encChanges = () =>
      loadTrends(
        dirs.at(-1)!,
        's',
        dirs.slice(0, -1).map((dir) => ({ dir })),
      ).series.find((x) => x.label === 'good' && x.operation === 'enc')!.changes;
    expect(encChanges().map((c) => [c.night + 1, c.causes])).toEqual([[3, ['submission']]]);
    pairedVerdicts(dirs[2]!, { enc: { verdict: 'unchanged', delta_pct: 0.2, mde_pct: 2 } });
    expect(encChanges()).toEqual([]);
  });
});

describe('calibrate-nights: the night rule on an A/A history', () => {
  /** Nights of one quiet copy, each ±0.3 %, and from `stepFrom` on good's dec 10 % slower, rebuilt. */
  function history(count: number, stepFrom?: number): string[] {
    const work = tempDir();
    const quiet = quietCopy(source, join(work, 'quiet', 's'));
    const rand = noise(13);
    return Array.from({ length: count }, (_, i) => {
      const stepped = stepFrom !== undefined && i + 1 >= stepFrom;
      return night(
        quiet,
        join(work, `n${i + 1}`, 's'),
        i + 1,
        (file) => (1 + 0.003 * rand()) * (stepped && file === 'good__dec.json' ? 1.1 : 1),
        stepped,
      );
    });
  }

  it('judges each night as it came: nothing on unchanged code, and counts the operation-nights', async () => {
    const dirs = history(8);
    const r = await runCli(['calibrate-nights', dirs.join(','), '--system', 's', '--format', 'json']);
    expect(r.code).toBe(0);
    const c = JSON.parse(r.out.join('\n'));
    const rows = readdirSync(join(dirs[0]!, 'records')).flatMap((id) => readdirSync(join(dirs[0]!, 'records', id))).length;
    expect(c.nights).toBe(8);
    expect(c.operation_nights).toBe(rows * 7);
    expect(c.claims).toEqual([]);
    expect(c.change_points).toEqual([]);
    const text = await runCli(['calibrate-nights', dirs.join(','), '--system', 's']);
    expect(text.out.at(-1)).toMatch(
      new RegExp(`^calibrated on 8 nights: 0 claim\\(s\\) in ${rows * 7} operation-nights \\(0\\.00 per 200;`),
    );
  });

  it('prints a claim where a rebuilt operation stepped (not an A/A history), and names a bad folder', async () => {
    const r = await runCli(['calibrate-nights', history(8, 6).join(','), '--system', 's']);
    expect(r.out.filter((l) => l.startsWith('night '))).toEqual([
      expect.stringMatching(/^night 6: kem-1\/good\/dec regression \+(9|10|11)\.\d%$/),
    ]);
    expect(r.out.at(-1)).toMatch(/^calibrated on 8 nights: 1 claim\(s\)/);
    const bad = await runCli(['calibrate-nights', `${tempDir()},${tempDir()}`, '--system', 's']);
    expect(bad.code).toBe(2);
    expect(bad.err.join('\n')).toContain('no campaign.json: not the evidence folder of a night');
  });
});
