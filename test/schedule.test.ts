import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { InstanceContext, PhaseStep } from '../src/campaign/context.js';
import { KAT_SECONDS } from '../src/campaign/prepare.js';
import { RELINK_SECONDS } from '../src/campaign/profilePhase.js';
import { runSchedule, stagesOf } from '../src/campaign/schedule.js';
import { allowedCpus } from '../src/env/cpus.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { runProcess, withCpus } from '../src/sandbox/runProcess.js';
import { formatSeconds } from '../src/text/format.js';
import { runCli } from './helpers/cli.js';
import { goodKemCampaign } from './helpers/campaigns.js';
import { tempDir } from './helpers/tmp.js';

// The scheduler (src/campaign/schedule.ts): builds, KATs and surveys on a pool of workers confined
// to the cores the run does not time on, pinned stages holding a timing core each.

const PLANNING =
  'planning:\n  trials: 3\n  trial_target_s: 0.02\n  op_budget_s: 2\n  min_measurements: 10\n  warmups: 1\nprofile:\n  target_s: 0.02\n  rounds: 2\n';

interface Span {
  what: string;
  cpu?: number;
  from: number;
  to: number;
}

const span = (what: string, from: string, to: string, cpu?: number): Span => ({ what, from: Date.parse(from), to: Date.parse(to), cpu });
const overlap = (a: Span, b: Span) => a.from < b.to && b.from < a.to;

function evidence(systemDir: string) {
  const campaign = JSON.parse(readFileSync(join(systemDir, 'campaign.json'), 'utf8'));
  const holds: Span[] = campaign.cpu_holds.map((h: { what: string; acquired_utc: string; released_utc: string; cpu: number }) =>
    span(h.what, h.acquired_utc, h.released_utc, h.cpu),
  );
  const pool: Array<Span & { cpus: number[] | null }> = campaign.schedule.pool_spans.map(
    (p: { what: string; started_utc: string; ended_utc: string; cpus: number[] | null }) => ({
      ...span(p.what, p.started_utc, p.ended_utc),
      cpus: p.cpus,
    }),
  );
  const dir = join(systemDir, 'records', 'kem-1');
  // Each trial process of each record, on the core it says it ran on.
  const processes = readdirSync(dir).flatMap((f) => {
    const rec = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    expect(rec.status, f).toBe('complete');
    return rec.processes.map((p: { meta: { cpu: string }; started_utc: string; wall_s: number }, i: number) => {
      const from = Date.parse(p.started_utc);
      return { what: `${f} #${i}`, cpu: Number(p.meta.cpu), from, to: from + p.wall_s * 1000 };
    }) as Span[];
  });
  return { campaign, holds, pool, processes };
}

/** Every pair of spans on one core that overlap in time, beyond the milliseconds the times are written in. */
function sameCoreOverlaps(spans: Span[]): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  spans.forEach((a, i) => {
    for (const b of spans.slice(i + 1)) if (a.cpu === b.cpu && a.from < b.to - 2 && b.from < a.to - 2) found.push([a.what, b.what]);
  });
  return found;
}

/** Runs `body` when this process may use two CPUs or more (else says why it skips), with a private folder of core locks. */
async function onTwoCores(cpus: readonly number[], body: () => Promise<void>): Promise<void> {
  if (cpus.length < 2) {
    console.warn('skipped: this process may use only one CPU');
    return;
  }
  vi.stubEnv('NGCC_PERF_CPU_LOCK_DIR', join(tempDir(), 'locks'));
  try {
    await body();
  } finally {
    vi.unstubAllEnvs();
  }
}

