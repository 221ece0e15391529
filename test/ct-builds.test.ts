import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type Phase } from '../src/campaign/runCampaign.js';
import { compareEvidence } from '../src/compare/compare.js';
import { failReasons, parseFailOn } from '../src/compare/failOn.js';
import { renderComparison } from '../src/compare/markdown.js';
import type { CtEvidence, CtFinding } from '../src/ct/findingKinds.js';
import { evidencePaths } from '../src/evidence/layout.js';
import { validateDataset } from '../src/evidence/validate.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { CT_FIXTURES, ctCampaign, markedLine } from './helpers/ctFixtures.js';
import { ICCS } from './helpers/campaigns.js';
import { KYBER_REF, kyberCandidate, lineOf, preFixKyber } from './helpers/kyberslash.js';
import { runCli } from './helpers/cli.js';
import { sections } from './helpers/pages.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Every build that is measured or may be (docs/method.md#every-build): pq-crystals Kyber with the
 * lines its KyberSlash fix replaced, measured at the guide's reference set (-O2, where gcc 12
 * multiplies), checked also at the performance and resource sets by default. gcc 12 divides by q at
 * -Os only: the resource build's check finds the divisions the measured build does not have.
 */
const SYSTEM = 'x86_b';
// The KAT runs (its status NOKAT: no digest) for its seconds per call, which the slowdown is measured against.
const phases = new Set<Phase>(['build', 'kat', 'ct']);

