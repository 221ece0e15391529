import { defineConfig } from 'vitest/config';

/**
 * Pure tests start no child process at all (no compiler, no git, no driver, no python3): they run in
 * parallel, first. Files that start processes but time nothing are UNTIMED (below). Every other file
 * runs after them one file at a time, so that the two cores go to the compilers and no timing test
 * shares its core with another file. A new test file is serial unless listed here or in UNTIMED;
 * test/projects.test.ts checks both lists against what each file does (test/helpers/projects.ts).
 */
export const PURE = [
  'test/unseen.test.ts',
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
  'test/path-search.test.ts',
  'test/source-hint.test.ts',
  'test/ct-units.test.ts',
  'test/ct-pages.test.ts',
  'test/cost.test.ts',
  'test/floor.test.ts',
  'test/hash-golden.test.ts',
  'test/kex-golden.test.ts',
  'test/manifest.test.ts',
  'test/refusals.test.ts',
  'test/rankings.test.ts',
  'test/projects.test.ts',
  'test/nights.test.ts',
  'test/ct-compare.test.ts',
  'test/native-manifest.test.ts',
];

/**
 * Files that start processes but time nothing (KATs, the constant-time check, gcov, python3's and
 * Biome's cross-checks, the build cache's tar): two at a time, after the pure files and before the
 * timed ones, which then have the machine to themselves. A ct step still holds its core's lock, so
 * two of them queue there, never overlap.
 */
export const UNTIMED = [
  'test/kat-pqclean.test.ts',
  'test/ct-pqclean.test.ts',
  'test/ct-builds.test.ts',
  'test/ct-kyberslash.test.ts',
  'test/ct-rare-paths.test.ts',
  'test/ct-coverage.test.ts',
  'test/hash-kat.test.ts',
  'test/kyber-ref.test.ts',
  'test/own-generator.test.ts',
  'test/nist-names-sig.test.ts',
  'test/format.test.ts',
  'test/lint.test.ts',
  'test/build-cache.test.ts',
  'test/cformat.test.ts',
  'test/candidate-build-fields.test.ts',
  'test/compiler.test.ts',
  'test/ct-division.test.ts',
  'test/ct-phase.test.ts',
  'test/evidence.test.ts',
  'test/iccs-helpers.test.ts',
  'test/kex-example.test.ts',
  'test/publish.test.ts',
  'test/release.test.ts',
];

export default defineConfig({
  test: {
    // Native builds and KAT runs are real gcc invocations: give them room.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    projects: [
      { extends: true, test: { name: 'pure', include: PURE, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'untimed', include: UNTIMED, maxWorkers: 2, sequence: { groupOrder: 1 } } },
      {
        extends: true,
        test: {
          name: 'native',
          include: ['test/**/*.test.ts'],
          exclude: [...PURE, ...UNTIMED],
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
