/**
 * The ICCS helper baseline (docs/method.md#the-iccs-helper-baseline): the placeholder functions every
 * ICCS-API submission ships (native/iccs/auxfunc.c), each timed as a hash at S1–S8, once per system,
 * under the candidate id `iccs` with one label per helper and output length.
 */
export { ICCS_BASELINE_ID } from '../config/schemas.js';

export type IccsHelper = 'sm3hash' | 'pseudohash' | 'pseudoXOF';

/** The helpers and their output lengths in bits, in the order of the summary's table. */
export const ICCS_HELPERS: ReadonlyArray<{ helper: IccsHelper; bits: readonly number[] }> = [
  { helper: 'sm3hash', bits: [256] },
  { helper: 'pseudohash', bits: [512, 768, 1024] },
  { helper: 'pseudoXOF', bits: [256, 384, 512, 768, 1024, 1152, 1280, 2048] },
];

export const iccsLabel = (helper: IccsHelper, bits: number): string => `${helper}-${bits}`;

/** Every baseline label, in table order. */
export const ICCS_LABELS = ICCS_HELPERS.flatMap(({ helper, bits }) => bits.map((b) => iccsLabel(helper, b)));

/** The denominator of a hash row: the pseudoXOF of the same output length. */
export const xofLabelFor = (digestBits: number): string => iccsLabel('pseudoXOF', digestBits);