describe('the ct phase checks the other builds: the guide’s flag sets beside the measured one', () => {
  const root = tempDir();
  const data = tempDir();
  const folder = join(root, 'kem-1');
  mkdirSync(folder, { recursive: true });
  const ref = preFixKyber(join(folder, 'ref'));
  kyberCandidate(folder, 'ref', [{ label: 'kyber512', cflags: '' }]);
  writeFileSync(join(root, 'ngcc-perf.yml'), 'ct:\n  enabled: true\n');
  const path = evidencePaths(join(data, SYSTEM)).ct('kem-1', 'kyber512');
  const read = () => JSON.parse(readFileSync(path, 'utf8')) as CtEvidence;
  const at = (f: CtFinding) => `${f.function.replace(/^pqcrystals_kyber512_ref_/, '')} ${f.file}:${f.line}`;
  const divisions = (findings: CtFinding[]) => findings.filter((f) => f.kind === 'division').map(at);

  beforeAll(async () => {
    await runCampaign({ campaignDir: root, system: SYSTEM, dataDir: data, phases });
  }, 600_000);

  it('finds at gcc -Os the secret divisions the measured -O2 build does not have', () => {
    const ct = read();
    expect(ct.build_name).toBe('gcc reference');
    expect(ct.builds!.map((b) => b.name)).toEqual(['gcc performance', 'gcc resource']);
    const resource = ct.builds!.find((b) => b.name === 'gcc resource')!;
    expect(resource.flags).toContain('-Os');
    expect(resource.compiler).toMatch(/gcc/);
    const tomsg = `poly_tomsg poly.c:${lineOf(ref, 'poly.c', '(((t << 1) + KYBER_Q/2)/KYBER_Q) & 1')}`;
    expect(divisions(resource.operations.dec!.findings)).toContain(tomsg);
    expect(resource.operations.dec!.status).toBe('flagged');
    // The measured build multiplies: no division finding there, whatever else memcheck reports.
    for (const op of ['keygen', 'enc', 'dec']) expect(divisions(ct.operations[op]!.findings), op).toEqual([]);
    // Each build makes as many calls as the measured build's path search found its paths need.
    for (const b of ct.builds!)
      for (const op of ['keygen', 'enc', 'dec']) {
        const { status, reason, seconds } = b.operations[op]!;
        expect(b.operations[op]!.calls, `${b.name} ${op}: ${JSON.stringify({ status, reason, seconds, slowdown: b.slowdown })}`).toBe(
          ct.operations[op]!.calls,
        );
      }
    // Each build's own slowdown, measured on its own cheapest call, as the measured build's is.
    for (const b of [ct, ...ct.builds!]) {
      const s = b.slowdown;
      expect(
        s && 'factor' in s && s.operation === (ct.slowdown as { operation: string }).operation && s.factor > 1,
        JSON.stringify(s),
      ).toBe(true);
    }
    // Measured by each build, not copied from the measured one: three timings, three factors.
    expect(new Set([ct, ...ct.builds!].map((b) => (b.slowdown as { factor: number }).factor)).size).toBe(3);
    expect(validateDataset(join(data, SYSTEM))).toEqual([]);
  });

  it('shows every build and each site by build on the candidate page', () => {
    const page = renderPages(loadReportModel(join(data, SYSTEM))).get(`kem-1/perf_${SYSTEM}.md`)!;
    const tables = sections(page).find((s) => s.heading === 'Constant-time check (machine)')!.tables;
    const builds = tables.find((t) => t[0]!.join() === 'instance,build,operations')!;
    expect(builds.slice(1).map((r) => r[1])).toEqual(['gcc reference (measured)', 'gcc performance', 'gcc resource']);
    const matrix = tables.find((t) => t[0]!.join() === 'instance,kind,function,site,measured,gcc performance,gcc resource,note')!;
    const line = lineOf(ref, 'poly.c', '(((t << 1) + KYBER_Q/2)/KYBER_Q) & 1');
    const row = matrix.find((r) => r[1] === 'division' && r[3] === `poly.c:${line}`)!;
    expect(row[2]).toMatch(/poly_tomsg$/);
    expect(row[4]).toBe('—');
    expect(row[6]).toContain('dec');
  });

  it('keeps the file of an unchanged library on the next run, its division findings judged again, never doubled', async () => {
    const before = readFileSync(path, 'utf8');
    await runCampaign({ campaignDir: root, system: SYSTEM, dataDir: data, phases });
    expect(readFileSync(path, 'utf8')).toBe(before);
  }, 600_000);

  it('a pull request that brings the division back is flagged by the build that has it, and fail-on: ct fails it', async () => {
    // The base: the published, fixed code, measured and checked the same way.
    const baseRoot = tempDir();
    const baseData = tempDir();
    mkdirSync(join(baseRoot, 'kem-1'), { recursive: true });
    cpSync(KYBER_REF, join(baseRoot, 'kem-1', 'ref'), { recursive: true });
    kyberCandidate(join(baseRoot, 'kem-1'), 'ref', [{ label: 'kyber512', cflags: '' }]);
    writeFileSync(join(baseRoot, 'ngcc-perf.yml'), 'ct:\n  enabled: true\n');
    await runCampaign({ campaignDir: baseRoot, system: SYSTEM, dataDir: baseData, phases });
    const report = compareEvidence({ baseDir: baseData, headDir: data, system: SYSTEM });
    const found = (report.ct_findings ?? []).filter((f) => f.kind === 'division');
    const line = lineOf(ref, 'poly.c', '(((t << 1) + KYBER_Q/2)/KYBER_Q) & 1');
    const tomsg = found.find((f) => f.function.endsWith('poly_tomsg') && f.line === line)!;
    expect(tomsg).toMatchObject({ key: 'kem-1/kyber512', build: 'gcc resource', baseline_checked: true });
    expect(tomsg.operations).toContain('dec');
    // None from the measured build: at -O2 the code multiplies.
    expect(found.filter((f) => f.build === undefined)).toEqual([]);
    expect(failReasons(report, parseFailOn('ct', 'fail-on'))).toEqual([expect.stringMatching(/new constant-time finding/)]);
    expect(renderComparison(report)).toMatch(/poly_tomsg[^\n]*dec[^\n]*\(gcc resource build\)/);
  }, 600_000);

  it("validate checks each build's slowdown: its factor from its two times, an operation of the file, a failure that skipped them all", () => {
    const ct = read();
    const saved = JSON.stringify(ct);
    const s = ct.slowdown as { operation: string; factor: number };
    s.operation = 'sign';
    const other = ct.builds![0]!.slowdown as { factor: number };
    other.factor *= 2;
    ct.builds![1]!.slowdown = { failure: 'one keygen call under memcheck did not finish within the budget of 60 s' };
    writeFileSync(path, JSON.stringify(ct));
    try {
      expect(validateDataset(join(data, SYSTEM))).toEqual([
        "ct/kem-1/kyber512.json: slowdown.operation: sign is not one of the file's operations",
        expect.stringMatching(/^ct\/kem-1\/kyber512\.json: builds\[0\]\.slowdown\.factor: [\d.]+, but calls_s \/ native_s gives [\d.]+$/),
        'ct/kem-1/kyber512.json: builds[1].slowdown: a failure, but keygen, enc, dec not skipped with it as the reason',
      ]);
      writeFileSync(path, JSON.stringify({ ...JSON.parse(saved), slowdown: { operation: 'keygen', factor: -3, calls_s: 1, native_s: 1 } }));
      expect(validateDataset(join(data, SYSTEM))).toEqual([expect.stringMatching(/^ct\/kem-1\/kyber512\.json: slowdown(\.factor)?: /)]);
    } finally {
      writeFileSync(path, saved);
    }
    expect(validateDataset(join(data, SYSTEM))).toEqual([]);
  });

  it('validate holds each build to the same rules as the measured one', () => {
    const ct = read();
    const i = ct.builds!.findIndex((b) => b.name === 'gcc resource');
    ct.builds![i]!.operations.dec!.status = 'clean';
    writeFileSync(path, JSON.stringify(ct));
    expect(validateDataset(join(data, SYSTEM))).toEqual([
      expect.stringMatching(
        new RegExp(`^ct/kem-1/kyber512\\.json: builds\\[${i}\\]\\.operations\\.dec: clean, but \\d+ finding\\(s\\) are not suppressed$`),
      ),
    ]);
  });
});

