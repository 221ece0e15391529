import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';

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

export function checkSystemId(v: string, where: Where): string {
  if (!/^[A-Za-z0-9_-]+$/.test(v)) throw fail(where, `'${v}' must match [A-Za-z0-9_-]+`);
  return v;
}

export function parseCpu(v: string | undefined, where: Where): number | undefined {
  if (!v) return undefined;
  if (!/^\d+$/.test(v)) throw fail(where, `expected a CPU number, got '${v}'`);
  return Number(v);
}

/** `unit` completes the message: 'expected a positive number of seconds, got -1'. */
export function parsePositive(v: string | undefined, where: Where, unit?: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw fail(where, `expected a positive number${unit ? ` of ${unit}` : ''}, got '${v}'`);
  return n;
}

/** Expands a kernel CPU list ('0-3,8,10-11'). */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',').filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    for (let c = Number(m[1]); c <= Number(m[2] ?? m[1]); c++) cpus.push(c);
  }
  return cpus;
}

/**
 * The CPUs this process may run on (its sched_getaffinity mask, which the drivers inherit and
 * pin within), or undefined where the kernel does not say. Online CPUs are not enough: a
 * container or `taskset` can allow fewer, and pinning outside the mask fails every trial.
 */
export function allowedCpus(): number[] | undefined {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return undefined;
  }
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  return m ? parseCpuList(m[1]!) : undefined;
}

/** Compresses a sorted CPU list back to the kernel's notation, for messages. */
export function formatCpuList(cpus: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cpus.length; ) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j]! + 1) j++;
    parts.push(i === j ? String(cpus[i]) : `${cpus[i]}-${cpus[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

export function checkCpuAllowed(cpu: number, where: Where, allowed: number[] | undefined = allowedCpus()): number {
  if (allowed && !allowed.includes(cpu))
    throw fail(where, `CPU ${cpu} is not one this process may run on (allowed: ${formatCpuList(allowed)}), so no trial could be pinned to it`);
  return cpu;
}

/**
 * An output folder must be a folder or creatable as one: the nearest existing ancestor of `path`
 * (the path itself included) has to be a directory, else mkdir fails deep inside the run.
 */
export function checkOutputFolder(path: string, where: Where): string {
  let p = resolve(path);
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  if (!statSync(p).isDirectory())
    throw fail(where, p === resolve(path) ? `'${path}' is a file, not a folder` : `'${path}' cannot be created: '${p}' is a file, not a folder`);
  return path;
}
