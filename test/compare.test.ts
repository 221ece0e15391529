import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareEvidence, judge } from '../src/compare/compare.js';
import { renderComparison } from '../src/compare/markdown.js';
import { historyCv, permutationPValue } from '../src/compare/stats.js';
import type { CompareReport } from '../src/compare/types.js';
import { runCli } from './helpers/cli.js';
import { writeSyntheticSystem } from './helpers/dataset.js';
import { tempDir } from './helpers/tmp.js';

describe('the trial-level test', () => {
  it('gives the exact permutation p-value', () => {
    // Complete separation of 5 against 5: 2 of the 252 splits are as extreme.
    expect(permutationPValue([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).toBeCloseTo(2 / 252, 12);
    expect(permutationPValue([5, 5, 5], [5, 5, 5])).toBe(1);
    const mixed = permutationPValue([100, 102, 99, 101, 100], [101, 100, 102, 99, 100]);
    expect(mixed).toBeGreaterThan(0.5);
  });

  it('falls back to a seeded Monte Carlo estimate for large samples, reproducibly', () => {
    const a = Array.from({ length: 20 }, (_, i) => 100 + (i % 5));
    const b = Array.from({ length: 20 }, (_, i) => 103 + (i % 5));
    const p = permutationPValue(a, b);
    expect(p).toBeLessThan(0.01);
    expect(permutationPValue(a, b)).toBe(p);
  });

  it('needs a minimum effect, significance, and to exceed the nightly spread', () => {
    const base = { mean_cycles: 100, trial_cycles: [99, 100, 101, 100, 100] };
    const slow = { mean_cycles: 110, trial_cycles: [109, 110, 111, 110, 110] };
    const slightly = { mean_cycles: 101, trial_cycles: [100.5, 101, 101.5, 101, 101] };
    expect(judge(base, slow, 3, 0.01, null).verdict).toBe('regression');
    expect(judge(slow, base, 3, 0.01, null).verdict).toBe('improvement');
    expect(judge(base, slightly, 3, 0.01, null).verdict).toBe('unchanged');
    // 10% but the nightly runs of this operation vary by 5% (3σ = 15%): not called.
    expect(judge(base, slow, 3, 0.01, 0.05).verdict).toBe('inconclusive');
    const noisy = { mean_cycles: 110, trial_cycles: [80, 140, 95, 125, 110] };
    expect(judge(base, noisy, 3, 0.01, null).verdict).toBe('inconclusive');
    expect(historyCv([100, 100])).toBeNull();
  });
});

describe('compare between two evidence trees', () => {
  const inst = [
    { id: 'kem-1', label: 'a', sizes: { pk_bytes: 800, ct_bytes: 768 }, elf: 30000 },
    { id: 'kem-1', label: 'b', sizes: { pk_bytes: 800, ct_bytes: 768 } },
    { id: 'kem-2', label: 'c' },
  ];
  const steady = [100_000, 100_500, 99_800, 100_200, 99_900];
  const slow = steady.map((c) => c * 1.1);

  function trees() {
    const base = tempDir();
    const head = tempDir();
    writeSyntheticSystem(base, 'x86_1', inst, [
      { id: 'kem-1', label: 'a', op: 'keygen', trials: steady },
      { id: 'kem-1', label: 'b', op: 'keygen', trials: steady },
      { id: 'kem-2', label: 'c', op: 'keygen', trials: steady, peakRss: 1_500_000 },
    ]);
    writeSyntheticSystem(
      head,
      'x86_1',
      [{ ...inst[0]!, sizes: { pk_bytes: 800, ct_bytes: 800 }, elf: 31000 }, inst[1]!, { ...inst[2]!, kat: 'MISMATCH' }],
      [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: slow },
        { id: 'kem-1', label: 'b', op: 'keygen', trials: steady.map((c) => c * 1.001) },
        { id: 'kem-2', label: 'c', op: 'keygen', trials: steady, peakRss: 2_000_000 },
        { id: 'kem-2', label: 'c', op: 'enc', trials: steady },
      ],
    );
    return { base, head };
  }

  it('finds the slowed-down operation only, and reports KAT, size and memory changes', () => {
    const { base, head } = trees();
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    const verdicts = Object.fromEntries(r.rows.map((x) => [`${x.candidate}/${x.label}/${x.operation}`, x.verdict]));
    expect(verdicts).toEqual({
      'kem-1/a/keygen': 'regression',
      'kem-1/b/keygen': 'unchanged',
      'kem-2/c/keygen': 'unchanged',
      'kem-2/c/enc': 'new',
    });
    expect(r.rows.find((x) => x.verdict === 'regression')!.delta_pct).toBeCloseTo(10, 6);
    expect(r.kat_changes).toEqual([{ key: 'kem-2/c', base: 'PASS', head: 'MISMATCH' }]);
    expect(r.size_changes).toEqual([{ key: 'kem-1/a', item: 'ct_bytes', base: 768, head: 800 }]);
    expect(r.memory_changes).toEqual([
      { key: 'kem-1/a', item: 'elf_load_bytes', base: 30000, head: 31000 },
      { key: 'kem-2/c/keygen', item: 'peak_rss_bytes', base: 1_500_000, head: 2_000_000 },
    ]);
    expect(r.counts).toEqual({ regressions: 1, improvements: 0, kat_failures: 1, size_mismatches: 0 });
  });

  it('says so at the top of the comment when the head run was not sandboxed, and nothing when it was', () => {
    const { base, head } = trees();
    const campaignJson = join(head, 'x86_1', 'campaign.json');
    const campaign = JSON.parse(readFileSync(campaignJson, 'utf8')) as Record<string, unknown>;
    writeFileSync(campaignJson, JSON.stringify({ ...campaign, sandbox: 'none' }));
    const open = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(open.sandbox).toBe('none');
    expect(renderComparison(open)).toMatch(
      /^### .*\n\n⚠ Not sandboxed: the campaign set `sandbox: none`, so the submissions' code ran with the rights of the runner user/,
    );
    writeFileSync(campaignJson, JSON.stringify({ ...campaign, sandbox: 'bwrap' }));
    const closed = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(closed.sandbox).toBe('bwrap');
    expect(renderComparison(closed)).not.toContain('sandbox');
  });

  it('exposes a size-catalog mismatch in compare --format json, and exits 1 on a regression', async () => {
    const { base, head } = trees();
    const campaign = tempDir();
    writeFileSync(
      join(campaign, 'external_sizes.csv'),
      'ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-1;b;800;769;;encoded\nkem-1;a;800;800;;encoded\n',
    );
    const { code, out } = await runCli([
      'compare',
      '--base',
      base,
      '--head',
      head,
      '--system',
      'x86_1',
      '--format',
      'json',
      '--campaign',
      campaign,
    ]);
    expect(code).toBe(1);
    const report = JSON.parse(out.join('\n')) as CompareReport;
    expect(report.size_mismatches).toEqual([{ id: 'kem-1', instance: 'b', item: 'ciphertext', catalog: 769, api: 768, basis: 'encoded' }]);
    expect(report.counts.regressions).toBe(1);
  });

  it('does not call a change that the nightly history of the operation shows as ordinary', () => {
    const { base, head } = trees();
    // Four earlier nightly runs of kem-1/a keygen spread by about ±8% around 100k.
    const history = [92_000, 108_000, 95_000, 106_000].map((level) => {
      const dir = tempDir();
      writeSyntheticSystem(dir, 'x86_1', inst, [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: steady.map((c) => (c * level) / 100_000) },
      ]);
      return dir;
    });
    const r = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history });
    const row = r.rows.find((x) => x.label === 'a')!;
    expect(row.verdict).toBe('inconclusive');
    expect(row.reason).toMatch(/nightly spread ±7\.\d%/);
  });

  it('checks every option before comparing: nothing is printed before the error', async () => {
    const { base, head } = trees();
    const runs = [
      await runCli(['compare', '--base', base, '--head', head, '--system', 'x86_1', '--fail-on', 'foo']),
      await runCli(['compare', '--base', base, '--head', head, '--system', 'x86_1', '--history', '/nonexistent']),
      await runCli(['compare', '--base', base, '--head', head, '--system', 'x86_1', '--history', tempDir()]),
    ];
    const codes = runs.map((r) => r.code);
    const out = runs.flatMap((r) => r.out);
    const err = runs.flatMap((r) => r.err);
    expect(codes).toEqual([2, 2, 2]);
    expect(out).toEqual([]);
    expect(err[0]).toBe("error: command line: --fail-on: unknown check 'foo' (known: regression, kat, size-audit)");
    expect(err[1]).toBe("error: command line: --history: '/nonexistent': no such folder");
    expect(err[2]).toMatch(/^error: command line: --history: '.*' has no evidence for system x86_1/);
  });

  it('refuses unreadable history evidence instead of leaving it out', () => {
    const { base, head } = trees();
    const old = tempDir();
    const dir = writeSyntheticSystem(old, 'x86_1', inst, [{ id: 'kem-1', label: 'a', op: 'keygen', trials: steady }]);
    const record = join(dir, 'records', 'kem-1', 'a__keygen.json');
    writeFileSync(record, readFileSync(record, 'utf8').slice(0, 50));
    expect(() => compareEvidence({ baseDir: base, headDir: head, system: 'x86_1', history: [old] })).toThrow(
      /a__keygen\.json: unreadable history evidence/,
    );
  });

  it('reports a build failure the change causes, not one the base already had', () => {
    const base = tempDir();
    const head = tempDir();
    const both = [
      { id: 'kem-1', label: 'old', kat: 'BUILDFAIL' },
      { id: 'kem-1', label: 'fresh', kat: 'PASS' },
    ];
    writeSyntheticSystem(base, 'x86_1', both, []);
    writeSyntheticSystem(
      head,
      'x86_1',
      both.map((i) => ({ ...i, kat: 'BUILDFAIL' })),
      [],
    );
    const report = compareEvidence({ baseDir: base, headDir: head, system: 'x86_1' });
    expect(report.build_failures).toEqual(['kem-1/fresh']);
  });

  it('names a missing side', () => {
    const { base } = trees();
    expect(() => compareEvidence({ baseDir: base, headDir: tempDir(), system: 'x86_1' })).toThrow(/no head evidence for system x86_1/);
  });
});

