import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { coreHolder, cpuLockFile, lockCore } from '../src/env/cpuLock.js';
import { allowedCpus, formatCpuList } from '../src/env/cpus.js';
import { runCampaign, type PhaseStep } from '../src/campaign/runCampaign.js';
import { prepare } from '../src/campaign/prepare.js';
import { isInputError } from '../src/errors.js';
import { bundledCli } from './helpers/bundle.js';
import { goodKemCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

/** The core every test pins to: the last this process may use, as a run's default is. */
const CPU = (allowedCpus() ?? [0]).at(-1)!;

/** Polls `probe` until it gives a value; fails with `what` if that never happens. */
async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) {
    try {
      // Outside holders are group leaders with a sleep beside them; the CLIs are not.
      process.kill(c.spawnargs[0] === 'flock' ? -c.pid! : c.pid!, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
});

/**
 * Another process holding a core's lock file with flock(1), as an operator reserving a core would.
 * `-o`: only flock itself holds the lock (not its sleep), so killing it frees the core.
 */
async function outsideHolder(dir: string, cpu: number): Promise<{ kill(): void }> {
  mkdirSync(dir, { recursive: true });
  const child = spawn('flock', ['-x', '-o', cpuLockFile(dir, cpu), 'sleep', '600'], { stdio: 'ignore', detached: true });
  children.push(child);
  // Held once a non-blocking flock of our own fails.
  await until('the outside holder to take the lock', () =>
    spawnSync('flock', ['-n', cpuLockFile(dir, cpu), 'true']).status === 1 ? true : undefined,
  );
  return { kill: () => process.kill(-child.pid!, 'SIGKILL') };
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((res) => (child.exitCode !== null ? res(child.exitCode) : child.on('exit', (c) => res(c))));

describe('the host-wide lock of a CPU', () => {
  it('is a flock another process sees: busy while held, free once released', async () => {
    const dir = join(tempDir(), 'locks');
    const lease = await lockCore([CPU], { dir, what: 'a test' });
    expect(lease.cpu).toBe(CPU);
    expect(spawnSync('flock', ['-n', cpuLockFile(dir, CPU), 'true']).status).toBe(1);
    expect(coreHolder(CPU, dir)).toMatchObject({ pid: process.pid, what: 'a test' });
    lease.release();
    lease.release();
    expect(spawnSync('flock', ['-n', cpuLockFile(dir, CPU), 'true']).status).toBe(0);
    expect(coreHolder(CPU, dir)).toBeUndefined();
  });

  it('waits while another process holds the core, says so, and takes it when that process is killed', async () => {
    const dir = join(tempDir(), 'locks');
    const holder = await outsideHolder(dir, CPU);
    const said: string[] = [];
    const taking = lockCore([CPU], { dir, what: 'a test', onWait: (line) => said.push(line) });
    await until('the wait to be reported', () => (said.length > 0 ? true : undefined));
    expect(said).toEqual([`waits for CPU ${CPU}, held by another process (it recorded no holder)`]);
    holder.kill();
    const lease = await taking;
    expect(lease.cpu).toBe(CPU);
    expect(lease.waited_s).toBeGreaterThan(0);
    lease.release();
  });

  it('takes a free core of a list at once while another is held, and waits for any when all are', async () => {
    const dir = join(tempDir(), 'locks');
    const five = await outsideHolder(dir, 5);
    const free = await lockCore([5, 6], { dir, what: 'first' });
    expect(free.cpu).toBe(6);
    free.release();
    const six = await outsideHolder(dir, 6);
    const said: string[] = [];
    const taking = lockCore([5, 6], { dir, what: 'second', onWait: (line) => said.push(line) });
    await until('the wait to be reported', () => (said.length > 0 ? true : undefined));
    expect(said).toEqual([
      'waits for a free CPU of 5-6: CPU 5 held by another process (it recorded no holder); CPU 6 held by another process (it recorded no holder)',
    ]);
    six.kill();
    const lease = await taking;
    expect(lease.cpu).toBe(6);
    lease.release();
    five.kill();
  });

  it('is refused, not waited for forever, when this process already holds the core', async () => {
    const dir = join(tempDir(), 'locks');
    const lease = await lockCore([CPU], { dir, what: 'a test' });
    await expect(lockCore([CPU], { dir, what: 'again' })).rejects.toThrow(`this process already holds CPU ${CPU}`);
    lease.release();
  });

  it('names the folder and the variable when the lock files cannot be used', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, '');
    const e = await lockCore([CPU], { dir: file, what: 'a test' }).catch((x: unknown) => x);
    expect(isInputError(e)).toBe(true);
    expect(String((e as Error).message)).toMatch(
      /not-a-folder: cannot create the CPU lock folder \(EEXIST\); every ngcc-perf run on this host must be able to open the CPU lock files: make .* writable for them, or set NGCC_PERF_CPU_LOCK_DIR to a folder they share$/,
    );
    // A link planted in place of a lock file is not followed (nor written through).
    const dir = tempDir();
    const target = join(tempDir(), 'victim');
    writeFileSync(target, 'keep me');
    symlinkSync(target, cpuLockFile(dir, CPU));
    await expect(lockCore([CPU], { dir, what: 'a test' })).rejects.toThrow(/cannot open the CPU lock file \(ELOOP\)/);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
  });
});

