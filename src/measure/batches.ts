import { hashMessageBytes } from './hashOperations.js';

/**
 * How a trial's calls fall into batches, each one timed window (native/core/calls.c calls_init), worked
 * out on this side from the job and the instance's sizes (build.json, from its KAT run). The driver
 * that runs the library says its own (`META calls_per_batch`, `calls_per_segment`) and marks its own
 * windows: a library that added marks inside its calls would have the trusted half count only the
 * pieces between them (native/core/trusted.h). So a trial whose windows or batches are not these is
 * refused (measure/trial.ts).
 */
export interface BatchPlan {
  /** Calls of one batch, the last one's aside. */
  batch: number;
  /** Calls between two seedings of the generators (what a replay makes again). */
  segment: number;
  /** Timed windows of the trial: one per batch. */
  windows: number;
  /** Bytes of one call's slot, its input's and outputs' (native/core/calls.c), and calls a transcript block folds. */
  stride: number;
  inLen: number;
  outLens: [number, number];
  perBlock: number;
  /** The operation as the trusted half's HELD line names it (native/core/calls.c calls_kind_name). */
  kind: string;
  /** Whether the batch's slots fit the book the trusted half shares (native/core/calls.h BOOK_SLAB_BYTES): it then holds the windows' inputs and outputs. */
  held: boolean;
}

/** native/core/calls.h: slot memory of one batch, transcript blocks, and native/core/calls.c: the gap after each region. */
const CALLS_BATCH_BYTES = 32 * 2 ** 20;
const TRANSCRIPT_BLOCKS = 256;
const GAP = 256;
/** native/core/ops.h MESSAGE_BYTES: sign's message. */
const MESSAGE_BYTES = 64;

const round64 = (n: number) => Math.ceil(n / 64) * 64;

/** A slot's regions: its input (0: none) and its outputs. */
interface Regions {
  input: number;
  outputs: number[];
}

/**
 * A slot's regions by operation, from the sizes the KAT recorded (`pk_bytes`, …), or undefined when
 * a size it needs is missing.
 */
function regions(type: string, operation: string, sizes: Record<string, number>): Regions | undefined {
  const need = (...keys: string[]) => (keys.every((k) => typeof sizes[k] === 'number') ? keys.map((k) => sizes[k]!) : undefined);
  if (type.startsWith('hash:')) {
    const bytes = hashMessageBytes(operation);
    return bytes === undefined ? undefined : { input: bytes, outputs: [Math.ceil(Number(type.slice(5)) / 8)] };
  }
  if (type === 'kex') return { input: 0, outputs: [] };
  const outputs = (...keys: string[]) => {
    const n = need(...keys);
    return n && { input: 0, outputs: n };
  };
  const byOp: Record<string, () => Regions | undefined> = {
    'kem/keygen': () => outputs('pk_bytes', 'sk_bytes'),
    'kem/enc': () => outputs('ct_bytes', 'ss_bytes'),
    'kem/dec': () => {
      const [ct, ss] = need('ct_bytes', 'ss_bytes') ?? [];
      return ct === undefined || ss === undefined ? undefined : { input: ct, outputs: [ss] };
    },
    'sig/keygen': () => outputs('pk_bytes', 'sk_bytes'),
    'sig/sign': () => {
      const signature = need('signature_bytes');
      return signature && { input: MESSAGE_BYTES, outputs: signature };
    },
    'sig/verify': () => ({ input: 0, outputs: [] }),
  };
  return byOp[`${type}/${operation}`]?.();
}

/** The batches of a trial of `calls` calls, as native/core/calls.c calls_init makes them; undefined without the sizes. */
export function batchPlan(type: string, operation: string, calls: number, sizes: Record<string, number>): BatchPlan | undefined {
  const slot = regions(type, operation, sizes);
  if (!slot || calls < 1) return undefined;
  const lengths = [slot.input, ...slot.outputs];
  const stride = 64 + lengths.filter((n) => n > 0).reduce((sum, n) => sum + round64(n) + GAP, 0);
  let fit = Math.max(1, Math.floor(CALLS_BATCH_BYTES / stride));
  let segment = Math.max(16, Math.ceil(calls / 8));
  let perBlock = Math.ceil(calls / TRANSCRIPT_BLOCKS);
  segment = Math.min(segment, fit);
  if (segment >= perBlock) segment -= segment % perBlock;
  else perBlock = segment;
  fit -= fit % segment;
  const batch = Math.min(fit, calls);
  const outLens: [number, number] = [slot.outputs[0] ?? 0, slot.outputs[1] ?? 0];
  const held = batch * stride <= CALLS_BATCH_BYTES;
  const kind = type.startsWith('hash:') ? 'hash' : type === 'kex' ? 'kex' : `${type}-${operation}`;
  return { batch, segment, windows: Math.ceil(calls / batch), stride, inLen: slot.input, outLens, perBlock, kind, held };
}
