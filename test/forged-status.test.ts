import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type CampaignSummary } from '../src/campaign/runCampaign.js';
import { compareEvidence } from '../src/compare/compare.js';
import { compareFails } from '../src/compare/failOn.js';
import { renderComparison } from '../src/compare/markdown.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { goodKemCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * FORGED (kat/status.ts): an instance whose trial a replay contradicts carries the status wherever a
 * KAT status is shown or judged — build.json, the run's summary and exit code, the pages, the PR
 * comment and its fail-on, validate — and keeps it for that library until a forced run.
 */

/**
 * The toy KEM, honest for its first 64 keygens (the KAT's dozen among them: it passes), then handing
 * out its last key pair again in nine calls of ten. Every key it gives works. With `burn`, those
 * calls still draw from the generator as often as an honest one (once): the draw count cannot tell.
 */
const memoKeygen = (burn: boolean) => `#include <string.h>
#include "KEM_AlgorithmInstance.h"
#define kem_keygen honest_kem_keygen
#include "../common/toy_kem.inc"
#undef kem_keygen
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
  static unsigned calls; static unsigned char kpk[4096], ksk[4096]; static unsigned long long lpk, lsk;
  if (calls++ < 64 || calls % 10 == 1) {
    int rc = honest_kem_keygen(pk, pk_len, sk, sk_len);
    memcpy(kpk, pk, lpk = *pk_len); memcpy(ksk, sk, lsk = *sk_len);
    return rc;
  }
  ${burn ? 'unsigned char burn[32]; get_random_number(&drng_algorithm, burn, 256);' : ''}
  memcpy(pk, kpk, *pk_len = lpk); memcpy(sk, ksk, *sk_len = lsk);
  return 0;
}
`;

const PHASES = new Set(['build', 'kat', 'measure', 'profile'] as const);

