// False alarms and detection of the pull-request comparison, on this machine.
//   npm run build && node bench/regression.mjs [rounds]
// A/A: the same code measured twice (separate runs, as base and head are) and compared; every
// regression or improvement called is a false alarm. Injected slowdown: the toy KEM with a busy
// loop added to every operation (TOY_KEM_SLOWDOWN), compared with the plain toy KEM.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const rounds = Number(process.argv[2] ?? 6);
const work = mkdtempSync(join(tmpdir(), 'ngcc-regression-'));
const iccs = join(root, 'native', 'iccs');
const toy = join(root, 'test', 'fixtures', 'campaign', 'kem-1');
const pq = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');

function campaign(name, slowdown) {
  const dir = join(work, name);
  const src = join(dir, 'kem-1', 'src');
  mkdirSync(src, { recursive: true });
  cpSync(join(toy, 'good', 'KEM_AlgorithmInstance.h'), join(src, 'KEM_AlgorithmInstance.h'));
  writeFileSync(join(src, 'KEM_AlgorithmInstance.c'), `#include "KEM_AlgorithmInstance.h"\n${slowdown ? `#define TOY_KEM_SLOWDOWN ${slowdown}\n` : ''}#include "toy_kem.inc"\n`);
  writeFileSync(join(dir, 'kem-1', 'candidate.yml'), `id: kem-1\ntype: kem\nalgorithm: toy\ninstances:\n  - label: toy\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ${join(toy, 'common')}]\n`);
  mkdirSync(join(dir, 'kem-2'), { recursive: true });
  writeFileSync(
    join(dir, 'kem-2', 'candidate.yml'),
    `id: kem-2\ntype: kem\nalgorithm: ML-KEM\napi: nist\ninstances:\n  - label: ml-kem-512\n    dir: ${pq}/crypto_kem/ml-kem-512/clean\n    extra_sources: [${pq}/common/fips202.c]\n    include: [${pq}/common]\n    nist_prefix: PQCLEAN_MLKEM512_CLEAN_\n`,
  );
  writeFileSync(join(dir, 'ngcc-perf.yml'), 'planning:\n  trials: 5\n  trial_target_s: 0.1\n  op_budget_s: 5\n  warmups: 3\n');
  return dir;
}

// Exit 1 is expected: the bench campaigns carry no KAT manifest (NOKAT); they are measured anyway.
const measure = (camp, out) => {
  try {
    execFileSync('node', [cli, 'run', camp, '--system', 'bench', '--out', out, '--force', '--phases', 'build,kat,measure'], { stdio: 'pipe' });
  } catch (e) {
    if (e.status !== 1) throw e;
  }
};
const compare = (a, b) => {
  let text;
  try {
    text = execFileSync('node', [cli, 'compare', '--base', a, '--head', b, '--system', 'bench', '--format', 'json'], { encoding: 'utf8' });
  } catch (e) {
    text = e.stdout;
  }
  return JSON.parse(text);
};

const plain = campaign('plain', 0);
const aa = { rows: 0, alarms: 0, inconclusive: 0, deltas: [] };
for (let r = 0; r < rounds; r++) {
  const a = join(work, `aa-${r}-a`);
  const b = join(work, `aa-${r}-b`);
  measure(plain, a);
  measure(plain, b);
  const rep = compare(a, b);
  for (const row of rep.rows) {
    aa.rows++;
    if (row.verdict === 'regression' || row.verdict === 'improvement') aa.alarms++;
    if (row.verdict === 'inconclusive') aa.inconclusive++;
    aa.deltas.push(Math.abs(row.delta_pct));
  }
}
console.log(`A/A (${rounds} rounds x 6 operations: toy KEM and PQClean ML-KEM-512, 5 trials of 0.1 s each):`);
console.log(`  false alarms ${aa.alarms}/${aa.rows} (${((100 * aa.alarms) / aa.rows).toFixed(1)}%), inconclusive ${aa.inconclusive}, median |delta| ${aa.deltas.sort((x, y) => x - y)[aa.deltas.length >> 1].toFixed(2)}%, max ${Math.max(...aa.deltas).toFixed(2)}%`);

for (const spin of [60, 150, 400]) {
  const slow = campaign(`slow-${spin}`, spin);
  let called = 0;
  let total = 0;
  const injected = [];
  for (let r = 0; r < rounds; r++) {
    const a = join(work, `s${spin}-${r}-a`);
    const b = join(work, `s${spin}-${r}-b`);
    measure(plain, a);
    measure(slow, b);
    const rep = compare(a, b);
    for (const row of rep.rows.filter((x) => x.candidate === 'kem-1')) {
      total++;
      injected.push(row.delta_pct);
      if (row.verdict === 'regression') called++;
    }
  }
  const med = injected.sort((x, y) => x - y)[injected.length >> 1];
  console.log(`injected slowdown (TOY_KEM_SLOWDOWN ${spin}, measured median +${med.toFixed(1)}%): detected ${called}/${total} (${((100 * called) / total).toFixed(0)}%)`);
}
rmSync(work, { recursive: true, force: true });
