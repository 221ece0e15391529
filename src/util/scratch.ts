import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from './fsx.js';

/**
 * Scratch folders: `ngcc-<purpose>-<pid>-XXXXXX` in the temporary folder. Some hold secrets (dec's
 * key and ciphertexts) and some hundreds of megabytes, so none outlives its use: the owner removes
 * it, every one still here goes when the process exits (stoppable.ts ends a stopped run through
 * process.exit), and one whose process died without a word (kill -9) is swept by the next run's
 * start, its pid in its name.
 */

const live = new Set<string>();
let removedOnExit = false;

/** What a scratch folder's name is: the purpose, the owner's pid, mkdtemp's six characters. */
const SCRATCH_NAME = /^ngcc-([a-z]+)-(\d+)-[A-Za-z0-9]{6}$/;

/** A new scratch folder for `purpose` (lower-case letters), removed at exit if its owner has not. */
export function makeScratch(purpose: string, parent = tmpdir()): string {
  if (!/^[a-z]+$/.test(purpose)) throw new Error(`scratch purpose '${purpose}': lower-case letters only`);
  const dir = mkdtempSync(join(parent, `ngcc-${purpose}-${process.pid}-`));
  live.add(dir);
  if (!removedOnExit) {
    process.once('exit', removeAllScratch);
    removedOnExit = true;
  }
  return dir;
}

/** Removes a folder a sandboxed job could write in, whatever it did to the permissions inside. */
export function removeScratch(dir: string): void {
  const open = (d: string): void => {
    try {
      chmodSync(d, 0o700);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) open(join(d, e.name));
    } catch {
      /* gone, or not ours: rmSync says what is left */
    }
  };
  open(dir);
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    /* a folder left behind is swept by the next start, not worth a failed run */
  }
  live.delete(dir);
}

/** Every scratch folder of this process still here (at exit, or when a run is stopped). */
function removeAllScratch(): void {
  for (const dir of [...live]) removeScratch(dir);
}

/** Removes the scratch folders of this user's processes that died without removing them; their names. */
export function sweepScratch(parent = tmpdir()): string[] {
  const uid = process.getuid?.();
  const swept: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  for (const name of names) {
    const pid = Number(SCRATCH_NAME.exec(name)?.[2]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    const dir = join(parent, name);
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
    removeScratch(dir);
    swept.push(dir);
  }
  return swept;
}
