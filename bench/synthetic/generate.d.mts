// Types of generate.mjs for the TypeScript tests.
export type Category = 'kem' | 'sig' | 'kex' | 'hash';
export interface SyntheticInstance {
  label: string;
  /** Modelled cycles per operation at full scale (hash: per message length in bytes). */
  ops: Record<string, number>;
  hash?: { base_cycles: number; cycles_per_byte: number };
  /** Cycles per operation as the toy spins them, after --scale and --keep-below (generate() only). */
  scaled_ops?: Record<string, number>;
  /** The spin iterations written to candidate.yml (generate() only). */
  defines?: Record<string, number>;
}
export interface SyntheticCandidate {
  id: string;
  type: Category;
  class: 'fast' | 'medium' | 'slow' | 'extreme' | 'hash';
  profile: string;
  instances: SyntheticInstance[];
}
export interface GenerateOptions {
  scale?: number;
  /** Costs up to this many cycles keep their modelled size; larger ones are not scaled below it. */
  keepBelow?: number;
  seed?: number;
  buildFunctions?: number;
  cyclesPerIteration?: number;
  perCategory?: number;
  /** ngcc-perf.yml planning; a nested object (adaptive) is written as a block. */
  planning?: Record<string, number | Record<string, number | boolean>>;
  profile?: Record<string, number>;
}
export interface Generated {
  seed: number;
  scale: number;
  keep_below: number;
  cycles_per_iteration: number;
  build_functions: number;
  candidates: SyntheticCandidate[];
}
export const ROUND1: Record<Category, number>;
export const CYCLES_PER_ITERATION: number;
export const HASH_MESSAGE_BYTES: number[];
export function model(opts?: { seed?: number }): SyntheticCandidate[];
export function generate(dir: string, opts?: GenerateOptions): Generated;
export function divisorOf(cycles: number, scale: number, keepBelow?: number): number;
export function operationRows(
  candidates: SyntheticCandidate[],
): Array<{ id: string; type: Category; class: string; label: string; op: string; cycles: number }>;
export function parseArgs(argv: string[]): { dir: string; opts: GenerateOptions };
