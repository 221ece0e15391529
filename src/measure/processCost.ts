import type { ChannelMark } from '../sandbox/runProcess.js';

/**
 * Where a timing process's wall time goes (issue: the fixed cost per process), from the parent's own
 * clock at the driver's marks (docs/native-protocol.md#marks):
 * - `start_s`: from the spawn to `MARK seed`: the sandbox's set-up, exec, the driver's start and the
 *   library's load; `load_s`, its part from the driver's `MARK start` on: the load alone;
 * - `prepare_s`: from the seed to the first window: the key pair, verify's pool, the warm-ups and the
 *   first batch's inputs;
 * - `loops_s`: inside the windows: the timed calls;
 * - `between_s`: between windows: the next batches' inputs and the last batch's checks;
 * - `finish_s`: from the last window to the exit: the last checks, the spot checks, the report.
 * The parent's work at each mark (reading the kernel's view, answering) falls in the gaps around the
 * windows, never in a window.
 */
export interface ProcessCost {
  start_s: number;
  /** Of `start_s`, from the driver's `start` mark (before the library is loaded) to the seed: the load, with its constructors. */
  load_s?: number;
  prepare_s: number;
  loops_s: number;
  between_s: number;
  finish_s: number;
  /** dec: the wall seconds of the process that made its inputs before it started (measure/decInputs.ts). */
  inputs_s?: number;
}

/** The split of one process that marked its seed and its windows; undefined otherwise. */
export function processCost(all: readonly ChannelMark[], wall_s: number): ProcessCost | undefined {
  const start = all[0]?.name === 'start' ? all[0] : undefined;
  const marks = start ? all.slice(1) : all;
  if (marks[0]?.name !== 'seed' || marks.length < 3 || (marks.length - 1) % 2 !== 0) return undefined;
  let loops = 0;
  for (let i = 1; i < marks.length; i += 2) {
    const [b, e] = [marks[i]!, marks[i + 1]!];
    if (b.name !== 'begin' || e.name !== 'end') return undefined;
    // The marks' own reading (between arrival and answer) is bookkeeping, counted in between_s.
    loops += e.wall_s - (b.resumed_s ?? b.wall_s);
  }
  const [seed, first, last] = [marks[0]!, marks[1]!, marks[marks.length - 1]!];
  return {
    start_s: seed.wall_s,
    ...(start ? { load_s: seed.wall_s - start.wall_s } : {}),
    prepare_s: first.wall_s - seed.wall_s,
    loops_s: loops,
    between_s: last.wall_s - first.wall_s - loops,
    finish_s: Math.max(0, wall_s - last.wall_s),
  };
}

/** The parts of several processes added up, and how many there were. */
export function addCosts(costs: ReadonlyArray<ProcessCost | undefined>): (ProcessCost & { processes: number }) | undefined {
  const known = costs.filter((c): c is ProcessCost => c !== undefined);
  if (known.length === 0) return undefined;
  const sum = (k: keyof ProcessCost) => known.reduce((a, c) => a + (c[k] ?? 0), 0);
  return {
    processes: known.length,
    start_s: sum('start_s'),
    load_s: sum('load_s'),
    prepare_s: sum('prepare_s'),
    loops_s: sum('loops_s'),
    between_s: sum('between_s'),
    finish_s: sum('finish_s'),
    inputs_s: sum('inputs_s'),
  };
}
