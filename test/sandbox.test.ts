import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { killLiveProcessGroups, liveProcessGroups, parseDriverOutput, runProcess } from '../src/sandbox/run.js';
import { harnessTools } from '../src/compile/harnessTools.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

describe('the process runner', () => {
  it('kills the whole process group on timeout', async () => {
    const dir = tempDir();
    const marker = join(dir, 'grandchild-survived');
    // The grandchild would write the marker after 2 s unless the group is killed at 0.5 s.
    const r = await runProcess(['sh', '-c', `(sleep 2; touch ${marker}) & sleep 30`], { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    await new Promise((res) => setTimeout(res, 2500));
    expect(existsSync(marker)).toBe(false);
  });

  it('caps captured output and says how much was dropped', async () => {
    const r = await runProcess(['sh', '-c', 'head -c 300000 /dev/zero | tr "\\0" x'], { timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.stdout.startsWith('x'.repeat(1000))).toBe(true);
    expect(r.stdout).toMatch(/\[… 299000 more bytes dropped\]$/);
  });

  it('never hands tokens or other secrets to a child', async () => {
    process.env.GITHUB_TOKEN = 'ghs_secret_value';
    process.env.INPUT_TOKEN = 'another_secret';
    process.env.ACTIONS_RUNTIME_TOKEN = 'runtime_secret';
    try {
      const r = await runProcess(['env'], { timeoutMs: 5000 });
      expect(r.stdout).not.toMatch(/secret/);
      expect(r.stdout).toMatch(/^PATH=/m);
    } finally {
      delete process.env.GITHUB_TOKEN;
      delete process.env.INPUT_TOKEN;
      delete process.env.ACTIONS_RUNTIME_TOKEN;
    }
  });

  it('reports signals and missing programs as data', async () => {
    const killed = await runProcess(['sh', '-c', 'kill -SEGV $$'], { timeoutMs: 5000 });
    expect(killed.signal).toBe('SIGSEGV');
    const missing = await runProcess(['/nonexistent/tool'], { timeoutMs: 5000 });
    expect(missing.exitCode).toBe(127);
  });

  it('applies an address-space limit', async () => {
    const dir = tempDir();
    const script = join(dir, 'eat.py');
    writeFileSync(script, 'x = bytearray(512 * 1024 * 1024)\nprint("allocated")\n');
    const r = await runProcess(['python3', script], { timeoutMs: 10_000, memoryLimitBytes: 256 * 1024 * 1024 });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toMatch(/allocated/);
  });
});

/** PIDs in process group `pgid` that are not zombies, once SIGKILL has had a moment to land. */
async function runningMembers(pgid: number): Promise<number[]> {
  let alive: number[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    alive = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .flatMap((pid) => {
        try {
          // Fields after the command name's closing parenthesis: state, ppid, pgrp, …
          const [state, , pgrp] = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
          return Number(pgrp) === pgid && state !== 'Z' ? [Number(pid)] : [];
        } catch {
          return [];
        }
      });
    if (alive.length === 0) return alive;
    await new Promise((r) => setTimeout(r, 20));
  }
  return alive;
}

describe('the registry of running process groups', () => {
  it('lists a running child until it ends, and kills its group on request', async () => {
    const running = runProcess(['sh', '-c', 'sleep 60 & sleep 60'], { timeoutMs: 120_000 });
    // spawn is synchronous: the group is registered by the time runProcess returns.
    const [pgid] = liveProcessGroups();
    expect(liveProcessGroups()).toHaveLength(1);
    expect(killLiveProcessGroups()).toBe(1);
    const r = await running;
    expect(r.signal).toBe('SIGKILL');
    expect(r.timedOut).toBe(false);
    expect(liveProcessGroups()).toEqual([]);
    // The whole group went, the backgrounded sleep included. A killed orphan may linger as a zombie
    // where PID 1 does not reap (containers), so "gone" means no member that is still running.
    expect(await runningMembers(pgid!)).toEqual([]);
  });

  it('forgets a child that ended by itself', async () => {
    await runProcess(['true'], { timeoutMs: 5000 });
    expect(liveProcessGroups()).toEqual([]);
    expect(killLiveProcessGroups()).toBe(0);
  });
});

describe('driver protocol', () => {
  it('the loop drivers share one command line: usage, a zero count and an unusable CPU are USAGE (exit 2)', async () => {
    const tools = await harnessTools();
    const lib = join(repoRoot, 'no-such-library.so');
    for (const [tool, count] of [
      [tools.time, 'ITERS'],
      [tools.prof, 'OPS'],
    ] as const) {
      const missing = await runProcess([tool, lib, 'kem'], { timeoutMs: 10_000 });
      expect(missing.exitCode).toBe(2);
      expect(missing.stderr).toMatch(new RegExp(`^usage: ngcc_(time|prof) LIB TYPE OP ${count} WARMUPS`));
      const zero = await runProcess([tool, lib, 'kem', 'keygen', '0', '1'], { timeoutMs: 10_000 });
      expect([zero.exitCode, parseDriverOutput(zero.stdout).statusDetail]).toEqual([2, `${count} must be at least 1`]);
      const cpu = await runProcess([tool, lib, 'kem', 'keygen', '5', '1', '9999'], { timeoutMs: 10_000 });
      expect([cpu.exitCode, parseDriverOutput(cpu.stdout).statusDetail]).toEqual([2, 'cannot pin to cpu 9999']);
    }
  });

  it('parses META, data lines and STATUS', () => {
    const out = parseDriverOutput('META\tcounter\trdtsc\nTRIAL\t10\t0.5\t100\nSTATUS\tOVERFLOW\tct: write 1 bytes past\n');
    expect(out.meta).toEqual({ counter: 'rdtsc' });
    expect(out.lines).toEqual([['TRIAL', '10', '0.5', '100']]);
    expect(out.status).toBe('OVERFLOW');
    expect(out.statusDetail).toBe('ct: write 1 bytes past');
  });
});
