import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun } from '../src/campaign/runPlan.js';
import { PAIRED_TRIALS } from '../src/config/defaults.js';
import { validateDataset } from '../src/evidence/validate.js';
import { precisionOf, type AdaptiveRule } from '../src/measure/precision.js';
import type { TimingRecord } from '../src/evidence/fileTypes.js';
import { fixtureCampaign } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const OPS = ['keygen', 'enc', 'dec'];
/** Short trials, as in the other timing tests; the adaptive rule's limits per test. */
const planning = (adaptive: string) =>
  `planning:\n  trials: 5\n  trial_target_s: 0.01\n  op_budget_s: 2\n  min_measurements: 10\n  warmups: 1\n  disturbed_retries: 4\n  adaptive:\n${adaptive}`;
const recordFile = (data: string, op: string) => join(data, 'x', 'records', 'kem-1', `good__${op}.json`);
const record = (data: string, op: string) => JSON.parse(readFileSync(recordFile(data, op), 'utf8')) as TimingRecord;
const starts = (r: TimingRecord) => (r.processes as Array<{ started_utc: string }>).map((p) => Date.parse(p.started_utc));
const measure = (campaign: string, data: string, ...extra: string[]) =>
  runCli(['run', campaign, '--system', 'x', '--out', data, '--only', '^kem-1/good$', '--phases', 'build,kat,measure', ...extra]);

