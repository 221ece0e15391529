import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TimingRecord } from '../src/evidence/fileTypes.js';
import { addCosts, processCost } from '../src/measure/processCost.js';
import { goodKemCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

/** Where a timing process's wall time goes (src/measure/processCost.ts), by the parent's clock at the marks. */
const mark = (name: string, wall_s: number) => ({ name, wall_s, cpu_s: 0 });

describe('the cost of a timing process', () => {
  it('splits the wall time at the marks: start, preparation, loops, between batches, finish', () => {
    const marks = [mark('seed', 0.05), mark('begin', 0.08), mark('end', 0.58), mark('begin', 0.6), mark('end', 1.1)];
    const c = processCost(marks, 1.15)!;
    expect(c.start_s).toBeCloseTo(0.05, 9);
    expect(c.prepare_s).toBeCloseTo(0.03, 9);
    expect(c.loops_s).toBeCloseTo(1.0, 9);
    expect(c.between_s).toBeCloseTo(0.02, 9);
    expect(c.finish_s).toBeCloseTo(0.05, 9);
    // The parts add up to the process's wall time.
    expect(c.start_s + c.prepare_s + c.loops_s + c.between_s + c.finish_s).toBeCloseTo(1.15, 9);
    // Without its seed, or with a window left open, it is no timing trial's: nothing is said.
    expect(processCost(marks.slice(1), 1.15)).toBeUndefined();
    expect(processCost(marks.slice(0, 4), 1.15)).toBeUndefined();
    expect(addCosts([c, undefined, c])).toMatchObject({ processes: 2, loops_s: 2 });
    // The driver's `start` mark, before it loads the library, splits the start.
    const started = processCost([mark('start', 0.04), ...marks], 1.15)!;
    expect(started.load_s).toBeCloseTo(0.01, 9);
    expect(started.start_s).toBeCloseTo(0.05, 9);
    expect(addCosts([undefined])).toBeUndefined();
    // The marks' own reading, from a begin's arrival to its answer, is bookkeeping between the loops.
    const answered = processCost(
      marks.map((m) => (m.name === 'begin' ? { ...m, resumed_s: m.wall_s + 0.01 } : m)),
      1.15,
    )!;
    expect(answered.loops_s).toBeCloseTo(0.98, 9);
    expect(answered.between_s).toBeCloseTo(0.04, 9);
    expect(answered.prepare_s).toBeCloseTo(0.03, 9);
  });

  it("a run adds its timing processes' parts up in campaign.json and its last lines", async () => {
    const root = goodKemCampaign(['good'], QUICK);
    const data = tempDir();
    const r = await runCli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
    expect(r.code, r.err.join('\n')).toBe(0);
    const campaign = JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as {
      timing_processes: { processes: number; loops_s: number; start_s: number; load_s: number; inputs_s: number };
    };
    const records = ['keygen', 'enc', 'dec'].map(
      (op) => JSON.parse(readFileSync(join(data, 's', 'records', 'kem-1', `good__${op}.json`), 'utf8')) as TimingRecord,
    );
    const trials = records.flatMap((rec) => rec.trials as Array<{ window_s: number }>);
    // Every trial process of the records, its windows the trials' own.
    expect(campaign.timing_processes.processes).toBe(trials.length);
    expect(campaign.timing_processes.loops_s).toBeCloseTo(
      trials.reduce((a, t) => a + t.window_s, 0),
      6,
    );
    expect(campaign.timing_processes.start_s).toBeGreaterThan(0);
    // Every trial process marked its start before loading the library.
    expect(campaign.timing_processes.load_s).toBeGreaterThan(0);
    expect(campaign.timing_processes.load_s).toBeLessThan(campaign.timing_processes.start_s);
    // dec's trials each had their inputs made by a process before them (measure/decInputs.ts).
    const inputs = (records[2]!.processes as Array<{ inputs_s?: number }>).reduce((a, p) => a + (p.inputs_s ?? 0), 0);
    expect(inputs).toBeGreaterThan(0);
    expect(campaign.timing_processes.inputs_s).toBeCloseTo(inputs, 6);
    expect(r.out.join('\n')).toMatch(
      new RegExp(
        `^timing processes: ${trials.length}, \\d+\\.\\d s in timed loops of \\d+\\.\\d s \\(the whole run \\d+\\.\\d s\\); each besides its loops: start \\d+ ms \\(of which loading the library \\d+ ms\\), prepare \\d+ ms, between batches \\d+ ms, finish \\d+ ms; dec's inputs, made in processes of their own, \\d+\\.\\d s$`,
        'm',
      ),
    );
  });
});