describe('a run', () => {
  const locks = () => join(tempDir(), 'locks');

  it("takes a free core of the system's cpus while another process holds the first, and records it", async () => {
    const cpus = allowedCpus() ?? [];
    if (cpus.length < 2) {
      console.warn('skipped: this process may use only one CPU');
      return;
    }
    const [held, free] = [cpus.at(-1)!, cpus.at(-2)!];
    const dir = locks();
    vi.stubEnv('NGCC_PERF_CPU_LOCK_DIR', dir);
    try {
      await outsideHolder(dir, held);
      const root = goodKemCampaign(
        ['a'],
        `planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  min_measurements: 10\n  warmups: 1\nsystems:\n  s:\n    cpus: [${held}, ${free}]\n`,
      );
      const data = tempDir();
      const r = await runCli(['run', root, '--system', 's', '--out', data]);
      expect(r.code).toBe(0);
      expect(r.progress).not.toMatch(/waits for/);
      const records = readdirSync(join(data, 's', 'records', 'kem-1')).map((f) =>
        JSON.parse(readFileSync(join(data, 's', 'records', 'kem-1', f), 'utf8')),
      );
      expect(records).toHaveLength(3);
      for (const rec of records) {
        expect(rec.status).toBe('complete');
        expect(new Set(rec.processes.map((p: { meta: { cpu: string } }) => p.meta.cpu))).toEqual(new Set([String(free)]));
        expect(rec.environment.cpu_number).toBe(free);
      }
      const campaign = JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8'));
      expect(campaign.cpus).toEqual([held, free]);
      expect(campaign.cpu_holds.map((h: { cpu: number; what: string }) => [h.cpu, h.what])).toEqual([
        [free, 'kem-1/a measure'],
        [free, 'kem-1/a profile'],
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('keeps its own threads off the timing core while it times, and gives them their mask back after', async () => {
    const cpus = allowedCpus() ?? [];
    if (cpus.length < 2) {
      console.warn('skipped: this process may use only one CPU');
      return;
    }
    const ownMasks = () =>
      readdirSync(`/proc/${process.pid}/task`).map(
        (tid) => /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${process.pid}/task/${tid}/status`, 'utf8'))![1]!,
      );
    const before = ownMasks();
    const seen: string[][] = [];
    // A timing step that only looks at this process's threads while it holds the timing core.
    const look: PhaseStep = { name: 'look', phase: 'measure', core: 'timing', ticks: () => 0, run: async () => void seen.push(ownMasks()) };
    const root = goodKemCampaign(['a'], QUICK);
    vi.stubEnv('NGCC_PERF_CPU_LOCK_DIR', locks());
    try {
      await runCampaign({ campaignDir: root, system: 's', dataDir: tempDir(), cpu: CPU, phases: new Set(['build', 'kat', 'measure']) }, [
        prepare,
        look,
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
    const beside = formatCpuList(cpus.filter((c) => c !== CPU));
    expect(seen).toHaveLength(1);
    expect(new Set(seen[0])).toEqual(new Set([beside]));
    // And the run's own check of the CPUs it may use still sees the whole mask meanwhile, and after.
    expect(ownMasks()).toEqual(before);
    expect(allowedCpus()).toEqual(cpus);
  });

  it.each([
    ['cpu: 1\n    cpus: [2]', /systems\.s\.cpus: set cpu or cpus, not both/],
    ['cpus: [1, 1]', /systems\.s\.cpus: lists a CPU twice/],
    ['cpus: []', /systems\.s\.cpus/],
    ['cpus: [99999]', /ngcc-perf\.yml: systems\.s\.cpus\[0\]: CPU 99999 is not one this process may run on/],
  ])('refuses `%s` in ngcc-perf.yml, naming the field', async (line, message) => {
    const root = goodKemCampaign(['a'], `systems:\n  s:\n    ${line}\n`);
    const data = tempDir();
    const r = await runCli(['run', root, '--system', 's', '--out', data]);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(message);
    expect(existsSync(join(data, 's'))).toBe(false);
  });
});

interface Interval {
  shard: string;
  what: string;
  cpu: number;
  from: number;
  to: number;
}

/** Every timing record of an evidence folder as [started_utc, ended_utc] on the one core its processes name. */
function recordIntervals(systemDir: string, shard: string): Interval[] {
  const dir = join(systemDir, 'records', 'kem-1');
  return readdirSync(dir).map((f) => {
    const rec = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const cores = [...new Set(rec.processes.map((p: { meta: { cpu: string } }) => Number(p.meta.cpu)))] as number[];
    expect(cores).toHaveLength(1);
    expect(rec.status).toBe('complete');
    return { shard, what: f, cpu: cores[0]!, from: Date.parse(rec.started_utc), to: Date.parse(rec.ended_utc) };
  });
}

/** campaign.json's holds of the core locks. */
function holdIntervals(systemDir: string, shard: string): Interval[] {
  const campaign = JSON.parse(readFileSync(join(systemDir, 'campaign.json'), 'utf8'));
  return campaign.cpu_holds.map((h: { cpu: number; what: string; acquired_utc: string; released_utc: string }) => ({
    shard,
    what: h.what,
    cpu: h.cpu,
    from: Date.parse(h.acquired_utc),
    to: Date.parse(h.released_utc),
  }));
}

/** Pairs of intervals of different shards on one core that overlap in time. */
function overlaps(intervals: Interval[]): Array<[Interval, Interval]> {
  const found: Array<[Interval, Interval]> = [];
  for (const a of intervals)
    for (const b of intervals) if (a.shard < b.shard && a.cpu === b.cpu && a.from < b.to && b.from < a.to) found.push([a, b]);
  return found;
}

function started(cli: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string } {
  const child = spawn('node', [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout!.resume();
  return { child, stderr: () => stderr };
}

describe('two CLI processes on one host', () => {
  let cli: string;
  beforeAll(() => {
    cli = bundledCli();
  });

  it('two shards started together with the same --cpu never time on it at the same time', async () => {
    const dir = join(tempDir(), 'locks');
    const env = { ...process.env, NGCC_PERF_CPU_LOCK_DIR: dir };
    const root = goodKemCampaign(
      ['a', 'b', 'c', 'd'],
      'planning:\n  trials: 3\n  trial_target_s: 0.05\n  op_budget_s: 2\n  min_measurements: 10\n  warmups: 1\n',
    );
    const out = [tempDir(), tempDir()];
    // The test holds the core first, so that both shards are surely waiting for it at once.
    const gate = await lockCore([CPU], { dir, what: 'the test' });
    const shards = [1, 2].map((k) =>
      started(cli, ['run', root, '--system', 's', '--out', out[k - 1]!, '--shard', `${k}/2`, '--cpu', String(CPU)], env),
    );
    for (const s of shards)
      await until('both shards to say they wait', () =>
        s.stderr().includes(`waits for CPU ${CPU}, held by the test, pid ${process.pid} since ${gate.acquired_utc}`) ? true : undefined,
      );
    gate.release();
    const codes = await Promise.all(shards.map((s) => exitOf(s.child)));
    expect(codes, shards.map((s) => s.stderr()).join('\n---\n')).toEqual([0, 0]);

    const records = out.flatMap((o, i) => recordIntervals(join(o, 's'), String(i + 1)));
    // Shard 1 has a and c, shard 2 b and d: three operations each.
    expect(records).toHaveLength(12);
    expect(new Set(records.map((r) => r.cpu))).toEqual(new Set([CPU]));
    expect(overlaps(records)).toEqual([]);
    // The profile rounds hold a core too (a pool core where there is one), and each record lies
    // inside a measure hold of its own shard.
    const holds = out.flatMap((o, i) => holdIntervals(join(o, 's'), String(i + 1)));
    expect(holds.map((h) => h.what).sort()).toEqual([...['a', 'b', 'c', 'd'].flatMap((l) => [`kem-1/${l} measure`, `kem-1/${l} profile`])]);
    expect(overlaps(holds)).toEqual([]);
    for (const r of records) {
      const label = r.what.split('__')[0];
      const hold = holds.find((h) => h.shard === r.shard && h.what === `kem-1/${label} measure`)!;
      expect(hold.from).toBeLessThanOrEqual(r.from);
      expect(r.to).toBeLessThanOrEqual(hold.to);
    }
  });

  it('a broken candidate.yml is said before the run waits for the core; a build,kat run does not wait for it at all', async () => {
    const dir = join(tempDir(), 'locks');
    const env = { ...process.env, NGCC_PERF_CPU_LOCK_DIR: dir };
    const root = goodKemCampaign(['a'], 'planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  warmups: 1\n');
    mkdirSync(join(root, 'kem-9'));
    writeFileSync(join(root, 'kem-9', 'candidate.yml'), 'id: kem-9\ntype: kem\nalgorithm: x\nnist_prefx: X\ninstances: []\n');
    const gate = await lockCore([CPU], { dir, what: 'the test' });
    try {
      // Everything: the INVALID line comes while the run still waits for the core the test holds.
      const all = started(cli, ['run', root, '--system', 's', '--out', tempDir(), '--cpu', String(CPU)], env);
      const said = await until('the INVALID line', () =>
        /kem-9 INVALID \(not built\): .*nist_prefx/.test(all.stderr()) ? all.stderr() : undefined,
      );
      await until('the run to say it waits for the core', () => (all.stderr().includes(`waits for CPU ${CPU}`) ? true : undefined));
      expect(all.child.exitCode).toBeNull();
      expect(said.indexOf('INVALID')).toBeLessThan(all.stderr().indexOf(`waits for CPU ${CPU}`));
      all.child.kill('SIGKILL');
      // Build and KAT only: nothing is timed, so it finishes while the core is still held.
      const data = tempDir();
      const kat = started(cli, ['run', root, '--system', 's', '--out', data, '--cpu', String(CPU), '--phases', 'build,kat'], env);
      expect(await exitOf(kat.child), kat.stderr()).toBe(1);
      expect(kat.stderr()).not.toContain(`waits for CPU ${CPU}`);
      expect(JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')).instances['kem-1/a'].kat).toBe('PASS');
      expect(JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')).cpu_holds).toEqual([]);
    } finally {
      gate.release();
    }
  });

  it('a run with nothing left to time (everything kept, or every candidate INVALID) exits without waiting for a held core', async () => {
    const dir = join(tempDir(), 'locks');
    const env = { ...process.env, NGCC_PERF_CPU_LOCK_DIR: dir };
    const root = goodKemCampaign(['a'], 'planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  warmups: 1\n');
    const data = tempDir();
    const args = ['run', root, '--system', 's', '--out', data, '--cpu', String(CPU)];
    const first = started(cli, args, env);
    expect(await exitOf(first.child), first.stderr()).toBe(0);
    const gate = await lockCore([CPU], { dir, what: 'the test' });
    try {
      // The core is held for the whole second run: it keeps everything, so it must end without it.
      const again = started(cli, args, env);
      expect(await exitOf(again.child), again.stderr()).toBe(0);
      expect(again.stderr()).not.toContain('waits for');
      expect(again.stderr()).toMatch(/kem-1\/a keygen: unchanged, kept/);
      expect(JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')).cpu_holds).toEqual([]);
      // A campaign whose only candidate is INVALID builds nothing and times nothing.
      const broken = goodKemCampaign(['a'], 'planning:\n  trials: 2\n');
      writeFileSync(join(broken, 'kem-1', 'candidate.yml'), 'id: kem-1\ntype: kem\nalgorithm: x\nnist_prefx: X\ninstances: []\n');
      const invalid = started(cli, ['run', broken, '--system', 's', '--out', tempDir(), '--cpu', String(CPU)], env);
      expect(await exitOf(invalid.child), invalid.stderr()).toBe(1);
      expect(invalid.stderr()).toMatch(/kem-1 INVALID \(not built\): .*nist_prefx/);
      expect(invalid.stderr()).not.toContain('waits for');
    } finally {
      gate.release();
    }
  });

  it('a holder killed with SIGKILL frees the core for the run that waits for it', async () => {
    const dir = join(tempDir(), 'locks');
    const env = { ...process.env, NGCC_PERF_CPU_LOCK_DIR: dir };
    // Long trials: the first run holds the core for a good while.
    const root = goodKemCampaign(['a'], 'planning:\n  trials: 5\n  trial_target_s: 1\n  op_budget_s: 30\n  warmups: 1\n');
    const first = started(cli, ['run', root, '--system', 's', '--out', tempDir(), '--cpu', String(CPU)], env);
    await until('the first run to hold the core for its measurement', () =>
      coreHolder(CPU, dir)?.what.startsWith('kem-1/a measure — ') ? true : undefined,
    );
    expect(coreHolder(CPU, dir)?.pid).toBe(first.child.pid);
    const secondOut = tempDir();
    const second = started(
      cli,
      ['run', root, '--system', 's', '--out', secondOut, '--cpu', String(CPU), '--trial-target', '0.02', '--op-budget', '1'],
      env,
    );
    await until('the second run to say it waits', () =>
      second.stderr().includes(`waits for CPU ${CPU}, held by kem-1/a measure — ngcc-perf, system s into `) ? true : undefined,
    );
    // What holds the core comes first, who and since when last: a narrow terminal cuts the end.
    expect(second.stderr()).toMatch(
      new RegExp(`held by kem-1/a measure — ngcc-perf, system s into [^\\n]*, pid ${first.child.pid} since `),
    );
    const killed = Date.now();
    first.child.kill('SIGKILL');
    expect(await exitOf(second.child), second.stderr()).toBe(0);
    expect(second.stderr()).toMatch(new RegExp(`has CPU ${CPU} after waiting`));
    // The wait is its own line of the run's end, and the forecast is held to the wall time without it.
    expect(second.stderr()).toMatch(
      /wall time +\S+ [µm]?s → +\S+ [µm]?s \(\d+\.\d\d×\), waits apart\n.*waits for a core +\S+ [µm]?s \(1 wait: another process held the core; not forecast\)\n.*in all +\S+/,
    );
    const forecast = JSON.parse(readFileSync(join(secondOut, 's', 'campaign.json'), 'utf8')).forecast;
    expect(forecast.waits).toBe(1);
    // It waited at least from its wait line to the kill, with nothing of its own under way.
    expect(forecast.waited_s).toBeGreaterThan(0);
    const records = recordIntervals(join(secondOut, 's'), '2');
    expect(records).toHaveLength(3);
    for (const r of records) expect(r.from).toBeGreaterThanOrEqual(killed);
  });
});
