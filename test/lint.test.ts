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
});
