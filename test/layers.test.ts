import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script, checked by its own test below
import { checkLayers } from '../scripts/layers.mjs';
import { repoRoot, tempDir } from './helpers/tmp.js';

const check = checkLayers as (srcDir: string) => string[];

function tree(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('the layering of src/', () => {
  it('has no import circle and no import from a higher layer', () => {
    expect(check(join(repoRoot, 'src'))).toEqual([]);
  });

  it('names an import circle, however long', () => {
    const src = tree({
      'report/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'report/b.ts': "import { c } from './pages/c.js';\nexport const b = c;\n",
      'report/pages/c.ts': "import type { A } from '../a.js';\nexport const c = 1 as unknown as A;\n",
    });
    expect(check(src)).toEqual([
      'import circle: report/a.ts ↔ report/b.ts ↔ report/pages/c.ts',
      // A folder and the folder inside it are two folders: they tie one way too.
      'folder circle: report/ ↔ report/pages/ (report/b.ts → report/pages/c.ts; report/pages/c.ts → report/a.ts)',
    ]);
  });

  it('names an import that runs up the layers, and a file in no layer', () => {
    const src = tree({
      'evidence/validate.ts': "import { pageOf } from '../report/page.js';\nexport const v = pageOf;\n",
      'report/page.ts': 'export const pageOf = 1;\n',
      'stray/x.ts': 'export const x = 1;\n',
    });
    expect(check(src)).toEqual([
      'evidence/validate.ts imports report/page.ts, a higher layer (report/ above evidence/)',
      'stray/x.ts: in no layer (add its folder to LAYERS in scripts/layers.mjs)',
    ]);
  });

  it('names two folders of one layer that import each other, though no files form a circle', () => {
    const src = tree({
      'kat/runKat.ts': "import { flags } from '../compile/flags.js';\nexport const run = flags;\n",
      'kat/status.ts': 'export const status = 1;\n',
      'compile/flags.ts': 'export const flags = 1;\n',
      'compile/build.ts': "import { status } from '../kat/status.js';\nexport const build = status;\n",
    });
    expect(check(src)).toEqual(['folder circle: compile/ ↔ kat/ (compile/build.ts → kat/status.ts; kat/runKat.ts → compile/flags.ts)']);
  });
});
