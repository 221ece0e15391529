import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { InstanceContext, PhaseStep, RunContext } from '../src/campaign/context.js';
import { KAT_SECONDS } from '../src/campaign/prepare.js';
import { RELINK_SECONDS } from '../src/campaign/profilePhase.js';
import { runSchedule, type ScheduleOptions, stagesOf } from '../src/campaign/schedule.js';
import { measuredSideBySide } from '../src/campaign/sideBySide.js';
import { CoreBusy, coreHolder, lockCore } from '../src/env/cpuLock.js';
import type { OperationRequest } from '../src/measure/operation.js';
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
      const every: Span[] = campaign.cpu_holds.map((h: { what: string; acquired_utc: string; released_utc: string; cpu: number }) =>
        span(h.what, h.acquired_utc, h.released_utc, h.cpu),
      );
      // A KAT that borrowed the other core for its pieces (src/campaign/prepare.ts) held its lock: never
      // while a stage held it. (Whether one could borrow depends on what the other worker was doing.)
      const borrowed = every.filter((h) => h.what.endsWith(' kat'));
      expect(sameCoreOverlaps(every)).toEqual([]);
      const holds = every.filter((h) => !borrowed.includes(h));
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

// Side-by-side timing (ngcc-perf.yml `side_by_side`): one instance's operations on several timing
// cores at once. The scheduler's own code with real host-wide locks in a private folder; each part
// only notes where it ran, so nothing here is timed.
describe('side-by-side timing in the scheduler', () => {
  interface PartSpan {
    what: string;
    cpu: number;
    from: number;
    to: number;
    /** The lock file's holder of the part's core, read when the part started and when it ended. */
    holders: Array<string | undefined>;
  }

  const pinnedTo = (cpu: number) => ({ plan: { cpu } }) as unknown as RunContext;
  const unitsOf = (keys: string[]) =>
    keys.map((key) => ({ unit: { key }, run: pinnedTo(-1), summary: { key, operations: [] } }) as unknown as InstanceContext);

  /** The run's hooks with real core locks in `dir`: a stage waits for any of `cpus`, a spare core is taken only when free now. */
  function lockHooks(dir: string, cpus: number[]): Pick<ScheduleOptions, 'onCore' | 'spareCore'> {
    return {
      onCore: async (ctx, stage, cpu, work) => {
        const lease = await lockCore(cpu === undefined ? cpus : [cpu], { what: `${ctx.unit.key} ${stage.steps[0]!.name}`, dir });
        const unpinned = ctx.run;
        ctx.run = pinnedTo(lease.cpu);
        try {
          await work();
        } finally {
          ctx.run = unpinned;
          lease.release();
        }
      },
      spareCore: async (ctx, stage) => {
        try {
          const lease = await lockCore(cpus, { what: `${ctx.unit.key} ${stage.steps[0]!.name}`, dir, noWait: true });
          return { run: pinnedTo(lease.cpu), release: () => lease.release() };
        } catch (e) {
          if (e instanceof CoreBusy) return undefined;
          throw e;
        }
      },
    };
  }

  /**
   * A timing step whose parts are `parts`: each notes its core and that core's lock holder. With
   * `together`, the first `together` parts wait until all of them are under way (`met`): a part run
   * after another would wait forever, so the step fails unless they run at once.
   */
  function partsStep(
    dir: string,
    parts: string[],
    spans: PartSpan[],
    bundles: string[][],
    together = 0,
  ): PhaseStep & { met: Promise<void> } {
    let started = 0;
    let allStarted: () => void = () => {};
    const all = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const meet = async () => {
      if (++started === together) allStarted();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`only ${started} of ${together} parts under way at once`)), 10_000);
      });
      await Promise.race([all, late]).finally(() => clearTimeout(timer));
    };
    const runBundle = async (ctx: InstanceContext, bundle: string[], pinned: RunContext) => {
      bundles.push(bundle);
      for (const part of bundle) {
        const cpu = pinned.plan.cpu;
        const from = performance.now();
        const first = coreHolder(cpu, dir)?.what;
        if (started < together) await meet();
        await new Promise((r) => setTimeout(r, 20));
        spans.push({ what: `${ctx.unit.key} ${part}`, cpu, from, to: performance.now(), holders: [first, coreHolder(cpu, dir)?.what] });
      }
    };
    return {
      name: 'measure',
      core: 'timing',
      ticks: () => 0,
      run: async (ctx) => {
        if (ctx.sideBySide) await ctx.sideBySide(parts, (bundle, pinned) => runBundle(ctx, bundle, pinned));
        else await runBundle(ctx, parts, ctx.run);
      },
      met: all,
    };
  }

  const options = (hooks: Pick<ScheduleOptions, 'onCore' | 'spareCore'>, cores: number, sideBySide: boolean): ScheduleOptions => ({
    workers: 1,
    cores,
    serial: false,
    sideBySide,
    ...hooks,
    runStep: async (ctx, step) => void (await step.run(ctx)),
  });

  const freeLocks = (dir: string, cpus: number[]) => expect(cpus.map((c) => coreHolder(c, dir))).toEqual(cpus.map(() => undefined));

  it('times an instance’s operations at once, each on a timing core of its own, holding that core’s lock', async () => {
    const dir = join(tempDir(), 'locks');
    const cpus = [0, 1, 2];
    const spans: PartSpan[] = [];
    const bundles: string[][] = [];
    const step = partsStep(dir, ['keygen', 'enc', 'dec'], spans, bundles, 3);
    await runSchedule(unitsOf(['kem-1/a']), stagesOf([step]), options(lockHooks(dir, cpus), cpus.length, true));
    expect(spans.map((p) => p.what).sort()).toEqual(['kem-1/a dec', 'kem-1/a enc', 'kem-1/a keygen']);
    // Three cores, one part on each, every one held by the instance's measure while its part ran.
    expect(new Set(spans.map((p) => p.cpu))).toEqual(new Set(cpus));
    for (const p of spans) expect(p.holders, p.what).toEqual(['kem-1/a measure', 'kem-1/a measure']);
    expect(bundles).toHaveLength(3);
    expect(sameCoreOverlaps(spans)).toEqual([]);
    freeLocks(dir, cpus);
  });

  it('deals the parts over the free cores, and runs them one after another when the other cores are held', async () => {
    const dir = join(tempDir(), 'locks');
    const cpus = [0, 1];
    // Two cores for three parts: two bundles at once, a core each.
    const dealt: string[][] = [];
    const spans: PartSpan[] = [];
    await runSchedule(
      unitsOf(['kem-1/a']),
      stagesOf([partsStep(dir, ['keygen', 'enc', 'dec'], spans, dealt, 2)]),
      options(lockHooks(dir, cpus), 2, true),
    );
    expect(dealt.map((b) => b.join(',')).sort()).toEqual(['enc', 'keygen,dec']);
    expect(new Set(spans.map((p) => p.cpu))).toEqual(new Set(cpus));
    // Another process holds CPU 1: the stage takes CPU 0 and does not wait for 1; all parts run there.
    mkdirSync(dir, { recursive: true });
    const other = spawn('flock', [join(dir, 'cpu1.lock'), 'sleep', '60'], { stdio: 'ignore' });
    try {
      // Until flock(1) has the lock: a lock taken here instead is given straight back.
      for (;;) {
        const free = await lockCore([1], { what: 'probe', dir, noWait: true }).catch((e) => {
          if (e instanceof CoreBusy) return undefined;
          throw e;
        });
        if (!free) break;
        free.release();
        await new Promise((r) => setTimeout(r, 20));
      }
      const alone: string[][] = [];
      const onOne: PartSpan[] = [];
      await runSchedule(
        unitsOf(['kem-1/b']),
        stagesOf([partsStep(dir, ['keygen', 'enc', 'dec'], onOne, alone)]),
        options(lockHooks(dir, cpus), 2, true),
      );
      expect(alone).toEqual([['keygen', 'enc', 'dec']]);
      expect(onOne.map((p) => p.cpu)).toEqual([0, 0, 0]);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('never puts two timed things on one core: another instance waits for the core a part gives back', async () => {
    const dir = join(tempDir(), 'locks');
    const cpus = [0, 1];
    const spans: PartSpan[] = [];
    const bundles: string[][] = [];
    const measure = partsStep(dir, ['keygen', 'enc', 'dec'], spans, bundles, 2);
    // b is ready to be timed only once a's parts are under way on both cores.
    const prepare = {
      name: 'prepare',
      ticks: () => 0,
      run: async (ctx) => void (ctx.unit.key === 'kem-1/b' && (await measure.met)),
    } as PhaseStep;
    await runSchedule(unitsOf(['kem-1/a', 'kem-1/b']), stagesOf([prepare, measure]), options(lockHooks(dir, cpus), 2, true));
    expect(spans).toHaveLength(6);
    expect(sameCoreOverlaps(spans)).toEqual([]);
    // Each part under the lock of its own instance's stage.
    for (const p of spans) expect(p.holders, p.what).toEqual([`${p.what.split(' ')[0]} measure`, `${p.what.split(' ')[0]} measure`]);
    const of = (key: string) => spans.filter((p) => p.what.startsWith(`${key} `));
    // a's parts on both cores at once; b, finding no core free beside its own, on one.
    expect(new Set(of('kem-1/a').map((p) => p.cpu))).toEqual(new Set(cpus));
    expect(new Set(of('kem-1/b').map((p) => p.cpu)).size).toBe(1);
    expect(bundles.map((b) => b.join(','))).toEqual(expect.arrayContaining(['keygen,dec', 'enc', 'keygen,enc,dec']));
    // b began on a core only after a's part there had ended.
    const bFirst = Math.min(...of('kem-1/b').map((p) => p.from));
    const bCpu = of('kem-1/b')[0]!.cpu;
    for (const p of of('kem-1/a').filter((x) => x.cpu === bCpu)) expect(p.to).toBeLessThanOrEqual(bFirst);
    freeLocks(dir, cpus);
  });

  it('off, or for a stage that is not timing, offers no cores beside the stage’s own', async () => {
    const dir = join(tempDir(), 'locks');
    const cpus = [0, 1, 2];
    const offered: Array<[string, boolean]> = [];
    const noting = (name: string, core?: 'timing' | 'exclusive') =>
      ({ name, core, ticks: () => 0, run: async (ctx) => void offered.push([name, ctx.sideBySide !== undefined]) }) as PhaseStep;
    const steps = [noting('prepare'), noting('measure', 'timing'), noting('profile', 'exclusive')];
    await runSchedule(unitsOf(['kem-1/a']), stagesOf(steps), options(lockHooks(dir, cpus), 3, false));
    expect(offered).toEqual([
      ['prepare', false],
      ['measure', false],
      ['profile', false],
    ]);
    offered.length = 0;
    await runSchedule(unitsOf(['kem-1/a']), stagesOf(steps), options(lockHooks(dir, cpus), 3, true));
    expect(offered).toEqual([
      ['prepare', false],
      ['measure', true],
      ['profile', false],
    ]);
    // Off, one bundle of every part on the stage's one core, as the measure step has always done.
    const bundles: string[][] = [];
    const spans: PartSpan[] = [];
    await runSchedule(
      unitsOf(['kem-1/b']),
      stagesOf([partsStep(dir, ['keygen', 'enc', 'dec'], spans, bundles)]),
      options(lockHooks(dir, cpus), 3, false),
    );
    expect(bundles).toEqual([['keygen', 'enc', 'dec']]);
    expect(new Set(spans.map((p) => p.cpu)).size).toBe(1);
  });

  it('a run with side_by_side times one instance’s operations on both timing cores, each record on the core it ran on', () =>
    onTwoCores(allowedCpus() ?? [], async () => {
      const two = (allowedCpus() ?? []).slice(-2);
      const root = goodKemCampaign(['a'], `${PLANNING}systems:\n  s:\n    cpus: [${two.join(', ')}]\n    side_by_side: true\n`);
      const data = tempDir();
      const r = await runCli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
      expect(r.code, r.err.join('\n')).toBe(0);
      const { campaign, holds, processes } = evidence(join(data, 's'));
      expect(campaign.schedule.side_by_side).toBe(true);
      // The measure step held both cores at once, and no core ran two trial processes at once.
      const measured = holds.filter((h) => h.what === 'kem-1/a measure');
      expect(new Set(measured.map((h) => h.cpu))).toEqual(new Set(two));
      expect(measured.some((x) => measured.some((y) => x.cpu !== y.cpu && overlap(x, y)))).toBe(true);
      expect(sameCoreOverlaps(holds)).toEqual([]);
      expect(sameCoreOverlaps(processes)).toEqual([]);
      // Each operation on one core, within a hold of it, and its record says that core.
      const dir = join(data, 's', 'records', 'kem-1');
      const cores = new Set<number>();
      for (const f of readdirSync(dir)) {
        const rec = JSON.parse(readFileSync(join(dir, f), 'utf8'));
        const mine = processes.filter((p) => p.what.startsWith(`${f} #`));
        const cpu = mine[0]!.cpu!;
        cores.add(cpu);
        for (const p of mine) {
          expect(p.cpu, p.what).toBe(cpu);
          expect(
            measured.some((h) => h.cpu === cpu && p.from >= h.from - 5 && p.to <= h.to + 5),
            p.what,
          ).toBe(true);
        }
        expect(rec.environment.cpu_number, f).toBe(cpu);
      }
      expect(cores).toEqual(new Set(two));
    }));

  it('keeps a key exchange’s operations together, moves the others’ requests to their core, and keeps the rows’ order', async () => {
    const request = (operation: string) => ({ operation, cpu: 7, counterHz: 1 }) as unknown as OperationRequest;
    const pinned = (cpu: number) => ({ plan: { cpu }, counterRate: async () => 1000 + cpu }) as unknown as RunContext;
    const measured: Array<{ ops: string[]; cpus: number[]; hz: Array<number | undefined> }> = [];
    const ctxOf = (key: string) => {
      const ctx = unitsOf([key])[0]!;
      ctx.run = pinned(7);
      let core = 0;
      ctx.sideBySide = async (parts, work) => {
        // Every part a core of its own, the last first: rows then come in out of order.
        await Promise.all([...parts].reverse().map((p) => work([p], pinned(core++))));
      };
      return ctx;
    };
    const measure = (ctx: InstanceContext) => async (reqs: OperationRequest[], run: RunContext) => {
      measured.push({ ops: reqs.map((r) => r.operation), cpus: reqs.map((r) => r.cpu), hz: reqs.map((r) => r.counterHz) });
      for (const r of reqs) ctx.summary.operations.push({ operation: r.operation, status: 'complete', skipped: false });
      expect(reqs.every((r) => r.cpu === run.plan.cpu)).toBe(true);
    };
    const kem = ctxOf('kem-1/a');
    await measuredSideBySide(kem, 'kem', ['keygen', 'enc', 'dec'].map(request), measure(kem));
    expect(measured.map((m) => m.ops.join(',')).sort()).toEqual(['dec', 'enc', 'keygen']);
    expect(measured.flatMap((m) => m.cpus).sort()).toEqual([0, 1, 2]);
    expect(measured.flatMap((m) => m.hz).sort()).toEqual([1000, 1001, 1002]);
    expect(kem.summary.operations.map((r) => r.operation)).toEqual(['keygen', 'enc', 'dec']);
    measured.length = 0;
    const kex = ctxOf('kex-1/a');
    await measuredSideBySide(kex, 'kex', ['exchange', 'init_a', 'init_b', 'derive_a', 'derive_b'].map(request), measure(kex));
    expect(measured).toEqual([
      { ops: ['exchange', 'init_a', 'init_b', 'derive_a', 'derive_b'], cpus: [7, 7, 7, 7, 7], hz: [1, 1, 1, 1, 1] },
    ]);
  });
});
