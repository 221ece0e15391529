import { AsyncLocalStorage } from 'node:async_hooks';
import { type ChildProcess, spawn, spawnSync, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { constants } from 'node:os';
import { bwrapArgs, hostSystemView, sandboxEnv, unshareArgv, type SandboxSpec, type SystemView } from './bwrap.js';
import { processTree, treeAtRest, treeCpuSeconds, treeTasks } from './cpuTime.js';

export interface RunOptions {
  cwd?: string;
  /** Kills the whole process group after this long. */
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is counted and dropped. */
  maxOutputBytes?: number;
  /** Extra variables on top of the scrubbed base environment. */
  env?: Record<string, string>;
  /** Address-space limit in bytes (prlimit --as), against submissions that eat memory. */
  memoryLimitBytes?: number;
  /** Kill the group as soon as stdout or stderr passes maxOutputBytes, instead of dropping the rest. */
  stopAtOutputLimit?: boolean;
  /**
   * Open a result channel on fd 3 and send this secret down it first (runDriver does; see
   * docs/native-protocol.md#the-channel). What comes back is in RunResult.channel.
   */
  channelSecret?: string;
  /** The driver's job, sent as one tab-separated line after the secret. */
  channelJob?: string[];
  /**
   * What the parent answers to a named MARK besides GO (`GO\tVALUE`): a timing trial's `seed`,
   * sent only once the library is loaded (docs/native-protocol.md#marks). A function is called when
   * the mark comes, before the answer: dec's `inputs` are put in place only then.
   */
  markAnswers?: Record<string, string | (() => string)>;
  /**
   * With channelSecret: a MARK may move the deadline. Called with the mark's name and the seconds
   * since the start; a number is the new timeout (milliseconds from the start), taken when it is
   * later than the current one. Each name counts once: a driver's first KAT record says how long
   * the rest will take (src/measure/cost.ts).
   */
  timeoutOnMark?: (name: string, wall_s: number) => number | undefined;
  /** Bytes kept of the channel (default 4 MiB): a KAT's text comes this way. */
  channelMaxBytes?: number;
  /**
   * With channelSecret: one more pipe, the child's fd 4, kept up to this many bytes in
   * RunResult.side. A tool wrapped around the driver writes there (valgrind's --xml-fd), out of
   * reach of the driver's stdout and stderr, which the library shares.
   */
  sideMaxBytes?: number;
  /**
   * An open file of this process that the child gets as its fd 3 (not with channelSecret, whose
   * channel is fd 3): flock(1) locks that open file, so the lock outlives the child and stays ours.
   */
  inheritFd?: number;
  /**
   * With channelSecret (and without sideMaxBytes): an open file of this process that the driver gets
   * as its fd 4: dec's timed inputs, which only the timing driver's trusted half keeps (native/core/held.h).
   */
  heldInputsFd?: number;
  /**
   * What the process may reach. Every process that compiles or runs submission code passes one
   * (mode `bwrap` unless the campaign opted out); trusted tools (git, tar) run without.
   */
  sandbox?: SandboxSpec;
}

export interface RunResult {
  command: string[];
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** True when either stream was cut at maxOutputBytes. */
  truncated: boolean;
  /** The stream that passed maxOutputBytes when stopAtOutputLimit ended the run. */
  outputLimit?: 'stdout' | 'stderr';
  /** What arrived on the result channel (only with channelSecret), undecoded, and its marks. */
  channel?: { text: string; truncated: boolean; marks: ChannelMark[] };
  /** What arrived on fd 4 (only with sideMaxBytes), undecoded. */
  side?: { text: string; truncated: boolean };
  wallSeconds: number;
  /** The cores it was confined to (withCpus), when it was. */
  cpus?: number[];
}

/**
 * A driver's MARK line (docs/native-protocol.md#marks): the driver waits until it is answered, and
 * before answering the parent reads the clock and the CPU time the kernel charged the process tree.
 */
export interface ChannelMark {
  name: string;
  /** Seconds since the process started, on the parent's clock, when the mark arrived (the driver stopped). */
  wall_s: number;
  /**
   * The same clock when the answer went out (the driver resumes): a window begins here, not at
   * wall_s, since reading the tree's CPU time in between (a walk of /proc, 1–3 ms) is time the
   * driver spent waiting, not running. Absent on marks read before the answer was timed.
   */
  resumed_s?: number;
  /** CPU seconds charged to the process and its descendants so far. */
  cpu_s: number;
  /** Threads of the process and its descendants (the sandbox's own included). */
  tasks?: number;
}

const DEFAULT_MAX_OUTPUT = 1 << 20;
/** How long a mark's reading waits, in steps of 50 µs, for the driver to stop running. */
const MARK_SETTLE_NS = 10_000_000n;
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));
/** Bytes kept of a result channel: far more than any driver writes (ngcc_prof's CALL lines). */
const CHANNEL_MAX = 4 << 20;
/**
 * How long to wait for the pipes to close once the child exited and its group was killed: they
 * close at once unless something outside the group holds them, and then we stop waiting.
 */
