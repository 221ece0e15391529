import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { againstOptions, planRun } from '../src/campaign/runPlan.js';
import { runCampaign, type Phase } from '../src/campaign/runCampaign.js';
import type { CtEvidence, CtFinding } from '../src/ct/findingKinds.js';
import { evidencePaths } from '../src/evidence/layout.js';
import { validateDataset } from '../src/evidence/validate.js';
import { isInputError } from '../src/errors.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { ctCampaign, markedLine } from './helpers/ctFixtures.js';
import { tempDir } from './helpers/tmp.js';

/**
 * The ct phase on fixtures with known truth (test/fixtures/ct/README.md): real gcc builds, real
 * valgrind, in the sandbox. The planted lines are found by their markers in the source.
 */
const SYSTEM = 'ct-test';
const phases = new Set<Phase>(['build', 'ct']);

const readCt = (systemDir: string, label: string): CtEvidence =>
  JSON.parse(readFileSync(evidencePaths(systemDir).ct('kem-7', label), 'utf8')) as CtEvidence;

const planted = (f: CtFinding) =>
  f.function.startsWith('planted_') || [markedLine('PLANT: branch'), markedLine('PLANT: index')].includes(f.line);

describe('the ct phase on planted leaks', () => {
  const campaignDir = ctCampaign();
  const dataDir = tempDir();
  const systemDir = join(dataDir, SYSTEM);

  beforeAll(async () => {
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases });
  });

  it('flags the secret-dependent branch in planted_branch, at its line, in dec only', () => {
    const ct = readCt(systemDir, 'branch');
    const dec = ct.operations.dec!;
    expect(dec.status).toBe('flagged');
    expect(dec.calls).toBe(3);
    const site = dec.findings.find((f) => f.function === 'planted_branch');
    expect(site).toMatchObject({ kind: 'branch', file: 'ct_kem.inc', line: markedLine('PLANT: branch'), suppressed: false, reason: '' });
    expect(site!.count).toBeGreaterThanOrEqual(3);
    // keygen and enc never run the plant.
    for (const op of ['keygen', 'enc']) expect(ct.operations[op]!.findings.filter(planted)).toEqual([]);
  });

  it('flags the secret-indexed lookup in planted_index, at its line', () => {
    const dec = readCt(systemDir, 'index').operations.dec!;
    expect(dec.status).toBe('flagged');
    expect(dec.findings.find((f) => f.function === 'planted_index')).toMatchObject({
      kind: 'index',
      file: 'ct_kem.inc',
      line: markedLine('PLANT: index'),
    });
  });

  it('-Os: the secret coefficient divided by q in planted_division is a division finding at its line, beside the index memcheck flags', () => {
    const ct = readCt(systemDir, 'division');
    expect(ct.flags).toContain('-Os');
    const dec = ct.operations.dec!;
    expect(dec.status).toBe('flagged');
    // memcheck sees the quotient used as an address (the table index); the division's own latency it cannot see.
    expect(dec.findings.find((f) => f.kind === 'index')).toMatchObject({
      function: 'planted_division',
      file: 'ct_kem.inc',
      line: markedLine('PLANT: division index'),
      suppressed: false,
    });
    // The division finder places the `div` by objdump's line table of the ct build (DWARF 4).
    const division = dec.findings.filter((f) => f.kind === 'division');
    expect(division).toEqual([
      expect.objectContaining({
        kind: 'division',
        function: 'planted_division',
        file: 'ct_kem.inc',
        line: markedLine('PLANT: division'),
        suppressed: false,
      }),
    ]);
    expect(ct.divisions).toEqual([
      expect.objectContaining({ function: 'planted_division', instruction: expect.stringMatching(/^div/), tainted: true }),
    ]);
    for (const op of ['keygen', 'enc']) expect(ct.operations[op]!.findings).toEqual([]);
  });

  it('a division of public key bytes is listed as reachable, operands not shown tainted, and flags nothing', () => {
    const ct = readCt(systemDir, 'division-public');
    expect(ct.divisions).toEqual([
      expect.objectContaining({
        function: 'public_division',
        instruction: expect.stringMatching(/^div/),
        line: markedLine('PUBLIC: division'),
        tainted: false,
      }),
    ]);
    for (const op of ['keygen', 'enc', 'dec']) {
      expect(ct.operations[op]!.status).toBe('clean');
      expect(ct.operations[op]!.findings).toEqual([]);
    }
    const page = [...renderPages(loadReportModel(systemDir))].find(([p]) => p.startsWith('kem-7/'))![1];
    expect(page).toMatch(
      /\| `division-public` \| `public_division` \| `div[a-z]* %\w+` \| [^|]+ \| public in \d+ reads? \| gcc[^|]*, -Os \|/,
    );
    expect(page).toMatch(
      /\| `division` \| `planted_division` \| `div[a-z]* %\w+` \| [^|]+ \| ⚠ secret dividend in dec: a division finding \| gcc[^|]*, -Os \|/,
    );
  });

  it("says what each operation's calls covered: the planted function is never entered by keygen, entered by dec; the harness's files are left out", () => {
    const ct = readCt(systemDir, 'branch');
    const covered = (op: string) => {
      const c = ct.operations[op]!.coverage;
      expect(c, op).toBeDefined();
      if (!c || 'failure' in c) throw new Error(`${op}: coverage not counted: ${c && 'failure' in c ? c.failure : 'absent'}`);
      return c;
    };
    const [keygen, dec] = [covered('keygen'), covered('dec')];
    expect(keygen.never_run).toContain('ct_kem.inc:planted_branch');
    expect(dec.never_run).not.toContain('ct_kem.inc:planted_branch');
    for (const c of [keygen, dec]) {
      expect(c.functions_run).toBeGreaterThan(0);
      expect(c.functions_run).toBeLessThanOrEqual(c.functions);
      expect(c.lines_run).toBeGreaterThan(0);
      expect(c.lines_run).toBeLessThanOrEqual(c.lines);
      expect(c.never_run).toHaveLength(c.functions - c.functions_run);
      expect(c.never_run.join(' ')).not.toMatch(/ct_wrap|nist_shim|(^| )ct\.c:/);
      // Untaken lines lie in functions the calls entered, never in one never_run names.
      expect(c.untaken, 'untaken').toBeDefined();
      expect(c.untaken_lines).toBeGreaterThanOrEqual(c.untaken!.length);
      for (const u of c.untaken!) {
        expect(u).toMatch(/^[^:/]+:\w+:\d+(-\d+)?$/);
        expect(c.never_run).not.toContain(u.split(':').slice(0, 2).join(':'));
      }
    }
    // dec runs planted_branch on top of what keygen runs of the same code.
    expect(dec.functions_run).toBeGreaterThan(keygen.functions_run);
    // And the page shows it on the row.
    const page = renderPages(loadReportModel(systemDir)).get('kem-7/perf_ct-test.md')!;
    expect(page).toMatch(/\| `?branch`? \| keygen \| [^\n]* \| \d+% of lines, \d+ of \d+ functions; paths of 64 calls: all checked \|/);
  });

  it('finds none of those in the unplanted copy of the same code', () => {
    const ct = readCt(systemDir, 'clean');
    for (const op of ['keygen', 'enc', 'dec']) {
      expect(ct.operations[op]!.findings.filter(planted)).toEqual([]);
      expect(ct.operations[op]!.status).toBe('clean');
    }
  });

  it('names the tool, the library of build.json and the generators it marked secret; validate accepts the files', () => {
    const ct = readCt(systemDir, 'branch');
    const build = JSON.parse(readFileSync(evidencePaths(systemDir).build, 'utf8'));
    expect(ct).toMatchObject({ schema: 1, tool: 'valgrind-memcheck', library_sha256: build.instances['kem-7/branch'].library_sha256 });
    expect(ct.secret_generators).toEqual(['get_random_number']);
    expect(ct.flags).toEqual(expect.arrayContaining(['-gdwarf-4', '-fno-lto']));
    expect(validateDataset(systemDir)).toEqual([]);
  });

  it('validate names a ct file whose library, status or counts do not hold', () => {
    const path = evidencePaths(systemDir).ct('kem-7', 'index');
    const good = readFileSync(path, 'utf8');
    try {
      const ct = JSON.parse(good) as CtEvidence;
      ct.library_sha256 = 'f'.repeat(64);
      ct.operations.dec!.status = 'clean';
      ct.operations.keygen!.findings.push(ct.operations.dec!.findings[0]!, ct.operations.dec!.findings[0]!);
      writeFileSync(path, JSON.stringify(ct));
      const problems = validateDataset(systemDir).join('\n');
      expect(problems).toMatch(/ct\/kem-7\/index\.json: library_sha256 ffffffffffff… differs from build\.json's/);
      expect(problems).toMatch(/operations\.dec: clean, but 1 finding\(s\) are not suppressed/);
      expect(problems).toMatch(/operations\.keygen: clean, but 2 finding/);
      expect(problems).toMatch(/operations\.keygen\.findings\[1\]: index planted_index ct_kem\.inc:\d+ listed twice/);
      writeFileSync(path, JSON.stringify({ schema: 1, tool: 'x', operations: {} }));
      expect(validateDataset(systemDir).join('\n')).toMatch(/ct\/kem-7\/index\.json: library_sha256: /);
    } finally {
      writeFileSync(path, good);
    }
  });

  it("checks a file made without the KAT's call seconds again once the KAT has run: its slowdown measured, then kept", async () => {
    const only = /^kem-7\/branch$/;
    const path = evidencePaths(systemDir).ct('kem-7', 'branch');
    // The first run had no KAT: its budget assumed ct.valgrind_factor, and no slowdown was measured.
    expect(readCt(systemDir, 'branch').slowdown).toBeUndefined();
    const withKat = new Set<Phase>(['build', 'kat', 'ct']);
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases: withKat, only });
    const s = readCt(systemDir, 'branch').slowdown as { operation: string; factor: number };
    expect(['keygen', 'enc', 'dec']).toContain(s.operation);
    expect(s.factor).toBeGreaterThan(1);
    const after = readFileSync(path, 'utf8');
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases: withKat, only });
    expect(readFileSync(path, 'utf8')).toBe(after);
    expect(validateDataset(systemDir)).toEqual([]);
  });

  it('a suppression with a reason moves the finding to suppressed and the status to clean', async () => {
    const reason = 'the fixture plants this on purpose';
    writeFileSync(
      join(campaignDir, 'kem-7', 'ct-suppressions.yml'),
      `suppressions:\n  - function: planted_branch\n    kind: branch\n    reason: ${reason}\n`,
    );
    try {
      await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases, only: /^kem-7\/branch$/ });
      const dec = readCt(systemDir, 'branch').operations.dec!;
      expect(dec.findings.find((f) => f.function === 'planted_branch')).toMatchObject({ suppressed: true, reason });
      expect(dec.status).toBe('clean');
      expect(validateDataset(systemDir)).toEqual([]);
    } finally {
      writeFileSync(join(campaignDir, 'kem-7', 'ct-suppressions.yml'), 'suppressions: []\n');
    }
  });

  it('a suppression without a reason is an input error naming the file and the line', async () => {
    writeFileSync(
      join(campaignDir, 'kem-7', 'ct-suppressions.yml'),
      `# known-public sites\nsuppressions:\n  - function: rej_uniform\n    kind: branch\n    reason: the matrix seed is public\n  - file: ct_kem.inc:32\n    kind: branch\n`,
    );
    const error = await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isInputError(error)).toBe(true);
    expect(String(error)).toMatch(/kem-7\/ct-suppressions\.yml.*line 6: suppressions\[1\]\.reason/);
  });
});

