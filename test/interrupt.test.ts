import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from './helpers/tmp.js';

const kem1 = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
const iccs = join(repoRoot, 'native', 'iccs');

/**
 * The CLI as users run it, bundled from the current src/ (dist/ may be stale while src/ changes):
 * a package root named ngcc-perf whose native/ is the repository's.
 */
function bundledCli(): string {
  const root = tempDir();
  execFileSync('node', [join(repoRoot, 'scripts', 'bundle.mjs'), join(root, 'dist')], { cwd: repoRoot });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ngcc-perf', type: 'module' }));
  symlinkSync(join(repoRoot, 'native'), join(root, 'native'));
  return join(root, 'dist', 'cli.js');
}

/** The fixture whose kem_keygen spins forever, with a KAT timeout no test waits for. */
function spinningCampaign(): string {
  const root = tempDir();
  cpSync(join(kem1, 'timeout'), join(root, 'kem-1', 'timeout'), { recursive: true });
  cpSync(join(kem1, 'common'), join(root, 'kem-1', 'common'), { recursive: true });
  writeFileSync(
    join(root, 'kem-1', 'candidate.yml'),
    `id: kem-1\ntype: kem\nalgorithm: toy\ninstances:\n  - label: timeout\n    dir: timeout\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
  );
  writeFileSync(join(root, 'ngcc-perf.yml'), 'planning:\n  kat_timeout_s: 3600\n');
  return root;
}

/** Processes whose program is `program` and whose arguments mention `needle`. */
function processes(program: string, needle: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0]!.endsWith(`/${program}`) && argv.some((a) => a.includes(needle));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The scheduler state (R, S, Z, …) of a process, undefined once it is gone. */
function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

const dead = (pid: number) => {
  const s = stateOf(pid);
  // A zombie has ended; only a reaper is missing (PID 1 in a container may never reap it).
  return s === undefined || s === 'Z';
};

/** Polls `probe` until it gives a value; fails with `what` if that never happens. */
async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('a run stopped by a signal', () => {
  let cli: string;
  beforeAll(() => {
    cli = bundledCli();
  });

  it.each([
    // Ctrl-C at a terminal signals the foreground process group: the CLI's, never the drivers'.
    ['SIGINT', 'to the process group', 130],
    ['SIGTERM', 'to the process', 143],
    ['SIGHUP', 'to the process', 129],
  ] as const)('%s %s kills the spinning KAT driver, releases the lock and exits %i', async (signal, target, code) => {
    const data = tempDir();
    const child = spawn('node', [cli, 'run', spinningCampaign(), '--system', 's', '--out', data, '--phases', 'build,kat'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout!.resume();
    const exited = new Promise<{ code: number | null; signal: string | null }>((res) =>
      child.on('exit', (c, s) => res({ code: c, signal: s })),
    );
    let driver: number | undefined;
    try {
      driver = await until('the KAT driver to start', () => processes('ngcc_driver', join(data, 's', 'build'))[0]);
      expect(stateOf(driver)).toMatch(/^[RS]$/);
      process.kill(target === 'to the process group' ? -child.pid! : child.pid!, signal);
      expect(await exited).toEqual({ code, signal: null });
      // One driver, or one per piece of the KAT where the run borrowed a second core for it.
      expect(stderr.trimEnd().split('\n').pop()).toMatch(/^interrupted: stopped [1-9]\d* running process\(es\); evidence so far is kept$/);
      await until('the KAT driver to end', () => (dead(driver!) ? true : undefined));
      await until('every KAT driver to end', () => (processes('ngcc_driver', join(data, 's', 'build')).length === 0 ? true : undefined));
      expect(existsSync(join(data, 's', '.ngcc-perf.lock'))).toBe(false);
      expect(existsSync(join(data, 's', 'campaign.json'))).toBe(true);
    } finally {
      // Every piece's driver still running, should a wait above have failed.
      for (const pid of processes('ngcc_driver', join(data, 's', 'build')))
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Ended between the listing and the kill.
        }
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
  });
});

describe('the action stopped by a cancelled job', () => {
  it('kills the spinning KAT driver and says so as an error annotation, exiting 143', async () => {
    const cli = bundledCli();
    const data = tempDir();
    const work = tempDir();
    writeFileSync(join(work, 'output'), '');
    const env = {
      PATH: process.env.PATH!,
      HOME: work,
      RUNNER_TEMP: work,
      GITHUB_WORKSPACE: work,
      GITHUB_OUTPUT: join(work, 'output'),
      INPUT_MODE: 'nightly',
      INPUT_SYSTEM: 's',
      INPUT_CAMPAIGN: spinningCampaign(),
      'INPUT_DATA-DIR': data,
      'INPUT_PAGES-DIR': join(work, 'pages'),
      INPUT_PUBLISH: 'none',
      'INPUT_BUILD-CACHE': 'false',
    };
    const child = spawn('node', [join(cli, '..', 'index.js')], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.resume();
    const exited = new Promise<{ code: number | null; signal: string | null }>((res) =>
      child.on('exit', (c, s) => res({ code: c, signal: s })),
    );
    let driver: number | undefined;
    try {
      driver = await until('the KAT driver to start', () => processes('ngcc_driver', join(data, 's', 'build'))[0]);
      // What the runner sends to the step's process when a job is cancelled.
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toEqual({ code: 143, signal: null });
      // One driver, or one per piece of the KAT where the run borrowed a second core for it.
      expect(stdout).toMatch(/::error::ngcc-perf interrupted: stopped [1-9]\d* running process\(es\); evidence so far is kept/);
      await until('the KAT driver to end', () => (dead(driver!) ? true : undefined));
      await until('every KAT driver to end', () => (processes('ngcc_driver', join(data, 's', 'build')).length === 0 ? true : undefined));
      expect(existsSync(join(data, 's', '.ngcc-perf.lock'))).toBe(false);
    } finally {
      // Every piece's driver still running, should a wait above have failed.
      for (const pid of processes('ngcc_driver', join(data, 's', 'build')))
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Ended between the listing and the kill.
        }
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
  });
});
