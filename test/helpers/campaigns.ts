import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from './tmp.js';

export const FIXTURES = join(repoRoot, 'test', 'fixtures', 'campaign');
export const ICCS = join(repoRoot, 'native', 'iccs');

/** Planning for tests that need timing records, not good numbers: two short trials. */
export const QUICK = 'planning:\n  trials: 2\n  trial_target_s: 0.01\n  op_budget_s: 1\n  min_measurements: 10\n  warmups: 1\n';

/**
 * A campaign in a temporary folder holding copies of the fixture candidates `ids`, with the given
 * ngcc-perf.yml. The copies live elsewhere, so their paths to the ICCS helper library are pointed
 * at the repository's.
 */
export function fixtureCampaign(ids: string[], settings: string): string {
  const root = tempDir();
  for (const id of ids) {
    cpSync(join(FIXTURES, id), join(root, id), { recursive: true });
    const yml = join(root, id, 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(\.\.\/)+native\/iccs/g, ICCS));
  }
  writeFileSync(join(root, 'ngcc-perf.yml'), settings);
  return root;
}
