import { relative } from 'node:path';
import { InputError, isInputError } from '../errors.js';
import { readJsonIfExists } from '../util/fsx.js';

/**
 * An earlier evidence file that decides whether work is redone. A corrupt one (a run killed by
 * power loss, a bad merge) is replaced when the run redoes that work anyway (--force); without
 * --force the run stops and says how to get past it, rather than silently overwriting evidence.
 */
export function readPrevious<T>(path: string, force: boolean, onReplaced?: () => void): T | undefined {
  try {
    return readJsonIfExists<T>(path);
  } catch (e) {
    if (!isInputError(e)) throw e;
    if (force) {
      onReplaced?.();
      return undefined;
    }
    throw new InputError(
      relative(process.cwd(), path) || path,
      '',
      `${e.problem}; run again with --force to redo and replace it, or delete the file`,
    );
  }
}
