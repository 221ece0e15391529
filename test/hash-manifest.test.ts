import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { runCli } from './helpers/cli.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

// hash-80's kat.sha256 lines come from test/helpers/iccs_hash_kat.py, a model written apart from the
// harness (test/hash-kat.test.ts checks them): kat-manifest must give the same lines from a run.
const example = join(repoRoot, 'examples', 'campaign');
/** A manifest's lines without comments, and without the mark a line kat-manifest printed ends with (checked apart). */
const manifestLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => l.replace(/\s+# recorded by the harness on \d{4}-\d\d-\d\d$/, ''));

async function printed(args: string[]): Promise<{ code: number; stdout: string; err: string[] }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    const r = await runCli(args);
    return { code: r.code, stdout, err: r.err };
  } finally {
    spy.mockRestore();
  }
}

describe('kat-manifest for a hash candidate: one line per generator file', () => {
  const data = tempDir();
  const system = join(data, 'local');

  beforeAll(async () => {
    const s = await runCampaign({
      campaignDir: example,
      system: 'local',
      dataDir: data,
      phases: new Set(['build', 'kat']),
      only: /^hash-80\//,
    });
    expect(s.instances.map((i) => i.kat)).toEqual(['PASS']);
  }, 300_000);

  it('prints KAT_2_12, KAT_2_23 and KAT_Loop (with the run’s loop cut), the lines the independent model gave', async () => {
    const r = await printed(['kat-manifest', system, 'hash-80']);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('# KAT manifest for hash-80: 1 instance(s); see docs/evidence-format.md');
    expect(manifestLines(r.stdout)).toEqual(manifestLines(readFileSync(join(example, 'hash-80', 'kat.sha256'), 'utf8')));
    // Each printed line says where its digest came from: this harness's output.
    for (const l of r.stdout.split('\n').filter((x) => /^[0-9a-f]{64} /.test(x)))
      expect(l).toMatch(/ {2}# recorded by the harness on \d{4}-\d\d-\d\d$/);
  });

  it('--write fills an empty manifest with the three lines, and the next run passes on them', async () => {
    const campaign = tempDir();
    cpSync(join(example, 'hash-80'), join(campaign, 'hash-80'), { recursive: true });
    const manifest = join(campaign, 'hash-80', 'kat.sha256');
    // The copy sits elsewhere: point the ICCS helper sources back at the repository's.
    const yml = join(campaign, 'hash-80', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replaceAll('../../../../native', join(repoRoot, 'native')));
    writeFileSync(manifest, '');
    const r = await runCli(['kat-manifest', system, 'hash-80', '--write', campaign]);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.out.at(-1)).toMatch(/: 3 line\(s\) added, 0 changed/);
    const written = manifestLines(readFileSync(manifest, 'utf8'));
    expect(written.map((l) => l.split(/\s+/).slice(1).join(' '))).toEqual([
      'strict SM3-256/KAT_2_12_SM3-256.txt',
      'strict SM3-256/KAT_2_23_SM3-256.txt',
      'strict:1000 SM3-256/KAT_Loop_SM3-256.txt',
    ]);
    // Written again: every line already says it.
    const again = await runCli(['kat-manifest', system, 'hash-80', '--write', campaign]);
    expect(again.out.at(-1)).toMatch(/^unchanged: .*0 line\(s\) added, 0 changed, 1 instance\(s\) already right/);
    const s = await runCampaign({ campaignDir: campaign, system: 'local', dataDir: tempDir(), phases: new Set(['build', 'kat']) });
    expect(s.instances.map((i) => i.kat)).toEqual(['PASS']);
  }, 300_000);

  it('a differing line of one file is refused naming it; the other files’ lines are not touched', async () => {
    const campaign = tempDir();
    cpSync(join(example, 'hash-80'), join(campaign, 'hash-80'), { recursive: true });
    const manifest = join(campaign, 'hash-80', 'kat.sha256');
    const text = readFileSync(manifest, 'utf8').replace(/^4fcd/m, '0000');
    writeFileSync(manifest, text);
    const r = await runCli(['kat-manifest', system, 'hash-80', '--write', campaign]);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(
      /kat\.sha256: line 6: says 0000\S+ strict SM3-256\/KAT_2_23_SM3-256\.txt, the generated KAT gives 4fcd/,
    );
    expect(readFileSync(manifest, 'utf8')).toBe(text);
  });

  it('--records cuts KAT_2_12 only, and may not exceed its 4097 records', async () => {
    const r = await printed(['kat-manifest', system, 'hash-80', '--records', '3']);
    const lines = manifestLines(r.stdout);
    expect(lines.map((l) => l.split(/\s+/).slice(1).join(' '))).toEqual([
      'strict:3 SM3-256/KAT_2_12_SM3-256.txt',
      'strict SM3-256/KAT_2_23_SM3-256.txt',
      'strict:1000 SM3-256/KAT_Loop_SM3-256.txt',
    ]);
    // The canonical digest of three records, by hand: each non-empty line, trailing blanks cut, and "\n".
    const kat = readFileSync(join(system, 'kat', 'hash-80', 'SM3-256', 'KAT_2_12_SM3-256.txt'), 'latin1');
    const first3 = kat
      .split('\n\n')
      .slice(0, 3)
      .flatMap((rec) => rec.split('\n'))
      .map((l) => l.trimEnd())
      .filter((l) => l !== '');
    expect(lines[0]!.split(' ')[0]).toBe(
      createHash('sha256')
        .update(first3.map((l) => `${l}\n`).join(''))
        .digest('hex'),
    );
    const tooMany = await runCli(['kat-manifest', system, 'hash-80', '--records', '5000']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.err[0]).toMatch(/--records: 5000 exceeds the 4097 record\(s\) of KAT_2_12_SM3-256\.txt/);
  });
});
