import { describe, expect, it } from 'vitest';
import type { GcovFile } from '../src/ct/coverage.js';
import { searchPaths } from '../src/ct/pathSearch.js';
import { CT, searchRuns } from '../bench/ct-model.mjs';
import { CT_SLOWDOWN_MIN } from '../src/campaign/ctPhase.js';
import {
  CT_CALLS,
  CT_COVERAGE_SLOWDOWN,
  CT_MAX_CALLS,
  CT_OP_BUDGET_S,
  CT_PATH_CALLS,
  CT_STARTUP_S,
  CT_VALGRIND_FACTOR,
} from '../src/config/defaults.js';

/**
 * The path search's bisection over the call count (src/ct/pathSearch.ts), on reports made up of
 * lines each first taken at a known call: the runs of the coverage build are prefixes of each
 * other, so a line first taken at call k is in every run of k calls or more.
 */
function reportsAfter(firstTaken: Record<number, number>, partlyUntil: Record<number, number> = {}) {
  const asked: number[] = [];
  const count = async (calls: number): Promise<{ files: GcovFile[] }> => {
    asked.push(calls);
    const lines = Object.entries(firstTaken).map(([line, k]) => ({
      line_number: Number(line),
      count: calls >= k ? calls - k + 1 : 0,
      function_name: 'f',
      unexecuted_block: calls < (partlyUntil[Number(line)] ?? 0),
    }));
    return { files: [{ file: 'a.c', functions: [{ name: 'f', execution_count: calls }], lines }] };
  };
  return { count, asked };
}

describe('the search for rarely taken paths', () => {
  it('finds the fewest calls that take every path of the longest run', async () => {
    for (const rare of [4, 5, 17, 33, 63, 64]) {
      const { count } = reportsAfter({ 1: 1, 2: 1, 3: 2, 9: rare });
      const found = await searchPaths(count, 3, 64);
      expect('needed' in found && found.needed, `a path first taken at call ${rare}`).toBe(rare);
    }
  });

  it('stops at the check’s own calls when they take every path, after two runs', async () => {
    const { count, asked } = reportsAfter({ 1: 1, 2: 3 });
    expect(await searchPaths(count, 3, 64)).toMatchObject({ needed: 3 });
    expect(asked).toEqual([64, 3]);
  });

  it('counts a line run whole as a path of its own: a block of it first run later', async () => {
    // Line 5 runs from the first call, but a block of it (`if (bad) return -1;`) only from call 20.
    const { count } = reportsAfter({ 5: 1 }, { 5: 20 });
    expect(await searchPaths(count, 3, 64)).toMatchObject({ needed: 20 });
  });

  it('keeps every run it made, for the coverage of the calls the check then makes', async () => {
    const { count, asked } = reportsAfter({ 1: 1, 9: 33 });
    const found = await searchPaths(count, 3, 64);
    if (!('runs' in found)) throw new Error(found.failure);
    expect([...found.runs.keys()].sort((a, b) => a - b)).toEqual([...new Set(asked)].sort((a, b) => a - b));
    expect(found.runs.has(33)).toBe(true);
    expect(asked.length).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(64 - 3)));
  });

  it('passes a run’s failure on', async () => {
    const count = async (calls: number) => (calls === 64 ? { failure: 'the coverage run did not finish' } : { files: [] });
    expect(await searchPaths(count, 3, 64)).toEqual({ failure: 'the coverage run did not finish' });
  });

  it("the Round-1 projection's model (bench/ct-model.mjs) prices the ct phase with the harness's own defaults", () => {
    expect(CT).toEqual({
      calls: CT_CALLS,
      path_calls: CT_PATH_CALLS,
      startup_s: CT_STARTUP_S,
      op_budget_s: CT_OP_BUDGET_S,
      max_calls: CT_MAX_CALLS,
      coverage_slowdown_assumed: CT_COVERAGE_SLOWDOWN,
      slowdown_min: CT_SLOWDOWN_MIN,
      valgrind_factor: CT_VALGRIND_FACTOR,
    });
  });

  it("runs the calls the Round-1 projection's model prices (bench/ct-model.mjs), in its order", async () => {
    for (const rare of [1, 3, 4, 5, 17, 33, 63, 64]) {
      const { count, asked } = reportsAfter({ 1: 1, 9: rare });
      await searchPaths(count, 3, 64);
      expect(asked, `a path first taken at call ${rare}`).toEqual(searchRuns(3, 64, rare));
    }
  });
});
