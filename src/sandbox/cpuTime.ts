import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time the kernel has charged a process and everything below it, read from /proc by the
 * trusted parent while the driver waits at a mark (docs/native-protocol.md#marks). Nothing the
 * library does in its own process can change these figures.
 */

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** The pids below `root` (children, grandchildren…), from every process's parent in /proc/<pid>/stat. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = parentOf(Number(name));
    if (ppid === undefined) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Fields after the command name, which may itself hold spaces and parentheses. */
function statFields(pid: number | string, task?: string): string[] | undefined {
  try {
    const text = readFileSync(task ? `/proc/${pid}/task/${task}/stat` : `/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

function parentOf(pid: number): number | undefined {
  const f = statFields(pid);
  return f ? Number(f[1]) : undefined;
}

/**
 * Seconds of CPU one process's threads have run: /proc/<pid>/task/<tid>/schedstat (nanoseconds)
 * where the kernel keeps it, else utime + stime (clock ticks).
 */
function processCpuSeconds(pid: number): number {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  let seconds = 0;
  for (const tid of tasks) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      if (Number.isFinite(ns) && ns > 0) {
        seconds += ns / 1e9;
        continue;
      }
    } catch {
      /* no schedstat: the tick counts below */
    }
    const f = statFields(pid, tid);
    if (f) seconds += (Number(f[11]) + Number(f[12])) / USER_HZ;
  }
  return seconds;
}

/** CPU of the children a process has waited for (cutime + cstime): a helper that ran and ended. */
function reapedCpuSeconds(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[13]) + Number(f[14])) / USER_HZ : 0;
}

/**
 * `root` and every process below it now: one walk of /proc, which a mark pays once (its cost grows
 * with the host's process count: about 16 µs a process).
 */
export function processTree(root: number): number[] {
  return [root, ...descendants(root)];
}

/**
 * Whether no thread of the tree is on a CPU (state R). The kernel brings a thread's schedstat up to
 * date when it stops running; read while it still runs, it can lag by a tick. A driver that wrote a
 * mark stops within microseconds, in its read of the answer.
 */
export function treeAtRest(tree: readonly number[]): boolean {
  for (const pid of tree) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) if (statFields(pid, tid)?.[0] === 'R') return false;
  }
  return true;
}

/** CPU seconds charged so far to the tree's processes (those that ended included, once reaped by one of them). */
export function treeCpuSeconds(tree: readonly number[]): number {
  return tree.reduce((sum, pid) => sum + processCpuSeconds(pid) + reapedCpuSeconds(pid), 0);
}

/** Threads in the tree's processes (each process's own included). */
export function treeTasks(tree: readonly number[]): number {
  let n = 0;
  for (const pid of tree) {
    try {
      n += readdirSync(`/proc/${pid}/task`).length;
    } catch {
      /* gone meanwhile */
    }
  }
  return n;
}

let precise: boolean | undefined;

/**
 * Whether this kernel charges CPU time in nanoseconds (/proc/<pid>/task/<tid>/schedstat, read for
 * this process), or only in clock ticks (10 ms): what the kernel's view of a trial can resolve.
 */
export function cpuTimeIsPrecise(): boolean {
  if (precise === undefined) {
    try {
      precise = Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) > 0;
    } catch {
      precise = false;
    }
  }
  return precise;
}
