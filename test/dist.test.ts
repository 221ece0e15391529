import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from './helpers/tmp.js';

describe('dist/', () => {
  it('is the bundle of the current src/ (run npm run build and commit dist/)', () => {
    const out = tempDir();
    execFileSync('node', [join(repoRoot, 'scripts', 'bundle.mjs'), out], { cwd: repoRoot });
    for (const file of ['index.js', 'cli.js']) {
      const fresh = readFileSync(join(out, file), 'utf8');
      const committed = readFileSync(join(repoRoot, 'dist', file), 'utf8');
      expect(committed === fresh, `dist/${file} is stale`).toBe(true);
    }
  });

  it('the bundled CLI answers --help and rejects bad input with exit 2', () => {
    const cli = join(repoRoot, 'dist', 'cli.js');
    expect(execFileSync('node', [cli, '--help'], { encoding: 'utf8' })).toMatch(/ngcc-perf run CAMPAIGN_DIR/);
    let code = 0;
    let stderr = '';
    try {
      execFileSync('node', [cli, 'run', 'nowhere', '--system', 'x', '--out', 'y'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      code = (e as { status: number }).status;
      stderr = (e as { stderr: string }).stderr;
    }
    expect(code).toBe(2);
    expect(stderr).toBe('error: nowhere: campaign folder not found\n');
  });
});