describe('the scheduler', () => {
  const cpus = allowedCpus() ?? [];

  it('stops with the error of the bookkeeping after an instance’s last stage, as with a failed stage', async () => {
    const steps = [{ name: 'prepare' }, { name: 'measure', core: 'timing' }] as PhaseStep[];
    const units = ['a', 'b'].map((key) => ({ unit: { key } }) as unknown as InstanceContext);
    const run = runSchedule(units, stagesOf(steps), {
      workers: 1,
      cores: 1,
      serial: false,
      onCore: (_ctx, _stage, _cpu, work) => work(),
      runStep: async () => {},
      onUnitDone: () => {
        throw new Error('ENOSPC: no space left on device');
      },
    });
    await expect(run).rejects.toThrow('ENOSPC');
  });

  it('confines the processes of a withCpus scope to its cores, through the sandbox, and only those', () =>
    onTwoCores(cpus, async () => {
      const status = ['sh', '-c', 'grep Cpus_allowed_list /proc/self/status'];
      const sandbox = { mode: 'bwrap' as const, readOnly: [], writable: [] };
      const inside = await withCpus([cpus[0]!], () => runProcess(status, { timeoutMs: 10_000, sandbox }));
      expect(inside.stdout.trim()).toBe(`Cpus_allowed_list:\t${cpus[0]}`);
      expect(inside.cpus).toEqual([cpus[0]]);
      const outside = await runProcess(status, { timeoutMs: 10_000 });
      expect(outside.stdout).not.toBe(inside.stdout);
      expect(outside.cpus).toBeUndefined();
    }));

  it('builds beside timing: the pool works on the other cores while instances are timed, one at a time, on the timing core', () =>
    onTwoCores(cpus, async () => {
      const timing = cpus.at(-1)!;
      const others = cpus.filter((c) => c !== timing);
      const root = goodKemCampaign(['a', 'b', 'c', 'd'], PLANNING);
      const data = tempDir();
      // More workers asked than CPUs beside timing: one per CPU, or a second would build beside profile rounds.
      const jobs = others.length + 2;
      const r = await runCli(['run', root, '--system', 's', '--out', data, '--cpu', String(timing), '--jobs', String(jobs)]);
      expect(r.code, r.err.join('\n')).toBe(0);
      const { campaign, holds, pool, processes } = evidence(join(data, 's'));
      expect(campaign.schedule.pool_cpus).toEqual(others);
      expect(campaign.schedule.workers).toBe(others.length);
      expect(r.progress).toContain(`--jobs ${jobs}: ${others.length} CPU(s) beside timing, so ${others.length} worker(s)`);
      // Every instance was prepared on the pool, confined to the cores the run does not time on.
      expect(pool.map((p) => p.what).sort()).toEqual(['a', 'b', 'c', 'd'].map((l) => `kem-1/${l} prepare,stale,unseen,profile-build`));
      for (const p of pool) expect(others).toEqual(expect.arrayContaining(p.cpus!));
      // All timing on the timing core, one hold at a time, and no two trial processes at once.
      const measured = holds.filter((h) => h.what.endsWith(' measure'));
      expect(measured).toHaveLength(4);
      for (const h of measured) expect(h.cpu).toBe(timing);
      for (const p of processes) expect(p.cpu).toBe(timing);
      expect(sameCoreOverlaps(holds)).toEqual([]);
      expect(sameCoreOverlaps(processes)).toEqual([]);
      // Builds ran beside timing: some instance's preparation overlapped another's timing.
      const instanceOf = (what: string) => what.split(' ')[0]!;
      const beside = pool.filter((p) => measured.some((h) => instanceOf(h.what) !== instanceOf(p.what) && overlap(p, h)));
      expect(beside.length).toBeGreaterThan(0);
      // The profile rounds held a pool core, and no preparation ran on that core meanwhile.
      const profiled = holds.filter((h) => h.what.endsWith(' profile'));
      expect(profiled).toHaveLength(4);
      for (const h of profiled) {
        expect(others).toContain(h.cpu);
        expect(pool.filter((p) => p.cpus?.includes(h.cpu!) && overlap(p, h)).map((p) => p.what)).toEqual([]);
      }
      // The plan came first, and the predicted-against-actual lines last.
      expect(r.progress).toMatch(/plan: 4 instance\(s\); preparation on \d+ worker\(s\) beside 1 timing core\(s\)/);
      expect(r.progress).toMatch(/predicted → actual:[\s\S]*wall time/);
    }));

  it('a run that times nothing builds on its timing core too, holding that core’s lock while it does', () =>
    onTwoCores(cpus, async () => {
      const timing = cpus.at(-1)!;
      const others = cpus.filter((c) => c !== timing);
      const labels = ['a', 'b', 'c', 'd', 'e', 'f'];
      const root = goodKemCampaign(labels, PLANNING);
      const data = tempDir();
      const r = await runCli(['run', root, '--system', 's', '--out', data, '--cpu', String(timing), '--phases', 'build,kat']);
      expect(r.code, r.err.join('\n')).toBe(0);
      const campaign = JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8'));
      expect(campaign.schedule.pool_cpus).toEqual([...others, timing]);
      expect(campaign.schedule.workers).toBe(cpus.length);
      expect(r.progress).toContain(`nothing is timed: CPU ${timing} (timing) builds too, holding its lock while it does`);
      const holds: Span[] = campaign.cpu_holds.map((h: { what: string; acquired_utc: string; released_utc: string; cpu: number }) =>
        span(h.what, h.acquired_utc, h.released_utc, h.cpu),
      );
      const pool: Array<Span & { cpus: number[] }> = campaign.schedule.pool_spans.map(
        (p: { what: string; started_utc: string; ended_utc: string; cpus: number[] }) => ({
          ...span(p.what, p.started_utc, p.ended_utc),
          cpus: p.cpus,
        }),
      );
      // Every instance prepared once: on a core beside timing (a pool span) or on the timing core under its lock.
      const prepared = [...pool.map((p) => p.what), ...holds.map((h) => h.what)];
      expect(prepared.sort()).toEqual(labels.map((l) => `kem-1/${l} prepare,stale,unseen`));
      for (const p of pool) expect(others).toEqual(expect.arrayContaining(p.cpus));
      const lent = holds;
      expect(lent.length).toBeGreaterThan(0);
      for (const h of lent) expect(h.cpu).toBe(timing);
      expect(sameCoreOverlaps(holds)).toEqual([]);
      // The two cores worked at once.
      expect(pool.some((p) => lent.some((h) => overlap(p, h)))).toBe(true);
      // Each KAT passed, wherever it ran.
      const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8'));
      for (const l of labels) expect(build.instances[`kem-1/${l}`].kat, l).toBe('PASS');
    }));

  it('with two timing cores, two instances time at once but never two on one core', () =>
    onTwoCores(cpus, async () => {
      const two = cpus.slice(-2);
      const root = goodKemCampaign(['a', 'b', 'c', 'd'], `${PLANNING}systems:\n  s:\n    cpus: [${two.join(', ')}]\n`);
      const data = tempDir();
      const r = await runCli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
      expect(r.code, r.err.join('\n')).toBe(0);
      const { holds, processes } = evidence(join(data, 's'));
      const measured = holds.filter((h) => h.what.endsWith(' measure'));
      expect(measured).toHaveLength(4);
      expect(sameCoreOverlaps(holds)).toEqual([]);
      expect(sameCoreOverlaps(processes)).toEqual([]);
      // Each trial on the core its instance held, within that hold.
      for (const p of processes) {
        const hold = measured.find((h) => h.what === `kem-1/${p.what.split('__')[0]} measure`)!;
        expect(hold.cpu, p.what).toBe(p.cpu);
        expect(p.from >= hold.from - 5 && p.to <= hold.to + 5, p.what).toBe(true);
      }
      expect(new Set(measured.map((h) => h.cpu))).toEqual(new Set(two));
      // And the two cores were busy at the same time.
      expect(measured.some((a) => measured.some((b) => a.cpu !== b.cpu && overlap(a, b)))).toBe(true);
    }));
});

