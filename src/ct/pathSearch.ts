import { pathsTaken, type GcovFile } from './coverage.js';

/** One run of the coverage build with this many calls: gcov's report of the library's own files, or why there is none. */
export type CountLines = (calls: number) => Promise<{ files: GcovFile[] } | { failure: string }>;

export interface PathSearch {
  /** The fewest calls, counted from the first, that take every path `upTo` calls take. */
  needed: number;
  /** Each run's report by its calls: `upTo`'s and those the search ran on the way. */
  runs: Map<number, GcovFile[]>;
}

/**
 * The calls an operation needs for its rarely taken paths (docs/method.md#rare-paths): a run of
 * `upTo` calls finds the paths, then a bisection over the count finds the fewest calls that take
 * them all, from `from` (the check's fewest) up. Every run is the same job with the same generator
 * and seed, so a run of n calls is the first n calls of a longer one and takes a subset of its
 * paths: the count is monotone, and log2(upTo / from) runs find it.
 */
export async function searchPaths(count: CountLines, from: number, upTo: number): Promise<PathSearch | { failure: string }> {
  const runs = new Map<number, GcovFile[]>();
  const taken = async (calls: number): Promise<Set<string> | { failure: string }> => {
    const counted = await count(calls);
    if ('failure' in counted) return counted;
    runs.set(calls, counted.files);
    return pathsTaken(counted.files);
  };
  const all = await taken(upTo);
  if ('failure' in all) return all;
  if (upTo <= from) return { needed: upTo, runs };
  const covers = (s: Set<string>) => [...all].every((k) => s.has(k));
  const first = await taken(from);
  if ('failure' in first) return first;
  if (covers(first)) return { needed: from, runs };
  // Invariant: `low` calls miss a path, `high` calls take them all.
  let low = from;
  let high = upTo;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    const s = await taken(mid);
    if ('failure' in s) return s;
    if (covers(s)) high = mid;
    else low = mid;
  }
  return { needed: high, runs };
}
