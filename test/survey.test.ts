import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { type InstanceSurvey, surveyLibrary } from '../src/profile/survey.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const examples = join(repoRoot, 'examples', 'campaign');
const fixtures = join(repoRoot, 'test', 'fixtures', 'survey');

describe('automated symmetric-primitive survey', () => {
  const data = tempDir();
  const read = (id: string, label: string) =>
    JSON.parse(readFileSync(join(data, 's', 'survey', id, `${label}.json`), 'utf8')) as InstanceSurvey;

  beforeAll(async () => {
    const phases = new Set(['build', 'kat', 'profile'] as const);
    await runCampaign({ campaignDir: examples, system: 's', dataDir: data, phases, only: /^kem-(80\/ml-kem-512|90)/ });
    await runCampaign({ campaignDir: fixtures, system: 's', dataDir: data, phases });
  });

  it('ICCS-only: ML-KEM-512 with every hash and all randomness through the ICCS helpers', () => {
    const s = read('kem-90', 'ML-KEM-512-ICCS');
    expect(s.verdict).toBe('ICCS-only');
    expect(s.iccs_helpers).toEqual(['sm3hash', 'pseudohash', 'pseudoXOF', 'get_random_number']);
    expect(s.own_primitives).toEqual([]);
    expect(s.randomness).toEqual(['ICCS DRNG']);
  });

  it('bypass: PQClean ML-KEM with its own Keccak, and randombytes from the NIST API', () => {
    const s = read('kem-80', 'ml-kem-512');
    expect(s.verdict).toBe('bypass');
    expect(s.iccs_helpers).toEqual([]);
    expect(s.own_primitives.map((o) => o.primitive)).toContain('Keccak (SHA-3/SHAKE)');
    expect(s.randomness).toEqual(['randombytes (NIST API: the harness’s AES-256-CTR DRBG)']);
  });

  it('under kat_rng: hqc the NIST API’s randombytes is named as HQC’s SHAKE-256 generator', async () => {
    const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson;
    const library = join(examples, build.instances['kem-80/ml-kem-512']!.library!);
    const s = await surveyLibrary(library, 'ml-kem-512', 'hqc');
    expect(s.randomness).toEqual(['randombytes (NIST API: the harness’s HQC SHAKE-256 generator)']);
  });

  it('mixed: ICCS hashing, OpenSSL randomness for seeds', () => {
    const s = read('kem-2', 'mixed');
    expect(s.verdict).toBe('mixed');
    expect(s.iccs_helpers).toContain('sm3hash');
    expect(s.randomness).toEqual(['ICCS DRNG', 'OpenSSL RAND']);
  });

  it('compiled but unreachable code does not count, and is listed', () => {
    const s = read('kem-2', 'unreachable');
    expect(s.verdict).toBe('ICCS-only');
    expect(s.own_primitives).toEqual([]);
    expect(s.unreachable).toContain('SHA-256 in own_sha256_k');
  });

  it('the pages show the automated verdicts with their evidence, and a curated CSV wins', () => {
    const campaign = tempDir();
    cpSync(fixtures, campaign, { recursive: true });
    let pages = renderPages(loadReportModel(join(data, 's'), campaign));
    const survey = sections(pages.get('performance/symmetric-survey.md')!)[0]!.tables[0]!;
    const row = (id: string) => survey.find((r) => r[0] === id)!;
    expect(row('kem-2').slice(1, 3)).toEqual(['instance-dependent', 'automated']);
    expect(row('kem-2')[3]).toMatch(
      /mixed: mixed; ICCS helpers reached: sm3hash, pseudoXOF, get_random_number; own primitives: none; randomness: ICCS DRNG, OpenSSL RAND/,
    );
    expect(row('kem-90').slice(1, 3)).toEqual(['ICCS-only', 'automated']);
    expect(row('kem-80').slice(1, 3)).toEqual(['bypass', 'automated']);
    writeFileSync(
      join(campaign, 'symmetric_survey.csv'),
      'ID;Verdict;Notes\nkem-2;Mixed;seeds from OpenSSL; hashing through ICCS\nkem-90;ICCS-only;\nkem-99;bypass;withdrawn\n',
    );
    pages = renderPages(loadReportModel(join(data, 's'), campaign));
    const table = sections(pages.get('performance/symmetric-survey.md')!)[0]!.tables[0]!;
    const curated = table.find((r) => r[0] === 'kem-2')!;
    expect(curated.slice(1, 3)).toEqual(['mixed', 'curated (symmetric_survey.csv)']);
    // The overridden automated verdict stays in view; an agreeing one adds nothing.
    expect(curated[3]).toMatch(
      /^seeds from OpenSSL; hashing through ICCS; automated verdict: instance-dependent — unreachable: ICCS-only; .* · mixed: mixed; /,
    );
    // The candidate page lists the instances' evidence in campaign order, like its other tables.
    const page = pages.get('kem-2/perf_s.md')!;
    expect(page.indexOf('`unreachable`: ICCS-only')).toBeGreaterThan(0);
    expect(page.indexOf('`unreachable`: ICCS-only')).toBeLessThan(page.indexOf('`mixed`: mixed'));
    expect(table.find((r) => r[0] === 'kem-90')![3]).toMatch(/^ML-KEM-512-ICCS: ICCS-only;/);
    expect(pages.get('kem-2/perf_s.md')).toContain(
      'verdict: **mixed** — seeds from OpenSSL; hashing through ICCS; automated verdict: instance-dependent (curated)',
    );
    expect(pages.get('performance/symmetric-survey.md')).toContain(
      'symmetric_survey.csv also has verdicts for candidates this report does not include: kem-99 (line 4).',
    );
  });

  it('runs objdump and nm in the sandbox: the verdict of the run, and a tool planted outside the system folders never runs', async () => {
    const entry = (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-2/mixed']!;
    const library = join(fixtures, entry.library!);
    // What the run recorded, without the head the campaign adds.
    const {
      schema: _s,
      candidate: _c,
      library_sha256: _h,
      survey_version: _v,
      ...recorded
    } = read('kem-2', 'mixed') as InstanceSurvey & Record<string, unknown>;
    // An objdump first on PATH, in a folder the sandbox does not show: run, it would leave a mark.
    const bin = tempDir();
    const mark = join(bin, 'ran');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'objdump'), `#!/bin/sh\ntouch ${mark}\nexec /usr/bin/objdump "$@"\n`);
    chmodSync(join(bin, 'objdump'), 0o755);
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved}`;
    try {
      expect(await surveyLibrary(library, 'mixed', false, 'bwrap')).toEqual(recorded);
      expect(existsSync(mark)).toBe(false);
      // The control: the same PATH without the sandbox runs the planted tool.
      expect(await surveyLibrary(library, 'mixed', false, 'none')).toEqual(recorded);
      expect(existsSync(mark)).toBe(true);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('refuses a curated verdict it does not know, a bad id or a second verdict, naming the line', () => {
    const campaign = tempDir();
    cpSync(fixtures, campaign, { recursive: true });
    const refused = (csv: string) => {
      writeFileSync(join(campaign, 'symmetric_survey.csv'), `ID;Verdict;Notes\n${csv}`);
      try {
        loadReportModel(join(data, 's'), campaign);
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(refused('kem-2;bogus-verdict;x\n')).toMatch(
      /symmetric_survey\.csv: line 2: Verdict: 'bogus-verdict' is not one of ICCS-only, bypass, mixed, instance-dependent/,
    );
    expect(refused('kem-2;mixed;x\nKEM 3;bypass;y\n')).toMatch(/symmetric_survey\.csv: line 3: ID: 'KEM 3' is not a candidate id/);
    expect(refused('kem-2;mixed;x\nkem-2;bypass;y\n')).toMatch(/symmetric_survey\.csv: line 3: ID: kem-2 already has a verdict on line 2/);
  });
});
