import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cliMain.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { runCli } from './helpers/cli.js';
import { mermaidBlocks, mermaidProblems } from './helpers/mermaid.js';
import { sections, tableShapeProblems } from './helpers/pages.js';
import { repoRoot, testData, tempDir } from './helpers/tmp.js';

const golden = join(testData, 'golden', 'ngcc-harness-arm_1');
const data = join(golden, 'performance', 'data', 'arm_1');
const COMPARED = /^([2-7]\.|Symmetric primitives)/;

/** A table as the published page had it: without the rows and columns our pages add (checked on their own below). */
function withoutAdditions(table: string[][]): string[][] {
  const spread = table[0]!.indexOf('trial spread');
  return table.filter((row) => row[0] !== 'counter rate').map((row) => (spread < 0 ? row : row.filter((_, i) => i !== spread)));
}

describe('rendering the ngcc-harness golden dataset', () => {
  let pages: Map<string, string>;
  const campaign = tempDir();

  beforeAll(() => {
    cpSync(join(repoRoot, 'test', 'fixtures', 'golden-campaign'), campaign, { recursive: true });
    for (const f of ['external_sizes.csv', 'kat_issues.csv']) cpSync(join(golden, 'performance', f), join(campaign, f));
    pages = renderPages(loadReportModel(data, campaign));
  });

  it.each(['kem-09', 'sign-10'])('%s: every table cell of sections 2–7 and the symmetric primitives equals the published page', (id) => {
    const ours = sections(pages.get(`${id}/perf_arm_1.md`)!);
    const theirs = sections(readFileSync(join(golden, id, 'perf_arm_1.md'), 'utf8'));
    const compared = theirs.filter((s) => COMPARED.test(s.heading));
    expect(compared.map((s) => s.heading)).toEqual([
      '2. Assessment environment',
      '3. Functional testing (KAT)',
      '4. Performance',
      '5. Resource consumption',
      '6. Transmission and storage overhead',
      'Symmetric primitives',
      '7. Raw evidence index',
    ]);
    for (const section of compared) {
      const mine = ours.find((s) => s.heading === section.heading);
      expect(mine, section.heading).toBeDefined();
      // Our pages may add tables after the published ones (e.g. the operation's own memory), and
      // what the published page did not say: the counter rate row, the trial-spread column.
      expect(mine!.tables.slice(0, section.tables.length).map(withoutAdditions), section.heading).toEqual(section.tables);
    }
  });

  it.each([
    ['kem-09', '2694.9 MHz (cycles ÷ seconds, median of 60 trials, 2693.6–2696.3 MHz)'],
    ['sign-10', '2695.3 MHz (cycles ÷ seconds, median of 45 trials, 2694.1–2695.9 MHz)'],
  ])('%s: the additions say what the records know: the counter rate after the clock, every trial spread', (id, rate) => {
    const ours = sections(pages.get(`${id}/perf_arm_1.md`)!);
    const env = ours.find((s) => s.heading === '2. Assessment environment')!.tables[0]!;
    const clock = env.findIndex((row) => row[0] === 'clock');
    // The rate the trials ran at (python3's statistics.median of cycles/seconds over the trials):
    // below the 2.7072 GHz the cores were pinned at, which the old page could not show.
    expect(env[clock + 1]).toEqual(['counter rate', rate]);
    const timing = ours.find((s) => s.heading === '4. Performance')!.tables[0]!;
    expect(timing[0]!.at(-1)).toBe('trial spread');
    // A quiet, pinned campaign: every operation's trials within 4 %, none marked noisy; the fixed
    // plan's precision beside it, no adaptive target.
    for (const row of timing.slice(1)) expect(row.at(-1), row.join(' ')).toMatch(/^1\.0[0-4]× · ±\d\.\d%$/);
    expect(pages.get(`${id}/perf_arm_1.md`)).not.toContain('noisy');
  });

  it('kem-01 (every instance failed to build): the published rows, plus what the old page left out', () => {
    const ours = sections(pages.get('kem-01/perf_arm_1.md')!);
    const theirs = sections(readFileSync(join(golden, 'kem-01', 'perf_arm_1.md'), 'utf8'));
    const get = (list: typeof ours, h: string) => list.find((s) => s.heading.startsWith(h))!.tables[0]!;
    expect(get(ours, '2.')).toEqual(get(theirs, '2.'));
    // The KAT table keeps its rows and gains a footnote marker per failed build.
    expect(get(ours, '3.')).toEqual(get(theirs, '3.').map((row, i) => (i === 0 ? row : [row[0], row[1], `${row[2]} [1]`])));
    // Where the old page printed a bare header, every instance now has a row saying why it has no numbers.
    for (const h of ['4.', '5.', '6.', 'Symmetric']) {
      const mine = withoutAdditions(get(ours, h));
      expect(mine[0]).toEqual(get(theirs, h)[0]);
      expect(get(theirs, h)).toHaveLength(1);
      expect(mine.slice(1).map((r) => r[0])).toEqual(['Aigis-enc1', 'Aigis-enc2', 'Aigis-enc3']);
      for (const row of mine.slice(1)) expect(row.join(' ')).toMatch(/build failed \(BUILDFAIL\)/);
    }
  });

  it('every page parses back as GFM with consistent tables', () => {
    expect(pages.size).toBe(8);
    for (const [path, text] of pages) expect(tableShapeProblems(text), path).toEqual([]);
  });

  it("every chart passes Mermaid's own parser", async () => {
    let charts = 0;
    for (const [path, text] of pages) {
      charts += mermaidBlocks(text).length;
      expect(await mermaidProblems(text), path).toEqual([]);
    }
    expect(charts).toBeGreaterThan(0);
  });

  it('no page has a header-only table or an empty section', () => {
    for (const [path, text] of pages) {
      for (const s of sections(text)) for (const t of s.tables) expect(t.length, `${path} ${s.heading}`).toBeGreaterThan(1);
    }
  });

  it('titles, breadcrumbs and the footnote of a non-PASS KAT', () => {
    const page = pages.get('sign-10/perf_arm_1.md')!;
    expect(page.split('\n')[0]).toBe('# sign-10 Facto-DSA — performance on AArch64 (system arm_1)');
    expect(page).toContain('[NICCS page](https://www.niccs.org.cn/niccs/Round1Additional/pc/content/content_2101561077457833984.html)');
    expect(page).toContain('⚠ \\[1] NOKAT: the submission contains no KAT file for Facto-DSA-512');
    expect(page).toContain('```mermaid\nxychart-beta');
  });
});

describe('report --check', () => {
  it('passes on its own output and fails on a one-character edit, naming the page', async () => {
    const out = tempDir();
    const campaign = tempDir();
    cpSync(join(repoRoot, 'test', 'fixtures', 'golden-campaign'), campaign, { recursive: true });
    expect(await main(['report', data, '--campaign', campaign, '--out', out])).toBe(0);
    expect(await main(['report', data, '--campaign', campaign, '--out', out, '--check'])).toBe(0);
    const page = join(out, 'kem-09', 'perf_arm_1.md');
    const text = readFileSync(page, 'utf8');
    writeFileSync(page, text.replace('243.4 k', '243.5 k'));
    const { code, out: lines } = await runCli(['report', data, '--campaign', campaign, '--out', out, '--check']);
    expect(code).toBe(1);
    expect(lines).toContain(`differs: ${page}`);
    expect(lines.filter((l) => l.startsWith('differs:'))).toHaveLength(1);
  });
});
