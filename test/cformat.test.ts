import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from './helpers/tmp.js';

// The C format check (scripts/cformat.mjs) against the repository's .clang-format.
const hasClangFormat = spawnSync('sh', ['-c', 'command -v clang-format']).status === 0;
if (!hasClangFormat) console.warn('test/cformat.test.ts skipped: clang-format is not installed');

const script = join(repoRoot, 'scripts', 'cformat.mjs');

describe.skipIf(!hasClangFormat)(`the C format check${hasClangFormat ? '' : ' (skipped: clang-format is not installed)'}`, () => {
  it('names the unformatted file of a folder and not the formatted one, and exits 1', () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'formatted.c'),
      'static int twice(int x) { return 2 * x; }\n\nint main(void) {\n    if (twice(1) != 2) return 1;\n    return 0;\n}\n',
    );
    writeFileSync(join(dir, 'unformatted.c'), 'static int twice( int x ){\n  return 2*x;\n}\nint main(void)\n{\n  return twice(0);\n}\n');
    const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', cwd: dir });
    expect(r.status).toBe(1);
    const named = r.stdout.split('\n').filter((l) => l.endsWith('.c'));
    expect(named).toEqual(['unformatted.c']);
  });

  it('passes a folder whose files are all formatted', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'formatted.h'), '#ifndef F_H\n#define F_H\nint twice(int x);\n#endif\n');
    const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', cwd: dir });
    expect(r.stdout).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('the C format check without clang-format', () => {
  it('says in one line that it is skipped, and exits 0', () => {
    const r = spawnSync(process.execPath, [script, tempDir()], {
      encoding: 'utf8',
      env: { ...process.env, CLANG_FORMAT: join(tempDir(), 'no-clang-format') },
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^C format check skipped: .*clang-format is missing/)]);
  });
});
