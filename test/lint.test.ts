import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from './helpers/tmp.js';

const biome = join(repoRoot, 'node_modules', '.bin', 'biome');

/** `biome check` with the repository's configuration on a tree holding one planted source file. */
function check(path: string, source: string) {
  const dir = tempDir();
  copyFileSync(join(repoRoot, 'biome.json'), join(dir, 'biome.json'));
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, path), source);
  const r = spawnSync(biome, ['check', '--vcs-enabled=false', '--config-path', join(dir, 'biome.json')], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('npm run lint', () => {
  it('passes clean, formatted code', () => {
    expect(check('src/planted.ts', 'export const answer = (x: number): number => x + 1;\n').status).toBe(0);
  });

  it('fails on a planted lint violation, naming the rule', () => {
    const r = check('src/planted.ts', 'export function f(x: number): number {\n  debugger;\n  return x;\n}\n');
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/noDebugger/);
  });

  it('fails on a planted formatting violation', () => {
    const r = check('src/planted.ts', 'export const answer   =   (x:number):number=>x+1\n');
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/format/i);
  });

  it('fails on a function of src/ over 80 lines, and passes one that carries its named exception', () => {
    const body = Array.from({ length: 81 }, (_, i) => `  total += ${i};`).join('\n');
    const long = (comment: string) => `${comment}export function long(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`;
    const r = check('src/planted.ts', long(''));
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/noExcessiveLinesPerFunction/);
    const excused = check(
      'src/planted.ts',
      long('// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one table of cases, read top to bottom\n'),
    );
    expect(excused.output).not.toMatch(/noExcessiveLinesPerFunction/);
    expect(excused.status).toBe(0);
  });

  it('names every exception to the length limit with why', () => {
    const grep = spawnSync('grep', ['-rn', 'biome-ignore lint/complexity/noExcessiveLinesPerFunction', join(repoRoot, 'src')], {
      encoding: 'utf8',
    });
    const lines = grep.stdout.split('\n').filter(Boolean);
    for (const l of lines) expect(l, l).toMatch(/noExcessiveLinesPerFunction: \S+( \S+){3,}/);
  });
});
