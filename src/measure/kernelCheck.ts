import type { ChannelMark } from '../sandbox/runProcess.js';

/**
 * The outside check of a trial (docs/method.md#the-kernels-view): the cycles a driver reports come
 * from inside the process the library shares, the CPU time the kernel charged that process and the
 * parent's clock do not. Both are read by the trusted parent at the driver's MARK begin / MARK end
 * around the timed loop. A trial whose cycles disagree with them beyond what a clock can explain is
 * rejected and named.
 */

export interface KernelWindow {
  /** CPU seconds the kernel charged the driver's process tree between the marks. */
  kernel_cpu_s: number;
  /** Seconds between the marks on the parent's clock. */
  window_s: number;
  /** How many begin/end pairs (batches of calls, native/core/calls.h) the sums cover; 1 when absent. */
  windows?: number;
}

/**
 * The sums over a trial's begin/end pairs, when its marks are `seed` (when `seeded`), then one or
 * more begin/end pairs and nothing else; otherwise undefined.
 */
export function trialWindow(all: ChannelMark[], seeded = false): KernelWindow | undefined {
  // A driver's `start` mark (before it loads the library) only times the process's start.
  const marks = all[0]?.name === 'start' ? all.slice(1) : all;
  const first = seeded ? 1 : 0;
  if (seeded && marks[0]?.name !== 'seed') return undefined;
  const pairs = marks.length - first;
  if (pairs < 2 || pairs % 2 !== 0) return undefined;
  const w: KernelWindow = { kernel_cpu_s: 0, window_s: 0, windows: 0 };
  for (let i = first; i < marks.length; i += 2) {
    const [b, e] = [marks[i]!, marks[i + 1]!];
    if (b.name !== 'begin' || e.name !== 'end') return undefined;
    w.kernel_cpu_s += e.cpu_s - b.cpu_s;
    // From the driver's resuming at begin to its stopping at end: the mark's own reading is not the trial's.
    w.window_s += e.wall_s - (b.resumed_s ?? b.wall_s);
    w.windows = (w.windows ?? 0) + 1;
  }
  return w;
}

/**
 * How much more CPU than its cycles account for a trial may be charged: a constant counter (TSC,
 * CNTVCT, the monotonic clock) keeps its rate, so only the uncounted work between the marks (the
 * spot checks' buffer refills and snapshots, the OS counters' reads) adds to it; honest trials of
 * the example campaign came to at most 1.008× (docs/benchmarks.md). Core cycles (perf_event on
 * AArch64) follow frequency scaling. The margin is what bounds an under-report: a library that
 * says it used 5 % fewer cycles than it did claims 1/0.95 = 1.053× too little.
 */
const CPU_TOLERANCE: Record<string, number> = { 'perf_event-cycles': 3 };
const DEFAULT_CPU_TOLERANCE = 1.04;
/** How much longer than the time that passed a trial's cycles may say it took (the counter's rate drifting). */
const RATE_TOLERANCE: Record<string, number> = { 'perf_event-cycles': 3 };
const DEFAULT_RATE_TOLERANCE = 1.25;
/**
 * Absolute slack: the marks' own system calls, and the CPU accounting's resolution: nanoseconds
 * where the kernel keeps schedstat, else clock ticks (10 ms). Each further batch of a trial (its own
 * pair of marks, a few microseconds of system calls on the CPU) adds its own share: a tenth of a
 * millisecond, or two ticks.
 */
export const SLACK_PRECISE_S = 0.001;
export const SLACK_TICKS_S = 0.02;
/** What each batch after the first adds to the slack, by the accounting's resolution. */
const perWindowSlack = (slackS: number) => (slackS === SLACK_PRECISE_S ? 0.0001 : slackS);

const fmt = (s: number) => `${s < 0.01 ? s.toExponential(2) : s.toFixed(3)} s`;

/**
 * Why a trial of `cycles` counter ticks is inconsistent with the kernel's view, or undefined.
 * `counterHz` is the counter's rate measured by the harness's own probe at the start of the run.
 */
export function kernelInconsistency(
  cycles: number,
  counter: string,
  counterHz: number,
  w: KernelWindow,
  slackS: number = SLACK_TICKS_S,
): string | undefined {
  const claimed = cycles / counterHz;
  slackS += perWindowSlack(slackS) * Math.max(0, (w.windows ?? 1) - 1);
  // A single-threaded loop cannot use more CPU than the time it took: more means cycles went missing.
  if (w.kernel_cpu_s > (CPU_TOLERANCE[counter] ?? DEFAULT_CPU_TOLERANCE) * claimed + slackS)
    return `${CONTRADICTION}${fmt(claimed)}, but the kernel charged the process ${fmt(w.kernel_cpu_s)} of CPU during the trial`;
  // Nor can it take longer than the time that passed around it.
  if (claimed > (RATE_TOLERANCE[counter] ?? DEFAULT_RATE_TOLERANCE) * w.window_s + slackS)
    return `${CONTRADICTION}${fmt(claimed)}, but only ${fmt(w.window_s)} passed during the trial`;
  return undefined;
}

/** How every contradiction this module finds opens (the operation runs such a trial once more). */
export const CONTRADICTION = 'its cycles say ';