const EXIT_GRACE_MS = 1000;

/**
 * Variables a child may see. Everything else — tokens, secrets, runner internals — stays with us:
 * submissions are untrusted code on self-hosted runners.
 */
const PASSED_VARIABLES = ['PATH', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];

function scrubbedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/nonexistent', LC_ALL: 'C' };
  for (const name of PASSED_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * Process groups of the children running now. Each child leads its own group (so a timeout can
 * kill its grandchildren), which also means a Ctrl-C at the terminal never reaches it: whoever
 * stops this process must kill these groups, or a spinning submission outlives us.
 */
const liveGroups = new Set<number>();

/** The process group ids of the children still running. */
export function liveProcessGroups(): number[] {
  return [...liveGroups];
}

/** SIGKILLs every running child's whole group; returns how many groups there were. */
export function killLiveProcessGroups(): number {
  const groups = [...liveGroups];
  liveGroups.clear();
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* ended on its own meanwhile */
    }
  }
  return groups.length;
}

/**
 * The cores the processes started inside `work` may run on (its async calls included): a run's
 * builds, KATs and surveys stay off the cores it times on (campaign/schedule.ts). A driver that
 * pins itself to a timing core is not started in such a scope.
 */
const affinity = new AsyncLocalStorage<readonly number[]>();

export function withCpus<T>(cpus: readonly number[] | undefined, work: () => Promise<T>): Promise<T> {
  return cpus && cpus.length > 0 ? affinity.run(cpus, work) : work();
}

/** The cores the work under way is confined to (withCpus), or undefined. */
export const confinedCpus = (): readonly number[] | undefined => affinity.getStore();

/** The one way this project starts a child process. */
export function runProcess(command: string[], opts: RunOptions): Promise<RunResult> {
  const [file, ...args] = command;
  if (!file) throw new Error('runProcess: empty command');
  const limited = opts.memoryLimitBytes ? ['prlimit', `--as=${opts.memoryLimitBytes}`, '--', file, ...args] : [file, ...args];
  const cpus = affinity.getStore();
  const env = scrubbedEnv(opts.env);
  // prlimit runs inside, so the cap binds the command, not bwrap; the unshare sandbox's own shell sets it.
  const sandbox = opts.sandbox?.mode === 'bwrap' || opts.sandbox?.mode === 'unshare' ? opts.sandbox : undefined;
  const contained = containedArgv(sandbox, { limited, bare: [file, ...args] }, env, opts);
  // Outermost, so that the sandbox and everything in it inherit the mask.
  const argv = cpus ? ['taskset', '-c', cpus.join(','), ...contained] : contained;
  const channel = opts.channelSecret !== undefined;
  const spec: ChildSpec = {
    opts,
    argv,
    env,
    limited,
    cpus,
    limit: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
    sandboxed: sandbox !== undefined,
    channel,
    withSide: channel && opts.sideMaxBytes !== undefined,
    started: process.hrtime.bigint(),
  };
  return new Promise((resolve) => superviseChild(spec, resolve));
}

/** The command as its sandbox runs it: `limited` (prlimit first) inside bwrap, the bare command inside unshare's shell. */
function containedArgv(
  sandbox: SandboxSpec | undefined,
  command: { limited: string[]; bare: string[] },
  env: Record<string, string>,
  opts: RunOptions,
): string[] {
  // The host's view is read once, at the first sandboxed process.
  const inside = () => ({ env: sandboxEnv(env), cwd: opts.cwd, system: systemView() });
  return sandbox?.mode === 'bwrap'
    ? ['bwrap', ...bwrapArgs(sandbox, inside()), '--', ...command.limited]
    : sandbox?.mode === 'unshare'
      ? unshareArgv(sandbox, { ...inside(), addressSpaceBytes: opts.memoryLimitBytes || undefined }, command.bare)
      : command.limited;
}

