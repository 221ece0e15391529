import type { BuildRequest } from '../../src/compile/compile.js';
import type { Candidate } from '../../src/config/campaign.js';
import type { InstanceSpec } from '../../src/config/schemas.js';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot, tempDir } from './tmp.js';

/** A build request for one instance as a campaign would make it: the guide's reference flags, a fresh output folder. */
export function buildRequestFor(
  candidate: Candidate,
  index: number,
  more: Partial<BuildRequest> & { instance?: InstanceSpec } = {},
): BuildRequest {
  return {
    candidate,
    instance: candidate.instances[index]!,
    index,
    outDir: tempDir(),
    flagSet: 'guide',
    variant: 'reference',
    extraFlags: [],
    harnessVersion: 'test',
    timeoutMs: 120_000,
    compiler: 'gcc',
    ...more,
  };
}

/** The toy KEM's `good` instance (test/fixtures/campaign/kem-1) as a shared library, built with gcc -O2 into `dir`. */
export function buildToyKem(dir: string): string {
  const fx = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
  const iccs = join(repoRoot, 'native', 'iccs');
  const lib = join(dir, 'libgood.so');
  execFileSync('gcc', [
    '-O2',
    '-fPIC',
    '-shared',
    `-I${iccs}`,
    `-I${join(fx, 'common')}`,
    '-o',
    lib,
    join(fx, 'good', 'KEM_AlgorithmInstance.c'),
    join(iccs, 'auxfunc.c'),
    join(iccs, 'drng.c'),
  ]);
  return lib;
}
