import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  decodeChannel,
  killLiveProcessGroups,
  liveProcessGroups,
  parseDriverOutput,
  runDriver,
  runProcess,
} from '../src/sandbox/runProcess.js';
import { harnessTools } from '../src/compile/harnessTools.js';
import { loadCandidate } from '../src/config/campaign.js';
import { readManifest } from '../src/config/katManifest.js';
import { runKat } from '../src/kat/runKat.js';
import { runTrial } from '../src/measure/trial.js';
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
  it('the loop jobs share one job line: usage, a zero count and an unusable CPU are USAGE (exit 2)', async () => {
    const tools = await harnessTools();
    const lib = join(repoRoot, 'no-such-library.so');
    for (const [job, count] of [
      ['time', 'ITERS'],
      ['prof', 'OPS'],
    ] as const) {
      const argv = [tools.driver, lib];
      const missing = await runDriver(argv, [job, 'kem'], { timeoutMs: 10_000 });
      expect([missing.run.exitCode, missing.rejected]).toEqual([2, undefined]);
      expect(missing.run.stderr).toMatch(new RegExp(`^usage: ngcc_driver LIB ${job} TYPE OP ${count} WARMUPS`));
      const zero = await runDriver(argv, [job, 'kem', 'keygen', '0', '1'], { timeoutMs: 10_000 });
      expect([zero.run.exitCode, zero.output.status, zero.output.statusDetail]).toEqual([2, 'USAGE', `${count} must be at least 1`]);
      const cpu = await runDriver(argv, [job, 'kem', 'keygen', '5', '1', '9999'], { timeoutMs: 10_000 });
      expect([cpu.run.exitCode, cpu.output.statusDetail]).toEqual([2, 'cannot pin to cpu 9999']);
      // Nothing of the protocol on stdout: the library's stream is the library's alone.
      expect(zero.run.stdout + cpu.run.stdout).toBe('');
    }
    const unknown = await runDriver([tools.driver, lib], ['measure'], { timeoutMs: 10_000 });
    expect([unknown.run.exitCode, unknown.run.stderr]).toEqual([
      2,
      'usage: ngcc_driver LIB kat|time|replay|keys|inputs|prof ... (native/bin/driver.c)\n',
    ]);
  });

  it('the KAT and the timing run one command line, the driver and the library: the job is on the channel, not in argv', async () => {
    const tools = await harnessTools();
    const dir = tempDir();
    const lib = join(dir, 'libargv.so');
    // The library says, from its constructor, the command line of the process that loaded it.
    writeFileSync(
      join(dir, 'argv.c'),
      `#include <stdio.h>
__attribute__((constructor)) static void argv_said(void) {
  char buf[4096]; FILE *f = fopen("/proc/self/cmdline", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  for (size_t i = 0; i < n; i++) if (buf[i] == 0) buf[i] = ' ';
  buf[n] = 0;
  fprintf(stderr, "ARGV %s\\n", buf);
}
${readFileSync(join(repoRoot, 'test', 'fixtures', 'empty-op', 'empty_kem.c'), 'utf8')}`,
    );
    execFileSync('gcc', ['-std=gnu11', '-O2', '-fPIC', '-shared', '-o', lib, join(dir, 'argv.c')]);
    const kem1 = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
    const kat = await runKat({
      candidate: loadCandidate(kem1, 'candidate.yml'),
      label: 'good',
      library: lib,
      driver: tools.driver,
      outDir: tempDir(),
      manifest: readManifest(join(kem1, 'kat.sha256')),
      timeoutMs: 20_000,
      sandbox: 'none',
    });
    const timed = await runTrial({
      driver: tools.driver,
      library: lib,
      type: 'kem',
      operation: 'keygen',
      iterations: 10,
      warmups: 1,
      cpu: -1,
      rng: 'iccs-drng',
      timeoutMs: 20_000,
      sandbox: 'none',
    });
    const argv = (stderr: string) => [...stderr.matchAll(/^ARGV (.*)$/gm)].map((m) => m[1]!.trim());
    // (Whatever each made of the empty KEM: only where the library was loaded matters.)
    expect(argv(kat.run!.stderr)).toEqual([`${tools.driver} ${lib}`]);
    expect(argv(timed.stderr)).toEqual([`${tools.driver} ${lib}`]);
  });

  it('parses META, data lines and STATUS', () => {
    const out = parseDriverOutput('META\tcounter\trdtsc\nTRIAL\t10\t0.5\t100\nSTATUS\tOVERFLOW\tct: write 1 bytes past\n');
    expect(out.meta).toEqual({ counter: 'rdtsc' });
    expect(out.lines).toEqual([['TRIAL', '10', '0.5', '100']]);
    expect(out.status).toBe('OVERFLOW');
    expect(out.statusDetail).toBe('ct: write 1 bytes past');
  });
});

