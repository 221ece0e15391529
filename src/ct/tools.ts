import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type HarnessTools, nativeBinary } from '../compile/harnessTools.js';
import { HARNESS_CC, systemToolPath } from '../env/toolchain.js';
import { runProcess } from '../sandbox/runProcess.js';
import { readJsonIfExists, sha256File, writeJsonAtomic } from '../util/fsx.js';
import { nativeDir } from '../util/paths.js';

/**
 * ngcc_ct, built once per harness version beside the other drivers (`<harness dir>-ct/`, in the
 * same private cache) and checked against the hash written with it. A binary of its own: it needs
 * valgrind's headers, which the other drivers must not depend on.
 */
export async function ctDriver(tools: HarnessTools): Promise<string> {
  const dir = `${tools.dir}-ct`;
  const driver = join(dir, 'ngcc_ct');
  const manifest = () => readJsonIfExists<{ ngcc_ct?: string }>(join(dir, 'sha256.json'));
  if (existsSync(driver) && manifest()?.ngcc_ct === sha256File(driver)) return driver;
  const n = nativeDir();
  const staging = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  const out = join(staging, 'ngcc_ct');
  // What it is built from: native/binaries.json (ngcc_mem's operations with the ct job's main, native/bin/ct.c).
  const { sources, link } = nativeBinary('ngcc_ct');
  // The harness's own sources: trusted, built outside the sandbox.
  const r = await runProcess(
    [systemToolPath(HARNESS_CC), '-std=gnu11', '-O2', '-g', '-Wall', '-Wextra', '-Werror', `-I${n}`, '-o', out, ...sources, ...link],
    {
      timeoutMs: 120_000,
    },
  );
  if (r.exitCode !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `building the constant-time driver (ngcc_ct) failed (valgrind's headers, valgrind/memcheck.h, are needed):\n${r.stderr}`,
    );
  }
  writeJsonAtomic(join(staging, 'sha256.json'), { ngcc_ct: sha256File(out) });
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch {
    // Another process built the same driver meanwhile.
    rmSync(staging, { recursive: true, force: true });
  }
  return driver;
}
