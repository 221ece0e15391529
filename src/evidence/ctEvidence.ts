import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isInputError } from '../errors.js';
import { readJson } from '../util/fsx.js';
import { ctRelPath, evidencePaths, instanceKey } from './layout.js';
import type { CtFile } from '../ct/findings.js';

export interface CtEvidence {
  candidate: string;
  label: string;
  /** Relative to the system folder. */
  path: string;
  ct: CtFile;
}

/**
 * Every readable `ct/<id>/<label>.json` of a system folder, in path order, and the files that
 * exist but cannot be parsed: one broken file must not hide the others.
 */
export function readCtEvidence(systemDir: string): { files: CtEvidence[]; unreadable: Array<{ path: string; problem: string }> } {
  const dir = evidencePaths(systemDir).ctDir;
  const files: CtEvidence[] = [];
  const unreadable: Array<{ path: string; problem: string }> = [];
  if (!existsSync(dir)) return { files, unreadable };
  for (const candidate of readdirSync(dir).sort()) {
    if (!existsSync(join(dir, candidate)) || !/^[^.]/.test(candidate)) continue;
    for (const name of readdirSync(join(dir, candidate)).sort()) {
      if (!name.endsWith('.json')) continue;
      const label = name.slice(0, -'.json'.length);
      const path = ctRelPath(candidate, label);
      try {
        const ct = readJson<CtFile>(join(systemDir, path));
        if (!ct || typeof ct.operations !== 'object' || ct.operations === null) throw new Error('no "operations" object');
        files.push({ candidate, label, path, ct });
      } catch (e) {
        unreadable.push({ path: join(systemDir, path), problem: isInputError(e) ? e.problem : (e as Error).message });
      }
    }
  }
  return { files, unreadable };
}

/** The ct evidence by instance key. */
export const ctByInstance = (files: readonly CtEvidence[]): Map<string, CtEvidence> =>
  new Map(files.map((f) => [instanceKey(f.candidate, f.label), f]));
