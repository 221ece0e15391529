import { CONTRADICTION } from './kernelCheck.js';

/**
 * The trusted half's clock (native/core/trusted.h, docs/method.md#the-trusted-half): the timing driver
 * forks before the library is loaded, and the parent, which the library never shares, reads the
 * counter itself when it lets each timed window start and when the child says the window is done.
 * Its CLOCK line is the one line of a trial the library cannot write. A trial whose claimed cycles
 * fall short of it by more than the windows' own cost is refused.
 */
export interface TrustedClock {
  /** The counter the trusted half read (the driver's META counter must be the same). */
  counter: string;
  /** Timed windows (begin/end pairs) it observed. */
  windows: number;
  /** Counter ticks inside them, by its own reads. */
  cycles: number;
  /**
   * Nanoseconds the child's main thread waited for the core inside them, less what its own other
   * threads and processes ran meanwhile (the kernel's schedstat): the time other processes held the
   * core. Undefined where the kernel keeps no schedstat.
   */
  waited_ns?: number;
}

/**
 * How far below the trusted half's count a trial's cycles may fall: the work inside a window that a
 * call's own reads leave out (each segment's reseeding of the library's generator, the driver's OS
 * readings) and, per window, its two hand-overs between the halves (a switch on one core, a few
 * microseconds; more when the halves are not pinned). Honest trials came to 0.9945–0.9985 of the
 * count at 0.05-s trials, 0.998–0.999 at 1-s trials (docs/benchmarks.md (q)).
 */
export const CLOCK_SHORTFALL = 0.01;
export const CLOCK_SLACK_PER_WINDOW_S = 0.0002;

/**
 * Counters the trusted half cannot hold a trial to: core cycles (perf_event on AArch64) count the
 * reading thread's own, and the parent's are not the child's.
 */
const PER_THREAD_COUNTERS = new Set(['perf_event-cycles']);

/** The CLOCK line among a driver's lines, or undefined (none, or malformed). */
export function trustedClockOf(lines: readonly string[][]): TrustedClock | undefined {
  const f = lines.find((l) => l[0] === 'CLOCK');
  if (f?.length !== 5 || !/^\d+$/.test(f[2]!) || !/^\d+$/.test(f[3]!) || !/^(\d+|-)$/.test(f[4]!)) return undefined;
  return { counter: f[1]!, windows: Number(f[2]), cycles: Number(f[3]), ...(f[4] === '-' ? {} : { waited_ns: Number(f[4]) }) };
}

/**
 * What the trusted half held of a trial besides its clock (native/core/held.h): the window key under
 * which it made each window's inputs at the window's start (a replay of the trial is given it), and
 * the slot layout it read from the book and folded the outputs by, which must be the one the
 * instance's sizes give (measure/batches.ts).
 */
export interface Held {
  key: string;
  /** The operation, as measure/batches.ts names it (`kem-keygen`, …, `hash`, `kex`). */
  kind: string;
  /** The trial's calls. */
  calls: number;
  stride: number;
  batch: number;
  segment: number;
  perBlock: number;
  inLen: number;
  outLens: [number, number];
  /** CPU seconds the trusted half's copies took inside the parent's side's windows: not the library's (measure/kernelCheck.ts). */
  cpu_s: number;
  /** CPU seconds it spent on the book between the windows (each window's inputs made, the one before's outputs folded): not the library's either. */
  beside_s: number;
}

/** The HELD line among a driver's lines, or undefined (none, or malformed). */
export function heldOf(lines: readonly string[][]): Held | undefined {
  const f = lines.find((l) => l[0] === 'HELD');
  if (f?.length !== 13 || !/^[0-9a-f]{32}$/.test(f[1]!) || !/^[a-z-]+$/.test(f[2]!) || !f.slice(3).every((x) => /^\d+$/.test(x)))
    return undefined;
  const [stride, batch, segment, perBlock, calls, inLen, out0, out1, cpuNs, besideNs] = f.slice(3).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    key: f[1]!,
    kind: f[2]!,
    calls,
    stride,
    batch,
    segment,
    perBlock,
    inLen,
    outLens: [out0, out1],
    cpu_s: cpuNs / 1e9,
    beside_s: besideNs / 1e9,
  };
}

