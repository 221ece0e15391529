import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAIRED_TRIALS } from '../src/config/defaults.js';
import type { TimingRecord } from '../src/evidence/fileTypes.js';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { compareEvidence } from '../src/compare/compare.js';
import { validateDataset } from '../src/evidence/validate.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const PLANNING = QUICK.replace('trials: 2', 'trials: 3');
const record = (data: string, id: string, label: string, op: string) =>
  JSON.parse(readFileSync(join(data, 'x', 'records', id, `${label}__${op}.json`), 'utf8')) as TimingRecord;
const starts = (r: TimingRecord) => (r.processes as Array<{ started_utc: string }>).map((p) => Date.parse(p.started_utc));

describe('a paired run (run --against): base and head measured in one run, trials interleaved', () => {
  it('measures every operation on both sides in alternating order, and leaves an instance the base lacks unpaired', async () => {
    // The base has the toy signature only; head adds the toy KEM.
    const base = fixtureCampaign(['sign-1'], PLANNING);
    const head = fixtureCampaign(['sign-1', 'kem-1'], PLANNING);
    const [headData, baseData] = [tempDir(), tempDir()];
    const run = await runCli([
      'run',
      head,
      '--system',
      'x',
      '--out',
      headData,
      '--only',
      '^(sign-1|kem-1/good)',
      '--phases',
      'build,kat,measure',
      '--against',
      base,
      '--against-out',
      baseData,
    ]);
    expect(run.progress).toContain('sign-1/toy-sig: measured alongside its base');
    expect(run.progress).toMatch(/base: sign-1\/toy-sig PASS/);

    // Trial j of head beside trial j of base (head first in even rounds, base first in odd ones:
    // every other round runs backwards), and round j of keygen before round j of sign.
    const ops = ['keygen', 'sign', 'verify'];
    const sides = (op: string) => ({
      h: starts(record(headData, 'sign-1', 'toy-sig', op)),
      b: starts(record(baseData, 'sign-1', 'toy-sig', op)),
    });
    for (const op of ops) {
      const { h, b } = sides(op);
      expect(h.length).toBeGreaterThanOrEqual(PAIRED_TRIALS);
      expect(b).toHaveLength(h.length);
      for (let j = 0; j < PAIRED_TRIALS; j++) expect(j % 2 === 0 ? h[j]! < b[j]! : b[j]! < h[j]!, `${op} round ${j}`).toBe(true);
      for (let j = 0; j + 1 < h.length; j++) expect(Math.max(h[j]!, b[j]!) < Math.min(h[j + 1]!, b[j + 1]!), `${op} round ${j}`).toBe(true);
    }
    for (let j = 0; j < PAIRED_TRIALS; j++) {
      const [keygen, sign, verify] = ops.map((op) => sides(op));
      const forward = j % 2 === 0;
      expect(forward ? keygen!.h[j]! < sign!.h[j]! : sign!.h[j]! < keygen!.h[j]!).toBe(true);
      expect(forward ? sign!.b[j]! < verify!.b[j]! : verify!.b[j]! < sign!.b[j]!).toBe(true);
    }
    for (const op of ops) {
      expect(record(headData, 'sign-1', 'toy-sig', op).paired).toBe(true);
      expect(record(baseData, 'sign-1', 'toy-sig', op).paired).toBe(true);
      expect(record(baseData, 'sign-1', 'toy-sig', op).status).toBe('complete');
    }
    // The base side's library is its own build, from its own campaign folder.
    expect(record(baseData, 'sign-1', 'toy-sig', 'sign').library_sha256).toBe(
      JSON.parse(readFileSync(join(baseData, 'x', 'build.json'), 'utf8')).instances['sign-1/toy-sig'].library_sha256,
    );

    // New in head: measured, with nothing to pair it with, as the planning says.
    expect(record(headData, 'kem-1', 'good', 'enc').status).toBe('complete');
    expect(record(headData, 'kem-1', 'good', 'enc').trials).toHaveLength(3);
    expect(record(headData, 'kem-1', 'good', 'enc').paired).toBeUndefined();
    expect(existsSync(join(baseData, 'x', 'records', 'kem-1'))).toBe(false);

    // The two folders compare as any base and head.
    const compared = await runCli(['compare', '--base', baseData, '--head', headData, '--system', 'x', '--format', 'json']);
    const rows = (JSON.parse(compared.out.join('\n')) as { rows: Array<{ candidate: string; verdict: string }> }).rows;
    const signRows = rows.filter((r) => r.candidate === 'sign-1') as Array<{ paired?: boolean }>;
    expect(signRows).toHaveLength(3);
    // Judged pair by pair.
    expect(signRows.every((r) => r.paired === true)).toBe(true);
    expect(rows.filter((r) => r.candidate === 'kem-1').every((r) => r.verdict === 'new')).toBe(true);
    // The run kept the same verdicts beside its evidence, for the paired instance only.
    const kept = JSON.parse(readFileSync(join(headData, 'x', 'paired', 'sign-1', 'toy-sig.json'), 'utf8'));
    expect(run.out.join('\n')).toMatch(/^paired: 3 operation\(s\) judged on their trial pairs, kept in paired\//m);
    expect(kept.night_started_utc).toBe(JSON.parse(readFileSync(join(headData, 'x', 'campaign.json'), 'utf8')).last_run.started_utc);
    for (const r of signRows as Array<{ operation: string; verdict: string }>) expect(kept.operations[r.operation].verdict).toBe(r.verdict);
    expect(existsSync(join(headData, 'x', 'paired', 'kem-1'))).toBe(false);
    expect(validateDataset(join(headData, 'x'))).toEqual([]);
  });

  it('--against-only pairs the instances it matches, and measures the others once', async () => {
    const [base, head] = [fixtureCampaign(['sign-1', 'kem-1'], PLANNING), fixtureCampaign(['sign-1', 'kem-1'], PLANNING)];
    const [headData, baseData] = [tempDir(), tempDir()];
    const args = ['--only', '^(sign-1|kem-1/good)', '--phases', 'build,kat,measure', '--against', base, '--against-out', baseData];
    const run = await runCli(['run', head, '--system', 'x', '--out', headData, ...args, '--against-only', '^kem-1/']);
    expect(run.code).toBeLessThanOrEqual(1);
    expect(record(headData, 'kem-1', 'good', 'dec').paired).toBe(true);
    expect(record(headData, 'sign-1', 'toy-sig', 'sign').paired).toBeUndefined();
    expect(record(headData, 'sign-1', 'toy-sig', 'sign').trials).toHaveLength(3);
    expect(existsSync(join(baseData, 'x', 'records', 'sign-1'))).toBe(false);
    expect(existsSync(join(headData, 'x', 'paired', 'kem-1', 'good.json'))).toBe(true);
    expect(existsSync(join(headData, 'x', 'paired', 'sign-1'))).toBe(false);
    const alone = await runCli(['run', head, '--system', 'x', '--out', tempDir(), '--against-only', '^kem-1/']);
    expect([alone.code, alone.err.join('\n')]).toEqual([2, expect.stringContaining('--against-only: give it with --against')]);
  });

  it('measures a pair again while one of its trials stays disturbed, up to twice the planned rounds', async () => {
    // A fixed clock no core reaches: every trial stays disturbed (no re-runs allowed), so no pair is clean.
    const settings = `${PLANNING}  disturbed_retries: 0\nsystems:\n  x:\n    fixed_clock_hz: 1.0e15\n`;
    const [base, head] = [fixtureCampaign(['sign-1'], settings), fixtureCampaign(['sign-1'], settings)];
    const [headData, baseData] = [tempDir(), tempDir()];
    await runCli([
      'run',
      head,
      '--system',
      'x',
      '--out',
      headData,
      '--phases',
      'build,kat,measure',
      '--against',
      base,
      '--against-out',
      baseData,
    ]);
    for (const data of [headData, baseData]) {
      const r = record(data, 'sign-1', 'toy-sig', 'verify');
      expect(r.processes).toHaveLength(2 * PAIRED_TRIALS);
      expect(r.disturbed_trials).toBe(2 * PAIRED_TRIALS);
    }
  });

  it('extra rounds append pairs to the rows asked for only, and the records stay valid evidence', async () => {
    const [base, head] = [fixtureCampaign(['sign-1'], PLANNING), fixtureCampaign(['sign-1'], PLANNING)];
    const [headData, baseData] = [tempDir(), tempDir()];
    const options = { campaignDir: head, system: 'x', dataDir: headData, against: { campaignDir: base, dataDir: baseData } };
    await runCampaign({ ...options, phases: new Set(['build', 'kat', 'measure'] as const), pairedTrials: 8 });
    const recordText = (data: string, op: string) => readFileSync(join(data, 'x', 'records', 'sign-1', `toy-sig__${op}.json`), 'utf8');
    const untouched = [recordText(headData, 'keygen'), recordText(baseData, 'keygen')];
    const first = { h: record(headData, 'sign-1', 'toy-sig', 'sign'), b: record(baseData, 'sign-1', 'toy-sig', 'sign') };
    // 8 pairs, or more where a disturbed pair was measured again.
    const n1 = first.h.trials.length;
    expect(n1).toBeGreaterThanOrEqual(8);

    const said: string[] = [];
    const progress = { start: () => {}, tick: (m: string) => void said.push(m), note: (m: string) => void said.push(m), done: () => {} };
    await runCampaign({
      ...options,
      phases: new Set(['measure'] as const),
      extraRounds: { pairs: 5, operations: new Set(['sign-1/toy-sig/sign', 'sign-1/toy-sig/verify']) },
      progress,
    });
    // keygen was not asked for: its records are the first rounds', byte for byte.
    expect([recordText(headData, 'keygen'), recordText(baseData, 'keygen')]).toEqual(untouched);
    for (const [data, was] of [
      [headData, first.h],
      [baseData, first.b],
    ] as const) {
      const r = record(data, 'sign-1', 'toy-sig', 'sign');
      // What the run said, should the rounds be missing.
      expect(r.trial_rounds, said.join('\n')).toHaveLength(2);
      const [r1, r2] = r.trial_rounds!;
      expect(r1).toBe(n1);
      expect(r2).toBeGreaterThanOrEqual(5);
      expect(r.trials).toHaveLength(n1 + r2!);
      expect(r.paired).toBe(true);
      // The first rounds' trials come first, unchanged; the figures are those of all of them.
      expect(r.trials.slice(0, n1)).toEqual(was.trials);
      expect(r.measurements).toBe(r.trials.reduce((a, t) => a + t.measurements, 0));
      expect(r.started_utc).toBe(was.started_utc);
      expect(record(data, 'sign-1', 'toy-sig', 'verify').trial_rounds).toHaveLength(2);
      expect(validateDataset(join(data, 'x'))).toEqual([]);
    }
    // The pairs of the comparison are all of them, in their rounds.
    const report = compareEvidence({ baseDir: baseData, headDir: headData, system: 'x' });
    const sign = report.rows.find((r) => r.operation === 'sign')!;
    const appended = record(headData, 'sign-1', 'toy-sig', 'sign');
    expect(sign.rounds).toEqual(appended.trial_rounds);
    expect(sign.head?.trial_cycles).toHaveLength(appended.trials.length);
    expect(report.rows.find((r) => r.operation === 'keygen')!.rounds).toBeUndefined();

    // A record whose rounds do not add up to its trials is refused by validate.
    const path = join(headData, 'x', 'records', 'sign-1', 'toy-sig__sign.json');
    writeFileSync(path, JSON.stringify({ ...appended, trial_rounds: [n1, 4] }));
    expect(validateDataset(join(headData, 'x'))).toEqual([
      expect.stringMatching(
        new RegExp(`toy-sig__sign\\.json: trial_rounds \\[${n1},4\\] do not add up to its ${appended.trials.length} trials$`),
      ),
    ]);
  });

  it('needs --against and --against-out together, and a base folder of its own', async () => {
    const head = fixtureCampaign(['sign-1'], PLANNING);
    const out = tempDir();
    const alone = await runCli(['run', head, '--system', 'x', '--out', out, '--against', head]);
    expect(alone.code).toBe(2);
    expect(alone.err.join('\n')).toBe('error: command line: --against-out: give --against and --against-out together');
    const same = await runCli(['run', head, '--system', 'x', '--out', out, '--against', head, '--against-out', out]);
    expect(same.code).toBe(2);
    expect(same.err.join('\n')).toBe('error: command line: --against-out: the base side needs an evidence folder of its own, not --out');
  });
});
