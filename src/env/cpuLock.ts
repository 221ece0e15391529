import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, mkdirSync, chmodSync, openSync, readSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { runProcess } from '../sandbox/runProcess.js';
import { formatCpuList } from './cpus.js';

/**
 * One core, one measurement, per host: a lock file per CPU that every ngcc-perf process pinning a
 * timing or profiling process to that CPU holds meanwhile, whichever job, shard or user it runs for.
 *
 * The lock is flock(2) on our own open file, taken by flock(1) (util-linux) on the descriptor it
 * inherits: the lock belongs to the open file, so it stays ours after flock(1) exits and the kernel
 * drops it when this process ends in any way, SIGKILL and OOM included. No pid decides whether a
 * lock is stale (pids are reused, and runners in containers see other pid namespaces), no holder
 * process outlives us, and a waiter sleeps in the kernel and is woken when the core is released.
 */

/** The variable that moves the lock folder (e.g. to a folder bind-mounted into every runner's container). */
const CPU_LOCK_DIR_VARIABLE = 'NGCC_PERF_CPU_LOCK_DIR';
/**
 * Fixed rather than os.tmpdir() or $XDG_RUNTIME_DIR: those follow TMPDIR or the user, which may
 * differ between the runners of one host, and then the runners would not see each other's locks.
 */
const DEFAULT_CPU_LOCK_DIR = '/tmp/ngcc-perf-cpu-locks';

/** How long one blocking wait lasts before the waiter says it still waits. */
const REPORT_EVERY_S = 60;
/** With several cores to choose from, each blocking wait is this short, so that any core freed is seen soon. */
const ROTATE_EVERY_S = 1;

function cpuLockDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[CPU_LOCK_DIR_VARIABLE]?.trim();
  return configured ? resolve(configured) : DEFAULT_CPU_LOCK_DIR;
}

export const cpuLockFile = (dir: string, cpu: number): string => join(dir, `cpu${cpu}.lock`);

/** What a holder writes into the lock file for whoever waits. */
export interface CoreHolder {
  pid: number;
  host: string;
  since_utc: string;
  /** The run and the work (e.g. `ngcc-perf, system x86_1 shard 1/2 into DATA_DIR/x86_1: kem-1/good measure,profile`). */
  what: string;
}

export interface CoreLease {
  cpu: number;
  acquired_utc: string;
  /** Seconds spent taking a core: a few milliseconds when one was free, the wait when none was. */
  waited_s: number;
  /** Gives the core back; calling it again does nothing. The kernel does the same when this process ends. */
  release(): void;
}

export interface LockCoreOptions {
  /** Shown to whoever waits for the core while this lease holds it. */
  what: string;
  /** The lock folder (default: cpuLockDir()). */
  dir?: string;
  /** A line about a wait (who holds the cores), when it starts and every REPORT_EVERY_S while it lasts. */
  onWait?(line: string): void;
  /** Take a core only if one is free now: otherwise throw CoreBusy, naming who holds them (the doctor's probes). */
  noWait?: boolean;
}

/** Every wanted core was held, and the caller would not wait (LockCoreOptions.noWait). */
export class CoreBusy extends Error {}

/** Cores this process holds, per lock folder: asking for one again would wait for ourselves forever. */
const held = new Set<string>();

/**
 * Takes one of `cpus` (the first free one, in the order given), waiting while all are held. Throws an
 * InputError naming the lock folder when it cannot be used, or when flock(1) is missing.
 */
