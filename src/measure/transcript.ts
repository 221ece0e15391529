import { createHash } from 'node:crypto';

/** What a trial's calls returned (native/core/calls.h), as the driver reports it in TRANSCRIPT lines. */
export interface Transcript {
  per_block: number;
  /** The index of blocks[0] among the trial's blocks (a replay's batch starts later); 0 when absent. */
  first?: number;
  blocks?: string[];
  digest: string;
}

/** The TRANSCRIPT lines of a driver's output, in order; undefined when there were none or they do not fit together. */
export function transcriptOf(lines: string[][]): Transcript | undefined {
  let per_block: number | undefined;
  let start: number | undefined;
  const blocks: string[] = [];
  for (const f of lines) {
    if (f[0] !== 'TRANSCRIPT') continue;
    const [per, first] = [Number(f[1]), Number(f[2])];
    start ??= first;
    if (!(per >= 1) || !Number.isSafeInteger(first) || first !== start + blocks.length || (per_block !== undefined && per !== per_block))
      return undefined;
    per_block = per;
    for (const d of f.slice(3)) {
      if (!/^[0-9a-f]{16}$/.test(d)) return undefined;
      blocks.push(d);
    }
  }
  if (per_block === undefined || blocks.length === 0) return undefined;
  return {
    per_block,
    ...(start ? { first: start } : {}),
    blocks,
    digest: createHash('sha256').update(blocks.join('\n')).digest('hex'),
  };
}

/**
 * The calls of the first block of `replay` that differs from the same block of `trial`, as
 * "call N" or "calls N–M" (0-based), or undefined when every block of the replay agrees.
 */
export function firstDifference(trial: Transcript, replay: Transcript, calls: number): string | undefined {
  const [a, b] = [trial.blocks ?? [], replay.blocks ?? []];
  if (trial.per_block !== replay.per_block || b.length === 0) return 'the transcripts have different blocks';
  const offset = (replay.first ?? 0) - (trial.first ?? 0);
  for (let j = 0; j < b.length; j++) {
    const i = j + offset;
    if (a[i] === b[j]) continue;
    const first = i * trial.per_block;
    const last = Math.min(calls, first + trial.per_block) - 1;
    return last > first ? `calls ${first}–${last}` : `call ${first}`;
  }
  return undefined;
}