// The forecast's plan (src/campaign/forecast.ts; its arithmetic is test/forecast.test.ts's) from a real
// run's step seconds: it builds, runs the KAT and profiles, so it is here, in a serial file.
describe('the plan of a run from the previous run', () => {
  it('plans a forced rerun of unchanged sources without the compiles it finds on disk; an unchanged run keeps its evidence', async () => {
    const campaign = goodKemCampaign(['a'], 'planning:\n  trials: 3\n  trial_target_s: 0.01\nprofile:\n  target_s: 0.02\n  rounds: 2\n');
    const data = tempDir();
    const run = (...extra: string[]) =>
      runCli(['run', campaign, '--system', 's', '--out', data, '--phases', 'build,kat,profile', ...extra]);
    const planLine = (progress: string, step: string) =>
      progress.split('\n').find((l) => new RegExp(` {2}${step} +\\S`).test(l) && !l.includes('→'));
    const shown = (s: number) => formatSeconds(s).replace('.', '\\.');
    expect((await run()).code).toBe(0);
    const seconds = () =>
      (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/a']!.step_seconds!;
    const first = seconds();
    // The KAT is part of the preparation, the wrapped relink part of the profile's preparation.
    expect(first[KAT_SECONDS]).toBeGreaterThan(0);
    expect(first[KAT_SECONDS]).toBeLessThanOrEqual(first.prepare!);
    expect(first[RELINK_SECONDS]).toBeGreaterThan(0);
    expect(first[RELINK_SECONDS]).toBeLessThanOrEqual(first['profile-build']!);
    // --force finds the library and the relink on disk: the KAT again, and the survey without the relink.
    const forced = await run('--force');
    expect(forced.code).toBe(0);
    expect(planLine(forced.progress, 'prepare')).toMatch(new RegExp(` ${shown(first[KAT_SECONDS]!)} +\\(1 previous run\\)`));
    const rest = Math.max(0, first['profile-build']! - first[RELINK_SECONDS]!);
    expect(planLine(forced.progress, 'profile-build')).toMatch(new RegExp(` ${shown(rest)} +\\(1 previous run\\)`));
    // Without --force, the unchanged instance keeps its evidence.
    expect(planLine((await run()).progress, 'prepare')).toMatch(/\(1 kept if unchanged\)/);
  });
});