export async function lockCore(cpus: readonly number[], opts: LockCoreOptions): Promise<CoreLease> {
  if (cpus.length === 0) throw new Error('lockCore: no CPU to lock');
  const dir = opts.dir ?? cpuLockDir();
  const mine = (cpu: number) => `${dir}\0${cpu}`;
  const wanted = [...new Set(cpus)].filter((cpu) => !held.has(mine(cpu)));
  if (wanted.length === 0) throw new Error(`lockCore: this process already holds CPU ${formatCpuList([...cpus])}`);
  openLockDir(dir);
  const files = new Map<number, LockFile>();
  try {
    for (const cpu of wanted) files.set(cpu, openLockFile(cpuLockFile(dir, cpu), dir));
  } catch (e) {
    for (const f of files.values()) closeSync(f.fd);
    throw e;
  }
  const fds = new Map([...files].map(([cpu, f]) => [cpu, f.fd]));
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
  let cpu: number;
  try {
    cpu = await takeOne(fds, wanted, dir, elapsed, opts.onWait, opts.noWait === true);
  } catch (e) {
    for (const fd of fds.values()) closeSync(fd);
    throw e;
  }
  for (const [other, fd] of fds) if (other !== cpu) closeSync(fd);
  const { fd, writable } = files.get(cpu)!;
  const acquired = new Date().toISOString();
  const holder: CoreHolder = { pid: process.pid, host: hostname(), since_utc: acquired, what: opts.what };
  if (writable) {
    ftruncateSync(fd, 0);
    writeSync(fd, `${JSON.stringify(holder)}\n`, 0);
  }
  held.add(mine(cpu));
  let released = false;
  return {
    cpu,
    acquired_utc: acquired,
    waited_s: Math.round(elapsed() * 1000) / 1000,
    release() {
      if (released) return;
      released = true;
      held.delete(mine(cpu));
      // Emptied while still ours, so that nobody reads a holder that has gone.
      if (writable) ftruncateSync(fd, 0);
      closeSync(fd);
    },
  };
}

/**
 * The first of `wanted` whose lock is free, else a blocking wait in the kernel: on the one core for
 * REPORT_EVERY_S at a time, or in turn on each of several for ROTATE_EVERY_S.
 */
async function takeOne(
  fds: Map<number, number>,
  wanted: number[],
  dir: string,
  elapsed: () => number,
  onWait: LockCoreOptions['onWait'],
  noWait: boolean,
): Promise<number> {
  let told = 0;
  for (let round = 0; ; round++) {
    for (const [cpu, fd] of fds) if (await flock(fd, dir)) return cpu;
    if (noWait) throw new CoreBusy(`${waitedFor(wanted)}${holders(fds)}`);
    if (round === 0) onWait?.(`waits for ${waitedFor(wanted)}${holders(fds)}`);
    else if (elapsed() - told >= REPORT_EVERY_S) {
      told = elapsed();
      onWait?.(`still waits for ${waitedFor(wanted)} after ${Math.round(told)} s${holders(fds)}`);
    }
    const target = wanted[round % wanted.length]!;
    if (await flock(fds.get(target)!, dir, wanted.length === 1 ? REPORT_EVERY_S : ROTATE_EVERY_S)) return target;
  }
}

const waitedFor = (cpus: number[]) =>
  cpus.length === 1 ? `CPU ${cpus[0]}` : `a free CPU of ${formatCpuList([...cpus].sort((a, b) => a - b))}`;

/** Who holds each of the cores, as their lock files say: ', held by …' for one, ': CPU 2 held by …; CPU 3 held by …' for several. */
function holders(fds: Map<number, number>): string {
  const told = [...fds].map(([cpu, fd]) => {
    const h = holderOf(fd);
    const who = h && !gone(h) ? describeHolder(h) : 'another process (it recorded no holder)';
    return fds.size === 1 ? `held by ${who}` : `CPU ${cpu} held by ${who}`;
  });
  return `${fds.size === 1 ? ',' : ':'} ${told.join('; ')}`;
}

/**
 * A holder of this host that no longer runs: its line outlived it in a file it could not empty (one
 * we may only read), so whoever holds the core now recorded nothing.
 */
