import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { isAbsolute, normalize } from 'node:path';

/**
 * How processes that compile or run submission code are isolated: `bwrap` (bubblewrap), or `none`
 * (the campaign's explicit opt-out: they run with the runner user's rights).
 */
export type SandboxMode = 'bwrap' | 'none';

/** What one sandboxed process may reach besides the read-only system. */
export interface SandboxSpec {
  mode: SandboxMode;
  /** Files or folders visible read-only, each at its own path. */
  readOnly: string[];
  /** Folders visible read-write, each at its own path: the one place the process writes. */
  writable: string[];
}

/** The system folders as the host has them: on merged-/usr systems /bin, /lib… are symlinks. */
export interface SystemView {
  /** Top-level entries besides /usr: a folder bound read-only, or a symlink recreated. */
  entries: Array<{ path: string; symlink?: string }>;
  /** Files and folders of /etc the compiler and the dynamic loader read. */
  etc: string[];
}

const TOP_LEVEL = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The dynamic loader's cache and configuration (without it, multiarch libraries are not found) and
 * the alternatives links (`cc` → gcc); nothing else of /etc — no passwords, keys or tokens.
 */
const ETC = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/localtime'];

/** Reads which system folders this host has (the one impure part of the argv). */
export function hostSystemView(): SystemView {
  const entries: SystemView['entries'] = [];
  for (const path of TOP_LEVEL) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) entries.push({ path, symlink: readlinkSync(path) });
    else if (st.isDirectory()) entries.push({ path });
  }
  return { entries, etc: ETC.filter((p) => existsSync(p)) };
}

export interface BwrapOptions {
  /** The child's whole environment (after --clearenv). */
  env: Record<string, string>;
  cwd?: string;
  system: SystemView;
}

/**
 * The private /tmp lives in the host's memory: capped, so a process cannot fill the runner's RAM
 * through it. Far above what a compiler's temporary files need, LTO included.
 */
const PRIVATE_TMP_BYTES = 1 << 30;

const depth = (p: string) => p.split('/').length;

/**
 * The bwrap arguments (without the leading `bwrap` and the command) that run a process in its own
 * namespaces: no network, its own PID namespace (nothing it starts outlives it, no other process is
 * visible), no capabilities, a new session (no terminal to inject into), killed with its parent;
 * the system read-only, a fresh /proc and /dev, a private /tmp, and of the rest only what `spec`
 * names.
 */
export function bwrapArgs(spec: SandboxSpec, opts: BwrapOptions): string[] {
  for (const p of [...spec.readOnly, ...spec.writable, ...(opts.cwd ? [opts.cwd] : [])])
    if (!isAbsolute(p)) throw new Error(`sandbox path '${p}' is not absolute`);
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--ro-bind', '/usr', '/usr'];
  for (const e of opts.system.entries) {
    if (e.symlink !== undefined) args.push('--symlink', e.symlink, e.path);
    else args.push('--ro-bind', e.path, e.path);
  }
  for (const p of opts.system.etc) args.push('--ro-bind-try', p, p);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(PRIVATE_TMP_BYTES), '--tmpfs', '/tmp');
  // Parents before children, so a folder bound inside another stays as its own entry says; a
  // path named both ways is writable.
  const binds = new Map<string, 'ro' | 'rw'>();
  for (const p of spec.readOnly) binds.set(normalize(p), 'ro');
  for (const p of spec.writable) binds.set(normalize(p), 'rw');
  const ordered = [...binds].sort(([a], [b]) => depth(a) - depth(b) || a.localeCompare(b));
  for (const [p, how] of ordered) {
    // A read-only path inside a read-only folder already bound needs no mount of its own.
    const enclosing = ordered.filter(([q]) => q !== p && p.startsWith(q === '/' ? '/' : `${q}/`)).pop();
    if (how === 'ro' && enclosing?.[1] === 'ro') continue;
    args.push(how === 'rw' ? '--bind' : '--ro-bind', p, p);
  }
  args.push('--clearenv');
  for (const [k, v] of Object.entries(opts.env).sort(([a], [b]) => a.localeCompare(b))) args.push('--setenv', k, v);
  if (opts.cwd) args.push('--chdir', opts.cwd);
  return args;
}

/** The environment inside: scratch files go to the private /tmp, never to the host's TMPDIR. */
export function sandboxEnv(env: Record<string, string>): Record<string, string> {
  return { ...env, TMPDIR: '/tmp', HOME: '/nonexistent' };
}
