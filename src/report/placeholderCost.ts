import type { HashProfile, TimingRecord } from '../evidence/fileTypes.js';
import { HASH_MESSAGE_BYTES, hashOperation } from '../measure/hashOperations.js';
import { ICCS_HELPERS, type IccsHelper, iccsLabel } from '../measure/iccsBaseline.js';
import type { CandidateView } from './views.js';

/**
 * What the ICCS placeholder hash functions cost an operation (docs/pages.md#what-the-placeholder-costs):
 * every helper call the operation's profile saw, priced at this system's ICCS helper baseline for
 * that helper, output length and message length. An estimate independent of the profile's wrapper
 * ticks: the two are shown side by side.
 */

/** SM3 compression calls for an n-byte message: the 0x80 byte and the 64-bit length pad to 64-byte blocks. */
export const sm3Blocks = (bytes: number): number => Math.floor((bytes + 8) / 64) + 1;

/** Bytes each helper appends to the message before SM3 sees it: pseudohash and pseudoXOF a 32-bit counter. */
const COUNTER_BYTES: Record<IccsHelper, number> = { sm3hash: 0, pseudohash: 4, pseudoXOF: 4 };

/** One baseline label's mean cycles against the SM3 blocks of its message, by block count. */
type Curve = Array<{ blocks: number; cycles: number }>;

export interface PlaceholderBaseline {
  curves: Map<string, Curve>;
}

const isHelper = (fn: string): fn is IccsHelper => ICCS_HELPERS.some((h) => h.helper === fn);

/** The baseline's timed points, per label; undefined when the system has no baseline. */
export function placeholderBaseline(iccs: CandidateView | undefined): PlaceholderBaseline | undefined {
  if (!iccs) return undefined;
  const curves = new Map<string, Curve>();
  for (const { helper, bits } of ICCS_HELPERS)
    for (const b of bits) {
      const inst = iccs.instances.find((i) => i.label === iccsLabel(helper, b));
      const points = HASH_MESSAGE_BYTES.flatMap((n) => {
        const r: TimingRecord | undefined = inst?.records[hashOperation(n)];
        const cycles = r?.trials?.length ? r.mean_cycles : undefined;
        return typeof cycles === 'number' && Number.isFinite(cycles) ? [{ blocks: sm3Blocks(n + COUNTER_BYTES[helper]), cycles }] : [];
      });
      if (points.length >= 2) curves.set(iccsLabel(helper, b), points);
    }
  return curves.size > 0 ? { curves } : undefined;
}

/**
 * Cycles of one call at `blocks` SM3 blocks: linear between the two nearest timed lengths (the cost
 * of these helpers is a fixed part plus one compression per block), along the last segment beyond
 * 64 KiB, and the shortest length's figure below it (no message is cheaper than one block).
 */
function along(curve: Curve, blocks: number): number {
  const first = curve[0]!;
  if (blocks <= first.blocks) return first.cycles;
  for (let k = 1; k < curve.length; k++) {
    const [a, b] = [curve[k - 1]!, curve[k]!];
    if (blocks <= b.blocks || k === curve.length - 1)
      return a.cycles + ((b.cycles - a.cycles) * (blocks - a.blocks)) / (b.blocks - a.blocks);
  }
  return first.cycles; // unreachable: a curve has two points
}

/** SM3 output blocks of a pseudoXOF: one SM3 per 256 output bits, whatever the label. */
const xofBlocks = (bits: number) => Math.ceil(bits / 256);

export interface CallPrice {
  cycles: number;
  /** Set when no label has this output length: the pseudoXOF label it was scaled from. */
  scaledFrom?: string;
}

/**
 * One call's cycles from the baseline; undefined when no label can price it (pseudohash is defined
 * at 512, 768 and 1024 bits only). A pseudoXOF of another output length is the nearest label scaled
 * by its count of SM3 output blocks, which is how the function is defined.
 */
export function priceCall(base: PlaceholderBaseline, fn: IccsHelper, inBits: number, outBits: number): CallPrice | undefined {
  const blocks = sm3Blocks(Math.ceil(inBits / 8) + COUNTER_BYTES[fn]);
  const exact = base.curves.get(fn === 'sm3hash' ? iccsLabel(fn, 256) : iccsLabel(fn, outBits));
  if (exact) return { cycles: along(exact, blocks) };
  if (fn !== 'pseudoXOF' || outBits <= 0) return undefined;
  const labels = ICCS_HELPERS.find((h) => h.helper === 'pseudoXOF')!.bits.filter((b) => base.curves.has(iccsLabel(fn, b)));
  if (labels.length === 0) return undefined;
  const nearest = labels.reduce((a, b) =>
    Math.abs(xofBlocks(b) - xofBlocks(outBits)) < Math.abs(xofBlocks(a) - xofBlocks(outBits)) ? b : a,
  );
  const from = iccsLabel(fn, nearest);
  return { cycles: (along(base.curves.get(from)!, blocks) * xofBlocks(outBits)) / xofBlocks(nearest), scaledFrom: from };
}

export interface PlaceholderCost {
  /** Helper calls per operation. */
  calls: number;
  /** Estimated cycles per operation in the helpers. */
  cycles: number;
  /** Calls per operation the baseline could not price, by "fn out_bits": they are not in `cycles`. */
  unpriced: string[];
  /** pseudoXOF labels some call was scaled from. */
  scaledFrom: string[];
}

/** The placeholder helpers' estimated cycles per operation for one profile; the DRNG is not one of them. */
export function placeholderCost(profile: HashProfile, base: PlaceholderBaseline): PlaceholderCost {
  const ops = profile.total.operations;
  const cost: PlaceholderCost = { calls: 0, cycles: 0, unpriced: [], scaledFrom: [] };
  if (!(ops > 0)) return cost;
  for (const c of profile.calls) {
    if (!isHelper(c.fn)) continue;
    const perOp = c.calls / ops;
    cost.calls += perOp;
    const price = priceCall(base, c.fn, c.in_bits, c.out_bits);
    if (!price) {
      const name = `${c.fn} ${c.out_bits}-bit`;
      if (!cost.unpriced.includes(name)) cost.unpriced.push(name);
      continue;
    }
    cost.cycles += perOp * price.cycles;
    if (price.scaledFrom && !cost.scaledFrom.includes(price.scaledFrom)) cost.scaledFrom.push(price.scaledFrom);
  }
  return cost;
}