describe('the ct phase on a library that crashes', () => {
  it('is failed with the reason for the operation that crashed, and checks the others', async () => {
    const campaignDir = fixtureCampaign(['kem-1'], QUICK);
    const dataDir = tempDir();
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases, only: /^kem-1\/crash$/ });
    const ct = JSON.parse(readFileSync(evidencePaths(join(dataDir, SYSTEM)).ct('kem-1', 'crash'), 'utf8')) as CtEvidence;
    // kem-1/crash stores through a NULL pointer in kem_dec (test/fixtures/campaign/kem-1/common/toy_kem.inc).
    expect(ct.operations.dec).toMatchObject({ status: 'failed', calls: 0, findings: [] });
    expect(ct.operations.dec!.reason).toMatch(/SIGSEGV/);
    expect(ct.operations.keygen!.status).not.toBe('failed');
    expect(validateDataset(join(dataDir, SYSTEM))).toEqual([]);
  });
});

describe('ct.enabled in ngcc-perf.yml: the phases of the action’s runs', () => {
  it('adds ct to a run that takes the campaign’s phases, and to no other', () => {
    const campaignDir = ctCampaign('ct:\n  enabled: true\n  variants: []\n');
    const opts = { campaignDir, system: SYSTEM, dataDir: tempDir(), phases: new Set<Phase>(['build', 'kat']) };
    expect([...planRun({ ...opts, campaignPhases: true }).phases]).toEqual(['build', 'kat', 'ct']);
    expect([...planRun(opts).phases]).toEqual(['build', 'kat']);
    // Off by default: the action's runs keep their phases.
    expect([...planRun({ ...opts, campaignDir: ctCampaign(), campaignPhases: true }).phases]).toEqual(['build', 'kat']);
  });

  it('the base side of a paired run is built and KAT-checked only, whatever the campaign enables', () => {
    const campaignDir = ctCampaign('ct:\n  enabled: true\n  variants: []\n');
    const opts = {
      campaignDir,
      system: SYSTEM,
      dataDir: tempDir(),
      phases: new Set<Phase>(['build', 'kat', 'measure']),
      campaignPhases: true,
      against: { campaignDir, dataDir: tempDir() },
    };
    const plan = planRun(opts);
    expect(plan.phases.has('ct')).toBe(true);
    expect([...planRun(againstOptions(plan, opts)).phases]).toEqual(['build', 'kat']);
  });

  it('a value that is not true or false is an input error naming the file and the field', () => {
    const campaignDir = ctCampaign('ct:\n  enabled: sometimes\n');
    const error = (() => {
      try {
        planRun({ campaignDir, system: SYSTEM, dataDir: tempDir(), phases: new Set<Phase>(['build']), campaignPhases: true });
      } catch (e) {
        return e;
      }
    })();
    expect(isInputError(error)).toBe(true);
    expect(String(error)).toMatch(/ngcc-perf\.yml.*ct\.enabled/);
  });
});

