import { readFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import type { Where } from '../config/arguments.js';
import { runProcess } from '../sandbox/runProcess.js';

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
  if (ownMaskBefore) return [...ownMaskBefore];
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

/** This process's mask before withOwnThreadsOn narrowed it: what allowedCpus answers meanwhile. */
let ownMaskBefore: number[] | undefined;

/**
 * Runs `work` with every thread of this process kept on `cpus` (util-linux `taskset -a -p`), then
 * gives the process its mask back. The parent answers each of a trial's marks: left free, the
 * scheduler wakes it on the core the driver just blocked on (a waker's core is preferred), so the
 * driver, pinned there, waits until the parent has read /proc and answered. On this project's
 * 2-core VM that was 2–5 ms per window of 0.1 s (docs/benchmarks.md (x)), charged to the trial as
 * time off the CPU. Without a core to spare, or without taskset, `work` runs as it is.
 */
export async function withOwnThreadsOn<T>(cpus: readonly number[] | undefined, work: () => Promise<T>): Promise<T> {
  const before = allowedCpus();
  if (!cpus || cpus.length === 0 || !before || ownMaskBefore !== undefined || before.every((c) => cpus.includes(c))) return work();
  const mask = (list: readonly number[]) =>
    runProcess(['taskset', '-a', '-p', '-c', list.join(','), String(process.pid)], { timeoutMs: 10_000 });
  const narrowed = await mask(cpus);
  if (narrowed.exitCode !== 0) return work();
  ownMaskBefore = before;
  try {
    return await work();
  } finally {
    ownMaskBefore = undefined;
    await mask(before);
  }
}
