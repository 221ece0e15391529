import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native builds and KAT runs are real gcc invocations: give them room, and keep the
    // two cores for the compilers rather than for parallel test files.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