function gone(h: CoreHolder): boolean {
  if (h.host !== hostname()) return false;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The holder as a waiter's line names it: what it does first (a narrow terminal cuts the end), then who and since when. */
function describeHolder(h: CoreHolder): string {
  return `${h.what}, pid ${h.pid}${h.host !== hostname() ? ` on ${h.host}` : ''} since ${h.since_utc}`;
}

/** The holder a lock file names, read through our own descriptor (the file may change meanwhile). */
function holderOf(fd: number): CoreHolder | undefined {
  const buf = Buffer.alloc(4096);
  const n = readSync(fd, buf, 0, buf.length, 0);
  try {
    const h = JSON.parse(buf.subarray(0, n).toString('utf8')) as Partial<CoreHolder>;
    return typeof h.pid === 'number' && typeof h.what === 'string'
      ? { pid: h.pid, host: String(h.host ?? ''), since_utc: String(h.since_utc ?? ''), what: h.what }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The holder of one core's lock file, or undefined when it names none (free, or being taken). */
export function coreHolder(cpu: number, dir: string = cpuLockDir()): CoreHolder | undefined {
  let fd: number;
  try {
    fd = openSync(cpuLockFile(dir, cpu), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    return holderOf(fd);
  } finally {
    closeSync(fd);
  }
}

const unusable = (path: string, dir: string, why: string) =>
  new InputError(
    path,
    '',
    `${why}; every ngcc-perf run on this host must be able to open the CPU lock files: make ${dir} writable for them, or set ${CPU_LOCK_DIR_VARIABLE} to a folder they share`,
  );

const codeOf = (e: unknown) => (e as NodeJS.ErrnoException).code ?? String(e);

/** The lock folder; created as /tmp is (anyone may add a file, only its owner remove it), for runners under several users. */
function openLockDir(dir: string): void {
  try {
    if (mkdirSync(dir, { recursive: true }) !== undefined) chmodSync(dir, 0o1777);
  } catch (e) {
    throw unusable(dir, dir, `cannot create the CPU lock folder (${codeOf(e)})`);
  }
}

/** A lock file open for locking; `writable` when the holder can be written into it. */
interface LockFile {
  fd: number;
  writable: boolean;
}

/**
 * Opens (or creates) a lock file, never through a symbolic link, and only a regular file. An existing
 * file is opened without O_CREAT: in a sticky folder the kernel refuses O_CREAT on another user's file
 * (fs.protected_regular) even when it may be opened. One we may only read (made by an operator's
 * flock(1) under their umask) locks as well; its holder line is then not written.
 */
function openLockFile(path: string, dir: string): LockFile {
  const flags = constants.O_NOFOLLOW;
  for (let attempt = 0; attempt < 3; attempt++) {
    let file: LockFile;
    try {
      file = { fd: openSync(path, flags | constants.O_RDWR), writable: true };
    } catch (e) {
      if (codeOf(e) === 'EACCES') file = openReadOnly(path, dir);
      else if (codeOf(e) !== 'ENOENT') throw unusable(path, dir, `cannot open the CPU lock file (${codeOf(e)})`);
      else
        try {
          file = { fd: openSync(path, flags | constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o666), writable: true };
          // Other users' runners open it too; the umask would keep them out.
          fchmodSync(file.fd, 0o666);
        } catch (e2) {
          if (codeOf(e2) === 'EEXIST') continue;
          throw unusable(path, dir, `cannot create the CPU lock file (${codeOf(e2)})`);
        }
    }
    if (!fstatSync(file.fd).isFile()) {
      closeSync(file.fd);
      throw unusable(path, dir, 'the CPU lock file is not a regular file');
    }
    return file;
  }
  throw unusable(path, dir, 'the CPU lock file keeps appearing and vanishing');
}

function openReadOnly(path: string, dir: string): LockFile {
  try {
    return { fd: openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW), writable: false };
  } catch (e) {
    throw unusable(path, dir, `cannot open the CPU lock file (${codeOf(e)})`);
  }
}

/**
 * flock(1) on our descriptor `fd`: at once (no `waitS`) or waiting up to `waitS` seconds. True when
 * the lock is ours. A flock(1) killed just after it took the lock leaves it ours too: the next call
 * on the same descriptor then succeeds at once.
 */
async function flock(fd: number, dir: string, waitS?: number): Promise<boolean> {
  const args = waitS === undefined ? ['-x', '-n', '3'] : ['-x', '-w', String(waitS), '3'];
  const r = await runProcess(['flock', ...args], { timeoutMs: ((waitS ?? 0) + 30) * 1000, inheritFd: fd, maxOutputBytes: 4096 });
  if (r.exitCode === 0) return true;
  if (r.exitCode === 1 || r.timedOut) return false;
  if (/ENOENT/.test(r.stderr))
    throw new InputError(
      'flock',
      '',
      'flock (util-linux) is not installed or not on PATH: ngcc-perf needs it to keep the timing processes of several runs on this host apart, one run per core',
    );
  const said = r.stderr.trim().split('\n')[0] ?? '';
  throw unusable(dir, dir, `flock failed (exit ${r.exitCode ?? r.signal}${said ? `: ${said}` : ''})`);
}
