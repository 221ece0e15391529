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

/** The fixture manifest's digest of the toy KEM's correct instance (test/fixtures/README.md says where it comes from). */
const GOOD_KEM_DIGEST = () =>
  readFileSync(join(FIXTURES, 'kem-1', 'kat.sha256'), 'utf8')
    .split('\n')
    .find((l) => l.endsWith(' good/KAT_KEM_good.txt'))!
    .split(' ')[0]!;

/** A campaign of `labels` copies of the toy KEM's correct instance, each with its manifest line. */
export function goodKemCampaign(labels: string[], settings: string): string {
  const root = tempDir();
  for (const part of ['good', 'common']) cpSync(join(FIXTURES, 'kem-1', part), join(root, 'kem-1', part), { recursive: true });
  const instances = labels.map(
    (l) => `  - label: ${l}\n    dir: good\n    extra_sources: [${ICCS}/auxfunc.c, ${ICCS}/drng.c]\n    include: [${ICCS}, ../common]\n`,
  );
  writeFileSync(join(root, 'kem-1', 'candidate.yml'), `id: kem-1\ntype: kem\nalgorithm: toy\ninstances:\n${instances.join('')}`);
  const digest = GOOD_KEM_DIGEST();
  writeFileSync(join(root, 'kem-1', 'kat.sha256'), labels.map((l) => `${digest} strict ${l}/KAT_KEM_${l}.txt\n`).join(''));
  writeFileSync(join(root, 'ngcc-perf.yml'), settings);
  return root;
}
