import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A temporary folder removed after the test file. */
export function tempDir(prefix = 'ngcc-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const repoRoot = join(import.meta.dirname, '..', '..');
export const sharedDir = join(repoRoot, '..', 'shared');