/** What runProcess settles before the spawn: how the child starts, and what its result reports. */
interface ChildSpec {
  opts: RunOptions;
  /** The whole command line: taskset, the sandbox, prlimit, the command. */
  argv: string[];
  env: Record<string, string>;
  /** The command as its result names it: with its prlimit, without the sandbox or taskset. */
  limited: string[];
  cpus: readonly number[] | undefined;
  /** Bytes kept of stdout and of stderr each. */
  limit: number;
  sandboxed: boolean;
  /** A result channel on fd 3 (channelSecret). */
  channel: boolean;
  /** A side pipe on fd 4 (channelSecret and sideMaxBytes). */
  withSide: boolean;
  started: bigint;
}

/** One child from its spawn to its result: the state its handlers share. */
interface LiveChild {
  readonly spec: ChildSpec;
  readonly child: ChildProcess;
  readonly pgid: number | undefined;
  timedOut: boolean;
  done: boolean;
  outputLimit?: RunResult['outputLimit'];
  deadlineMs: number;
  timer?: NodeJS.Timeout;
  grace?: NodeJS.Timeout;
}

type Collector = ReturnType<typeof collector>;

/** What the child's output is kept in, and the streams its end closes. */
interface ChildOutput {
  out: Collector;
  err: Collector;
  chan: Collector;
  side: Collector;
  sideStream: Readable | null;
  channelStream: (Readable & Writable) | null;
  marks: ChannelMark[];
}

type Finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => void;

/** Starts the child, leader of its own process group, and resolves with its result once it ended. */
function superviseChild(spec: ChildSpec, resolve: (result: RunResult) => void): void {
  const { opts } = spec;
  const child = spawn(spec.argv[0]!, spec.argv.slice(1), {
    cwd: opts.cwd,
    env: spec.env,
    // Own process group, so a timeout kills grandchildren too.
    detached: true,
    // fd 3: the driver's result channel, a socket pair (the secret goes down, lines come back).
    stdio: childStdio(spec),
  });
  const pgid = child.pid;
  if (pgid !== undefined) liveGroups.add(pgid);
  const live: LiveChild = { spec, child, pgid, timedOut: false, done: false, deadlineMs: opts.timeoutMs };
  const output = collectOutput(live);
  startDeadline(live);
  watchEnd(live, finisher(live, output, resolve));
}

function childStdio(spec: ChildSpec): StdioOptions {
  const { opts } = spec;
  return spec.channel
    ? [
        'ignore',
        'pipe',
        'pipe',
        'pipe',
        ...(spec.withSide ? (['pipe'] as const) : opts.heldInputsFd !== undefined ? [opts.heldInputsFd] : []),
      ]
    : opts.inheritFd !== undefined
      ? ['ignore', 'pipe', 'pipe', opts.inheritFd]
      : ['ignore', 'pipe', 'pipe'];
}

/** Keeps the child's stdout, stderr and side pipe, each up to its cap, and opens its result channel. */
function collectOutput(live: LiveChild): ChildOutput {
  const { opts, limit, channel, withSide } = live.spec;
  const overLimit = (stream: 'stdout' | 'stderr') => () => {
    if (!opts.stopAtOutputLimit || live.outputLimit) return;
    live.outputLimit = stream;
    killGroup(live.pgid);
  };
  const out = collector(limit, overLimit('stdout'));
  const err = collector(limit, overLimit('stderr'));
  const chan = collector(opts.channelMaxBytes ?? CHANNEL_MAX);
  const side = collector(opts.sideMaxBytes ?? 0);
  const sideStream = withSide ? (live.child.stdio[4] as Readable | null) : null;
  sideStream?.on('error', () => undefined);
  sideStream?.on('data', side.push);
  live.child.stdout!.on('data', out.push);
  live.child.stderr!.on('data', err.push);
  const channelStream = channel ? (live.child.stdio[3] as (Readable & Writable) | null) : null;
  const marks: ChannelMark[] = [];
  if (channelStream) openChannel(live, channelStream, chan, marks);
  return { out, err, chan, side, sideStream, channelStream, marks };
}

