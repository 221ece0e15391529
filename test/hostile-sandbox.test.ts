import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools } from '../src/compile/harnessTools.js';
import { probeSandbox, resolveSandbox } from '../src/env/sandboxProbe.js';
import { mergeCampaignJson } from '../src/evidence/merge.js';
import { InputError } from '../src/errors.js';
import { bwrapArgs, PROC_HOST_ACTIVITY, type SandboxSpec, type SystemView, unshareArgv } from '../src/sandbox/bwrap.js';
import { runProcess } from '../src/sandbox/runProcess.js';
import { sha256File } from '../src/util/fsx.js';
import {
  aimEscapes,
  bundledCli,
  cliChild,
  containing,
  type Escape,
  hostileCampaign,
  iccs,
  idOf,
  listener,
  removeScratch,
  sleep,
} from './helpers/hostile.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * The sandbox itself: the control run of the hostile fixtures without it, a CLI killed under its
 * drivers, bwrap's command line, the runner inside it, the start probe and the driver cache. The
 * hostile fixtures against the sandbox are test/hostile-corpus.test.ts.
 */

const kem1 = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
const QUICK = 'planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  min_measurements: 10\n  warmups: 1\n';

/**
 * A control campaign of escape fixtures beside the honest neighbour early-1, in `sandbox`: fresh
 * secrets (an environment canary, a secret in a planted home, a marker in the neighbour's header),
 * listeners on TCP, a UNIX socket and an abstract socket, and the escapes aimed at them.
 */
async function controlRun(sandbox: 'none' | 'unshare', escapes: Escape[]) {
  const secrets = {
    canary: `NGCC_CANARY_${randomBytes(12).toString('hex')}`,
    homeSecret: `NGCC_HOME_SECRET_${randomBytes(12).toString('hex')}`,
    neighbour: `NGCC_NEIGHBOUR_${randomBytes(12).toString('hex')}`,
  };
  const home = tempDir('ngcc-home-');
  const sockets = tempDir();
  const abstractName = `ngcc-${sandbox}-${randomBytes(8).toString('hex')}`;
  const net = await listener();
  const unix = await listener(join(sockets, 'runner.sock'));
  const abstract = await listener(`\0${abstractName}`);
  const campaign = hostileCampaign(tempDir(), { escapes, honest: ['early-1'], settings: `${QUICK}sandbox: ${sandbox}\n` });
  writeFileSync(join(home, 'secret.txt'), `${secrets.homeSecret} is in the runner's home\n`);
  aimEscapes(campaign, escapes, ['early-1'], {
    port: net.port,
    secretFile: '/nonexistent/ngcc-escape-secret',
    home,
    unixPath: join(sockets, 'runner.sock'),
    abstractName,
    neighbourHeader: `#error ${secrets.neighbour} is a neighbour's source\n`,
  });
  const close = () => {
    for (const l of [net, unix, abstract]) l.server.close();
    removeScratch(home);
  };
  return { ...secrets, home, campaign, net, unix, abstract, close, cli: bundledCli(), data: tempDir(), pages: tempDir() };
}