const hasClang = spawnSync('sh', ['-c', 'command -v clang']).status === 0;
if (!hasClang) console.warn('test/ct-builds.test.ts: the clang column is skipped: clang is not installed (.ci/run installs it)');

/**
 * `ct.compilers` (docs/method.md#every-build): the fixture's planted branch, checked as gcc and as
 * clang build it. clang's debug information names a file by its path from the compiler's folder,
 * gcc's by its base name: the site must still be one row, found by both.
 */
describe.skipIf(!hasClang)('the ct phase checks the builds of every compiler ct.compilers names', () => {
  it('adds a clang column in which the planted branch is found at the same site as gcc’s', async () => {
    const campaignDir = ctCampaign('ct:\n  variants: [reference]\n  compilers: [gcc, clang]\n  path_calls: 0\n');
    const dataDir = tempDir();
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases, only: /^kem-7\/branch$/ });
    const ct = JSON.parse(readFileSync(evidencePaths(join(dataDir, SYSTEM)).ct('kem-7', 'branch'), 'utf8')) as CtEvidence;
    expect(ct.build_name).toBe('gcc reference');
    expect(ct.builds!.map((b) => [b.name, b.variant])).toEqual([['clang reference', 'reference']]);
    const clang = ct.builds![0]!;
    expect(clang.compiler).toMatch(/clang version/);
    const planted = { kind: 'branch', function: 'planted_branch', file: 'ct_kem.inc', line: markedLine('PLANT: branch') };
    expect(ct.operations.dec!.findings).toEqual([expect.objectContaining(planted)]);
    expect(clang.operations.dec!.findings).toEqual([expect.objectContaining(planted)]);
    expect(validateDataset(join(dataDir, SYSTEM))).toEqual([]);
    const page = renderPages(loadReportModel(join(dataDir, SYSTEM))).get(`kem-7/perf_${SYSTEM}.md`)!;
    const tables = sections(page).find((s) => s.heading === 'Constant-time check (machine)')!.tables;
    const matrix = tables.find((t) => t[0]!.join() === 'instance,kind,function,site,measured,clang reference,note')!;
    expect(matrix.slice(1)).toEqual([['branch', 'branch', 'planted_branch', `ct_kem.inc:${planted.line}`, 'dec', 'dec', '']]);
  }, 600_000);
});

describe.skipIf(!hasClang)('a build of the matrix that fails to build', () => {
  it('is named in the run’s line, on the page and in the comparison, and nothing is checked in it', async () => {
    const campaignDir = ctCampaign('ct:\n  variants: [reference, resource]\n  compilers: [gcc, clang]\n  path_calls: 0\n');
    // A source that refuses clang at -Os alone: the measured gcc build and the others build.
    writeFileSync(
      join(campaignDir, 'kem-7', 'clang_os.c'),
      '#if defined(__clang__) && defined(__OPTIMIZE_SIZE__)\n#error "not for clang at -Os"\n#endif\nvoid clang_os_marker(void) {}\n',
    );
    const yml = join(campaignDir, 'kem-7', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(label: clean\n\s+dir: clean\n\s+extra_sources: \[)/, '$1../clang_os.c, '));
    const dataDir = tempDir();
    const r = await runCli([
      'run',
      campaignDir,
      '--system',
      SYSTEM,
      '--out',
      dataDir,
      '--only',
      '^kem-7/clean$',
      '--phases',
      'build,kat,ct',
    ]);
    expect(r.progress).toMatch(/kem-7\/clean ct .*; 1 of 4 ct builds failed to build: clang resource \(see build\.log\)/);
    const ct = JSON.parse(readFileSync(evidencePaths(join(dataDir, SYSTEM)).ct('kem-7', 'clean'), 'utf8')) as CtEvidence;
    const failed = ct.builds!.find((b) => b.name === 'clang resource')!;
    expect(failed.failure).toMatch(
      /^its ct build failed: .*clang_os\.c:2:2: error: "not for clang at -Os" \(see build\/kem-7\/clean\/.*build\.log\)$/,
    );
    expect(Object.values(failed.operations).every((o) => o.findings.length === 0)).toBe(true);
    expect(validateDataset(join(dataDir, SYSTEM))).toEqual([]);
    const page = renderPages(loadReportModel(join(dataDir, SYSTEM))).get(`kem-7/perf_${SYSTEM}.md`)!;
    expect(page).toContain('⚠ 1 of 4 ct builds failed to build, so nothing was checked in them: clean clang resource');
    // Against a base whose clang resource build built, the failure is new: listed in the comparison.
    const baseDir = tempDir();
    cpSync(dataDir, baseDir, { recursive: true });
    const baseFile = evidencePaths(join(baseDir, SYSTEM)).ct('kem-7', 'clean');
    const base = JSON.parse(readFileSync(baseFile, 'utf8')) as CtEvidence;
    writeFileSync(baseFile, JSON.stringify({ ...base, builds: base.builds!.map(({ failure: _f, ...b }) => b) }));
    const report = compareEvidence({ baseDir, headDir: dataDir, system: SYSTEM, thresholdPct: 3, alpha: 0.01 });
    expect(report.ct_build_failures?.map((f) => f.build)).toEqual(['clang resource']);
    expect(renderComparison(report)).toContain('**Constant-time builds not checked**');
  }, 600_000);
});

