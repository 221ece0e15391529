import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { SYSTEM_ID, SYSTEM_ID_RULE } from './defaults.js';

/**
 * Values the CLI and the action both take, parsed once. `where` names the argument as the user
 * wrote it: ['command line', '--shard'] for the CLI, ["input 'shard'", ''] for the action.
 */
export type Where = readonly [file: string, field: string];

const fail = (where: Where, problem: string) => new InputError(where[0], where[1], problem);

export function parseShard(v: string | undefined, where: Where): { index: number; count: number } | undefined {
  if (!v) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw fail(where, `expected K/N with 1 <= K <= N, got '${v}'`);
  return { index: Number(m[1]), count: Number(m[2]) };
}

export function parseOnly(v: string | undefined, where: Where): RegExp | undefined {
  if (!v) return undefined;
  try {
    return new RegExp(v);
  } catch {
    throw fail(where, `not a regular expression: '${v}'`);
  }
}

/** The id names an evidence folder and the comment marker: checked before anything is measured. */
export function checkSystemId(v: string, where: Where): string {
  if (!SYSTEM_ID.test(v)) throw fail(where, `'${v}' must match the system id rule: ${SYSTEM_ID_RULE}`);
  return v;
}

export function parseCpu(v: string | undefined, where: Where): number | undefined {
  if (!v) return undefined;
  if (!/^\d+$/.test(v)) throw fail(where, `expected a CPU number, got '${v}'`);
  return Number(v);
}

/** A count of workers: a whole number from 1. */
export function parseJobs(v: string | undefined, where: Where): number | undefined {
  if (!v) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw fail(where, `expected a whole number of workers from 1, got '${v}'`);
  return Number(v);
}

/** A whole number within [min, max]: `what` names it in the message ('trial pairs'). */
export function parseCount(v: string | undefined, where: Where, what: string, min: number, max: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw fail(where, `expected a whole number of ${what} from ${min} to ${max}, got '${v}'`);
  return Number(v);
}

/** `unit` completes the message: 'expected a positive number of seconds, got -1'. */
export function parsePositive(v: string | undefined, where: Where, unit?: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw fail(where, `expected a positive number${unit ? ` of ${unit}` : ''}, got '${v}'`);
  return n;
}

/**
 * An output folder must be a folder or creatable as one: the nearest existing ancestor of `path`
 * (the path itself included) has to be a directory, else mkdir fails deep inside the run.
 */
export function checkOutputFolder(path: string, where: Where): string {
  let p = resolve(path);
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  if (!statSync(p).isDirectory())
    throw fail(
      where,
      p === resolve(path) ? `'${path}' is a file, not a folder` : `'${path}' cannot be created: '${p}' is a file, not a folder`,
    );
  return path;
}