describe('a ct run memcheck slows past its timeout', () => {
  const campaignDir = ctCampaign();
  const dataDir = tempDir();

  beforeAll(async () => {
    await runCampaign({ campaignDir, system: SYSTEM, dataDir, phases: new Set<Phase>(['build', 'ct']), only: /^kem-7\/clean$/ });
  });

  it('is skipped with a reason naming the budget, not failed with a TIMEOUT', async () => {
    const { ctDriver } = await import('../src/ct/tools.js');
    const { harnessTools } = await import('../src/compile/harnessTools.js');
    const { runCtOperation } = await import('../src/ct/runCtOperation.js');
    const library = join(dataDir, SYSTEM, 'build', 'kem-7', 'clean', 'ct', 'libclean.so');
    expect(existsSync(library)).toBe(true);
    const request = {
      driver: await ctDriver(await harnessTools()),
      library,
      type: 'kem',
      operation: 'dec',
      calls: 3,
      rng: 'auto',
      sandbox: 'bwrap' as const,
    };
    // 50 ms: valgrind has not even started the driver.
    const stopped = await runCtOperation({ ...request, timeoutMs: 50, budgetS: 60 });
    expect(stopped).toMatchObject({
      status: 'skipped',
      calls: 0,
      findings: [],
      reason: expect.stringMatching(
        /^stopped after \d+ s, past the budget of 60 s \(ct\.op_budget_s\): memcheck ran it slower than predicted$/,
      ),
    });
    // Without a budget (the slowdown's own calibration) a timeout stays a failure.
    expect((await runCtOperation({ ...request, timeoutMs: 50 })).status).toBe('failed');
  });
});