describe('the same attacks with `sandbox: none` (the opt-out)', () => {
  it('succeed — the corpus checks would see them — and the evidence and the method page say the run was not sandboxed', async () => {
    // Only attacks whose success stays in the test's own folders, listeners and /tmp: none that
    // kills, spins, types into the host's terminals or needs root to get through.
    const attacks = [
      'read-parent-environ',
      'daemon',
      'network',
      'read-home',
      'scratch',
      'unix-socket',
      'include-neighbour',
      'link-out',
    ] as const;
    const c = await controlRun('none', [...attacks, 'write-neighbour']);
    const { cli, canary, homeSecret, neighbour, data, pages, home, campaign, net, unix, abstract } = c;
    const early = join(campaign, 'early-1', 'good', 'KEM_AlgorithmInstance.c');
    const log = (a: Escape) => join('s', 'kat', idOf(a), 'attack.log');
    const buildLog = (a: Escape) => join('s', 'build', idOf(a), 'attack', 'guide', 'build.log');
    try {
      const run = (only: string, out: string, phases: string[] = []) =>
        cliChild(cli, ['run', campaign, '--system', 's', '--out', out, '--only', only, ...phases], { NGCC_CANARY_TOKEN: canary });
      // Each attack runs in the first call of every process that loads its library: the KAT's is
      // enough to see it succeed, and timing the attackers unsandboxed adds nothing but minutes.
      const r = await run(`^(${attacks.map(idOf).join('|')})/`, data, ['--phases', 'build,kat']);
      expect(r.code, r.out).toBe(1); // the include attacks fail their builds, quoting what they read
      // The neighbour's attacker replaces build.json too, which ends its run: an evidence folder of its own.
      const spoiledData = tempDir();
      const spoiled = await run(`^(early-1|${idOf('write-neighbour')})/`, spoiledData);
      expect(spoiled.out).toMatch(/internal error/);
      await sleep(4000);
      const leaks = (needle: string) => containing([data], needle).map((f) => relative(data, f));
      expect(leaks(canary)).toContain(log('read-parent-environ'));
      expect(leaks(homeSecret)).toEqual(expect.arrayContaining([log('read-home'), buildLog('link-out')]));
      expect(leaks(neighbour)).toEqual(expect.arrayContaining([buildLog('include-neighbour'), buildLog('link-out')]));
      expect(net.got.data).toContain('NGCC-ESCAPE-NETWORK NGCC-CANARY-network');
      expect(unix.got.data).toContain('NGCC-ESCAPE-UNIX NGCC-CANARY-unix-socket');
      expect(abstract.got.data).toContain('NGCC-ESCAPE-UNIX NGCC-CANARY-unix-socket');
      expect(existsSync(join('/tmp', 'ngcc-escape-scratch'))).toBe(true);
      expect(existsSync(join(home, 'ngcc-escape-scratch'))).toBe(true);
      expect(readFileSync(early, 'utf8')).toBe('#error replaced by a competitor\n');
      // Which of the neighbour's files existed when the attack ran depends on how far its timing had
      // come: some did, and were replaced.
      const neighbourFiles = [
        join('build', 'early-1', 'good', 'guide', 'libgood.so'),
        join('kat', 'early-1', 'good', 'KAT_KEM_good.txt'),
        ...['keygen', 'enc', 'dec'].map((op) => join('records', 'early-1', `good__${op}.json`)),
      ].map((f) => join(spoiledData, 's', f));
      const replaced = neighbourFiles.filter((f) => existsSync(f) && readFileSync(f, 'latin1') === '{"mean_cycles": 1}\n');
      expect(replaced.length).toBeGreaterThan(0);
      expect(existsSync(join(campaign, 'daemon-was-here'))).toBe(true);
      expect((JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as { sandbox?: string }).sandbox).toBe('none');
      expect((await cliChild(cli, ['report', join(data, 's'), '--campaign', campaign, '--out', pages], {})).code).toBe(0);
      expect(readFileSync(join(pages, 'performance', 'method_s.md'), 'utf8')).toMatch(
        /## Isolation\n\n⚠ Not sandboxed: the campaign set `sandbox: none`/,
      );
    } finally {
      c.close();
    }
  }, 300_000);
});