/** Why the trusted half held no window of a trial (its UNHELD line), or undefined. */
export const unheldOf = (lines: readonly string[][]): string | undefined => lines.find((l) => l[0] === 'UNHELD')?.[1];

const ticks = (n: number) => `${Math.round(n)} counter ticks`;

/** The least a trial may claim of `cycles` counted over `windows` windows. */
const floorOf = (cycles: number, windows: number, counterHz: number) =>
  cycles * (1 - CLOCK_SHORTFALL) - windows * CLOCK_SLACK_PER_WINDOW_S * counterHz;

/** The count less the time other processes held the core, in counter ticks. */
const countLessWait = (clock: TrustedClock, counterHz: number) => clock.cycles - ((clock.waited_ns ?? 0) * counterHz) / 1e9;

/**
 * Why a trial claiming `claimed` ticks is refused against the trusted half's clock, or undefined:
 * below the floor even once the time other processes held the core is taken off the count.
 * `counterHz` (the run's probe) turns the per-window slack and the wait into ticks.
 */
export function clockShortfall(
  claimed: number,
  counter: string | undefined,
  counterHz: number,
  clock: TrustedClock | undefined,
): string | undefined {
  if (!clock) return 'the trusted half reported no clock (native/core/trusted.h)';
  if (clock.counter !== counter) return `the trial says its counter is ${counter ?? 'none'}, the trusted half read ${clock.counter}`;
  if (PER_THREAD_COUNTERS.has(clock.counter)) return undefined;
  if (claimed >= floorOf(countLessWait(clock, counterHz), clock.windows, counterHz)) return undefined;
  const share = ((1 - claimed / clock.cycles) * 100).toFixed(1);
  return `${CONTRADICTION}${ticks(claimed)}, but the trusted half observed ${ticks(clock.cycles)} in its ${clock.windows} window(s): ${share} % fewer`;
}

/** How much more than the trusted half counted a calibration may claim (the kernel's view's rate margin). */
const CALIBRATION_OVERCLAIM = 1.25;

/**
 * Why a calibration's claim is refused, or undefined: one that says its calls took longer than the
 * trusted half counted would have the plan make trials of a few calls, whose windows the per-window
 * allowance then dwarfs. A claim below the count only lengthens the trials.
 */
export function calibrationOverclaim(claimed: number, counterHz: number, clock: TrustedClock | undefined): string | undefined {
  if (!clock || PER_THREAD_COUNTERS.has(clock.counter)) return undefined;
  if (claimed <= clock.cycles * CALIBRATION_OVERCLAIM + clock.windows * CLOCK_SLACK_PER_WINDOW_S * counterHz) return undefined;
  return `its cycles say ${ticks(claimed)}, more than the ${ticks(clock.cycles)} the trusted half counted in its ${clock.windows} window(s)`;
}

/**
 * Why a trial that passed clockShortfall was disturbed, or undefined: it reaches the floor only once
 * the time other processes held the core is taken off the count. Such a trial runs again as any
 * disturbed one does (measure/operation.ts), and is kept, marked, if it stays so.
 */
export function clockDisturbance(
  t: { cycles: number; loop_cycles?: number; trusted_cycles?: number; trusted_wait_s?: number; windows?: number },
  counterHz: number | undefined,
): string | undefined {
  if (counterHz === undefined || t.trusted_cycles === undefined || !t.trusted_wait_s) return undefined;
  const claimed = t.loop_cycles ?? t.cycles;
  if (claimed >= floorOf(t.trusted_cycles, t.windows ?? 1, counterHz)) return undefined;
  return `other processes held the core ${(t.trusted_wait_s * 1000).toFixed(2)} ms of its windows (the trusted half's count)`;
}
