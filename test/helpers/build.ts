import type { BuildRequest } from '../../src/compile/compile.js';
import type { Candidate } from '../../src/config/campaign.js';
import type { InstanceSpec } from '../../src/config/schemas.js';
import { tempDir } from './tmp.js';

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
