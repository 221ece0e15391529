import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign, type Phase } from '../src/campaign/runCampaign.js';
import type { CtCoverage, CtEvidence, CtFinding } from '../src/ct/findingKinds.js';
import { evidencePaths } from '../src/evidence/layout.js';
import { validateDataset } from '../src/evidence/validate.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { ICCS } from './helpers/campaigns.js';
import { CT_FIXTURES } from './helpers/ctFixtures.js';
import { sections } from './helpers/pages.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Rarely taken paths (docs/method.md#rare-paths): kem-8's key generation draws its seed again when
 * the first byte is 0xF0 or more, and looks a table up at the rejected draw on that retry only
 * (test/fixtures/ct/README.md). With the harness's seed the first retry comes late: the check's
 * three calls never take it, so they call the operation clean; the path search finds the retry and
 * the check makes as many calls as reach it, and the planted lookup becomes a finding.
 */
const SYSTEM = 'ct-rare';
const phases = new Set<Phase>(['build', 'kat', 'ct']);
const SOURCE = join(CT_FIXTURES, 'kem-8', 'rare', 'KEM_AlgorithmInstance.c');

/** The line of the fixture source that carries `marker`, read from the source. */
const lineOf = (marker: string) =>
  readFileSync(SOURCE, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(marker)) + 1;
const planted = (f: CtFinding) => f.line === lineOf('PLANT: rare');

/** kem-8 alone in a campaign with these ct settings (no other build: the measured one is the subject). */
function campaign(ct: string): string {
  const root = tempDir();
  cpSync(join(CT_FIXTURES, 'kem-8'), join(root, 'kem-8'), { recursive: true });
  const yml = join(root, 'kem-8', 'candidate.yml');
  writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(\.\.\/)+native\/iccs/g, ICCS));
  writeFileSync(join(root, 'ngcc-perf.yml'), `ct:\n  variants: []\n${ct}`);
  return root;
}

async function checked(ct: string): Promise<{ ct: CtEvidence; dataDir: string }> {
  const dataDir = tempDir();
  await runCampaign({ campaignDir: campaign(ct), system: SYSTEM, dataDir, phases });
  const path = evidencePaths(join(dataDir, SYSTEM)).ct('kem-8', 'rare');
  return { ct: JSON.parse(readFileSync(path, 'utf8')) as CtEvidence, dataDir };
}

const coverage = (ct: CtEvidence, op: string) => ct.operations[op]!.coverage as CtCoverage;

