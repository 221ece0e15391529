// Types of generate.mjs for the TypeScript tests.
export type Category = 'kem' | 'sig' | 'kex' | 'hash';
export interface SyntheticInstance {
  label: string;
  /** Modelled cycles per operation at full scale (hash: per message length in bytes). */
  ops: Record<string, number>;
  hash?: { base_cycles: number; cycles_per_byte: number };
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
  seed?: number;
  buildFunctions?: number;
  cyclesPerIteration?: number;
  perCategory?: number;
  planning?: Record<string, number>;
  profile?: Record<string, number>;
}
export interface Generated {
  seed: number;
  scale: number;
  cycles_per_iteration: number;
  build_functions: number;
  candidates: SyntheticCandidate[];
}
export const ROUND1: Record<Category, number>;
export const CYCLES_PER_ITERATION: number;
export const HASH_MESSAGE_BYTES: number[];
export function model(opts?: { seed?: number }): SyntheticCandidate[];
export function generate(dir: string, opts?: GenerateOptions): Generated;
export function operationRows(
  candidates: SyntheticCandidate[],
): Array<{ id: string; type: Category; class: string; label: string; op: string; cycles: number }>;
export function parseArgs(argv: string[]): { dir: string; opts: GenerateOptions };