describe('an instance a replay contradicts is FORGED everywhere a KAT status shows', () => {
  const data = tempDir();
  const pages = tempDir();
  const system = join(data, 's');
  let root: string;
  let summary: CampaignSummary;
  const build = () => JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson;
  const recordPath = (label: string, op: string) => join(system, 'records', 'kem-1', `${label}__${op}.json`);

  beforeAll(async () => {
    root = goodKemCampaign(['good', 'memo', 'lazy'], QUICK);
    const yml = join(root, 'kem-1', 'candidate.yml');
    for (const [label, burn] of [
      ['memo', true],
      ['lazy', false],
    ] as const) {
      cpSync(join(root, 'kem-1', 'good'), join(root, 'kem-1', label), { recursive: true });
      writeFileSync(join(root, 'kem-1', label, 'KEM_AlgorithmInstance.c'), memoKeygen(burn));
      writeFileSync(yml, readFileSync(yml, 'utf8').replace(new RegExp(`(label: ${label}\n {4}dir: )good`), `$1${label}`));
    }
    summary = await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(PHASES) });
  }, 300_000);

  it('build.json and the summary name the operation, the trial and the calls; enc and dec are measured; no profile is made', () => {
    const memo = build().instances['kem-1/memo']!;
    expect(memo.kat).toBe('PASS');
    expect(memo.forged).toEqual({
      operation: 'keygen',
      detail: expect.stringMatching(/^FORGED: trial \d+, calls? \d+(–\d+)?: the outputs differ/),
    });
    expect(build().instances['kem-1/good']!.forged).toBeUndefined();
    expect(summary.instances.find((i) => i.key === 'kem-1/memo')!.forged).toEqual(memo.forged);
    const keygen = JSON.parse(readFileSync(recordPath('memo', 'keygen'), 'utf8')) as TimingRecord;
    expect([keygen.status, keygen.forged]).toEqual(['failed', memo.forged!.detail]);
    for (const op of ['enc', 'dec'])
      expect((JSON.parse(readFileSync(recordPath('memo', op), 'utf8')) as TimingRecord).status).toBe('complete');
    // The profile phase takes FORGED as it takes a failed KAT: nothing of this library is profiled.
    expect(() => statSync(join(system, 'profile', 'kem-1', 'memo__keygen.json'))).toThrow();
    expect(statSync(join(system, 'profile', 'kem-1', 'good__keygen.json')).isFile()).toBe(true);
  });

  it('the KAT counts the draws of a call; a keygen that draws less in its trials fails, the one that burns draws does not', () => {
    // The toy KEM's keygen and enc each draw once from the ICCS DRNG (test/fixtures/campaign/kem-1/common/toy_kem.inc).
    expect(build().instances['kem-1/good']!.kat_draws).toEqual({ keygen: 1, enc: 1 });
    expect(build().instances['kem-1/lazy']!.kat_draws).toEqual({ keygen: 1, enc: 1 });
    const lazy = JSON.parse(readFileSync(recordPath('lazy', 'keygen'), 'utf8')) as TimingRecord;
    expect(lazy.status).toBe('failed');
    expect(lazy.failure).toMatch(
      /inconsistent trial: (\d+) keygen calls drew (\d+) times from the generator; each drew at least 1 in the KAT$/,
    );
    const [, calls, drawn] = /(\d+) keygen calls drew (\d+)/.exec(lazy.failure as string)!.map(Number);
    expect(drawn).toBeLessThan(calls!);
    expect(build().instances['kem-1/lazy']!.forged).toBeUndefined();
    // Honest trials reported their draws: at least one per call.
    const good = JSON.parse(readFileSync(recordPath('good', 'keygen'), 'utf8')) as TimingRecord;
    for (const p of good.processes as Array<{ meta: Record<string, string>; trials: Array<{ measurements: number }> }>)
      for (const t of p.trials) expect(Number(p.meta.draws)).toBeGreaterThanOrEqual(t.measurements);
  });

  it('validate holds build.json and the record to each other', () => {
    expect(validateDataset(system)).toEqual([]);
    const copy = tempDir();
    cpSync(system, copy, { recursive: true });
    const b = JSON.parse(readFileSync(join(copy, 'build.json'), 'utf8')) as BuildJson;
    const { forged, ...rest } = b.instances['kem-1/memo']!;
    writeFileSync(join(copy, 'build.json'), JSON.stringify({ instances: { ...b.instances, 'kem-1/memo': rest } }));
    expect(validateDataset(copy)).toContain('records/kem-1/memo__keygen.json: forged, but build.json does not say FORGED for kem-1/memo');
    b.instances['kem-1/memo'] = { ...rest, forged: { ...forged!, operation: 'enc' } };
    writeFileSync(join(copy, 'build.json'), JSON.stringify(b));
    expect(validateDataset(copy).join('\n')).toMatch(/instances\["kem-1\/memo"\]\.forged: the enc record says nothing of a forgery/);
  });

  it('the pages say FORGED and publish none of its figures; their tables parse as tables', async () => {
    const r = await runCli(['report', system, '--campaign', root, '--out', pages]);
    expect(r.code, r.err.join('\n')).toBe(0);
    const summaryPage = readFileSync(join(pages, 'performance', 'summary_s.md'), 'utf8');
    const candidate = readFileSync(join(pages, 'kem-1', 'perf_s.md'), 'utf8');
    // The category's table row (the rankings list it first, as not ranked for being FORGED).
    const rows = summaryPage.split('\n').filter((l) => l.includes('`memo`'));
    expect(rows.find((l) => l.includes('| FORGED ⚠ |'))).toMatch(/\| FORGED ⚠ \| not published \(FORGED\) \|/);
    expect(rows[0]).toMatch(/\| `memo` \| none \| FORGED: its outputs were not its own work \|$/);
    expect(summaryPage).toMatch(/kem-1 memo: FORGED — keygen: trial \d+/);
    expect(candidate).toMatch(/\| `memo` \| guide \| FORGED \\\[\d+\] \|/);
    expect(candidate).toMatch(
      /FORGED: the KAT passed, but its outputs were not those the same calls give when made again elsewhere.*\(keygen: trial \d+, .*\)\. No figure of this library is published\./,
    );
    // enc's figure of the library is in its record, and on no page.
    const enc = JSON.parse(readFileSync(recordPath('memo', 'enc'), 'utf8')) as TimingRecord;
    expect(candidate).not.toContain(String(Math.round(enc.mean_cycles!)));
    const tree = unified().use(remarkParse).use(remarkGfm).parse(summaryPage);
    expect(tree.children.some((n) => n.type === 'table')).toBe(true);
    // Every page ends by naming the version that rendered it.
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    for (const page of [summaryPage, candidate, readFileSync(join(pages, 'index.md'), 'utf8')])
      expect(page.trimEnd().split('\n').at(-1)).toBe(`Rendered by ngcc-perf ${version}.`);
  });

  it('a comparison counts it as a new failure of fail-on kat and shows it in the KAT table', () => {
    const base = tempDir();
    cpSync(data, base, { recursive: true });
    const b = build();
    const { forged: _f, ...honest } = b.instances['kem-1/memo']!;
    writeFileSync(join(base, 's', 'build.json'), JSON.stringify({ instances: { ...b.instances, 'kem-1/memo': honest } }));
    const report = compareEvidence({ baseDir: base, headDir: data, system: 's' });
    expect(report.kat_changes).toEqual([{ key: 'kem-1/memo', base: 'PASS', head: 'FORGED' }]);
    expect(report.counts.kat_failures).toBe(1);
    expect(compareFails(report, new Set(['kat']))).toBe(true);
    expect(renderComparison(report)).toMatch(/\| kem-1\/memo \| PASS \| FORGED \|/);
  });

  it('a run again keeps it FORGED for the same library, and the run exits 1 saying so', async () => {
    const before = readFileSync(recordPath('memo', 'keygen'), 'utf8');
    const r = await runCli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
    expect(r.code).toBe(1);
    expect(r.out.join('\n')).toMatch(/^FORGED +kem-1\/memo — keygen: trial \d+/m);
    expect(r.out.join('\n')).toMatch(
      /exit 1: .*1 instance\(s\) FORGED, a replay gave other outputs than their trial \(kem-1\/memo keygen\)/,
    );
    expect(readFileSync(recordPath('memo', 'keygen'), 'utf8')).toBe(before);
    expect(build().instances['kem-1/memo']!.forged?.operation).toBe('keygen');
  }, 300_000);
});
