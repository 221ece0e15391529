import { readFileSync, statSync, writeFileSync, existsSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cliMain.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { runCli as cli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const campaign = join(import.meta.dirname, 'fixtures', 'campaign');

const EXPECTED: Record<string, string> = {
  'kem-1/good': 'PASS',
  'kem-1/buildfail': 'BUILDFAIL',
  'kem-1/overflow': 'OVERFLOW',
  'kem-1/crash': 'CRASH',
  'kem-1/timeout': 'TIMEOUT',
  'kem-1/cryptofail': 'CRYPTOFAIL',
  'kem-1/earlyexit': 'CRASH',
  'kem-1/nokat': 'NOKAT',
  'kem-1/mismatch': 'MISMATCH',
  'sign-1/toy-sig': 'PASS',
};
const MEASURED = ['kem-1/good', 'kem-1/nokat', 'kem-1/mismatch', 'sign-1/toy-sig'];

describe('a campaign of broken submissions', () => {
  const data = tempDir();
  const systemDir = join(data, 'fx');
  let exitCode: number;
  let build: BuildJson;

  beforeAll(async () => {
    exitCode = await main(['run', campaign, '--system', 'fx', '--out', data]);
    build = JSON.parse(readFileSync(join(systemDir, 'build.json'), 'utf8')) as BuildJson;
  });

  it('exits 1 because some instances failed', () => {
    expect(exitCode).toBe(1);
  });

  it.each(Object.entries(EXPECTED))('%s gets %s in build.json and in its KAT log', (key, status) => {
    const entry = build.instances[key]!;
    expect(entry.kat).toBe(status);
    const log = readFileSync(join(systemDir, entry.kat_log!), 'utf8');
    expect(log.trimEnd().split('\n').pop()).toMatch(new RegExp(`^RESULT ${key.replace('/', ' ')} ${status}\\b`));
  });

  it('records the details a reader needs', () => {
    const e = build.instances;
    expect(e['kem-1/buildfail']!.build_error).toMatch(/error/);
    expect(e['kem-1/buildfail']!.guide_result).toBe('BUILDFAIL');
    expect(e['kem-1/buildfail']!.flags).toBe('harness-default');
    expect(e['kem-1/overflow']!.kat_detail).toMatch(/ct: write 1 bytes past the claimed 32/);
    expect(e['kem-1/crash']!.kat_detail).toMatch(/SIGSEGV/);
    expect(e['kem-1/cryptofail']!.kat_detail).toMatch(/shared secrets/);
    expect(e['kem-1/earlyexit']!.kat_detail).toMatch(/ended before the KAT was complete/);
    expect(existsSync(join(systemDir, 'kat', 'kem-1', 'earlyexit', '.kat-output.partial'))).toBe(false);
    expect(e['kem-1/mismatch']!.kat_detail).toMatch(/differs from kat.sha256 line/);
    // A fault under the guide flags is retried with the harness flags, and both results are kept.
    expect(e['kem-1/overflow']!.guide_result).toBe('OVERFLOW');
    expect(e['kem-1/good']!.flags).toBe('guide');
    expect(e['kem-1/good']!.guide_result).toBeUndefined();
  });

  it('measures every instance that still works, and none that does not', () => {
    for (const key of Object.keys(EXPECTED)) {
      const [id, label] = key.split('/') as [string, string];
      const ops = id.startsWith('sign') ? ['keygen', 'sign', 'verify'] : ['keygen', 'enc', 'dec'];
      for (const op of ops) {
        const path = join(systemDir, 'records', id, `${label}__${op}.json`);
        expect(existsSync(path), `${key} ${op}`).toBe(MEASURED.includes(key));
        if (!MEASURED.includes(key)) continue;
        const r = JSON.parse(readFileSync(path, 'utf8')) as TimingRecord;
        expect(r.status).toBe('complete');
        expect(r.trials).toHaveLength(2);
        expect(r.kat_not_passed).toBe(build.instances[key]!.kat !== 'PASS');
        expect(r.mean_cycles).toBeGreaterThan(0);
        expect((r.counter as { source: string }).source).toBe(process.arch === 'x64' ? 'rdtsc' : expect.any(String));
      }
    }
  });

  it('writes evidence that validates', () => {
    expect(validateDataset(systemDir)).toEqual([]);
  });

  it('a re-run rebuilds nothing and keeps complete records', async () => {
    const lib = join(systemDir, 'build', 'kem-1', 'good', 'guide', 'libgood.so');
    const record = join(systemDir, 'records', 'kem-1', 'good__keygen.json');
    const before = [statSync(lib).mtimeMs, readFileSync(record, 'utf8')];
    const code = await main(['run', campaign, '--system', 'fx', '--out', data, '--only', '^kem-1/(good|buildfail)$']);
    expect(code).toBe(1);
    expect([statSync(lib).mtimeMs, readFileSync(record, 'utf8')]).toEqual(before);
  });

  it('a re-run does not repeat the KAT of an instance that fell back to the harness flags', async () => {
    const log = join(systemDir, 'kat', 'kem-1', 'overflow.log');
    const before = statSync(log).mtimeMs;
    expect(build.instances['kem-1/overflow']!.guide_library_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await main(['run', campaign, '--system', 'fx', '--out', data, '--only', '^kem-1/overflow$'])).toBe(1);
    expect(statSync(log).mtimeMs).toBe(before);
  });

  it('a run without the kat phase keeps what the KAT established', async () => {
    expect(
      await main([
        'run',
        campaign,
        '--system',
        'fx',
        '--out',
        data,
        '--only',
        '^(kem-1/good|sign-1/toy-sig)$',
        '--phases',
        'build,measure',
      ]),
    ).toBe(0);
    const after = JSON.parse(readFileSync(join(systemDir, 'build.json'), 'utf8')) as BuildJson;
    expect(after.instances['kem-1/good']).toEqual(build.instances['kem-1/good']);
    expect(validateDataset(systemDir)).toEqual([]);
  });

  it('validate catches a tampered trial and names the file and field', async () => {
    const copy = tempDir();
    cpSync(systemDir, copy, { recursive: true });
    const path = join(copy, 'records', 'kem-1', 'good__enc.json');
    const r = JSON.parse(readFileSync(path, 'utf8')) as TimingRecord;
    r.trials[1]!.cycles += 1000;
    writeFileSync(path, JSON.stringify(r, null, 1));
    const problems = validateDataset(copy);
    expect(problems).toContain(`records/kem-1/good__enc.json: trials[] differ from the trials of its processes[]`);
    expect(problems.some((p) => p.startsWith('records/kem-1/good__enc.json: mean_cycles'))).toBe(true);
    expect(await main(['validate', copy])).toBe(1);
  });

  /** A copy of the evidence with a truncated record and a truncated build.json. */
  function brokenCopy(): string {
    const copy = join(tempDir(), 'fx');
    cpSync(systemDir, copy, { recursive: true });
    for (const f of [join(copy, 'records', 'kem-1', 'good__enc.json'), join(copy, 'build.json')])
      writeFileSync(f, readFileSync(f, 'utf8').slice(0, 100));
    return copy;
  }

  it('report on evidence with unreadable files writes what it can, names the files and exits 1', async () => {
    const copy = brokenCopy();
    const pages = tempDir();
    const r = await cli(['report', copy, '--campaign', campaign, '--out', pages]);
    expect(r.code).toBe(1);
    expect(r.out.filter((l) => l.startsWith('unreadable: '))).toEqual([
      expect.stringMatching(/^unreadable: .*fx\/build\.json: not valid JSON/),
      expect.stringMatching(/^unreadable: .*fx\/records\/kem-1\/good__enc\.json: not valid JSON/),
    ]);
    expect(r.out.at(-1)).toMatch(/pages written to .*; 2 evidence file\(s\) unreadable, shown as not recorded$/);
    expect(existsSync(join(pages, 'performance', 'summary_fx.md'))).toBe(true);
    // --check fails on the same evidence even when the pages on disk are its rendering.
    expect((await cli(['report', copy, '--campaign', campaign, '--out', pages, '--check'])).code).toBe(1);
  });

  it('compare with an unreadable head record is an input error naming it, never "removed"', async () => {
    const head = tempDir();
    cpSync(systemDir, join(head, 'fx'), { recursive: true });
    const record = join(head, 'fx', 'records', 'kem-1', 'good__enc.json');
    writeFileSync(record, readFileSync(record, 'utf8').slice(0, 100));
    const r = await cli(['compare', '--base', data, '--head', head, '--system', 'fx']);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err).toEqual([
      expect.stringMatching(
        /^error: .*fx\/records\/kem-1\/good__enc\.json: unreadable head evidence \(not valid JSON .*\); run ngcc-perf validate on it$/,
      ),
    ]);
    // The same on the base side: it would otherwise read as "new".
    const swapped = await cli(['compare', '--base', head, '--head', data, '--system', 'fx']);
    expect(swapped.code).toBe(2);
    expect(swapped.err).toEqual([expect.stringMatching(/good__enc\.json: unreadable base evidence/)]);
  });

  it('validate catches an edited KAT log', () => {
    const copy = tempDir();
    cpSync(systemDir, copy, { recursive: true });
    const log = join(copy, 'kat', 'kem-1', 'good.log');
    writeFileSync(log, readFileSync(log, 'utf8').replace(/RESULT kem-1 good PASS/, 'RESULT kem-1 good MISMATCH'));
    const problems = validateDataset(copy);
    expect(problems).toContain('kat/kem-1/good.log: SHA-256 differs from build.json kat_log_sha256');
    expect(problems).toContain('kat/kem-1/good.log: RESULT says MISMATCH, build.json says PASS');
  });
});
