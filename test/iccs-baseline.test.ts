import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { harnessTools } from '../src/compile/harnessTools.js';
import { loadCampaign } from '../src/config/campaign.js';
import { resolveSandbox } from '../src/env/sandboxProbe.js';
import { evidencePaths } from '../src/evidence/layout.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { katTextOf } from '../src/kat/runKat.js';
import { HASH_MESSAGE_BYTES, hashDriverType, hashOperation } from '../src/measure/hashOperations.js';
import { ICCS_HELPERS, ICCS_LABELS } from '../src/measure/iccsBaseline.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import { runCli } from './helpers/cli.js';
import { sections } from './helpers/pages.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

// The baseline is measured for real (gcc builds, sandboxed timing processes) with short trials.
// What it computes is checked against a model written from auxfunc.c's stated definitions
// (SM3, HMAC-SM3 cascade, SM2 KDF) on Python's hashlib SM3, not against its own output.
const example = join(repoRoot, 'examples', 'campaign');
const data = tempDir();
const system = 'test';
const systemDir = join(data, system);
const paths = evidencePaths(systemDir);
const record = (id: string, label: string, bytes: number) =>
  JSON.parse(readFileSync(paths.record(id, label, hashOperation(bytes)), 'utf8')) as TimingRecord;

let first: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  // A hash candidate with known truth (the SM3 example), measured first: the baseline then joins its folder.
  const s = await runCampaign({
    campaignDir: example,
    system,
    dataDir: data,
    only: /^hash-80\//,
    phases: new Set(['build', 'kat', 'measure']),
    trialTarget: 0.01,
  });
  expect(s.instances[0]?.kat).toBe('PASS');
  // Short trials for the test, taken from a campaign's ngcc-perf.yml as --campaign passes it on.
  const settings = tempDir();
  writeFileSync(
    join(settings, 'ngcc-perf.yml'),
    'planning:\n  trials: 2\n  trial_target_s: 0.01\n  min_measurements: 10\n  warmups: 1\n  disturbed_retries: 0\n',
  );
  first = await runCli(['iccs-baseline', '--system', system, '--out', data, '--campaign', settings]);
}, 900_000);