/** Keeps what comes back on the result channel and answers its marks; sends the secret and the job down it. */
function openChannel(live: LiveChild, channelStream: Readable & Writable, chan: Collector, marks: ChannelMark[]): void {
  const { opts, started } = live.spec;
  const extendedBy = new Set<string>();
  // A driver that dies before reading the secret closes its end: not our error.
  channelStream.on('error', () => undefined);
  const markPrefix = `${opts.channelSecret}\tMARK\t`;
  const answerMarks = markWatcher(markPrefix, (name) => {
    const mark = readMark(live, name);
    marks.push(mark);
    extendDeadline(live, extendedBy, name, mark.wall_s);
    // The name comes from the driver's process: only the parent's own answers count.
    const answer = opts.markAnswers && Object.hasOwn(opts.markAnswers, name) ? opts.markAnswers[name] : undefined;
    const value = typeof answer === 'function' ? answer() : answer;
    mark.resumed_s = secondsSince(started);
    channelStream.write(value === undefined ? 'GO\n' : `GO\t${value}\n`);
  });
  channelStream.on('data', (chunk: Buffer) => {
    chan.push(chunk);
    answerMarks(chunk);
  });
  channelStream.write(`${opts.channelSecret}\n${(opts.channelJob ?? []).join('\t')}\n`);
}

/** A mark as it arrives: the parent's clock, then the CPU time and threads of the child's tree once the driver stopped. */
function readMark(live: LiveChild, name: string): ChannelMark {
  const wall_s = secondsSince(live.spec.started);
  // Once the driver is blocked reading its answer, what it has used so far is exact: wait for
  // that (a few microseconds), but not for a thread of the library that never stops.
  const until = process.hrtime.bigint() + MARK_SETTLE_NS;
  const tree = live.pgid !== undefined ? processTree(live.pgid) : [];
  while (tree.length > 0 && !treeAtRest(tree) && process.hrtime.bigint() < until) Atomics.wait(SLEEPER, 0, 0, 0.05);
  return { name, wall_s, cpu_s: treeCpuSeconds(tree), tasks: treeTasks(tree) };
}

/** Moves the deadline to where timeoutOnMark puts it for this mark, when that is later. */
function extendDeadline(live: LiveChild, extendedBy: Set<string>, name: string, wall_s: number): void {
  // The name comes from the driver's process: once per name, and only later, never sooner.
  const later = !extendedBy.has(name) ? live.spec.opts.timeoutOnMark?.(name, wall_s) : undefined;
  extendedBy.add(name);
  if (later !== undefined && later > live.deadlineMs) rearm(live, later);
}

