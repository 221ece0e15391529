import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from './tmp.js';

/**
 * The CLI as users run it, bundled from the current src/ (dist/ may be stale while src/ changes):
 * a package root named ngcc-perf whose native/ is the repository's. Returns the path of cli.js.
 */
export function bundledCli(): string {
  const root = tempDir();
  execFileSync('node', [join(repoRoot, 'scripts', 'bundle.mjs'), join(root, 'dist')], { cwd: repoRoot });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ngcc-perf', type: 'module' }));
  symlinkSync(join(repoRoot, 'native'), join(root, 'native'));
  return join(root, 'dist', 'cli.js');
}
