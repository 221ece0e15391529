/**
 * The files the profile phase writes, one per operation: defined here, beside the code that makes
 * them, and re-exported by evidence/fileTypes.ts for the readers of evidence.
 */

/** A hash/DRNG profile of one operation (ngcc-harness schema 2). */
export interface HashProfile {
  schema: number;
  candidate: string;
  label: string;
  operation: string;
  status: string;
  meta?: Record<string, string>;
  total: { operations: number; ticks: number };
  calls: Array<{ fn: string; in_bits: number; out_bits: number; calls: number; ticks: number }>;
  share?: Record<string, number>;
  hash_share?: number;
  /** Hash share of every round the figure is taken from, in run order; the record's calls are the median round's. */
  round_hash_shares?: number[];
  /** Rounds among round_hash_shares that were disturbed (only when every round was: then the figure is theirs). */
  disturbed_rounds?: number;
  /** Disturbed rounds left out of the figure (run again, or outnumbered by quiet ones), with why. */
  left_out_rounds?: Array<{ hash_share: number; disturbed: string }>;
  /** The plain library the profiled relink was made from. */
  library_sha256?: string;
  /** Digest of the wrapped symbols: a profile of other symbols is redone. */
  profile_symbols?: string;
  [key: string]: unknown;
}

/** The memory of one operation alone (ngcc_mem): painted stack and interposed heap. */
export interface MemoryRecord {
  schema: number;
  candidate: string;
  label: string;
  operation: string;
  status: string;
  library_sha256?: string;
  stack_bytes: number | null;
  stack_baseline_bytes: number | null;
  stack_net_bytes: number | null;
  heap_peak_bytes: number | null;
  heap_allocations: number | null;
  vmhwm_bytes: number | null;
  failure?: string;
}
