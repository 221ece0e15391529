/**
 * Whether a timed span had its core to itself (docs/method.md#disturbed-trials). The driver reports
 * what the OS says about its thread over the timed loop (CPU time, context switches, wall time);
 * this module decides. Used for timing trials and for profile rounds alike.
 */

/** What the OS said about the driver's thread over the timed loop (the driver's OS line). */
export interface OsView {
  thread_cpu_s: number;
  wall_s: number;
  involuntary_switches: number;
  voluntary_switches: number;
}

/**
 * Share of a span's wall time the thread may spend off the CPU, taken from it, before the span is
 * disturbed. On a quiet pinned core a trial loses well under 1 % (an interrupt, a kernel worker);
 * another process on the core takes whole scheduler slices, several milliseconds each.
 */
export const DISTURBED_OFF_CPU = 0.02;

/** The OS line's fields: thread_cpu_s wall_s involuntary voluntary. */
export function parseOsLine(fields: string[]): OsView | undefined {
  const [cpu, wall, inv, vol] = fields.slice(1).map(Number);
  if (![cpu, wall, inv, vol].every((v) => v !== undefined && Number.isFinite(v)) || !(wall! > 0)) return undefined;
  return { thread_cpu_s: cpu!, wall_s: wall!, involuntary_switches: inv!, voluntary_switches: vol! };
}

/** Share of the span the thread was not running. */
export const offCpuShare = (os: OsView): number => Math.max(0, 1 - os.thread_cpu_s / os.wall_s);

export interface ClockRule {
  /** The span's counter ticks per second. */
  clockHz?: number;
  /** The core's fixed clock, when the system configures one, and the share of it below which a span was slowed. */
  fixedClockHz?: number;
  minClockRatio: number;
}

/**
 * Why a span was disturbed, or undefined when it had the core: taken off the CPU by something else
 * (involuntary switches with more than DISTURBED_OFF_CPU of the span lost; a library that sleeps on
 * its own switches voluntarily and is not "disturbed"), or run below the core's fixed clock.
 */
export function disturbance(os: OsView | undefined, clock: ClockRule): string | undefined {
  if (os && os.involuntary_switches > 0 && offCpuShare(os) > DISTURBED_OFF_CPU)
    return `off the CPU ${(offCpuShare(os) * 100).toFixed(1)} % of the time (${os.involuntary_switches} involuntary switch${os.involuntary_switches === 1 ? '' : 'es'})`;
  if (clock.fixedClockHz !== undefined && clock.clockHz !== undefined && clock.clockHz < clock.minClockRatio * clock.fixedClockHz)
    return `clock ${(clock.clockHz / 1e9).toFixed(3)} GHz, below ${clock.minClockRatio} of the fixed ${(clock.fixedClockHz / 1e9).toFixed(3)} GHz`;
  return undefined;
}