describe('adaptive precision (planning.adaptive, run --adaptive)', () => {
  it('stops a stable operation once its interval is within the target, before max_trials, and records it as met', async () => {
    // Off in the manifest, on for this run: the command line's --adaptive. ±10 %: generous, since the
    // test host's cores are shared; the toy KEM's trials agree far better on a quiet core.
    const campaign = fixtureCampaign(
      ['kem-1'],
      planning('    enabled: false\n    ci_target: 0.1\n    min_trials: 3\n    max_trials: 30\n    trial_target_s: 0.01\n'),
    );
    const data = tempDir();
    const run = await measure(campaign, data, '--adaptive');
    expect(run.code).toBe(0);
    // The plan counts the adaptive operations at their fewest trials, and says so.
    expect(run.progress).toMatch(/measure .*\(1 plan, 1 adaptive, at the fewest trials: more on a noisy machine\)/);
    // The progress line says how far each operation's trials got.
    for (const op of OPS)
      expect(run.progress).toMatch(new RegExp(`${op}: complete \\d+ cycles.*; \\d+ trials, ±\\d+\\.\\d% \\(target ±10\\.0% met\\)`));
    const counts: number[] = [];
    for (const op of OPS) {
      const r = record(data, op);
      const precision = r.precision as { mode: string; ci95_rel: number; target: number; met: boolean; trials: number };
      expect(r.status, op).toBe('complete');
      expect((r.plan as { trials: number; adaptive?: object }).adaptive, op).toEqual({
        ci_target: 0.1,
        min_trials: 3,
        max_trials: 30,
        min_calls: 10,
      });
      expect(precision, op).toMatchObject({ mode: 'adaptive', target: 0.1, met: true });
      expect(precision.ci95_rel, op).toBeLessThanOrEqual(0.1);
      expect(precision.trials, op).toBeGreaterThanOrEqual(3);
      // Stopped by the rule at the first trial that met it (disturbed trials count towards neither).
      expect(precisionOf(r.trials.slice(0, -1), r.plan as { adaptive: AdaptiveRule }).met, op).toBe(false);
      counts.push(r.trials.length);
    }
    // A stable operation meets ±10 % long before 30 trials; on a busy host most trials may be
    // disturbed and left out, so one operation of three is asked to.
    expect(Math.min(...counts)).toBeLessThan(30);
    expect(validateDataset(join(data, 'x'))).toEqual([]);
  });

  it('runs to max_trials when the target cannot be met, keeps the operations interleaved, and records met: false', async () => {
    const campaign = fixtureCampaign(
      ['kem-1'],
      planning('    enabled: true\n    ci_target: 1.0e-7\n    min_trials: 2\n    max_trials: 4\n    trial_target_s: 0.01\n'),
    );
    const data = tempDir();
    expect((await measure(campaign, data)).code).toBe(0);
    const started = OPS.map((op) => starts(record(data, op)));
    for (const op of OPS) {
      const r = record(data, op);
      expect(r.processes, op).toHaveLength(4);
      expect(r.precision, op).toMatchObject({ mode: 'adaptive', target: 1e-7, met: false });
    }
    // One trial of every operation per round: keygen j, enc j, dec j, then keygen j + 1.
    for (let j = 0; j < 4; j++) {
      expect(started[0]![j]! < started[1]![j]! && started[1]![j]! < started[2]![j]!, `round ${j}`).toBe(true);
      if (j < 3) expect(started[2]![j]! < started[0]![j + 1]!, `round ${j}`).toBe(true);
    }
    expect(validateDataset(join(data, 'x'))).toEqual([]);
    // The next adaptive run plans its timing from this one's; a fixed run does not (its 5 trials are
    // another plan's), and counts by its own plan.
    const again = await measure(campaign, data, '--force');
    expect(again.progress).toMatch(/ measure +[\d.]+ \w+ +\(1 previous run\)/);
    const yml = join(campaign, 'ngcc-perf.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace('enabled: true', 'enabled: false'));
    const fixed = await measure(campaign, data, '--force');
    expect(fixed.progress).toMatch(/ measure +[\d.]+ \w+ +\(1 plan\)/);
  });

  it('leaves the fixed plan as it was (5 trials, no rule), and validate catches an edited precision', async () => {
    const campaign = fixtureCampaign(['kem-1'], planning('    ci_target: 1.0e-7\n'));
    const data = tempDir();
    expect((await measure(campaign, data)).code).toBe(0);
    for (const op of OPS) {
      const r = record(data, op);
      expect(r.processes, op).toHaveLength(5);
      expect((r.plan as { trials: number; adaptive?: object }).trials, op).toBe(5);
      expect((r.plan as { adaptive?: object }).adaptive, op).toBeUndefined();
      expect(r.precision, op).toMatchObject({ mode: 'fixed' });
      expect(r.precision, op).not.toHaveProperty('met');
    }
    expect(validateDataset(join(data, 'x'))).toEqual([]);
    const file = recordFile(data, 'enc');
    const r = record(data, 'enc');
    const precision = r.precision as { ci95_rel: number | null };
    writeFileSync(file, JSON.stringify({ ...r, precision: { ...precision, ci95_rel: (precision.ci95_rel ?? 0.01) / 2 } }));
    expect(validateDataset(join(data, 'x'))).toEqual([
      expect.stringMatching(/good__enc\.json: precision\.ci95_rel .* recomputed from trials/),
    ]);
    writeFileSync(file, JSON.stringify({ ...r, precision: { ...precision, mode: 'adaptive', met: true } }));
    expect(validateDataset(join(data, 'x'))).toEqual([
      expect.stringMatching(/precision\.mode adaptive != fixed/),
      expect.stringMatching(/precision\.met true != undefined/),
    ]);
    // A record written before precision existed is no problem.
    const { precision: _, ...old } = r;
    writeFileSync(file, JSON.stringify(old));
    expect(validateDataset(join(data, 'x'))).toEqual([]);
  });

  it('a paired run stays on the fixed plan with its pairs, even with --adaptive', async () => {
    const settings = planning('    enabled: true\n    max_trials: 6\n');
    const [base, head] = [fixtureCampaign(['kem-1'], settings), fixtureCampaign(['kem-1'], settings)];
    const [data, baseData] = [tempDir(), tempDir()];
    const paired = await measure(head, data, '--adaptive', '--against', base, '--against-out', baseData);
    expect(paired.code, paired.err.join('\n')).toBe(0);
    for (const op of OPS) {
      const r = record(data, op);
      expect(r.paired, op).toBe(true);
      expect((r.plan as { adaptive?: object }).adaptive, op).toBeUndefined();
      expect(r.trials.length, op).toBeGreaterThanOrEqual(PAIRED_TRIALS);
      expect(r.precision, op).toMatchObject({ mode: 'fixed' });
    }
  });

  it('the nightly turns it on unless ngcc-perf.yml says adaptive.nightly: false; other runs follow adaptive.enabled', () => {
    const enabled = (yml: string, adaptive?: 'always' | 'nightly') =>
      planRun({ campaignDir: fixtureCampaign(['kem-1'], yml), system: 'x', dataDir: tempDir(), phases: new Set(['build']), adaptive })
        .settings.planning.adaptive.enabled;
    expect(enabled('{}\n')).toBe(false);
    expect(enabled('{}\n', 'nightly')).toBe(true);
    expect(enabled('{}\n', 'always')).toBe(true);
    expect(enabled('planning:\n  adaptive:\n    nightly: false\n', 'nightly')).toBe(false);
    expect(enabled('planning:\n  adaptive:\n    nightly: false\n', 'always')).toBe(true);
    expect(enabled('planning:\n  adaptive:\n    enabled: true\n')).toBe(true);
  });
});
