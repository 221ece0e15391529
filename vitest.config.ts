import { defineConfig } from 'vitest/config';

/**
 * Pure tests (no compiler, no git, no child processes that time anything) run in parallel; every
 * other file builds with real gcc, runs drivers or git, and runs after them one file at a time so
 * that the two cores go to the compilers and no timing test shares its core with another file.
 * A new test file is serial unless listed here.
 */
const PURE = [
  'test/format.test.ts',
  'test/stats.test.ts',
  'test/precision.test.ts',
  'test/config.test.ts',
  'test/comment.test.ts',
  'test/compare.test.ts',
  'test/report-golden.test.ts',
  'test/report-seeds.test.ts',
  'test/placeholder-cost.test.ts',
  'test/forecast.test.ts',
  'test/progress.test.ts',
  'test/workflows.test.ts',
  'test/layers.test.ts',
  'test/lint.test.ts',
  'test/path-search.test.ts',
  'test/source-hint.test.ts',
];

export default defineConfig({
  test: {
    // Native builds and KAT runs are real gcc invocations: give them room.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    projects: [
      { extends: true, test: { name: 'pure', include: PURE, sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: { name: 'native', include: ['test/**/*.test.ts'], exclude: PURE, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
