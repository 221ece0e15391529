import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const created: string[] = [];

// Registered once per test file (each file imports its own copy of this module): removes every
// folder the file made, whether tempDir() was called in a describe block or inside a test.
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder removed after the test file. */
export function tempDir(prefix = 'ngcc-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export const repoRoot = join(import.meta.dirname, '..', '..');
/** Copies of outside reference material the tests read; test/data/README.md names each source. */
export const testData = join(repoRoot, 'test', 'data');
