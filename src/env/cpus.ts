import { readFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import type { Where } from '../config/arguments.js';

/** The CPUs of this host and process: what trials may be pinned to. */

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
    throw new InputError(
      where[0],
      where[1],
      `CPU ${cpu} is not one this process may run on (allowed: ${formatCpuList(allowed)}), so no trial could be pinned to it`,
    );
  return cpu;
}