describe('the size audit page', () => {
  it('shows exactly the one wrong ciphertext size of the catalog', async () => {
    const { loadReportModel } = await import('../src/report/model.js');
    const { renderPages } = await import('../src/report/render.js');
    const { sections } = await import('./helpers/pages.js');
    const data = tempDir();
    writeSyntheticSystem(
      data,
      'x86_1',
      [
        { id: 'kem-1', label: 'a', sizes: { pk_bytes: 800, ct_bytes: 768 } },
        { id: 'kem-1', label: 'b', sizes: { pk_bytes: 800, ct_bytes: 768 } },
        { id: 'sign-2', label: 'v', sizes: { pk_bytes: 1312, signature_bytes: 2420 } },
      ],
      [
        { id: 'kem-1', label: 'a', op: 'keygen', trials: [1, 1, 1] },
        { id: 'kem-1', label: 'b', op: 'keygen', trials: [1, 1, 1] },
        { id: 'sign-2', label: 'v', op: 'sign', trials: [1, 1, 1] },
      ],
    );
    const campaign = tempDir();
    writeFileSync(
      join(campaign, 'external_sizes.csv'),
      'ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-1;a;800;768;;encoded\nkem-1;b;800;769;;encoded\nsign-2;v;1312;;2400;nominal-variable\n',
    );
    const pages = renderPages(loadReportModel(join(data, 'x86_1'), campaign));
    const page = pages.get('performance/size-audit_x86_1.md')!;
    const rows = sections(page)[0]!.tables[0]!.slice(1);
    expect(rows).toHaveLength(6);
    expect(rows.filter((r) => r[6] === 'MISMATCH ⚠')).toEqual([['kem-1', 'b', 'ciphertext', '769', '768', 'encoded', 'MISMATCH ⚠']]);
    // A nominal size of variable-length signatures is approximate, never a mismatch.
    expect(rows.find((r) => r[0] === 'sign-2' && r[2] === 'signature')!.slice(3)).toEqual([
      '≈ 2400',
      '2420',
      'nominal-variable',
      'approximate',
    ]);
    expect(page).toContain('1 mismatch in 6 compared sizes');
    // The candidate pages show the catalog's sizes, marking the one the code does not produce.
    const kemSizes = sections(pages.get('kem-1/perf_x86_1.md')!).find((s) => s.heading.startsWith('6.'))!.tables[0]!;
    expect(kemSizes[0]!.slice(0, 4)).toEqual(['instance', 'public key', 'secret key', 'ciphertext']);
    expect(kemSizes.slice(1).map((r) => [r[0], r[1], r[3]])).toEqual([
      ['a', '800', '768'],
      ['b', '800', '769 ⚠ (API: 768)'],
    ]);
    const sigSizes = sections(pages.get('sign-2/perf_x86_1.md')!).find((s) => s.heading.startsWith('6.'))!.tables[0]!;
    expect(sigSizes[1]).toContain('≈ 2400');
    // The summary page follows the same rule, so the two pages never disagree.
    const summarySizes = sections(pages.get('performance/summary_x86_1.md')!).flatMap((s) =>
      s.tables.filter((t) => t[0]![2] === 'public key'),
    );
    expect(summarySizes.flatMap((t) => t.slice(1))).toEqual(
      expect.arrayContaining([
        ['kem-1', 'b', '800', '769 ⚠ (API: 768)'],
        ['sign-2', 'v', '1312', '≈ 2400'],
      ]),
    );
  });
});
