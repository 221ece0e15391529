import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { runDriver } from '../src/sandbox/run.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * The seal the drivers install before loading a library (native/affinityseal.h): every call it
 * lists, made by test/fixtures/seal/seal_calls.c through each of x86-64's entries, is refused with
 * EPERM in a driver, while the same calls in a plain program get the kernel's own answer. Without a
 * sandbox, so the seal alone is what refuses them.
 */
const x64 = process.arch === 'x64';
if (!x64) console.warn('test/seal.test.ts: skipped: the fixture makes x86-64 system calls');

const fixture = join(repoRoot, 'test', 'fixtures', 'seal', 'seal_calls.c');

/** "SEAL <entry> <number> <call> <errno>" lines as entry/number → errno. */
function outcomes(stderr: string): Map<string, string> {
  const seen = new Map<string, string>();
  for (const m of stderr.matchAll(/^SEAL (x86_64|x32|i386) (\d+) (\S+) (\S+)$/gm)) seen.set(`${m[1]} ${m[2]} ${m[3]}`, m[4]!);
  return seen;
}

/** The x86-64 numbers affinityseal.h refuses outright (futex's shared ops are judged by their argument apart). */
function sealedNumbers(): number[] {
  const header = readFileSync(join(repoRoot, 'native', 'affinityseal.h'), 'utf8');
  const common = /#define SEAL_COMMON ([\d, ]+)/.exec(header)![1]!;
  const list = /static const unsigned x86_64\[\] = \{([^}]*)\}/.exec(header)![1]!.replace('SEAL_COMMON', common);
  return list.split(',').map((n) => Number(n.trim()));
}

describe.skipIf(!x64)("the drivers' seal", () => {
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });

  it('refuses every call it lists with EPERM, through every entry, where a plain process gets the kernel’s answer', async () => {
    const lib = join(dir, 'libseal.so');
    const control = join(dir, 'seal-control');
    execFileSync('gcc', ['-O2', '-fPIC', '-shared', '-o', lib, fixture]);
    execFileSync('gcc', ['-O2', '-DSEAL_CONTROL', '-o', control, fixture]);

    const plain = outcomes(spawnSync(control, { encoding: 'utf8' }).stderr);
    // The library has no API: the driver stops once it is loaded, after its constructor ran.
    const sealed = outcomes(
      (await runDriver([tools.driver, lib], ['time', 'kem', 'keygen', '1', '0', '-1', 'iccs-drng'], { timeoutMs: 20_000 })).run.stderr,
    );

    const numbers = [...plain.keys()].filter((k) => k.startsWith('x86_64 ')).map((k) => Number(k.split(' ')[1]));
    expect(numbers.sort((a, b) => a - b)).toEqual(sealedNumbers().sort((a, b) => a - b));
    expect(sealed.size).toBe(plain.size);
    for (const [call, errno] of plain) {
      expect(sealed.get(call), call).toBe('EPERM');
      // As root the kernel refuses none of them with EPERM; unprivileged, bpf and userfaultfd may be.
      if (process.getuid?.() === 0 || !/ (bpf|userfaultfd)$/.test(call)) expect(errno, call).not.toBe('EPERM');
    }
  });
});