describe('ngcc-perf iccs-baseline', () => {
  it('leaves a complete hash_<bytes> record for every label at S1–S8, NOKAT with the reason, and exits 0', () => {
    expect(first.err).toEqual([]);
    expect(first.code, first.out.join('\n')).toBe(0);
    expect(first.out.at(-1)).toMatch(/^ok: 12 ICCS helper\(s\), 96 measurement\(s\) complete; not KAT-checked/);
    expect(ICCS_LABELS).toHaveLength(12);
    const build = JSON.parse(readFileSync(paths.build, 'utf8')) as BuildJson;
    for (const label of ICCS_LABELS) {
      const entry = build.instances[`iccs/${label}`]!;
      expect(entry.kat, label).toBe('NOKAT');
      expect(entry.kat_detail).toMatch(/no published KAT vectors/);
      for (const bytes of HASH_MESSAGE_BYTES) {
        const r = record('iccs', label, bytes);
        expect(r.status, `${label} ${bytes} B`).toBe('complete');
        expect(r.candidate).toBe('iccs');
        expect(r.label).toBe(label);
        expect(r.mean_cycles).toBeGreaterThan(0);
        expect(r.library_sha256).toBe(entry.library_sha256);
      }
    }
    expect(validateDataset(systemDir)).toEqual([]);
  });

  it('adds to the campaign’s folder: the hash candidate’s evidence and campaign.json’s planning stay the campaign’s', () => {
    const campaign = JSON.parse(readFileSync(paths.campaign, 'utf8'));
    // examples/campaign/ngcc-perf.yml says 5 trials; the baseline ran with 2.
    expect(campaign.planning.trials).toBe(5);
    expect(campaign.host_checks.map((h: { phase: string }) => h.phase)).toEqual(['build,kat,measure', 'iccs-baseline: build,measure']);
    expect(record('hash-80', 'SM3-256', 32).status).toBe('complete');
    expect(record('iccs', 'pseudoXOF-256', 2 ** 16).candidate).toBe('iccs');
  });

  it('pseudoXOF’s cost grows with the message: 64 KiB takes more cycles than 32 B at every output length', () => {
    const xof = ICCS_HELPERS.find((h) => h.helper === 'pseudoXOF')!;
    for (const bits of xof.bits)
      expect(record('iccs', `pseudoXOF-${bits}`, 65536).mean_cycles!, `pseudoXOF-${bits}`).toBeGreaterThan(
        record('iccs', `pseudoXOF-${bits}`, 32).mean_cycles!,
      );
  });

  it('each label times the helper it names: its digests of two 2^23-bit messages equal an independent model', async () => {
    const build = JSON.parse(readFileSync(paths.build, 'utf8')) as BuildJson;
    const tools = await harnessTools();
    const labels = ['sm3hash-256', 'pseudohash-512', 'pseudoXOF-256', 'pseudoXOF-1152'];
    const expected = JSON.parse(execFileSync('python3', ['-c', MODEL, ...labels], { encoding: 'utf8' })) as Record<string, string[]>;
    for (const label of labels) {
      const library = resolve(paths.iccsBaselineCampaign, build.instances[`iccs/${label}`]!.library!);
      const bits = Number(label.split('-')[1]);
      const run = await runDriver([tools.driver, library], ['kat', hashDriverType(bits), 'iccs', 'KAT_2_23', '0'], {
        timeoutMs: 120_000,
        maxOutputBytes: 64 * 1024,
        channelMaxBytes: 64 << 20,
        sandbox: { mode: resolveSandbox('auto'), readOnly: [tools.driver, library], writable: [] },
      });
      expect(run.rejected, label).toBeUndefined();
      const dst = [...katTextOf(run.output.lines).matchAll(/^Dst = ([0-9A-F]*)$/gm)].map((m) => m[1]!.toLowerCase());
      // The all-zero and the all-0xFF message; the third is DRNG output, which the model leaves out.
      expect(dst.slice(0, 2), label).toEqual(expected[label]);
    }
  }, 300_000);

  it('the summary shows the 12-row ICCS table and the SM3 example’s ratio to pseudoXOF-256, from the records', () => {
    const pages = renderPages(loadReportModel(systemDir, example));
    const summary = pages.get(`performance/summary_${system}.md`)!;
    const all = sections(summary);
    const iccs = all.find((s) => s.heading === 'ICCS hash helpers')!;
    expect(iccs.tableNodes[0]?.type).toBe('table');
    const [header, ...rows] = iccs.tables[0]!;
    expect(header).toEqual([
      'ICCS helper',
      'output bits',
      '32 B',
      '128 B',
      '512 B',
      '1 KiB',
      '4 KiB',
      '8 KiB',
      '16 KiB',
      '64 KiB',
      'cycles/byte (64 KiB)',
    ]);
    expect(rows.map((r) => `${r[0]}-${r[1]}`)).toEqual(ICCS_LABELS);
    for (const r of rows) expect(r.slice(2).every((c) => c !== '—')).toBe(true);

    const hash = all.find((s) => s.heading === 'Hash functions')!;
    const row = hash.tables[0]!.find((r) => r[0] === 'hash-80')!;
    [32, 1024, 65536].forEach((bytes, i) => {
      // (a mean far from its median trial carries "≠ median …" after the ratio: report/spread.ts)
      const m = /\((\d+\.\d\d)×\)(?: ≠ median \S+(?: k| M)?)?$/.exec(row[3 + i]!);
      expect(m, `${bytes} B cell '${row[3 + i]}'`).not.toBeNull();
      const ratio = record('hash-80', 'SM3-256', bytes).mean_cycles! / record('iccs', 'pseudoXOF-256', bytes).mean_cycles!;
      expect(Number(m![1])).toBeCloseTo(ratio, 2);
    });
  });

  it('a second run keeps every record of the unchanged libraries', async () => {
    const before = readFileSync(paths.record('iccs', 'sm3hash-256', 'hash_32'), 'utf8');
    const again = await runCli(['iccs-baseline', '--system', system, '--out', data]);
    expect(again.code, again.out.join('\n')).toBe(0);
    expect(again.progress.match(/unchanged, kept/g)).toHaveLength(96);
    expect(readFileSync(paths.record('iccs', 'sm3hash-256', 'hash_32'), 'utf8')).toBe(before);
  }, 300_000);
});

describe('the reserved id', () => {
  it('a campaign’s own `iccs` folder is INVALID, naming the field and the command', () => {
    const root = tempDir();
    mkdirSync(join(root, 'iccs'));
    writeFileSync(
      join(root, 'iccs', 'candidate.yml'),
      'id: iccs\ntype: hash\nalgorithm: X\ninstances:\n  - { label: a, dir: ., digest_bits: 256 }\n',
    );
    const c = loadCampaign(root);
    expect(c.candidates).toEqual([]);
    expect(c.invalid[0]?.problem).toMatch(/iccs\/candidate\.yml: id: 'iccs' is the ICCS helper baseline's id \(ngcc-perf iccs-baseline\)/);
  });
});

/** The helpers as auxfunc.c's header comment defines them, on hashlib's SM3 (OpenSSL's). */
const MODEL = `
import hashlib, hmac, json, sys
sm3 = lambda b: hashlib.new("sm3", b).digest()
be32 = lambda i: i.to_bytes(4, "big")
def helper(label, m):
    name, bits = label.split("-"); n = int(bits) // 8
    if name == "sm3hash": return sm3(m)
    if name == "pseudoXOF": return b"".join(sm3(m + be32(i)) for i in range(1, n // 32 + 2))[:n]
    key = sm3(b"ICCS pseudohash key")
    return b"".join(hmac.new(key, m + be32(i), "sm3").digest() for i in range(1, n // 32 + 1))
msgs = [bytes(1 << 20), b"\\xff" * (1 << 20)]
print(json.dumps({l: [helper(l, m).hex() for m in msgs] for l in sys.argv[1:]}))
`;