const hasClang16 = spawnSync('clang-16', ['--version']).status === 0;

/**
 * A branch the compiler makes on a secret (Clangover, CVE-2024-37880): the fixture kem-9's
 * `planted_mask` has none in its source, and clang 16 at -Os (the guide's resource flags) makes one
 * on each secret bit. It must be found in that build alone, named the compiler's and a leak, and be
 * absent from the fixed twin in every build.
 */
describe.skipIf(!hasClang16)('a branch clang 16 makes on a secret (Clangover), found in its build alone', () => {
  it('finds the branch at the mask line in the clang-16 resource build, not in gcc’s, and none in the fixed twin', async () => {
    const campaignDir = tempDir();
    cpSync(join(CT_FIXTURES, 'kem-9'), join(campaignDir, 'kem-9'), { recursive: true });
    cpSync(join(CT_FIXTURES, 'kem-7'), join(campaignDir, 'kem-7'), { recursive: true });
    for (const c of ['kem-7', 'kem-9']) {
      const yml = join(campaignDir, c, 'candidate.yml');
      writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(\.\.\/)+native\/iccs/g, ICCS));
    }
    writeFileSync(join(campaignDir, 'ngcc-perf.yml'), 'ct:\n  variants: [resource]\n  compilers: [gcc, clang-16]\n  path_calls: 0\n');
    const dataDir = tempDir();
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases, only: /^kem-9\// });
    const line =
      readFileSync(join(CT_FIXTURES, 'kem-7', 'common', 'ct_kem.inc'), 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('PLANT: mask')) + 1;
    const atMask = (findings: CtFinding[] | undefined) => (findings ?? []).filter((f) => f.function === 'planted_mask' && f.line === line);
    const read = (label: string) => JSON.parse(readFileSync(evidencePaths(join(dataDir, SYSTEM)).ct('kem-9', label), 'utf8')) as CtEvidence;
    const mask = read('mask');
    expect(mask.builds!.map((b) => b.name)).toEqual(['gcc resource', 'clang-16 resource']);
    const clang = mask.builds!.find((b) => b.name === 'clang-16 resource')!;
    expect(clang.compiler).toMatch(/clang version 16\./);
    expect(clang.failure).toBeUndefined();
    expect(atMask(clang.operations.dec!.findings)).toEqual([
      expect.objectContaining({ kind: 'branch', compiler_made: 'no-branch', suppressed: false }),
    ]);
    expect(clang.operations.dec!.status).toBe('flagged');
    expect(atMask(mask.operations.dec!.findings)).toEqual([]);
    expect(atMask(mask.builds!.find((b) => b.name === 'gcc resource')!.operations.dec!.findings)).toEqual([]);
    const fixed = read('mask-fixed');
    expect(fixed.builds!.map((b) => [b.name, b.failure])).toEqual([
      ['gcc resource', undefined],
      ['clang-16 resource', undefined],
    ]);
    for (const b of [fixed, ...fixed.builds!]) expect(atMask(b.operations.dec!.findings), 'mask-fixed').toEqual([]);
    // The page says what it is, in the matrix's row of the site: the compiler's branch, a leak, Clangover named.
    const page = renderPages(loadReportModel(join(dataDir, SYSTEM))).get(`kem-9/perf_${SYSTEM}.md`)!;
    const tables = sections(page).find((s) => s.heading === 'Constant-time check (machine)')!.tables;
    const matrix = tables.find((t) => t[0]!.join() === 'instance,kind,function,site,measured,gcc resource,clang-16 resource,note')!;
    expect(matrix.slice(1)).toEqual([
      [
        'mask',
        'branch',
        'planted_mask',
        `ct_kem.inc:${line}`,
        '—',
        '—',
        'dec',
        expect.stringMatching(/a real leak \(Clangover, CVE-2024-37880/),
      ],
    ]);
  }, 900_000);
});