describe('the ct phase looks for rarely taken paths before it checks', () => {
  it('without the search, three calls miss the retry: clean, and the retry named as never run', async () => {
    const { ct, dataDir } = await checked('  path_calls: 0\n');
    const keygen = ct.operations.keygen!;
    expect(keygen.calls).toBe(3);
    expect(keygen.findings.filter(planted)).toEqual([]);
    expect(keygen.status).toBe('clean');
    const c = coverage(ct, 'keygen');
    expect(c.paths).toBeUndefined();
    expect(c.never_run).toContain('KEM_AlgorithmInstance.c:rejected');
    expect(validateDataset(join(dataDir, SYSTEM))).toEqual([]);
  }, 600_000);

  it('with it, the check makes as many calls as reach the retry, and the lookup there is a finding', async () => {
    const { ct, dataDir } = await checked('');
    const keygen = ct.operations.keygen!;
    const c = coverage(ct, 'keygen');
    expect(c.paths).toMatchObject({ asked: 64, calls: 64 });
    expect(c.paths!.needed).toBeGreaterThan(3);
    expect(keygen.calls).toBe(c.paths!.needed);
    expect(c.paths!.beyond).toBeUndefined();
    expect(c.never_run).not.toContain('KEM_AlgorithmInstance.c:rejected');
    expect(keygen.findings.filter(planted)).toEqual([expect.objectContaining({ kind: 'index', function: 'rejected', suppressed: false })]);
    expect(keygen.status).toBe('flagged');
    // The rejection test is a finding too, suppressed by the candidate's reason.
    expect(keygen.findings.find((f) => f.function === 'draw_seed' && f.line === lineOf('REJECT: test'))).toMatchObject({
      suppressed: true,
    });
    // enc and dec have no rare path: the search stops at the check's own calls.
    for (const op of ['enc', 'dec']) {
      expect(coverage(ct, op).paths).toMatchObject({ asked: 64, needed: 3 });
      expect(ct.operations[op]!.calls).toBe(3);
    }
    expect(validateDataset(join(dataDir, SYSTEM))).toEqual([]);
    const page = renderPages(loadReportModel(join(dataDir, SYSTEM))).get(`kem-8/perf_${SYSTEM}.md`)!;
    const status = sections(page)
      .find((s) => s.heading === 'Constant-time check (machine)')!
      .tables.find((t) => t[0]!.includes('coverage'))!;
    expect(status.find((r) => r[1] === 'keygen')!.at(-1)).toMatch(/paths of 64 calls: all checked$/);
    // validate holds the search's figures to each other and to the calls the check made.
    const path = evidencePaths(join(dataDir, SYSTEM)).ct('kem-8', 'rare');
    const where = 'ct/kem-8/rare.json: operations.keygen.coverage.paths';
    const edited = (edit: (c: CtCoverage, o: CtEvidence['operations'][string]) => void) => {
      const copy = JSON.parse(JSON.stringify(ct)) as CtEvidence;
      edit(coverage(copy, 'keygen'), copy.operations.keygen!);
      writeFileSync(path, JSON.stringify(copy));
      return validateDataset(join(dataDir, SYSTEM));
    };
    expect(edited((_c, o) => (o.calls = 3))).toEqual([
      `${where}: the check made 3 calls, fewer than the ${c.paths!.needed} needed, but no line beyond them is named`,
    ]);
    expect(edited((c) => (c.paths!.needed = 65))).toEqual(expect.arrayContaining([`${where}: needed 65 calls, more than the 64 it ran`]));
    expect(edited((c) => Object.assign(c.paths!, { beyond: ['a.c:f:1'], beyond_lines: 1 }))).toEqual([
      `${where}: lines beyond the checked calls are named, but the check made the ${c.paths!.needed} calls needed`,
    ]);
  }, 600_000);

  it('when the budget allows fewer calls than the paths need, the lines only later calls took are named', async () => {
    // The budget of about ten keygen calls under memcheck at the slowdown the first run measured:
    // enough for the check's three, too few for the calls the retry needs.
    const first = await checked('');
    const needed = coverage(first.ct, 'keygen').paths!.needed;
    const slowdown = first.ct.slowdown as { factor: number };
    const build = JSON.parse(readFileSync(join(first.dataDir, SYSTEM, 'build.json'), 'utf8')) as {
      instances: Record<string, { call_seconds: Record<string, number> }>;
    };
    const perCall = build.instances['kem-8/rare']!.call_seconds.keygen!;
    const budget = 2 + (perCall * slowdown.factor * needed) / 3;
    const { ct, dataDir } = await checked(`  startup_s: 2\n  op_budget_s: ${budget}\n`);
    const keygen = ct.operations.keygen!;
    const c = coverage(ct, 'keygen');
    expect(keygen.calls).toBeGreaterThanOrEqual(3);
    expect(keygen.calls).toBeLessThan(needed);
    expect(c.paths!.needed).toBe(needed);
    expect(c.paths!.beyond).toEqual(expect.arrayContaining([expect.stringMatching(/^KEM_AlgorithmInstance\.c:rejected:/)]));
    expect(c.paths!.beyond_lines).toBeGreaterThanOrEqual(2);
    expect(keygen.findings.filter(planted)).toEqual([]);
    expect(validateDataset(join(dataDir, SYSTEM))).toEqual([]);
    const page = renderPages(loadReportModel(join(dataDir, SYSTEM))).get(`kem-8/perf_${SYSTEM}.md`)!;
    const tables = sections(page).find((s) => s.heading === 'Constant-time check (machine)')!.tables;
    const later = tables.find((t) => t[0]!.includes('taken only by later calls, not checked'))!;
    expect(later.find((r) => r[1] === 'keygen')!.at(-1)).toContain('KEM_AlgorithmInstance.c:rejected:');
  }, 600_000);
});
