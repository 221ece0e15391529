import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { validateDataset } from '../src/evidence/validate.js';
import { writeFileAtomic } from '../src/util/fsx.js';
import { elfSizes } from '../src/util/elf.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { runCli } from './helpers/cli.js';
import { sections } from './helpers/pages.js';
import { repoRoot, testData, tempDir } from './helpers/tmp.js';

const golden = join(testData, 'golden', 'ngcc-harness-arm_1', 'performance', 'data', 'arm_1');

describe('the ngcc-harness golden dataset', () => {
  it('validates: every derived number recomputes and every KAT log matches build.json', () => {
    expect(validateDataset(golden)).toEqual([]);
  });

  it('a one-digit change in a golden median is caught', () => {
    const copy = tempDir();
    cpSync(golden, copy, { recursive: true });
    const path = join(copy, 'records', 'kem-09', 'Cheetah256__dec.json');
    const text = readFileSync(path, 'utf8');
    writeFileSync(
      path,
      text.replace(/"median_trial_cycles": (\d)/, (_m, d: string) => `"median_trial_cycles": ${(Number(d) + 1) % 10}`),
    );
    expect(validateDataset(copy)).toEqual([
      expect.stringMatching(/^records\/kem-09\/Cheetah256__dec\.json: median_trial_cycles .* recomputed from trials$/),
    ]);
  });

  it("a record must name its library's SHA-256, and it must be build.json's: a wrong, missing or null hash is a problem", () => {
    const copy = tempDir();
    cpSync(golden, copy, { recursive: true });
    const path = (op: string) => join(copy, 'records', 'kem-09', `Cheetah256__${op}.json`);
    const edit = (op: string, change: (r: Record<string, unknown>) => void) => {
      const r = JSON.parse(readFileSync(path(op), 'utf8')) as Record<string, unknown>;
      change(r);
      writeFileSync(path(op), JSON.stringify(r));
    };
    edit('keygen', (r) => {
      r.library_sha256 = 'f'.repeat(64);
    });
    edit('enc', (r) => {
      delete r.library_sha256;
    });
    edit('dec', (r) => {
      r.library_sha256 = null;
    });
    expect(validateDataset(copy)).toEqual([
      expect.stringMatching(/^records\/kem-09\/Cheetah256__dec\.json: library_sha256 is null: /),
      expect.stringMatching(/^records\/kem-09\/Cheetah256__enc\.json: library_sha256 is missing: /),
      expect.stringMatching(
        /^records\/kem-09\/Cheetah256__keygen\.json: library_sha256 ffffffffffff… differs from build\.json's [0-9a-f]{12}…$/,
      ),
    ]);
  });

  it('memory and sizes must be what the timing processes printed', () => {
    const copy = tempDir();
    cpSync(golden, copy, { recursive: true });
    const path = join(copy, 'records', 'kem-09', 'Cheetah256__dec.json');
    const r = JSON.parse(readFileSync(path, 'utf8')) as {
      peak_rss_bytes: number;
      baseline_rss_bytes: number;
      sizes: Record<string, number>;
    };
    writeFileSync(
      path,
      JSON.stringify({ ...r, peak_rss_bytes: 1, baseline_rss_bytes: 5, sizes: { ...r.sizes, pk_bytes: r.sizes.pk_bytes! + 1 } }),
    );
    expect(validateDataset(copy)).toEqual([
      expect.stringMatching(/Cheetah256__dec\.json: peak_rss_bytes 1 != \d+, the largest of its processes$/),
      expect.stringMatching(/Cheetah256__dec\.json: baseline_rss_bytes 5 is none of its processes'/),
      expect.stringMatching(/Cheetah256__dec\.json: sizes\.pk_bytes \d+ != \d+ printed by its process$/),
    ]);
  });
});

describe('unreadable evidence', () => {
  it('a truncated survey file is a validation problem, and report says it left it out', async () => {
    const { writeSyntheticSystem } = await import('./helpers/dataset.js');
    const dir = writeSyntheticSystem(
      tempDir(),
      'x',
      [{ id: 'kem-1', label: 'a' }],
      [{ id: 'kem-1', label: 'a', op: 'keygen', trials: [100, 101, 99] }],
    );
    writeFileAtomic(join(dir, 'survey', 'kem-1', 'a.json'), '{"schema": 1, "verdict": "ICC');
    // (The synthetic dataset has no KAT logs: validate says so too.)
    expect(validateDataset(dir)).toContainEqual(expect.stringMatching(/^survey\/kem-1\/a\.json: not valid JSON/));
    const { code, out } = await runCli(['report', dir, '--out', tempDir()]);
    expect(code).toBe(1);
    expect(out[0]).toMatch(/^unreadable: .*survey\/kem-1\/a\.json: not valid JSON/);
  });
});

describe('links and special files in evidence', () => {
  it('validate reports a link and a FIFO, and merge refuses a shard that holds one, copying nothing', async () => {
    const { writeSyntheticSystem } = await import('./helpers/dataset.js');
    const system = () =>
      writeSyntheticSystem(
        tempDir(),
        'x',
        [{ id: 'kem-1', label: 'a' }],
        [{ id: 'kem-1', label: 'a', op: 'keygen', trials: [100, 101, 99] }],
      );
    const dir = system();
    symlinkSync('/etc/passwd', join(dir, 'records', 'kem-1', 'a__enc.json'));
    execFileSync('mkfifo', [join(dir, 'records', 'kem-1', 'a__dec.json')]);
    const problems = validateDataset(dir);
    expect(problems).toContain('records/kem-1/a__dec.json: a link or special file; evidence holds regular files only');
    expect(problems).toContain('records/kem-1/a__enc.json: a link or special file; evidence holds regular files only');
    for (const stray of ['a__dec.json', 'a__enc.json']) {
      const shard = system();
      if (stray === 'a__enc.json') symlinkSync('/etc/passwd', join(shard, 'records', 'kem-1', stray));
      else execFileSync('mkfifo', [join(shard, 'records', 'kem-1', stray)]);
      const out = join(tempDir(), 'x');
      const { code, err } = await runCli(['merge', '--out', out, shard]);
      expect(code, stray).toBe(2);
      expect(err.join('\n'), stray).toMatch(new RegExp(`records/kem-1/${stray.replace('.', '\\.')}: a link or special file`));
      expect(existsSync(out), stray).toBe(false);
    }
  });
});

describe('the bundled example campaign', () => {
  it('builds and passes every KAT, the ICCS-API candidate included', async () => {
    const data = tempDir();
    const s = await runCampaign({
      campaignDir: join(repoRoot, 'examples', 'campaign'),
      system: 'ex',
      dataDir: data,
      phases: new Set(['build', 'kat']),
    });
    expect(s.instances.map((i) => `${i.key} ${i.kat}`)).toEqual([
      'hash-80/SM3-256 PASS',
      'kem-80/ml-kem-512 PASS',
      'kem-80/ml-kem-768 PASS',
      'kem-80/ml-kem-1024 PASS',
      'kem-90/ML-KEM-512-ICCS PASS',
      'kex-80/ML-KEM-512-KEX PASS',
      'sign-80/ml-dsa-44 PASS',
    ]);
    // All four categories on the summary, in the published summary's order.
    const summary = renderPages(loadReportModel(join(data, 'ex'), join(repoRoot, 'examples', 'campaign'))).get(
      'performance/summary_ex.md',
    )!;
    const categories = ['Digital signatures', 'Key encapsulation', 'Key exchange', 'Hash functions'];
    expect(
      sections(summary)
        .map((x) => x.heading)
        .filter((h) => categories.includes(h)),
    ).toEqual(categories);
    const build = JSON.parse(readFileSync(join(data, 'ex', 'build.json'), 'utf8'));
    // The levels candidate.yml claims are kept with the build, and the summary groups by them: nothing
    // was timed here, so every instance is listed as not ranked, under its claim.
    expect(build.instances['kem-80/ml-kem-768'].security).toEqual({ nist_level: 3 });
    expect(build.instances['hash-80/SM3-256'].security).toEqual({ security_bits: 128 });
    expect(summary).toMatch(
      /\| \[kem-80\]\(\.\.\/kem-80\/perf_ex\.md\) \| `ml-kem-1024` \| L5 \| keygen not measured; enc not measured; dec not measured \|/,
    );
    const lib = join(repoRoot, 'examples', 'campaign', build.instances['kem-90/ML-KEM-512-ICCS'].library);
    // Only the API and harness symbols are exported; PQClean's internals stay local.
    const exported = execFileSync('nm', ['-D', '--defined-only', lib], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.split(' ').pop()!)
      .filter(Boolean);
    expect(exported).toContain('kem_keygen');
    expect(exported).toContain('pseudoXOF');
    expect(exported.filter((s) => s.startsWith('PQCLEAN_MLKEM512'))).toEqual([]);
    // The sum of PT_LOAD memory sizes, as readelf reports the program headers.
    const readelf = execFileSync('readelf', ['-lW', lib], { encoding: 'utf8' });
    const load = readelf
      .split('\n')
      .filter((l) => /^\s*LOAD\s/.test(l))
      .reduce((a, l) => a + Number.parseInt(l.trim().split(/\s+/)[5]!, 16), 0);
    expect(build.instances['kem-90/ML-KEM-512-ICCS'].elf_load_bytes).toBe(load);
    expect(elfSizes(lib).text).toBeGreaterThan(1000);
  });
});

describe('atomic writes', () => {
  it('leaves no temporary files behind and replaces content whole', () => {
    const dir = tempDir();
    const path = join(dir, 'sub', 'x.json');
    writeFileAtomic(path, 'one');
    writeFileAtomic(path, 'two');
    expect(readFileSync(path, 'utf8')).toBe('two');
    expect(
      execFileSync('ls', ['-a', join(dir, 'sub')], { encoding: 'utf8' })
        .trim()
        .split('\n'),
    ).toEqual(['.', '..', 'x.json']);
  });
});
