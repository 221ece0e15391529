import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { guideFlags } from '../src/compile/flags.js';
import { nativeBinary, nativeManifest, nativePath } from '../src/compile/harnessTools.js';
import { canonicalDigest } from '../src/kat/manifest.js';
import { katTextOf } from '../src/kat/runKat.js';
import { readManifest } from '../src/config/katManifest.js';
import { parseDriverOutput } from '../src/sandbox/runProcess.js';
import { PQCLEAN, readPublished, schemeInfo } from './helpers/pqclean.js';
import { repoRoot, testData, tempDir } from './helpers/tmp.js';

// AArch64 code paths, cross-built with Debian's gcc-aarch64-linux-gnu and run under qemu-user
// (.ci/run installs both).
const CC = 'aarch64-linux-gnu-gcc';
const QEMU = ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu'];
const n = join(repoRoot, 'native');
const iccs = join(n, 'iccs');

// A fresh developer machine may lack the cross toolchain; say so instead of failing in beforeAll.
const missing = [CC, QEMU[0]!].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missing.length > 0)
  console.warn(`test/arm.test.ts skipped: ${missing.join(' and ')} not installed (.ci/run installs gcc-aarch64-linux-gnu and qemu-user)`);

describe.skipIf(missing.length > 0)(
  `AArch64 under qemu-user${missing.length > 0 ? ` (skipped: ${missing.join(', ')} not installed; .ci/run installs them)` : ''}`,
  () => {
    const dir = tempDir();
    const driver = join(dir, 'ngcc_driver');
    const run = (args: string[]) => spawnSync(QEMU[0]!, [...QEMU.slice(1), ...args], { encoding: 'utf8', timeout: 120_000 });

    beforeAll(() => {
      execFileSync(CC, [
        '-std=gnu11',
        '-O2',
        '-Wall',
        '-Wextra',
        '-Werror',
        `-I${n}`,
        '-o',
        driver,
        ...nativeBinary('ngcc_driver').sources,
        ...nativeBinary('ngcc_driver').link,
      ]);
    });

    it('the toy KEM built with the guide ARM performance flags gives the same KAT as on x86-64', () => {
      const fx = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
      const lib = join(dir, 'libgood.so');
      execFileSync(CC, [
        ...guideFlags('aarch64', 'performance'),
        `-I${iccs}`,
        `-I${join(fx, 'common')}`,
        '-shared',
        '-Wl,--no-undefined',
        '-o',
        lib,
        join(fx, 'good', 'KEM_AlgorithmInstance.c'),
        join(iccs, 'auxfunc.c'),
        join(iccs, 'drng.c'),
      ]);
      const out = parseDriverOutput(run([driver, lib, 'kat', 'kem', 'iccs', '10']).stdout);
      expect(out.status).toBe('PASS');
      const expected = readManifest(join(fx, 'kat.sha256')).find((e) => e.label === 'good')!;
      expect(canonicalDigest(katTextOf(out.lines), expected.mode, expected.records)).toBe(expected.sha256);
    });

    it('PQClean ML-KEM-512 passes its published NIST KAT digest on AArch64', () => {
      const pub = readPublished(join(testData, 'reference', 'pqclean-kat.sha256')).find((k) => k.scheme === 'ml-kem-512')!;
      const info = schemeInfo('ml-kem-512');
      const lib = join(dir, 'libmlkem512.so');
      const sources = execFileSync('sh', ['-c', `ls ${info.dir}/*.c`], { encoding: 'utf8' })
        .trim()
        .split('\n');
      execFileSync(CC, [
        ...guideFlags('aarch64', 'reference'),
        `-DNGCC_NIST_PREFIX=${info.prefix}`,
        '-DNGCC_NIST_KEM',
        `-I${info.dir}`,
        `-I${join(PQCLEAN, 'common')}`,
        '-shared',
        '-Wl,--no-undefined',
        '-o',
        lib,
        ...sources,
        join(PQCLEAN, 'common', 'fips202.c'),
        ...nativeManifest().linked.nist.sources.map(nativePath),
        nativePath(nativeManifest().linked.nist.generators.nist),
      ]);
      const out = parseDriverOutput(run([driver, lib, 'kat', 'kem', 'nist', '1', info.prefix]).stdout);
      expect(out.status).toBe('PASS');
      expect(canonicalDigest(katTextOf(out.lines), 'strict', 1)).toBe(pub.sha256);
    });

    it('the timing driver probes an AArch64 cycle source and reports a trial', () => {
      const lib = join(dir, 'libempty.so');
      execFileSync(CC, ['-std=c99', '-O2', '-fPIC', '-shared', '-o', lib, join(repoRoot, 'test', 'fixtures', 'empty-op', 'empty_kem.c')]);
      const r = run([driver, lib, 'time', 'kem', 'keygen', '1000', '10', '-1', 'iccs-drng', '0']);
      const out = parseDriverOutput(r.stdout);
      expect(out.status).toBe('complete');
      expect(['perf_event-cycles', 'cntvct_el0']).toContain(out.meta.counter);
      const trial = out.lines.find((l) => l[0] === 'TRIAL')!;
      expect(Number(trial[1])).toBe(1000);
      expect(Number(trial[3])).toBeGreaterThan(0);
    });
  },
);