describe('the result channel', () => {
  const secret = 'a'.repeat(32);

  it('keeps the lines that carry the secret, counts the others, and reads the END code', () => {
    const text = `${secret}\tMETA\tcounter\trdtsc\nTRIAL\t1\t0.1\t12\n${secret}\tSTATUS\tcomplete\n${secret}\tEND\t0\n`;
    expect(decodeChannel(text, secret)).toEqual({ lines: ['META\tcounter\trdtsc', 'STATUS\tcomplete'], stray: 1, end: 0 });
    // A line after END, and an unfinished last line, are strays too; without END there is no end.
    expect(decodeChannel(`${secret}\tEND\t3\n${secret}\tSTATUS\tPASS\n${secret}\tME`, secret)).toEqual({ lines: [], stray: 2, end: 3 });
    expect(decodeChannel(`${'b'.repeat(32)}\tEND\t0\n`, secret)).toEqual({ lines: [], stray: 1 });
  });

  // A stand-in driver in shell, to reach the cases a C driver cannot show on demand.
  const driver = (body: string) => ['bash', '-c', `read -r s <&3; say() { printf '%s\\t%s\\n' "$s" "$1" >&3; }; ${body}`];

  it('accepts a run only when END carried the secret and the process exited with that code', async () => {
    const ok = await runDriver(driver("say $'STATUS\\tcomplete'; say $'END\\t0'; exit 0"), [], { timeoutMs: 5000 });
    expect([ok.rejected, ok.output.status]).toEqual([undefined, 'complete']);
    const early = await runDriver(driver("say $'STATUS\\tcomplete'; exit 0"), [], { timeoutMs: 5000 });
    expect(early.rejected).toEqual({ kind: 'unfinished', reason: "the process exited with code 0 before the driver's end line" });
    const other = await runDriver(driver("say $'END\\t0'; exit 7"), [], { timeoutMs: 5000 });
    expect(other.rejected).toEqual({ kind: 'unfinished', reason: 'the driver ended with code 0, but the process exited with code 7' });
    const forged = await runDriver(driver("printf 'END\\t0\\n' >&3; say $'END\\t0'"), [], { timeoutMs: 5000 });
    expect(forged.rejected).toEqual({ kind: 'unfinished', reason: "1 line without the run's secret on the result channel" });
  });

  it('a driver that cannot start, or dies before reading the secret, gives no result and no error', async () => {
    const missing = await runDriver(['/nonexistent/driver'], [], { timeoutMs: 5000 });
    expect(missing.rejected).toEqual({ kind: 'unfinished', reason: "the process exited with code 127 before the driver's end line" });
    const deaf = await runDriver(['sh', '-c', 'exec 3>&-; exit 0'], [], { timeoutMs: 5000 });
    expect(deaf.rejected?.kind).toBe('unfinished');
  });

  it('judges a finished driver by its own exit, even when something outside its group holds the pipes', async () => {
    // setsid takes the holder out of the process group, so killing the group cannot close the pipes.
    const started = Date.now();
    const r = await runDriver(driver("setsid sleep 4 & say $'END\\t0'; exit 0"), [], { timeoutMs: 3000 });
    expect([r.rejected, r.run.timedOut, r.run.exitCode]).toEqual([undefined, false, 0]);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('stops a run whose stdout passes the cap and names the cause', async () => {
    const r = await runDriver(driver("head -c 50000000 /dev/zero; say $'END\\t0'"), [], { timeoutMs: 10_000, maxOutputBytes: 4096 });
    expect(r.rejected).toEqual({ kind: 'output-limit', reason: 'output limit exceeded: more than 4 KiB on stdout' });
    expect(r.run.outputLimit).toBe('stdout');
  });

  it('the C drivers take the channel over before the library loads: off fd 3, at a high descriptor, nothing on stdout', async () => {
    const tools = await harnessTools();
    const dir = tempDir();
    const lib = join(dir, 'libfds.so');
    // The library reports, from its constructor, which descriptors it can see and what they are.
    writeFileSync(
      join(dir, 'fds.c'),
      `#include <dirent.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void fds(void) {
  DIR *d = opendir("/proc/self/fd"); struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char p[300], t[128]; ssize_t n;
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
    n = readlink(p, t, sizeof t - 1);
    t[n > 0 ? n : 0] = 0;
    fprintf(stderr, "fd %s %s\\n", e->d_name, t);
  }
  closedir(d);
}
${readFileSync(join(repoRoot, 'test', 'fixtures', 'empty-op', 'empty_kem.c'), 'utf8')}`,
    );
    execFileSync('gcc', ['-std=gnu11', '-O2', '-fPIC', '-shared', '-o', lib, join(dir, 'fds.c')]);
    const r = await runDriver([tools.driver, lib], ['time', 'kem', 'keygen', '100', '1', '-1', 'iccs-drng', '0'], {
      timeoutMs: 10_000,
      markAnswers: { seed: '5e'.repeat(48) },
    });
    expect(r.rejected).toBeUndefined();
    expect(r.output.status).toBe('complete');
    // Sockets besides stdout and stderr: the channel alone, no longer on fd 3.
    const sockets = [...r.run.stderr.matchAll(/^fd (\d+) socket:/gm)].map((m) => Number(m[1])).filter((fd) => fd > 2);
    expect(sockets).toHaveLength(1);
    expect(sockets[0]).toBeGreaterThanOrEqual(64);
    expect(r.run.stdout).toBe('');
  });

  it.skipIf(spawnSync('sh', ['-c', 'command -v valgrind']).status !== 0)('the channel survives valgrind', async () => {
    const tools = await harnessTools();
    const dir = tempDir();
    const lib = join(dir, 'libempty.so');
    execFileSync('gcc', ['-std=c99', '-O2', '-fPIC', '-shared', '-o', lib, join(repoRoot, 'test', 'fixtures', 'empty-op', 'empty_kem.c')]);
    const r = await runDriver(
      ['valgrind', '--tool=none', '-q', tools.driver, lib],
      ['time', 'kem', 'keygen', '10', '1', '-1', 'iccs-drng', '0'],
      {
        timeoutMs: 60_000,
        markAnswers: { seed: '5e'.repeat(48) },
      },
    );
    expect([r.rejected, r.output.status, r.run.exitCode]).toEqual([undefined, 'complete', 0]);
    expect(r.output.lines.find((l) => l[0] === 'TRIAL')?.[1]).toBe('10');
  });

  it('a driver run by hand (no channel) still reports on stdout', async () => {
    const tools = await harnessTools();
    const zero = await runProcess([tools.driver, 'x.so', 'time', 'kem', 'keygen', '0', '1'], { timeoutMs: 10_000 });
    expect([zero.exitCode, parseDriverOutput(zero.stdout).statusDetail]).toEqual([2, 'ITERS must be at least 1']);
  });
});
