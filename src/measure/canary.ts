import { median } from 'simple-statistics';
import { CANARY_MARGIN, CANARY_REFERENCE_MIN, CANARY_REFERENCE_TRIALS } from '../config/defaults.js';

/**
 * The canary (native/core/canary.h, docs/method.md#the-canary): fixed reference work the driver's trusted
 * half times on the trial's core before its first window and after its last. The host's invisible
 * slowdowns stretch it as they stretch the calls; the kernel's view sees none of them. This module
 * reads its line, keeps the host's recent reference on each core, and says when a trial's canary
 * ran so far beyond it that the trial was disturbed.
 */

/** The trusted half's CANARY line: its ticks before the windows and after them (either may be missing). */
export interface CanaryTicks {
  before?: number;
  after?: number;
}

/** The CANARY line among a driver's lines, or undefined (none, or malformed). */
export function canaryOf(lines: readonly string[][]): CanaryTicks | undefined {
  const f = lines.find((l) => l[0] === 'CANARY');
  if (f?.length !== 3 || !f.slice(1).every((x) => /^(\d+|-)$/.test(x))) return undefined;
  const side = (x: string) => (x === '-' ? undefined : Number(x));
  const [before, after] = [side(f[1]!), side(f[2]!)];
  if (before === undefined && after === undefined) return undefined;
  return { ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) };
}

/**
 * A trial's canary: the faster of its two runs, so that only a slowdown that lasted from before its
 * first window to after its last counts. This host slows in bursts of a fraction of a millisecond,
 * which one run of the canary may catch and the trial's calls average away (benchmarks (am)).
 */
export const trialCanary = (c: CanaryTicks | undefined): number | undefined =>
  c?.before !== undefined && c.after !== undefined ? Math.min(c.before, c.after) : undefined;

/**
 * The host's recent canaries on one core: the reference a trial's canary is held to. Every trial's
 * canary goes in, disturbed or not, so a host that stays slow becomes the reference: the rule sees
 * a slow stretch of trials, and the nights see a slow night (trend/history.ts).
 */
export class CanaryReference {
  private readonly recent: number[] = [];

  constructor(private readonly keep = CANARY_REFERENCE_TRIALS) {}

  /** The median of the recent canaries, or undefined before CANARY_REFERENCE_MIN of them. */
  reference(): number | undefined {
    return this.recent.length >= CANARY_REFERENCE_MIN ? median(this.recent) : undefined;
  }

  add(canary: number | undefined): void {
    if (canary === undefined || !(canary > 0)) return;
    this.recent.push(canary);
    if (this.recent.length > this.keep) this.recent.shift();
  }
}

/**
 * Why a trial was disturbed by its canary, or undefined: its canary ran at least `margin` times the
 * host's reference from the trials before it. The trial's canary then joins the reference.
 */
export function canaryDisturbance(canary: number | undefined, host: CanaryReference, margin = CANARY_MARGIN): string | undefined {
  const reference = host.reference();
  host.add(canary);
  if (margin === 0 || canary === undefined || reference === undefined || canary < margin * reference) return undefined;
  return `the host ran slower: canary ${(canary / reference).toFixed(2)}× its reference`;
}
