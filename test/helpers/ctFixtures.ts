import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ICCS } from './campaigns.js';
import { repoRoot, tempDir } from './tmp.js';

export const CT_FIXTURES = join(repoRoot, 'test', 'fixtures', 'ct');

/**
 * The measured build alone (`ct.variants: []`): the other builds are test/ct-builds.test.ts's
 * subject, and each would add its own memcheck runs to every test here.
 */
const MEASURED_BUILD_ONLY = 'ct:\n  variants: []\n';

/** A campaign in a temporary folder with a copy of the ct fixture kem-7, its ICCS paths pointed at the repository's. */
export function ctCampaign(settings = MEASURED_BUILD_ONLY): string {
  const root = tempDir();
  cpSync(join(CT_FIXTURES, 'kem-7'), join(root, 'kem-7'), { recursive: true });
  const yml = join(root, 'kem-7', 'candidate.yml');
  writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(\.\.\/)+native\/iccs/g, ICCS));
  writeFileSync(join(root, 'ngcc-perf.yml'), settings);
  return root;
}

/** The line of the fixture source that carries `marker` (1-based), read from the source, never written down. */
export function markedLine(marker: string): number {
  const lines = readFileSync(join(CT_FIXTURES, 'kem-7', 'common', 'ct_kem.inc'), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`no line marked '${marker}'`);
  return i + 1;
}
