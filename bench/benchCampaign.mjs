// The bench campaign of bench/regression.mjs and bench/disturbed.mjs: the toy KEM (optionally slowed
// by a busy loop, TOY_KEM_SLOWDOWN) and PQClean ML-KEM-512, 5 interleaved trials of 0.1 s.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const iccs = join(root, 'native', 'iccs');
const toy = join(root, 'test', 'fixtures', 'campaign', 'kem-1');
const pq = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');

/** The campaign folder `work/name`; `slowdown` spins (0: the plain toy KEM). */
export function benchCampaign(work, name, slowdown) {
  const dir = join(work, name);
  const src = join(dir, 'kem-1', 'src');
  mkdirSync(src, { recursive: true });
  cpSync(join(toy, 'good', 'KEM_AlgorithmInstance.h'), join(src, 'KEM_AlgorithmInstance.h'));
  writeFileSync(
    join(src, 'KEM_AlgorithmInstance.c'),
    `#include "KEM_AlgorithmInstance.h"\n${slowdown ? `#define TOY_KEM_SLOWDOWN ${slowdown}\n` : ''}#include "toy_kem.inc"\n`,
  );
  writeFileSync(
    join(dir, 'kem-1', 'candidate.yml'),
    `id: kem-1\ntype: kem\nalgorithm: toy\ninstances:\n  - label: toy\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ${join(toy, 'common')}]\n`,
  );
  mkdirSync(join(dir, 'kem-2'), { recursive: true });
  writeFileSync(
    join(dir, 'kem-2', 'candidate.yml'),
    `id: kem-2\ntype: kem\nalgorithm: ML-KEM\napi: nist\ninstances:\n  - label: ml-kem-512\n    dir: ${pq}/crypto_kem/ml-kem-512/clean\n    extra_sources: [${pq}/common/fips202.c]\n    include: [${pq}/common]\n    nist_prefix: PQCLEAN_MLKEM512_CLEAN_\n`,
  );
  writeFileSync(join(dir, 'ngcc-perf.yml'), 'planning:\n  trials: 5\n  trial_target_s: 0.1\n  op_budget_s: 5\n  warmups: 3\n');
  return dir;
}
