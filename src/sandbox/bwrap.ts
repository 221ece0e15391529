import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, normalize } from 'node:path';

/**
 * How processes that compile or run submission code are isolated: `bwrap` (bubblewrap), `unshare`
 * (util-linux's unshare and setpriv, for hosts without bubblewrap), or `none` (the campaign's
 * explicit opt-out: they run with the runner user's rights).
 */
export type SandboxMode = 'bwrap' | 'unshare' | 'none';

/** What ngcc-perf.yml may say: a mode, or `auto` (bwrap where it works, else unshare). */
export type SandboxSetting = SandboxMode | 'auto';

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
  /** bwrap here can refuse nested user namespaces (`--disable-userns`, bubblewrap 0.8 and later). */
  disableUserns?: boolean;
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
  /**
   * The command's address-space cap (RLIMIT_AS). unshareArgv sets it with the shell's own `ulimit`
   * right before the command; bwrapArgs ignores it (the runner puts prlimit inside bwrap instead).
   */
  addressSpaceBytes?: number;
}

/**
 * The private /tmp lives in the host's memory: capped, so a process cannot fill the runner's RAM
 * through it. Far above what a compiler's temporary files need, LTO included.
 */
const PRIVATE_TMP_BYTES = 1 << 30;

const depth = (p: string) => p.split('/').length;

/**
 * The parts of /proc through which a process writes to the kernel, not to itself: read-only inside.
 * A runner started as root is root inside its user namespace (uid 0 maps to 0), and uid 0 may
 * write /proc/sys without any capability: `kernel/core_pattern` would run a command of its choosing
 * on the host, as root, at the next crash.
 */
const PROC_KERNEL = ['sys', 'sysrq-trigger', 'irq', 'bus'];

/**
 * The files of /proc that show the whole host's activity, not the sandbox's: what every CPU did
 * (stat, schedstat), the load and its stalls (pressure/*), interrupts, timers armed, disk and memory
 * traffic. A library could watch a rival's processes come and go through them. Hidden behind
 * /dev/null, which opens to nothing there (proc's nodev): a read fails. The process's own files
 * (/proc/self/…) stay, which is what glibc and valgrind read.
 */
export const PROC_HOST_ACTIVITY = [
  'stat',
  'loadavg',
  'schedstat',
  'interrupts',
  'softirqs',
  'vmstat',
  'diskstats',
  'timer_list',
  'zoneinfo',
  'buddyinfo',
  'pressure/cpu',
  'pressure/io',
  'pressure/memory',
  'pressure/irq',
];

/**
 * The binds `spec` asks for, parents before children, so a folder bound inside another stays as its
 * own entry says; a path named both ways is writable. A read-only path inside a read-only folder
 * already bound needs no mount of its own.
 */
function specBinds(spec: SandboxSpec): Array<[string, 'ro' | 'rw']> {
  const binds = new Map<string, 'ro' | 'rw'>();
  for (const p of spec.readOnly) binds.set(normalize(p), 'ro');
  for (const p of spec.writable) binds.set(normalize(p), 'rw');
  const ordered = [...binds].sort(([a], [b]) => depth(a) - depth(b) || a.localeCompare(b));
  return ordered.filter(([p, how]) => {
    const enclosing = ordered.filter(([q]) => q !== p && p.startsWith(q === '/' ? '/' : `${q}/`)).pop();
    return !(how === 'ro' && enclosing?.[1] === 'ro');
  });
}

function requireAbsolutePaths(spec: SandboxSpec, cwd: string | undefined): void {
  for (const p of [...spec.readOnly, ...spec.writable, ...(cwd ? [cwd] : [])])
    if (!isAbsolute(p)) throw new Error(`sandbox path '${p}' is not absolute`);
}

/** The device nodes a process finds in its /dev. */
const DEV_NODES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'];

/**
 * The bwrap arguments (without the leading `bwrap` and the command) that run a process in its own
 * namespaces: no network, its own PID namespace (nothing it starts outlives it, no other process is
 * visible), no capabilities and no user namespace of its own to regain them in, a new session (no
 * terminal to inject into), killed with its parent; the system read-only, a fresh /proc whose
 * kernel settings are read-only, a read-only /dev, a private /tmp and /dev/shm, and of the rest
 * only what `spec` names.
 */
