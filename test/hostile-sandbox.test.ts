import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { harnessTools } from '../src/compile/harnessTools.js';
import { probeSandbox } from '../src/env/sandboxProbe.js';
import { mergeCampaignJson } from '../src/evidence/merge.js';
import type { BuildJson } from '../src/evidence/types.js';
import { InputError } from '../src/errors.js';
import { bwrapArgs, type SandboxSpec, type SystemView } from '../src/sandbox/bwrap.js';
import { runProcess } from '../src/sandbox/run.js';
import { sha256File } from '../src/util/fsx.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * Competitors' code against the sandbox: the hostile fixtures (test/fixtures/hostile/escape-*) run
 * beside two honest neighbours, one measured before them and one after, through the CLI as a
 * runner starts it, with a canary secret in the CLI's own environment.
 */

const hostile = join(repoRoot, 'test', 'fixtures', 'hostile');
const kem1 = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
const iccs = join(repoRoot, 'native', 'iccs');
const ATTACKS = ['read-parent-environ', 'write-neighbour', 'daemon', 'network', 'include-secret', 'driver-cache'];
const QUICK = 'planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  min_measurements: 10\n  warmups: 1\n';

/** The CLI bundled from the current src/ (as test/interrupt.test.ts does): a package root with the repository's native/. */
function bundledCli(): string {
  const root = tempDir();
  execFileSync('node', [join(repoRoot, 'scripts', 'bundle.mjs'), join(root, 'dist')], { cwd: repoRoot });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ngcc-perf', type: 'module' }));
  symlinkSync(join(repoRoot, 'native'), join(root, 'native'));
  return join(root, 'dist', 'cli.js');
}

/** The campaign id of an attack's fixture (test/fixtures/hostile/escape-<attack>): escape-1, escape-2… */
const idOf = (attack: string) => `escape-${ATTACKS.indexOf(attack) + 1}`;

/**
 * A copy of a hostile fixture: the shared fixture folders it includes are copied into the campaign
 * (a build may read only the campaign's repository and the harness), the harness's ICCS library
 * stays where it is.
 */
function copyHostile(attack: string, root: string): string {
  const id = idOf(attack);
  const from = join(hostile, `escape-${attack}`);
  cpSync(from, join(root, id), { recursive: true });
  const shared: Array<[string, string]> = [
    [join(kem1, 'common'), join(root, 'shared', 'kem-1-common')],
    [join(hostile, 'common'), join(root, 'shared', 'hostile-common')],
  ];
  for (const [source, copy] of shared) cpSync(source, copy, { recursive: true });
  const inCampaign = (p: string) => shared.find(([source]) => p === source)?.[1] ?? p;
  const yml = parseYaml(readFileSync(join(from, 'candidate.yml'), 'utf8')) as {
    id: string;
    instances: Array<{ dir: string; include: string[]; extra_sources: string[] }>;
  };
  for (const inst of yml.instances) {
    const at = (p: string) => inCampaign(isAbsolute(p) ? p : resolve(from, inst.dir, p));
    inst.include = inst.include.map(at);
    inst.extra_sources = inst.extra_sources.map(at);
  }
  expect(yml.id).toBe(id);
  writeFileSync(join(root, id, 'candidate.yml'), stringifyYaml(yml));
  return join(root, id);
}

/** An honest toy-KEM candidate (kem-1/good) under another id. */
function copyHonest(id: string, root: string): void {
  cpSync(join(kem1, 'good'), join(root, id, 'good'), { recursive: true });
  cpSync(join(kem1, 'common'), join(root, id, 'common'), { recursive: true });
  writeFileSync(
    join(root, id, 'candidate.yml'),
    `id: ${id}\ntype: kem\nalgorithm: toy\ninstances:\n  - label: good\n    dir: good\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
  );
  const good = readFileSync(join(kem1, 'kat.sha256'), 'utf8')
    .split('\n')
    .find((l) => l.endsWith(' good/KAT_KEM_good.txt'))!;
  writeFileSync(join(root, id, 'kat.sha256'), `${good}\n`);
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

const hashes = (dirs: string[]): Record<string, string> => Object.fromEntries(dirs.flatMap(filesUnder).map((f) => [f, sha256File(f)]));

/** The files under `dirs` whose bytes contain `needle`. */
const containing = (dirs: string[], needle: string): string[] => dirs.flatMap(filesUnder).filter((f) => readFileSync(f).includes(needle));

/** Names of the running processes (comm). */
function processNames(): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/comm`, 'utf8').trim()];
      } catch {
        return [];
      }
    });
}

