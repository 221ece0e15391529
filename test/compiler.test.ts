import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const hasClang = spawnSync('sh', ['-c', 'command -v clang']).status === 0;
if (!hasClang) console.warn('test/compiler.test.ts: the clang build is skipped: clang is not installed (.ci/run installs it)');

/** Builds and KAT-checks the toy KEM's correct instance with ngcc-perf.yml's `compiler`. */
async function buildWith(compiler: string) {
  const campaign = fixtureCampaign(['kem-1'], `${QUICK}compiler: ${compiler}\n`);
  const data = tempDir();
  const run = await runCli(['run', campaign, '--system', 's', '--out', data, '--only', '^kem-1/good$', '--phases', 'build,kat']);
  return { run, data };
}

describe("ngcc-perf.yml's compiler", () => {
  // First in the file: the CLI resolves a compiler's path once per process.
  it('runs the system compiler by its path, never a program of the same name earlier on PATH, not even for --version', async () => {
    const shadow = tempDir();
    const log = join(shadow, 'ran.log');
    // A program named gcc ahead of the system's, which notes every run and then does what gcc would.
    writeFileSync(join(shadow, 'gcc'), `#!/bin/sh\necho "$@" >> ${log}\nexec /usr/bin/gcc "$@"\n`);
    chmodSync(join(shadow, 'gcc'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${shadow}:${path}`;
    try {
      const { run, data } = await buildWith('gcc');
      expect(run.code, run.err.join('\n')).toBe(0);
      const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson;
      expect(build.instances['kem-1/good']!.kat).toBe('PASS');
      expect(existsSync(log), existsSync(log) ? readFileSync(log, 'utf8') : '').toBe(false);
      const buildLog = readFileSync(
        join(data, 's', 'build', 'kem-1', 'good', String(build.instances['kem-1/good']!.flags), 'build.log'),
        'utf8',
      );
      expect(buildLog).toMatch(/^\$ \/usr\/\S*gcc\S* /m);
    } finally {
      process.env.PATH = path;
    }
  });

  it('refuses a path, or a name the system does not have, naming the field before anything is built', async () => {
    for (const [compiler, why] of [
      ['./kem-1/cc', /ngcc-perf\.yml: line \d+: compiler: expected the name of a system compiler on PATH/],
      ['/tmp/cc', /ngcc-perf\.yml: line \d+: compiler: expected the name of a system compiler on PATH/],
      ['no-such-cc-42', /ngcc-perf\.yml: compiler: 'no-such-cc-42' is not a compiler of this system/],
    ] as const) {
      const { run, data } = await buildWith(compiler);
      expect(run.code, compiler).toBe(2);
      expect(run.err.join('\n'), compiler).toMatch(why);
      expect(spawnSync('ls', [join(data, 's')]).status, compiler).not.toBe(0);
    }
    // The constant-time check's other compilers too, though only the ct phase would run them.
    const { run } = await buildWith('gcc\nct:\n  compilers: [gcc, no-such-cc-43]');
    expect(run.code).toBe(2);
    expect(run.err.join('\n')).toMatch(/ngcc-perf\.yml: ct\.compilers\[1\]: 'no-such-cc-43' is not a compiler of this system/);
  });

  it.skipIf(!hasClang)('builds with clang when it says clang: the KAT passes, the library is clang’s, the records say so', async () => {
    const { run, data } = await buildWith('clang');
    expect(run.code, run.err.join('\n')).toBe(0);
    const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson;
    const entry = build.instances['kem-1/good']!;
    expect(entry.kat).toBe('PASS');
    // The compiler's own mark in the library, not what the harness says of it.
    const comment = execFileSync(
      'readelf',
      ['-p', '.comment', join(data, 's', 'build', 'kem-1', 'good', String(entry.flags), 'libgood.so')],
      {
        encoding: 'utf8',
      },
    );
    expect(comment).toMatch(/clang version/);
    expect(readFileSync(join(data, 's', String(entry.kat_log)), 'utf8')).toMatch(/clang version/);
    const campaign = JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as { environment_latest: { compiler: string } };
    expect(campaign.environment_latest.compiler).toMatch(/clang version/);
    // Another compiler is another build: gcc's key differs.
    const gcc = await buildWith('gcc');
    const gccEntry = (JSON.parse(readFileSync(join(gcc.data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/good']!;
    expect(gccEntry.kat).toBe('PASS');
    expect(gccEntry.build_key).not.toBe(entry.build_key);
  });
});