function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function killGroup(pgid: number | undefined): void {
  try {
    if (pgid !== undefined) process.kill(-pgid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

function expire(live: LiveChild): void {
  live.timedOut = true;
  killGroup(live.pgid);
}

function startDeadline(live: LiveChild): void {
  live.timer = setTimeout(() => expire(live), live.deadlineMs);
}

/** The deadline moved to `ms` milliseconds from the start. */
function rearm(live: LiveChild, ms: number): void {
  clearTimeout(live.timer);
  live.deadlineMs = ms;
  live.timer = setTimeout(() => expire(live), Math.max(0, ms - Number(process.hrtime.bigint() - live.spec.started) / 1e6));
}

/** The run's end, taken once: the group reaped, the pipes closed, the result given. */
function finisher(live: LiveChild, output: ChildOutput, resolve: (result: RunResult) => void): Finish {
  const { spec, child, pgid } = live;
  const { out, err, chan, side } = output;
  return (exitCode, signal, spawnError) => {
    if (live.done) return;
    live.done = true;
    clearTimeout(live.timer);
    clearTimeout(live.grace);
    // A child that exited may have left its group behind (daemonised loops): reap them.
    killGroup(pgid);
    if (pgid !== undefined) liveGroups.delete(pgid);
    for (const s of [child.stdout, child.stderr, output.channelStream, output.sideStream]) s?.destroy();
    resolve({
      command: spec.limited,
      ...(spec.cpus ? { cpus: [...spec.cpus] } : {}),
      exitCode,
      signal,
      stdout: out.text(),
      stderr: spawnError ? `${err.text()}${spawnError.message}` : err.text(),
      timedOut: live.timedOut,
      truncated: out.truncated() || err.truncated(),
      ...(live.outputLimit ? { outputLimit: live.outputLimit } : {}),
      ...(spec.channel ? { channel: { text: chan.raw(), truncated: chan.truncated(), marks: output.marks } } : {}),
      ...(spec.withSide ? { side: { text: side.raw(), truncated: side.truncated() } } : {}),
      wallSeconds: secondsSince(spec.started),
    });
  };
}

function watchEnd(live: LiveChild, finish: Finish): void {
  const { child } = live;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.on('error', (e) => finish(127, null, e));
  // The child's own end decides, not the end of its pipes: children it left behind may hold
  // them open. Kill the group, then give the pipes a moment to deliver what is buffered.
  // bwrap reports the inner process's death by signal N as exit 128 + N.
  const settle = (code: number | null, signal: NodeJS.Signals | null) =>
    live.spec.sandboxed ? finish(...unwrapped(code, signal)) : finish(code, signal);
  child.on('exit', (code, signal) => {
    exited = { code, signal };
    killGroup(live.pgid);
    live.grace = setTimeout(() => settle(code, signal), EXIT_GRACE_MS);
  });
  child.on('close', (code, signal) => settle(exited?.code ?? code, exited?.signal ?? signal));
}

const SIGNALS = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/**
 * bwrap exits with 128 + N when the process inside was killed by signal N: give that back as the
 * signal, so a crash reads the same in and out of the sandbox.
 */
function unwrapped(code: number | null, signal: NodeJS.Signals | null): [number | null, NodeJS.Signals | null] {
  const inner = code !== null && code > 128 ? SIGNALS.get(code - 128) : undefined;
  return inner ? [null, inner] : [code, signal];
}

/**
 * Calls `onMark` for every whole channel line that starts with `prefix` (the secret and MARK), with
 * the rest of the line; chunks may split lines anywhere. Only the end of a chunk is kept between calls.
 */
function markWatcher(prefix: string, onMark: (name: string) => void): (chunk: Buffer) => void {
  let partial = '';
  // Inside a long line that cannot be a mark: drop what comes until its end.
  let skipping = false;
  return (chunk) => {
    const lines = chunk.toString('latin1').split('\n');
    const last = lines.pop() ?? '';
    for (const [i, piece] of lines.entries()) {
      const line = i === 0 ? partial + piece : piece;
      if (!(i === 0 && skipping) && line.startsWith(prefix)) onMark(line.slice(prefix.length));
      if (i === 0) {
        partial = '';
        skipping = false;
      }
    }
    const tail = (lines.length === 0 ? partial : '') + last;
    if (lines.length > 0) skipping = false;
    if (skipping || (tail.length > prefix.length + 64 && !tail.startsWith(prefix))) {
      skipping = true;
      partial = '';
    } else partial = tail;
  };
}

let system: SystemView | undefined;
const systemView = (): SystemView => {
  system ??= {
    ...hostSystemView(),
    disableUserns: runsQuietly(['bwrap', '--unshare-user', '--disable-userns', '--ro-bind', '/', '/', 'true']),
  };
  return system;
};

function collector(limit: number, onOverflow?: () => void) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    push: (chunk: Buffer) => {
      if (kept >= limit) {
        dropped += chunk.length;
      } else {
        const room = limit - kept;
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        dropped += chunk.length - part.length;
        chunks.push(part);
        kept += part.length;
      }
      if (dropped > 0) onOverflow?.();
    },
    raw: () => Buffer.concat(chunks).toString('utf8'),
    text: () => {
      const s = Buffer.concat(chunks).toString('utf8');
      return dropped > 0 ? `${s}\n[… ${dropped} more bytes dropped]` : s;
    },
    truncated: () => dropped > 0,
  };
}

/**
 * For quick trusted queries (`gcc --version`): same scrubbed environment, first line of stdout.
 * `argv0`: the name the program sees as its own (a compiler run by its path names itself by it).
 */
export function firstLineOf(command: string[], timeoutMs = 10_000, argv0?: string): string | null {
  const [file, ...args] = command;
  const r = spawnSync(file!, args, {
    env: scrubbedEnv(),
    timeout: timeoutMs,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    ...(argv0 === undefined ? {} : { argv0 }),
  });
  if (r.status !== 0 || typeof r.stdout !== 'string') return null;
  return r.stdout.split('\n')[0]!.trim();
}

/** For quick trusted checks of what this host can do (can a sandbox be made?): exit 0 within the time. */
export function runsQuietly(command: string[], timeoutMs = 10_000): boolean {
  const [file, ...args] = command;
  return spawnSync(file!, args, { env: scrubbedEnv(), timeout: timeoutMs, stdio: 'ignore' }).status === 0;
}

/** Parses the drivers' tab-separated protocol lines (from the channel, or a driver run by hand). */
export interface DriverOutput {
  meta: Record<string, string>;
  lines: string[][];
  status?: string;
  statusDetail?: string;
}

export function parseDriverOutput(stdout: string): DriverOutput {
  const meta: Record<string, string> = {};
  const lines: string[][] = [];
  let status: string | undefined;
  let statusDetail: string | undefined;
  for (const raw of stdout.split('\n')) {
    const fields = raw.split('\t');
    if (fields[0] === 'META' && fields.length >= 3) meta[fields[1]!] = fields.slice(2).join('\t');
    else if (fields[0] === 'STATUS') {
      status = fields[1];
      statusDetail = fields.slice(2).join(' ').trim() || undefined;
    } else if (fields[0]) lines.push(fields);
  }
  return { meta, lines, status, statusDetail };
}

/**
 * A driver run judged by its result channel (docs/native-protocol.md#the-channel). The library's
 * stdout and stderr are in `run`, bounded, and never parsed.
 */
export interface DriverRun {
  run: RunResult;
  /** The driver's authenticated lines (secret removed): the result when `rejected` is unset, else diagnostics. */
  output: DriverOutput;
  /** Why the run gives no result, when it gives none; the callers turn it into a status. */
  rejected?: DriverRejection;
}

type DriverRejection =
  | { kind: 'timeout' | 'output-limit' | 'signal'; reason: string }
  /** The driver never said its last word, or something else wrote on its channel. */
  | { kind: 'unfinished'; reason: string };

const KIB = 1024;

/**
 * Runs a native driver (`command`: the driver and the library, the same for every job) with a
 * result channel, a fresh secret and `job` sent down it. A result is accepted only when
 * the channel carried the driver's END line with the secret, nothing without it, and the process
 * then exited with the code that END line names: a library that ends the process early, or
 * prints protocol lines of its own, gives no result.
 */
export async function runDriver(command: string[], job: string[], opts: RunOptions): Promise<DriverRun> {
  const secret = randomBytes(16).toString('hex');
  const run = await runProcess(command, { ...opts, channelSecret: secret, channelJob: job, stopAtOutputLimit: true });
  const { lines, stray, end } = decodeChannel(run.channel?.text ?? '', secret);
  const output = parseDriverOutput(lines.join('\n'));
  return { run, output, ...optional(judge(run, stray, end, opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT)) };
}

function optional(rejected: DriverRejection | undefined): { rejected?: DriverRejection } {
  return rejected ? { rejected } : {};
}

function judge(run: RunResult, stray: number, end: number | undefined, limit: number): DriverRejection | undefined {
  if (run.timedOut) return { kind: 'timeout', reason: `no result within ${Math.round(run.wallSeconds)} s` };
  if (run.outputLimit)
    return {
      kind: 'output-limit',
      reason: `output limit exceeded: more than ${limit >= KIB ? `${Math.round(limit / KIB)} KiB` : `${limit} bytes`} on ${run.outputLimit}`,
    };
  if (run.signal) return { kind: 'signal', reason: `killed by ${run.signal}` };
  if (run.channel?.truncated) return { kind: 'unfinished', reason: 'the result channel carried more than any driver writes' };
  if (stray > 0)
    return { kind: 'unfinished', reason: `${stray} line${stray === 1 ? '' : 's'} without the run's secret on the result channel` };
  if (end === undefined) return { kind: 'unfinished', reason: `the process exited with code ${run.exitCode} before the driver's end line` };
  if (end !== run.exitCode)
    return { kind: 'unfinished', reason: `the driver ended with code ${end}, but the process exited with code ${run.exitCode}` };
  return undefined;
}

/** The channel's lines that carry the secret (without it), how many did not, and the END code. */
export function decodeChannel(text: string, secret: string): { lines: string[]; stray: number; end?: number } {
  const prefix = `${secret}\t`;
  const lines: string[] = [];
  let stray = 0;
  let end: number | undefined;
  const all = text.split('\n');
  // The text after the last newline is an unfinished line: count it only if it is not empty.
  for (const [i, raw] of all.entries()) {
    if (i === all.length - 1 && raw === '') break;
    if (!raw.startsWith(prefix) || end !== undefined) {
      stray++;
      continue;
    }
    const line = raw.slice(prefix.length);
    const fields = line.split('\t');
    if (fields[0] === 'END' && fields.length === 2 && /^\d+$/.test(fields[1]!)) end = Number(fields[1]);
    else lines.push(line);
  }
  return { lines, stray, ...(end !== undefined ? { end } : {}) };
}