describe('the same attacks with `sandbox: unshare` (util-linux, for hosts without bubblewrap)', () => {
  it('fail as they do under bwrap, and the evidence and the method page name the unshare sandbox', async () => {
    const attacks = [
      'read-parent-environ',
      'write-neighbour',
      'daemon',
      'network',
      'read-home',
      'scratch',
      'unix-socket',
      'include-neighbour',
      'link-out',
    ] as const;
    const c = await controlRun('unshare', [...attacks]);
    const { cli, canary, homeSecret, neighbour, data, pages, home, campaign, net, unix, abstract } = c;
    const early = join(campaign, 'early-1', 'good', 'KEM_AlgorithmInstance.c');
    const earlySource = readFileSync(early, 'utf8');
    try {
      const r = await cliChild(cli, ['run', campaign, '--system', 's', '--out', data], { NGCC_CANARY_TOKEN: canary, HOME: home });
      expect(r.code, r.out).toBe(1); // the include attacks do not build
      await sleep(4000);
      // (The neighbour's marker is in its own header, in the campaign: only the evidence must not have it.)
      for (const [needle, where] of [
        [canary, [data, campaign]],
        [homeSecret, [data, campaign]],
        [neighbour, [data]],
      ] as const) {
        expect(containing([...where], needle)).toEqual([]);
        expect(r.out).not.toContain(needle);
      }
      expect([net.got, unix.got, abstract.got].map((g) => g.data)).toEqual(['', '', '']);
      expect(existsSync(join('/tmp', 'ngcc-escape-scratch'))).toBe(false);
      expect(existsSync(join(home, 'ngcc-escape-scratch'))).toBe(false);
      expect(existsSync(join(campaign, 'daemon-was-here'))).toBe(false);
      expect(readFileSync(early, 'utf8')).toBe(earlySource);
      const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as { instances: Record<string, { kat?: string }> };
      expect(build.instances['early-1/good']?.kat).toBe('PASS');
      for (const a of [
        'read-parent-environ',
        'write-neighbour',
        'daemon',
        'network',
        'read-home',
        'scratch',
        'unix-socket',
        'link-out',
      ] as const)
        expect(build.instances[`${idOf(a)}/attack`]?.kat, a).toBe('PASS');
      for (const a of ['include-neighbour'] as const) expect(build.instances[`${idOf(a)}/attack`]?.kat, a).toBe('BUILDFAIL');
      for (const op of ['keygen', 'enc', 'dec']) {
        const rec = JSON.parse(readFileSync(join(data, 's', 'records', 'early-1', `good__${op}.json`), 'utf8')) as { status: string };
        expect(rec.status, op).toBe('complete');
      }
      expect((JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as { sandbox?: string }).sandbox).toBe('unshare');
      expect((await cliChild(cli, ['report', join(data, 's'), '--campaign', campaign, '--out', pages], {})).code).toBe(0);
      expect(readFileSync(join(pages, 'performance', 'method_s.md'), 'utf8')).toMatch(
        /## Isolation\n\nEvery compiler and driver process of a submission ran in a util-linux unshare sandbox/,
      );
    } finally {
      c.close();
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
      // One driver, or one per piece of the KAT where the run borrowed a second core for it.
      expect(found.length).toBeGreaterThan(0);
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
    disableUserns: true,
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
    for (const flag of [
      '--unshare-all --unshare-user --disable-userns',
      '--die-with-parent',
      '--new-session',
      '--cap-drop ALL',
      '--clearenv',
    ])
      expect(text).toContain(flag);
    expect(text).toContain(
      '--ro-bind /usr /usr --symlink usr/bin /bin --ro-bind /lib /lib --symlink usr/lib64 /lib64 --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache',
    );
    // The kernel's settings in /proc read-only; /dev read-only; the private /tmp and /dev/shm capped:
    // a process cannot fill the runner's memory through them.
    expect(text).toContain(
      '--proc /proc --ro-bind-try /proc/sys /proc/sys --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger --ro-bind-try /proc/irq /proc/irq --ro-bind-try /proc/bus /proc/bus',
    );
    expect(text).toContain('--dev /dev --size 1073741824 --tmpfs /dev/shm --remount-ro /dev --size 1073741824 --tmpfs /tmp');
    // Files inside a folder already bound read-only need no bind of their own.
    expect(text).toContain(
      '--ro-bind /c/kem-1 /c/kem-1 --ro-bind /tool/native /tool/native --bind /data/s/build/kem-1/good/guide /data/s/build/kem-1/good/guide',
    );
    expect(text).not.toContain('a.c');
    expect(text).not.toContain('/good/sub');
    expect(text).toMatch(/--setenv PATH \/usr\/bin --setenv TMPDIR \/tmp --chdir \/c\/kem-1\/good$/);
    // Nothing else of the host: no bind of /, /home, /etc as a whole or the runner's workspace.
    const binds = args.flatMap((a, i) => (a.startsWith('--') && a.includes('bind') && args[i + 1] !== '/dev/null' ? [args[i + 1]!] : []));
    // /dev/null only over the files of /proc that show the host's activity (those this kernel has).
    const hidden = args.flatMap((a, i) => (a === '--ro-bind' && args[i + 1] === '/dev/null' ? [args[i + 2]!] : []));
    expect(hidden).toEqual(PROC_HOST_ACTIVITY.map((f) => `/proc/${f}`).filter((f) => existsSync(f)));
    expect(hidden).toContain('/proc/stat');
    expect(binds).toEqual([
      '/usr',
      '/lib',
      '/etc/ld.so.cache',
      '/proc/sys',
      '/proc/sysrq-trigger',
      '/proc/irq',
      '/proc/bus',
      '/c/kem-1',
      '/tool/native',
      '/data/s/build/kem-1/good/guide',
    ]);
  });

  it('mounts a writable folder inside a read-only one after it, and a read-only path inside a writable one after that', () => {
    const args = bwrapArgs(
      { mode: 'bwrap', readOnly: ['/d/out/lib.so', '/d'], writable: ['/d/out'] },
      { env: {}, system: { entries: [], etc: [] } },
    );
    expect(args.join(' ')).toContain('--ro-bind /d /d --bind /d/out /d/out --ro-bind /d/out/lib.so /d/out/lib.so');
  });

  it('asks for no nested user namespaces only of a bubblewrap that can refuse them', () => {
    const spec: SandboxSpec = { mode: 'bwrap', readOnly: [], writable: [] };
    expect(bwrapArgs(spec, { env: {}, system }).slice(0, 3)).toEqual(['--unshare-all', '--unshare-user', '--disable-userns']);
    const older = bwrapArgs(spec, { env: {}, system: { ...system, disableUserns: false } });
    expect(older).not.toContain('--disable-userns');
    expect(older.slice(0, 2)).toEqual(['--unshare-all', '--die-with-parent']);
  });

  it('refuses a relative path', () => {
    expect(() => bwrapArgs({ mode: 'bwrap', readOnly: ['rel/x'], writable: [] }, { env: {}, system })).toThrow(/not absolute/);
  });
});

describe('the unshare command line', () => {
  it('makes every namespace, dies with its parent, drops every capability and binds only what the spec names', () => {
    const argv = unshareArgv(
      { mode: 'unshare', readOnly: ['/c/kem-1', '/c/kem-1/good/a.c'], writable: ['/data/out'] },
      { env: { PATH: '/usr/bin' }, cwd: '/c/kem-1/good', system: { entries: [{ path: '/lib' }], etc: ['/etc/ld.so.cache'] } },
      ['gcc', '-c', 'a.c'],
    );
    expect(argv.slice(0, 14)).toEqual([
      'setpriv',
      '--pdeathsig=KILL',
      '--',
      'unshare',
      '--user',
      '--map-root-user',
      '--mount',
      '--pid',
      '--fork',
      '--kill-child',
      '--net',
      '--ipc',
      '--uts',
      '--',
    ]);
    expect(argv.slice(-4)).toEqual(['ngcc-sandbox', 'gcc', '-c', 'a.c']);
    const script = argv[argv.length - 5]!;
    // One table for every mount, read by a single `mount -a`.
    expect(script).toContain("'/c/kem-1' \"$R\"'/c/kem-1' none bind,ro");
    expect(script).toContain("'/data/out' \"$R\"'/data/out' none bind ");
    expect(script.match(/^mount /gm)).toHaveLength(3);
    // The root goes read-only in the same table, after every mount point in it was made.
    expect(script).toMatch(/'none' "\$R"'\/' none remount,ro\n?' > "\$R"\/proc\/.fstab|'none' "\$R"'\/' none remount,ro > /);
    // A file inside a folder already bound read-only needs no bind of its own.
    expect(script).not.toContain('a.c');
    expect(script).toContain('mount -t tmpfs -o size=1073741824,X-mount.mkdir ngcc-tmp');
    expect(script).toContain(
      `chroot "$R" /usr/bin/setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- /usr/bin/env -i -C '/c/kem-1/good' -- 'PATH=/usr/bin' "$@"`,
    );
    expect(script).not.toMatch(/\/home|\/root|--bind \/ /);
  });
});

describe.each(['bwrap', 'unshare'] as const)('runProcess in the %s sandbox', (mode) => {
  const bare: SandboxSpec = { mode, readOnly: [], writable: [] };

  it('shows no other process, no capability, no network and no home', async () => {
    const r = await runProcess(
      [
        'sh',
        '-c',
        'ls /proc | grep -c "^[0-9]"; grep CapEff /proc/self/status; cat /sys/class/net/*/operstate 2>/dev/null; ls /home /root 2>&1 | head -2',
      ],
      {
        timeoutMs: 10_000,
        sandbox: bare,
      },
    );
    const [count, caps] = r.stdout.split('\n');
    expect(Number(count)).toBeLessThanOrEqual(5);
    expect(caps).toBe('CapEff:\t0000000000000000');
    expect(r.stdout).not.toMatch(/\bup\b/);
    expect(r.stdout).toMatch(/cannot access '\/home'/);
  });

  it('leaves the kernel settings, /dev and new user namespaces out of reach, and caps /dev/shm (as root too)', async () => {
    // Opening for writing writes nothing: on the host these files stay as they are, whatever happens.
    const script = [
      'for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/perf_event_paranoid /proc/irq/default_smp_affinity /dev/ngcc-new; do',
      '  if [ -e "$f" ] || [ "$f" = /dev/ngcc-new ]; then ( : >> "$f" ) 2>/dev/null && echo "writable $f" || echo "refused $f"; fi',
      'done',
      'unshare -U true 2>/dev/null && echo "userns made" || echo "userns refused"',
      'df -k /dev/shm | tail -1',
    ].join('\n');
    const r = await runProcess(['sh', '-c', script], { timeoutMs: 10_000, sandbox: bare });
    expect(r.stdout).toContain('refused /proc/sys/kernel/core_pattern');
    expect(r.stdout).toContain('refused /dev/ngcc-new');
    expect(r.stdout).not.toContain('writable');
    expect(r.stdout).toContain('userns refused');
    expect(Number(r.stdout.trim().split('\n').at(-1)!.split(/\s+/)[1])).toBe(1 << 20);
  });

  it("hides the host's activity (/proc/stat, /proc/loadavg, /proc/pressure/*, …) and keeps the process's own /proc", async () => {
    const files = ['stat', 'loadavg', 'schedstat', 'interrupts', 'softirqs', 'vmstat', 'diskstats', 'timer_list', 'zoneinfo', 'buddyinfo']
      .concat(['cpu', 'io', 'memory', 'irq'].map((p) => `pressure/${p}`))
      .map((f) => `/proc/${f}`);
    const script = [
      `for f in ${files.join(' ')}; do`,
      '  if [ -e "$f" ]; then n=$(cat "$f" 2>/dev/null | wc -c); echo "$f $n"; fi',
      'done',
      'wc -c < /proc/self/stat',
    ].join('\n');
    // The same files outside have content (those this user may read): the test would pass for nothing otherwise.
    const hasContent = (f: string) => {
      try {
        return readFileSync(f, 'utf8').length > 0;
      } catch {
        return false;
      }
    };
    expect(files.filter(hasContent)).toEqual(
      expect.arrayContaining(['/proc/stat', '/proc/loadavg', '/proc/diskstats', '/proc/zoneinfo', '/proc/buddyinfo']),
    );
    const r = await runProcess(['sh', '-c', script], { timeoutMs: 10_000, sandbox: bare });
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, -1)).toEqual(files.filter((f) => existsSync(f)).map((f) => `${f} 0`));
    expect(Number(lines.at(-1))).toBeGreaterThan(0);
  });

  it('leaves glibc and valgrind what they read: the CPUs online, a program run under valgrind', async () => {
    const r = await runProcess(['sh', '-c', 'getconf _NPROCESSORS_ONLN; valgrind -q --tool=memcheck /bin/true && echo valgrind ok'], {
      timeoutMs: 60_000,
      sandbox: bare,
    });
    const [cpus, valgrind] = r.stdout.trim().split('\n');
    expect(Number(cpus), r.stderr).toBeGreaterThanOrEqual(1);
    expect(valgrind, r.stderr).toBe('valgrind ok');
  });

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
        .filter((n) => n !== 'PWD')
        .sort();
      // (The shell that starts the command may set PWD, the folder it starts in.)
      expect(names).toEqual(['HOME', 'LC_ALL', 'PATH', 'TMPDIR', ...['LANG', 'TZ'].filter((v) => process.env[v] !== undefined)].sort());
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

  it('cannot write to its root, the system or /dev', async () => {
    const r = await runProcess(
      ['sh', '-c', 'for p in /x /usr/x /etc/x /dev/x; do : > $p 2>/dev/null && echo "wrote $p"; done; mkdir /w 2>&1'],
      {
        timeoutMs: 10_000,
        sandbox: bare,
      },
    );
    expect(r.stdout).not.toContain('wrote');
    expect(r.stdout + r.stderr).toMatch(/Read-only file system/);
  });

  it('cannot undo its mounts: no remount of its root, no unmount of /proc/sys, as root too', async () => {
    // Each attempt says so only when it succeeds; `command -v` shows the tools were there to try.
    const script = [
      'command -v mount; command -v umount',
      'mount -o remount,rw / 2>/dev/null && echo "remounted /"',
      'mount -o remount,rw,bind /usr 2>/dev/null && echo "remounted /usr"',
      'umount /proc/sys 2>/dev/null && echo "unmounted /proc/sys"',
      'umount -l /proc/sys 2>/dev/null && echo "unmounted /proc/sys lazily"',
      '( : >> /proc/sys/kernel/core_pattern ) 2>/dev/null && echo "writable core_pattern"',
      ': > /ngcc-x 2>/dev/null && echo "wrote /ngcc-x"',
    ].join('\n');
    const r = await runProcess(['sh', '-c', script], { timeoutMs: 10_000, sandbox: bare });
    expect(r.stdout.trim().split('\n').slice(0, 2)).toEqual([expect.stringMatching(/\/mount$/), expect.stringMatching(/\/umount$/)]);
    expect(r.stdout).not.toMatch(/remounted|unmounted|writable|wrote/);
  });

  it('does not start, rather than start without it, when a path it is to bind is missing', async () => {
    const missing = join(tempDir(), 'gone');
    const r = await runProcess(['echo', 'started'], { timeoutMs: 10_000, sandbox: { mode, readOnly: [missing], writable: [] } });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toContain('started');
  });

  it('writes only where the spec says', async () => {
    const out = tempDir();
    const other = tempDir();
    const r = await runProcess(['sh', '-c', `echo x > ${out}/ok; echo x > ${other}/no; ls ${other}`], {
      timeoutMs: 10_000,
      sandbox: { mode, readOnly: [], writable: [out] },
    });
    expect(r.stderr).toMatch(/no: Directory nonexistent/);
    expect(existsSync(join(out, 'ok'))).toBe(true);
    expect(existsSync(join(other, 'no'))).toBe(false);
  });

  it('binds a file and folders whose names hold blanks and a backslash, read-only where the spec says', async () => {
    const base = join(tempDir(), 'a b\\c');
    const lib = join(base, 'lib one.so');
    const out = join(base, 'out\tdir');
    mkdirSync(out, { recursive: true });
    writeFileSync(lib, 'library');
    const q = (p: string) => `'${p}'`;
    const r = await runProcess(['sh', '-c', `cat ${q(lib)}; echo x > ${q(out)}/ok; echo y > ${q(lib)} || echo refused`], {
      timeoutMs: 10_000,
      sandbox: { mode, readOnly: [lib], writable: [out] },
    });
    expect(r.stdout).toBe('libraryrefused\n');
    expect(readFileSync(join(out, 'ok'), 'utf8')).toBe('x\n');
    expect(readFileSync(lib, 'utf8')).toBe('library');
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

  it('refuses a host where a driver cannot seal itself to its cores, naming seccomp and the opt-out', async () => {
    // Stands in for the probe on a kernel without seccomp filters (none here): the counter as the
    // real probe gives it inside and outside, then the lock's failure as the probe says it.
    const fake = join(tempDir(), 'ngcc_probe');
    writeFileSync(
      fake,
      "#!/bin/sh\nprintf 'COUNTER\\trdtsc\\t1000\\nRATE\\t1000000\\nKERNEL\\tread-only\\nSEAL\\tfailed\\tseccomp: Invalid argument\\n'\n",
    );
    chmodSync(fake, 0o755);
    const e = await probeSandbox({ mode: 'bwrap', probeTool: fake, cpu: 0 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).toMatch(
      /^ngcc-perf\.yml: sandbox: a driver inside the sandbox cannot keep the code it loads on its own cores \(seccomp: Invalid argument\): .*CONFIG_SECCOMP_FILTER.*set `sandbox: none`/,
    );
  });

  it('refuses a sandbox in which the kernel settings are writable, naming the unprivileged user', async () => {
    // Stands in for the probe where bubblewrap left /proc/sys writable to a root runner (this one no longer does).
    const fake = join(tempDir(), 'ngcc_probe');
    writeFileSync(fake, "#!/bin/sh\nprintf 'COUNTER\\trdtsc\\t1000\\nRATE\\t1000000\\nKERNEL\\twritable\\nSEAL\\theld\\n'\n");
    chmodSync(fake, 0o755);
    const e = await probeSandbox({ mode: 'bwrap', probeTool: fake, cpu: 0 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).toMatch(
      /can write the kernel's settings \(\/proc\/sys\/kernel\/core_pattern\).*run the runner as an unprivileged user/,
    );
  });

  it('refuses a sandbox in which a driver gets another cycle counter than outside, or none, naming the CPU', async () => {
    // Stands in for the probe: its folder shows a marker file outside the sandbox only, and the
    // script answers by it.
    for (const [inside, why] of [
      [
        "printf 'COUNTER\\tperf\\t1000\\nRATE\\t1000000\\nKERNEL\\tread-only\\nSEAL\\theld\\n'",
        /gets the cycle counter perf, outside rdtsc/,
      ],
      ["echo 'cannot pin to cpu 0'; exit 2", /cannot pin itself to CPU 0 or read the cycle counter \(cannot pin to cpu 0\)/],
    ] as const) {
      const dir = tempDir();
      writeFileSync(join(dir, 'outside'), '');
      const fake = join(dir, 'ngcc_probe');
      writeFileSync(
        fake,
        `#!/bin/sh\nif [ -e "$(dirname "$0")/outside" ]; then printf 'COUNTER\\trdtsc\\t1000\\nRATE\\t1000000\\nKERNEL\\tread-only\\nSEAL\\theld\\n'; else ${inside}; fi\n`,
      );
      chmodSync(fake, 0o755);
      const e = await probeSandbox({ mode: 'bwrap', probeTool: fake, cpu: 0 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(InputError);
      expect((e as Error).message).toMatch(why);
      expect((e as Error).message).toMatch(/set `sandbox: none`/);
    }
  });

  it('passes with sandbox: unshare too, and `auto` is bwrap here, unshare without bwrap on PATH', async () => {
    await expect(probeSandbox({ mode: 'unshare', probeTool, cpu: 0 })).resolves.toMatchObject({ counterHz: expect.any(Number) });
    expect(resolveSandbox('auto')).toBe('bwrap');
    expect(resolveSandbox('unshare')).toBe('unshare');
    const saved = process.env.PATH;
    const bin = tempDir();
    // PATH without /usr/bin (bwrap's home) but with setpriv and unshare, as a host without bubblewrap.
    for (const tool of ['setpriv', 'unshare']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    process.env.PATH = `${bin}:/usr/sbin:/sbin`;
    try {
      expect(resolveSandbox('auto')).toBe('unshare');
    } finally {
      process.env.PATH = saved;
    }
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