export function bwrapArgs(spec: SandboxSpec, opts: BwrapOptions): string[] {
  requireAbsolutePaths(spec, opts.cwd);
  const args = ['--unshare-all'];
  // No user namespace of its own inside, where it would have capabilities again; --disable-userns
  // needs --unshare-user, which --unshare-all only tries. Older bubblewrap lacks it (Ubuntu 22.04's 0.6).
  if (opts.system.disableUserns) args.push('--unshare-user', '--disable-userns');
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--ro-bind', '/usr', '/usr');
  for (const e of opts.system.entries) {
    if (e.symlink !== undefined) args.push('--symlink', e.symlink, e.path);
    else args.push('--ro-bind', e.path, e.path);
  }
  for (const p of opts.system.etc) args.push('--ro-bind-try', p, p);
  args.push('--proc', '/proc');
  for (const d of PROC_KERNEL) args.push('--ro-bind-try', `/proc/${d}`, `/proc/${d}`);
  // bwrap cannot bind over a file this kernel's /proc lacks (schedstat without CONFIG_SCHEDSTATS).
  for (const f of PROC_HOST_ACTIVITY) if (existsSync(`/proc/${f}`)) args.push('--ro-bind', '/dev/null', `/proc/${f}`);
  // /dev read-only but for a capped /dev/shm: bwrap's /dev is otherwise a tmpfs of half the host's memory.
  args.push('--dev', '/dev', '--size', String(PRIVATE_TMP_BYTES), '--tmpfs', '/dev/shm', '--remount-ro', '/dev');
  args.push('--size', String(PRIVATE_TMP_BYTES), '--tmpfs', '/tmp');
  for (const [p, how] of specBinds(spec)) args.push(how === 'rw' ? '--bind' : '--ro-bind', p, p);
  // The root bwrap builds is a tmpfs of half the host's memory: read-only, once its mount points exist.
  args.push('--remount-ro', '/', '--clearenv');
  for (const [k, v] of Object.entries(opts.env).sort(([a], [b]) => a.localeCompare(b))) args.push('--setenv', k, v);
  if (opts.cwd) args.push('--chdir', opts.cwd);
  return args;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A path as fstab(5) spells it: blanks and backslashes octal-escaped. */
const fstabPath = (p: string) => p.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/** A folder here (a mount point made with mkdir), or a file or nothing (one made with `: >`). */
const isFolder = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * `ln -s` lines that recreate the system's top-level symlinks in the root: one for all of the
 * merged-/usr kind (/bin → usr/bin), where `ln -s usr/bin … "$R"/` names each link as its target.
 */
function linkCommands(links: SystemView['entries']): string[] {
  const sameName = links.filter((l) => dirname(l.path) === '/' && basename(l.symlink!) === basename(l.path));
  const others = links.filter((l) => !sameName.includes(l));
  return [
    ...(sameName.length > 0 ? [`ln -s ${sameName.map((l) => quote(l.symlink!)).join(' ')} "$R"/`] : []),
    ...others.map((l) => `ln -s ${quote(l.symlink!)} "$R"${quote(l.path)}`),
  ];
}

/**
 * The same isolation without bubblewrap (`sandbox: unshare`): the command line that, with util-linux
 * alone, runs a process in new user, mount, PID, network, IPC and UTS namespaces, killed with its
 * parent (setpriv --pdeathsig, unshare --kill-child), in a root of its own built by a small sh script
 * as bwrapArgs describes (the system read-only, a fresh /proc, the usual /dev nodes, a capped private
 * /tmp, only the paths `spec` names), then run by setpriv with no capabilities left (empty bounding
 * set, no_new_privs), so the mounts cannot be undone from inside, and only `opts.env`.
 *
 * Every mount is one line of a table that a single `mount -a` reads: a process per mount cost about
 * 1.7 ms each, 120 ms a sandbox (docs/benchmarks.md, the fixed cost per process). For the same
 * reason the root's read-only remount is the table's last line, and the address-space cap is the
 * shell's builtin `ulimit`, not a prlimit process: each process saved is 2–3 ms of every start.
 */
export function unshareArgv(spec: SandboxSpec, opts: BwrapOptions, command: string[]): string[] {
  requireAbsolutePaths(spec, opts.cwd);
  const script = rootScript(unshareRoot(spec, opts.system), opts);
  return [
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
    '/bin/sh',
    '-c',
    script.join('\n'),
    'ngcc-sandbox',
    ...command,
  ];
}

/** What unshareArgv's script builds the root from: its mount table, and the mount points and links made before it. */
interface UnshareRoot {
  /** fstab lines: source, target (in the root), type, options; in this order, parents first. */
  table: Array<[string, string, string, string]>;
  folders: Set<string>;
  files: Set<string>;
  links: SystemView['entries'];
}

/** The root as bwrapArgs describes it, for the sandbox `spec` names on this host's system. */
function unshareRoot(spec: SandboxSpec, system: SystemView): UnshareRoot {
  const folders = new Set<string>(['/usr', '/proc', '/dev', '/dev/shm']);
  const files = new Set<string>();
  const links: SystemView['entries'] = [];
  const table: UnshareRoot['table'] = [];
  const bind = (source: string, target: string, ro: boolean, recursive = false) => {
    table.push([source, target, 'none', `${recursive ? 'rbind' : 'bind'}${ro ? ',ro' : ''}`]);
  };
  table.push(['/usr', '/usr', 'none', 'rbind,ro']);
  for (const e of system.entries) {
    if (e.symlink !== undefined) links.push(e);
    else {
      folders.add(e.path);
      bind(e.path, e.path, true, true);
    }
  }
  for (const p of system.etc) {
    (isFolder(p) ? folders : files).add(p);
    bind(p, p, true);
  }
  table.push(['proc', '/proc', 'proc', 'defaults']);
  for (const d of PROC_KERNEL) if (existsSync(`/proc/${d}`)) table.push([`/proc/${d}`, `/proc/${d}`, 'none', 'bind,ro']);
  for (const f of PROC_HOST_ACTIVITY) if (existsSync(`/proc/${f}`)) table.push(['/dev/null', `/proc/${f}`, 'none', 'bind']);
  for (const n of DEV_NODES) {
    files.add(`/dev/${n}`);
    bind(`/dev/${n}`, `/dev/${n}`, false);
  }
  table.push(['ngcc-shm', '/dev/shm', 'tmpfs', `size=${PRIVATE_TMP_BYTES}`]);
  for (const [p, how] of specBinds(spec)) {
    (isFolder(p) ? folders : files).add(p);
    bind(p, p, how === 'ro');
  }
  // Last: the root itself read-only, once every mount point in it is made.
  table.push(['none', '/', 'none', 'remount,ro']);
  return { table, folders, files, links };
}

/** The lines of the sh script that builds `root`, mounts it, and runs the command in it with only `opts.env`. */
function rootScript(root: UnshareRoot, opts: BwrapOptions): string[] {
  const { table, folders, files, links } = root;
  const inRoot = (p: string) => `"$R"${quote(p)}`;
  // Every mount point is made before the table is mounted: in the private /tmp, mounted first, for
  // paths there (the driver and the library are files in the cache under $TMPDIR). One inside a
  // folder bound later is hidden by it; one inside a folder bound read-only is there already.
  const parents = [...files].map((f) => dirname(f));
  const fields = table.flatMap(([source, target, type, options]) => [
    quote(fstabPath(source)),
    `"$R"${quote(fstabPath(target))}`,
    type,
    options,
  ]);
  const env = Object.entries(opts.env)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => quote(`${k}=${v}`));
  const cd = opts.cwd ? `-C ${quote(opts.cwd)} ` : '';
  return [
    'set -e',
    // The system's own tools build the root, whatever PATH the runner has.
    'PATH=/usr/sbin:/usr/bin:/sbin:/bin',
    // A mount point every Linux has, in this private mount namespace only.
    'R=/mnt; [ -d "$R" ] || R=/srv',
    'mount -t tmpfs -o mode=755 ngcc-root "$R"',
    `mount -t tmpfs -o size=${PRIVATE_TMP_BYTES},X-mount.mkdir ngcc-tmp "$R"/tmp`,
    `mkdir -p ${[...new Set([...folders, ...parents])].map(inRoot).join(' ')}`,
    ...[...files].map((f) => `: > ${inRoot(f)}`),
    ...linkCommands(links),
    // The table lives under /proc's mount point, hidden once the table's own line mounts proc there
    // (mount -a reads the whole table first).
    `printf '%s %s %s %s 0 0\\n' ${fields.join(' ')} > "$R"/proc/.fstab`,
    'mount -a -T "$R"/proc/.fstab',
    // RLIMIT_AS in KiB, for this shell's children only, so it binds the command, not the set-up.
    ...(opts.addressSpaceBytes !== undefined ? [`ulimit -v ${Math.floor(opts.addressSpaceBytes / 1024)}`] : []),
    // Not exec: this shell stays PID 1 of the namespace, reaps what the command leaves, and exits with its status (128 + N when signal N ended it, as bwrap).
    `chroot "$R" /usr/bin/setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- /usr/bin/env -i ${cd}-- ${env.join(' ')} "$@"`,
  ];
}

/** The environment inside: scratch files go to the private /tmp, never to the host's TMPDIR. */
export function sandboxEnv(env: Record<string, string>): Record<string, string> {
  return { ...env, TMPDIR: '/tmp', HOME: '/nonexistent' };
}
