import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { InputError } from '../errors.js';
import { processAlive as alive } from '../util/fsx.js';

import { LOCK_FILE as LOCK } from './layout.js';

/**
 * When a process started (clock ticks after boot, field 22 of /proc/<pid>/stat). With the pid it
 * names one process: a pid alone is reused, and a lock naming a reused pid would look held forever.
 */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** What a lock holds: `<pid> <start time>` (older locks hold the pid alone). */
export const lockText = (): string => `${process.pid} ${startTime(process.pid) ?? ''}`.trim();

function holderOf(text: string): { pid: number; start?: string } {
  const [pid, start] = text.trim().split(/\s+/);
  return { pid: Number(pid), ...(start ? { start } : {}) };
}

/** The pid in a folder's evidence lock when the very process that took it still runs (not a reuse of its pid). */
export function otherLiveWriter(dir: string): number | undefined {
  const lock = join(dir, LOCK);
  if (!existsSync(lock)) return undefined;
  const { pid, start } = holderOf(readFileSync(lock, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !alive(pid)) return undefined;
  return start === undefined || startTime(pid) === start ? pid : undefined;
}

/**
 * Release functions of the locks this process holds. A run stopped by a signal exits without
 * unwinding its `finally`, and a lock left behind would name a pid that may be reused.
 */
const heldLocks = new Set<() => void>();

/** Releases every evidence lock this process holds (a stopping signal); returns how many. */
export function releaseEvidenceLocks(): number {
  const locks = [...heldLocks];
  for (const release of locks) release();
  return locks.length;
}

/**
 * One run at a time writes a system's evidence: build.json and campaign.json are read, changed
 * and written back, and two writers would lose each other's entries. A lock left by a process that
 * no longer exists, or whose pid now names another process, is taken over. Returns the release
 * function.
 */
export function lockSystem(systemDir: string): () => void {
  mkdirSync(systemDir, { recursive: true });
  const lock = join(systemDir, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, lockText(), { flag: 'wx' });
      const release = () => {
        heldLocks.delete(release);
        rmSync(lock, { force: true });
      };
      heldLocks.add(release);
      return release;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = otherLiveWriter(systemDir);
      if (holder !== undefined)
        throw new InputError(
          relative(process.cwd(), systemDir) || systemDir,
          '',
          `another run (pid ${holder}) is writing this evidence; wait for it or use another --out`,
        );
      if (holderOf(readFileSync(lock, 'utf8')).pid === process.pid)
        throw new InputError(relative(process.cwd(), systemDir) || systemDir, '', 'a run of this process is already writing this evidence');
      rmSync(lock, { force: true });
    }
  }
  throw new InputError(systemDir, '', 'could not take the evidence lock');
}
