import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { bwrapArgs, hostSystemView, sandboxEnv, type SandboxSpec, type SystemView } from './bwrap.js';

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
  wallSeconds: number;
}

const DEFAULT_MAX_OUTPUT = 1 << 20;

/**
 * Variables a child may see. Everything else — tokens, secrets, runner internals — stays with us:
 * submissions are untrusted code on self-hosted runners.
 */
const PASSED_VARIABLES = ['PATH', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];

export function scrubbedEnv(extra: Record<string, string> = {}): Record<string, string> {
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

/** The one way this project starts a child process. */
export function runProcess(command: string[], opts: RunOptions): Promise<RunResult> {
  const [file, ...args] = command;
  if (!file) throw new Error('runProcess: empty command');
  const limited = opts.memoryLimitBytes ? ['prlimit', `--as=${opts.memoryLimitBytes}`, '--', file, ...args] : [file, ...args];
  const env = scrubbedEnv(opts.env);
  // prlimit runs inside, so the cap binds the command, not bwrap.
  const sandbox = opts.sandbox?.mode === 'bwrap' ? opts.sandbox : undefined;
  const sandboxed = sandbox !== undefined;
  const argv = sandbox
    ? ['bwrap', ...bwrapArgs(sandbox, { env: sandboxEnv(env), cwd: opts.cwd, system: systemView() }), '--', ...limited]
    : limited;
  const limit = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: opts.cwd,
      env,
      // Own process group, so a timeout kills grandchildren too.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    if (pgid !== undefined) liveGroups.add(pgid);
    const out = collector(limit);
    const err = collector(limit);
    child.stdout!.on('data', out.push);
    child.stderr!.on('data', err.push);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (pgid !== undefined) process.kill(-pgid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      clearTimeout(timer);
      // A child that exited may have left its group behind (daemonised loops): reap them.
      killGroup();
      if (pgid !== undefined) liveGroups.delete(pgid);
      resolve({
        command: limited,
        exitCode,
        signal,
        stdout: out.text(),
        stderr: spawnError ? `${err.text()}${spawnError.message}` : err.text(),
        timedOut,
        truncated: out.truncated() || err.truncated(),
        wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
      });
    };
    child.on('error', (e) => finish(127, null, e));
    child.on('close', (code, signal) => (sandboxed ? finish(...unwrapped(code, signal)) : finish(code, signal)));
  });
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

let system: SystemView | undefined;
const systemView = (): SystemView => {
  system ??= hostSystemView();
  return system;
};

function collector(limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    push: (chunk: Buffer) => {
      if (kept >= limit) {
        dropped += chunk.length;
        return;
      }
      const room = limit - kept;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      dropped += chunk.length - part.length;
      chunks.push(part);
      kept += part.length;
    },
    text: () => {
      const s = Buffer.concat(chunks).toString('utf8');
      return dropped > 0 ? `${s}\n[… ${dropped} more bytes dropped]` : s;
    },
    truncated: () => dropped > 0,
  };
}

/** For quick trusted queries (`gcc --version`): same scrubbed environment, first line of stdout. */
export function firstLineOf(command: string[], timeoutMs = 10_000): string | null {
  const [file, ...args] = command;
  const r = spawnSync(file!, args, { env: scrubbedEnv(), timeout: timeoutMs, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  if (r.status !== 0 || typeof r.stdout !== 'string') return null;
  return r.stdout.split('\n')[0]!.trim();
}

/** Parses the drivers' tab-separated protocol lines. */
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