/** Runs the CLI as a child with `env` added to this process's environment. */
function cliChild(cli: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((res) => {
    const child = spawn('node', [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code) => res({ code, out }));
  });
}

/** A TCP listener on 127.0.0.1 that records every connection and byte it receives. */
async function listener(): Promise<{ server: Server; port: number; got: { connections: number; data: string } }> {
  const got = { connections: 0, data: '' };
  const server = createServer((s) => {
    got.connections++;
    s.on('data', (c: Buffer) => (got.data += c.toString()));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0, got };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('hostile submissions in the sandbox', () => {
  const canary = `NGCC_CANARY_${randomBytes(12).toString('hex')}`;
  const secret = `NGCC_SECRET_${randomBytes(12).toString('hex')}`;
  const campaign = tempDir();
  const data = tempDir();
  const pages = tempDir();
  const secretDir = tempDir();
  const system = join(data, 's');
  let cli: string;
  let net: Awaited<ReturnType<typeof listener>>;
  let run: { code: number | null; out: string };
  let before: { early: Record<string, string>; sources: Record<string, string>; tools: Record<string, string>; earlyEntry: unknown };
  let after: typeof before;
  const honestDirs = () => ({
    early: [join(system, 'build', 'early-1'), join(system, 'kat', 'early-1'), join(system, 'records', 'early-1')],
    sources: [join(campaign, 'early-1'), join(campaign, 'late-1')],
  });

  beforeAll(async () => {
    cli = bundledCli();
    net = await listener();
    copyHonest('early-1', campaign);
    copyHonest('late-1', campaign);
    for (const attack of ATTACKS) copyHostile(attack, campaign);
    writeFileSync(join(campaign, idOf('network'), 'attack', 'escape_port.h'), `#define ESCAPE_PORT ${net.port}\n`);
    // Its first line is not C: a compiler that reads it quotes it in the error.
    writeFileSync(join(secretDir, 'secret.txt'), `${secret} is the runner's secret\n`);
    writeFileSync(join(campaign, idOf('include-secret'), 'attack', 'escape_secret.h'), `#include "${join(secretDir, 'secret.txt')}"\n`);
    writeFileSync(join(campaign, 'ngcc-perf.yml'), QUICK);
    const tools = (await harnessTools()).dir;

    // 1. The early neighbour alone: its evidence exists before any hostile code runs.
    const first = await cliChild(cli, ['run', campaign, '--system', 's', '--out', data, '--only', '^early-1/'], {});
    expect(first.code, first.out).toBe(0);
    const snapshot = () => {
      const d = honestDirs();
      const build = JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson;
      return { early: hashes(d.early), sources: hashes(d.sources), tools: hashes([tools]), earlyEntry: build.instances['early-1/good'] };
    };
    before = snapshot();

    // 2. Everyone, with a secret in the CLI's environment.
    run = await cliChild(cli, ['run', campaign, '--system', 's', '--out', data], { NGCC_CANARY_TOKEN: canary, GITHUB_TOKEN: canary });
    const report = await cliChild(cli, ['report', system, '--campaign', campaign, '--out', pages], {});
    expect(report.code, report.out).toBe(0);
    // The daemon writes three seconds after it started: give it time.
    await sleep(4000);
    after = snapshot();
  }, 600_000);

  afterAll(() => {
    net?.server.close();
  });

  const katLog = (id: string) => readFileSync(join(system, 'kat', id, 'attack.log'), 'utf8');

  it('ran every attack (their KAT logs say so) and none of them succeeded', () => {
    expect(run.code, run.out).toBe(1); // include-secret does not build
    const build = JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson;
    for (const attack of ATTACKS.filter((a) => a !== 'include-secret')) {
      expect(build.instances[`${idOf(attack)}/attack`]?.kat, attack).toBe('PASS');
      const log = katLog(idOf(attack));
      expect(log, attack).toMatch(/ESCAPE ran in /);
      // The folders on the way to a bound file are the sandbox's own, in its throwaway /tmp: a file
      // made beside the bound driver "succeeds" there and is gone with the process (the real cache
      // is compared below). Anywhere else nothing can be written at all.
      const written = log
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.endsWith(': SUCCEEDED'));
      if (attack === 'driver-cache') for (const l of written) expect(l).toMatch(/^ESCAPE replace .*\/(ngcc_time|sha256\.json): SUCCEEDED$/);
      else expect(written, attack).toEqual([]);
    }
    expect(katLog(idOf('write-neighbour'))).toMatch(/ESCAPE overwrite .*early-1\/good\/guide\/libgood\.so: /);
    expect(katLog(idOf('driver-cache'))).toMatch(/ESCAPE replace .*\/ngcc_time: /);
  });

  it('keeps the runner’s environment from the code: the canary is nowhere', () => {
    // The sandbox's PID namespace: the driver sees itself and bwrap's init, not the runner.
    expect(katLog(idOf('read-parent-environ'))).toMatch(/ESCAPE saw [1-3] processes/);
    expect(katLog(idOf('read-parent-environ'))).toMatch(/ESCAPE own environment: no canary/);
    expect(containing([data, pages, campaign], canary)).toEqual([]);
    expect(run.out).not.toContain(canary);
  });

  it('leaves the neighbours’ evidence, libraries and sources unchanged, and measures both', () => {
    expect(after.early).toEqual(before.early);
    expect(after.earlyEntry).toEqual(before.earlyEntry);
    expect(after.sources).toEqual(before.sources);
    expect(Object.keys(before.early).length).toBeGreaterThan(5);
    const build = JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson;
    for (const id of ['early-1', 'late-1']) {
      expect(build.instances[`${id}/good`]?.kat).toBe('PASS');
      for (const op of ['keygen', 'enc', 'dec']) {
        const record = JSON.parse(readFileSync(join(system, 'records', id, `good__${op}.json`), 'utf8')) as { status: string };
        expect(record.status, `${id} ${op}`).toBe('complete');
      }
    }
  });

  it('leaves the shared driver cache unchanged', () => {
    expect(after.tools).toEqual(before.tools);
  });

  it('lets no process outlive the run', () => {
    expect(katLog(idOf('daemon'))).toMatch(/ESCAPE forked the daemon: yes/);
    expect(processNames()).not.toContain('ngcc-escapee');
    expect(existsSync(join(campaign, 'daemon-was-here'))).toBe(false);
    expect(filesUnder(data).filter((f) => f.endsWith('daemon-was-here'))).toEqual([]);
  });

  it('gives the code no network: the listener on 127.0.0.1 received nothing', () => {
    expect(katLog(idOf('network'))).toMatch(/ESCAPE connect 127\.0\.0\.1: /);
    expect(net.got).toEqual({ connections: 0, data: '' });
  });

  it('shows the compiler no file outside the build: the secret is nowhere, the include is "not found"', () => {
    const build = JSON.parse(readFileSync(join(system, 'build.json'), 'utf8')) as BuildJson;
    const entry = build.instances[`${idOf('include-secret')}/attack`]!;
    expect(entry.kat).toBe('BUILDFAIL');
    expect(entry.build_error).toMatch(/secret\.txt: No such file or directory/);
    expect(containing([data, pages, campaign], secret)).toEqual([]);
    expect(run.out).not.toContain(secret);
  });

  it('records the sandbox in campaign.json and says so on the method page', () => {
    expect((JSON.parse(readFileSync(join(system, 'campaign.json'), 'utf8')) as { sandbox?: string }).sandbox).toBe('bwrap');
    expect(readFileSync(join(pages, 'performance', 'method_s.md'), 'utf8')).toMatch(
      /## Isolation\n\nEvery compiler and driver process .* bubblewrap sandbox/,
    );
  });
});

describe('the same attacks with `sandbox: none` (the opt-out)', () => {
  it('succeed — the checks above would see them — and the evidence and the method page say the run was not sandboxed', async () => {
    const cli = bundledCli();
    const canary = `NGCC_CANARY_${randomBytes(12).toString('hex')}`;
    const campaign = tempDir();
    const data = tempDir();
    const pages = tempDir();
    const net = await listener();
    const early = join(campaign, 'early-1', 'good', 'KEM_AlgorithmInstance.c');
    try {
      copyHonest('early-1', campaign);
      for (const attack of ['read-parent-environ', 'write-neighbour', 'daemon', 'network']) copyHostile(attack, campaign);
      writeFileSync(join(campaign, idOf('network'), 'attack', 'escape_port.h'), `#define ESCAPE_PORT ${net.port}\n`);
      writeFileSync(join(campaign, 'ngcc-perf.yml'), `${QUICK}sandbox: none\n`);
      const run = (only: string, out: string) =>
        cliChild(cli, ['run', campaign, '--system', 's', '--out', out, '--only', only], { NGCC_CANARY_TOKEN: canary });
      const r = await run(`^(${['read-parent-environ', 'daemon', 'network'].map(idOf).join('|')})/`, data);
      expect(r.code, r.out).toBe(0);
      // The neighbour's attacker replaces build.json too, which ends its run: an evidence folder of its own.
      const spoiledData = tempDir();
      const spoiled = await run(`^(early-1|${idOf('write-neighbour')})/`, spoiledData);
      expect(spoiled.out).toMatch(/internal error/);
      await sleep(4000);
      expect(containing([data], canary).map((f) => relative(data, f))).toContain(
        join('s', 'kat', idOf('read-parent-environ'), 'attack.log'),
      );
      expect(net.got.data).toContain('NGCC-ESCAPE-NETWORK');
      expect(readFileSync(early, 'utf8')).toBe('#error replaced by a competitor\n');
      expect(readFileSync(join(spoiledData, 's', 'records', 'early-1', 'good__keygen.json'), 'utf8')).toBe('{"mean_cycles": 1}\n');
      expect(existsSync(join(campaign, 'daemon-was-here'))).toBe(true);
      expect((JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as { sandbox?: string }).sandbox).toBe('none');
      expect((await cliChild(cli, ['report', join(data, 's'), '--campaign', campaign, '--out', pages], {})).code).toBe(0);
      expect(readFileSync(join(pages, 'performance', 'method_s.md'), 'utf8')).toMatch(
        /## Isolation\n\n⚠ Not sandboxed: the campaign set `sandbox: none`/,
      );
    } finally {
      net.server.close();
    }
  }, 300_000);
});

describe('a killed CLI', () => {
  it('takes its sandboxed driver with it (kill -9: no handler runs)', async () => {
    const cli = bundledCli();
    const root = tempDir();
    const data = tempDir();
    cpSync(join(kem1, 'timeout'), join(root, 'kem-1', 'timeout'), { recursive: true });
    cpSync(join(kem1, 'common'), join(root, 'kem-1', 'common'), { recursive: true });
    writeFileSync(
      join(root, 'kem-1', 'candidate.yml'),
      `id: kem-1\ntype: kem\nalgorithm: toy\ninstances:\n  - label: timeout\n    dir: timeout\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
    );
    writeFileSync(join(root, 'ngcc-perf.yml'), 'planning:\n  kat_timeout_s: 3600\n');
    const child = spawn('node', [cli, 'run', root, '--system', 's', '--out', data, '--phases', 'build,kat'], { stdio: 'ignore' });
    const drivers = () =>
      readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((pid) => {
          try {
            const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
            const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
            return (
              argv[0]!.endsWith('/ngcc_driver') && argv.some((a) => a.startsWith(data)) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
            );
          } catch {
            return false;
          }
        });
    try {
      let found: string[] = [];
      for (let i = 0; i < 600 && found.length === 0; i++) {
        await sleep(100);
        found = drivers();
      }
      expect(found.length).toBe(1);
      process.kill(child.pid!, 'SIGKILL');
      let left = found;
      for (let i = 0; i < 100 && left.length > 0; i++) {
        await sleep(100);
        left = drivers();
      }
      expect(left).toEqual([]);
    } finally {
      for (const pid of drivers()) process.kill(Number(pid), 'SIGKILL');
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 300_000);
});

describe('the bwrap command line', () => {
  const system: SystemView = {
    entries: [{ path: '/bin', symlink: 'usr/bin' }, { path: '/lib' }, { path: '/lib64', symlink: 'usr/lib64' }],
    etc: ['/etc/ld.so.cache'],
  };

  it('isolates everything, shows the system read-only and only the named paths, and sets the environment alone', () => {
    const args = bwrapArgs(
      {
        mode: 'bwrap',
        readOnly: ['/c/kem-1', '/c/kem-1/good/a.c', '/tool/native', '/c/kem-1/good/sub'],
        writable: ['/data/s/build/kem-1/good/guide'],
      },
      { env: { PATH: '/usr/bin', TMPDIR: '/tmp' }, cwd: '/c/kem-1/good', system },
    );
    const text = args.join(' ');
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop ALL', '--clearenv'])
      expect(text).toContain(flag);
    expect(text).toContain(
      '--ro-bind /usr /usr --symlink usr/bin /bin --ro-bind /lib /lib --symlink usr/lib64 /lib64 --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache',
    );
    expect(text).toContain('--proc /proc --dev /dev --tmpfs /tmp');
    // Files inside a folder already bound read-only need no bind of their own.
    expect(text).toContain(
      '--ro-bind /c/kem-1 /c/kem-1 --ro-bind /tool/native /tool/native --bind /data/s/build/kem-1/good/guide /data/s/build/kem-1/good/guide',
    );
    expect(text).not.toContain('a.c');
    expect(text).not.toContain('/good/sub');
    expect(text).toMatch(/--setenv PATH \/usr\/bin --setenv TMPDIR \/tmp --chdir \/c\/kem-1\/good$/);
    // Nothing else of the host: no bind of /, /home, /etc as a whole or the runner's workspace.
    const binds = args.flatMap((a, i) => (a.startsWith('--') && a.includes('bind') ? [args[i + 1]!] : []));
    expect(binds).toEqual(['/usr', '/lib', '/etc/ld.so.cache', '/c/kem-1', '/tool/native', '/data/s/build/kem-1/good/guide']);
  });

  it('mounts a writable folder inside a read-only one after it, and a read-only path inside a writable one after that', () => {
    const args = bwrapArgs(
      { mode: 'bwrap', readOnly: ['/d/out/lib.so', '/d'], writable: ['/d/out'] },
      { env: {}, system: { entries: [], etc: [] } },
    );
    expect(args.join(' ')).toContain('--ro-bind /d /d --bind /d/out /d/out --ro-bind /d/out/lib.so /d/out/lib.so');
  });

  it('refuses a relative path', () => {
    expect(() => bwrapArgs({ mode: 'bwrap', readOnly: ['rel/x'], writable: [] }, { env: {}, system })).toThrow(/not absolute/);
  });
});

describe('runProcess in the sandbox', () => {
  const bare: SandboxSpec = { mode: 'bwrap', readOnly: [], writable: [] };

  it('reports a crash inside as the signal, as outside', async () => {
    const r = await runProcess(['sh', '-c', 'kill -SEGV $$'], { timeoutMs: 10_000, sandbox: bare });
    expect([r.exitCode, r.signal]).toEqual([null, 'SIGSEGV']);
    expect((await runProcess(['sh', '-c', 'exit 3'], { timeoutMs: 10_000, sandbox: bare })).exitCode).toBe(3);
  });

  it('passes the scrubbed environment only, with the private /tmp as TMPDIR', async () => {
    process.env.NGCC_CANARY_TOKEN = 'canary-in-the-parent';
    try {
      const r = await runProcess(['env'], { timeoutMs: 10_000, sandbox: bare });
      const names = r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0])
        .sort();
      // (bwrap sets PWD to the folder it starts in.)
      expect(names).toEqual(
        ['HOME', 'LC_ALL', 'PATH', 'PWD', 'TMPDIR', ...['LANG', 'TZ'].filter((v) => process.env[v] !== undefined)].sort(),
      );
      expect(r.stdout).toContain('TMPDIR=/tmp\n');
    } finally {
      delete process.env.NGCC_CANARY_TOKEN;
    }
  });

  it('keeps the address-space cap', async () => {
    // 512 MiB asked for under a 256 MiB cap: the allocation fails inside.
    const r = await runProcess(['python3', '-c', 'bytearray(512 * 1024 * 1024)'], {
      timeoutMs: 30_000,
      memoryLimitBytes: 256 * 1024 * 1024,
      sandbox: bare,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/MemoryError/);
  });

  it('writes only where the spec says', async () => {
    const out = tempDir();
    const other = tempDir();
    const r = await runProcess(['sh', '-c', `echo x > ${out}/ok; echo x > ${other}/no; ls ${other}`], {
      timeoutMs: 10_000,
      sandbox: { mode: 'bwrap', readOnly: [], writable: [out] },
    });
    expect(r.stderr).toMatch(/no: Directory nonexistent/);
    expect(existsSync(join(out, 'ok'))).toBe(true);
    expect(existsSync(join(other, 'no'))).toBe(false);
  });
});

describe('the sandbox probe', () => {
  let probeTool: string;
  beforeAll(async () => {
    probeTool = (await harnessTools()).probe;
  });

  /** Runs the probe with PATH set to `path`, restoring it after. */
  async function probeWith(path: string): Promise<unknown> {
    const saved = process.env.PATH;
    process.env.PATH = path;
    try {
      await probeSandbox({ mode: 'bwrap', probeTool, cpu: 0 });
      return undefined;
    } catch (e) {
      return e;
    } finally {
      process.env.PATH = saved;
    }
  }

  it('passes here: bwrap makes a sandbox, gcc runs in it, the counter inside is the one outside', async () => {
    expect(await probeWith(process.env.PATH!)).toBeUndefined();
  });

  it('refuses a host without bwrap, naming the package and the opt-out', async () => {
    const bin = tempDir();
    const e = await probeWith(bin);
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).toMatch(
      /^ngcc-perf\.yml: sandbox: bubblewrap \(bwrap\) is not installed or not on PATH: install the bubblewrap package .*set `sandbox: none`/,
    );
  });

  it('refuses a host that forbids user namespaces, naming the sysctl', async () => {
    // A bwrap that fails the way it does when unprivileged user namespaces are refused.
    const bin = tempDir();
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'bwrap'),
      "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
    );
    chmodSync(join(bin, 'bwrap'), 0o755);
    const e = await probeWith(`${bin}:${dirname(process.execPath)}:/usr/bin:/bin`);
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).toMatch(/bwrap cannot create a sandbox here .*kernel\.apparmor_restrict_unprivileged_userns=0/);
  });

  it('checks nothing with sandbox: none, and measures the counter rate outside', async () => {
    await expect(probeSandbox({ mode: 'none', probeTool: '/nonexistent', cpu: 0 })).resolves.toEqual({ counterHz: undefined });
    const rate = (await probeSandbox({ mode: 'none', probeTool: (await harnessTools()).probe, cpu: 0 })).counterHz;
    expect(rate).toBeGreaterThan(1e6);
  });
});

describe('the driver cache', () => {
  it('rebuilds a driver whose bytes no longer match the hash written with it', async () => {
    const tools = await harnessTools();
    const manifest = JSON.parse(readFileSync(join(tools.dir, 'sha256.json'), 'utf8')) as Record<string, string>;
    expect(sha256File(tools.driver)).toBe(manifest.ngcc_driver);
    // A copy of the cache in a folder of its own, so other test files keep theirs.
    const saved = process.env.NGCC_CACHE_DIR;
    const cache = tempDir();
    process.env.NGCC_CACHE_DIR = cache;
    try {
      const own = await harnessTools();
      expect(own.dir).toBe(join(cache, `harness-${tools.version}`));
      writeFileSync(own.driver, '#!/bin/sh\necho forged\n');
      const again = await harnessTools();
      expect(sha256File(again.driver)).toBe(manifest.ngcc_driver);
    } finally {
      if (saved === undefined) delete process.env.NGCC_CACHE_DIR;
      else process.env.NGCC_CACHE_DIR = saved;
    }
  }, 120_000);
});

describe('merged evidence', () => {
  it('is unsandboxed when any part was', () => {
    const part = (sandbox: string) => ({ schema: 2, started_utc: '2026-01-01T00:00:00Z', ended_utc: '2026-01-01T01:00:00Z', sandbox });
    expect(mergeCampaignJson([part('bwrap'), part('bwrap')])?.sandbox).toBe('bwrap');
    expect(mergeCampaignJson([part('bwrap'), part('none')])?.sandbox).toBe('none');
  });
});
