// False alarms and detection of the pull-request comparison, on this machine.
//   npm run build && node bench/regression.mjs [rounds]
// A/A: the same code measured twice (separate runs, as base and head are) and compared; every
// regression or improvement called is a false alarm. Injected slowdown: the toy KEM with a busy
// loop added to every operation (TOY_KEM_SLOWDOWN), compared with the plain toy KEM.
import { execFileSync } from 'node:child_process';
import { benchCampaign } from './benchCampaign.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const rounds = Number(process.argv[2] ?? 6);
const work = mkdtempSync(join(tmpdir(), 'ngcc-regression-'));
const _iccs = join(root, 'native', 'iccs');
const _toy = join(root, 'test', 'fixtures', 'campaign', 'kem-1');
const _pq = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');

// Exit 1 is expected: the bench campaigns carry no KAT manifest (NOKAT); they are measured anyway.
const measure = (camp, out) => {
  try {
    execFileSync('node', [cli, 'run', camp, '--system', 'bench', '--out', out, '--force', '--phases', 'build,kat,measure'], {
      stdio: 'pipe',
    });
  } catch (e) {
    if (e.status !== 1) throw e;
  }
};
const compare = (a, b, history = []) => {
  let text;
  const h = history.length > 0 ? ['--history', history.join(',')] : [];
  try {
    text = execFileSync('node', [cli, 'compare', '--base', a, '--head', b, '--system', 'bench', '--format', 'json', ...h], {
      encoding: 'utf8',
    });
  } catch (e) {
    text = e.stdout;
  }
  return JSON.parse(text);
};

const plain = benchCampaign(work, 'plain', 0);
// "Nightly history": separate runs of the same code, as the data branch accumulates them.
const history = [];
for (let i = 0; i < 5; i++) {
  const dir = join(work, `nightly-${i}`);
  measure(plain, dir);
  history.push(dir);
}

function aaRounds(withHistory) {
  const s = { rows: 0, alarms: 0, inconclusive: 0, deltas: [] };
  for (let r = 0; r < rounds; r++) {
    const a = join(work, `aa-${withHistory}-${r}-a`);
    const b = join(work, `aa-${withHistory}-${r}-b`);
    measure(plain, a);
    measure(plain, b);
    for (const row of compare(a, b, withHistory ? history : []).rows) {
      s.rows++;
      if (row.verdict === 'regression' || row.verdict === 'improvement') s.alarms++;
      if (row.verdict === 'inconclusive') s.inconclusive++;
      s.deltas.push(Math.abs(row.delta_pct));
    }
  }
  const d = s.deltas.sort((x, y) => x - y);
  return `false alarms ${s.alarms}/${s.rows} (${((100 * s.alarms) / s.rows).toFixed(1)}%), inconclusive ${s.inconclusive}, median |delta| ${d[d.length >> 1].toFixed(2)}%, max ${d[d.length - 1].toFixed(2)}%`;
}

console.log(`A/A (${rounds} rounds x 6 operations: toy KEM and PQClean ML-KEM-512, 5 interleaved trials of 0.1 s each):`);
console.log(`  trials only:           ${aaRounds(false)}`);
console.log(`  with 5 nightly runs:   ${aaRounds(true)}`);

for (const spin of [400, 1500, 6000]) {
  const slow = benchCampaign(work, `slow-${spin}`, spin);
  const called = { trials: 0, history: 0 };
  let total = 0;
  const injected = [];
  for (let r = 0; r < rounds; r++) {
    const a = join(work, `s${spin}-${r}-a`);
    const b = join(work, `s${spin}-${r}-b`);
    measure(plain, a);
    measure(slow, b);
    const plainRows = compare(a, b).rows.filter((x) => x.candidate === 'kem-1');
    const histRows = compare(a, b, history).rows.filter((x) => x.candidate === 'kem-1');
    for (const row of plainRows) {
      total++;
      injected.push(row.delta_pct);
      if (row.verdict === 'regression') called.trials++;
    }
    called.history += histRows.filter((x) => x.verdict === 'regression').length;
  }
  const med = injected.sort((x, y) => x - y)[injected.length >> 1];
  console.log(
    `injected slowdown TOY_KEM_SLOWDOWN ${spin} (measured median +${med.toFixed(1)}%): detected ${called.trials}/${total} on trials only, ${called.history}/${total} with the nightly history`,
  );
}
rmSync(work, { recursive: true, force: true });
