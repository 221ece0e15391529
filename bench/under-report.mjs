// The largest under-report that still yields a complete measurement (docs/benchmarks.md, (q)).
//   npm run build && node bench/under-report.mjs [TRIAL_S ...]      default: 1 0.05
// For each trial length, one campaign of the toy KEM: an honest instance and the hostile fixture
// kem-66/forge-cycles (its library hooks the driver's write() and lowers every TRIAL line's cycles
// and seconds by UNDER_PERCENT %) at 1, 2, 3, 4, 5, 7, 10, 15, 20 and 30 %, 3 trials of keygen, enc
// and dec each. Prints, per percentage, how many of the three operations were still measured
// `complete`, and for the honest instance each trial's CPU ÷ (cycles ÷ rate) and its cycles ÷ the
// trusted half's (native/core/trusted.h): the margins honest trials use.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const iccs = join(root, 'native', 'iccs');
const fixtures = join(root, 'test', 'fixtures');
const common = join(fixtures, 'campaign', 'kem-1', 'common');
const lengths = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1, 0.05];
const PERCENTS = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30];
const work = mkdtempSync(join(tmpdir(), 'ngcc-under-'));

function campaign(trialS) {
  const dir = join(work, `t${trialS}`);
  const cand = join(dir, 'kem-66');
  mkdirSync(cand, { recursive: true });
  cpSync(join(fixtures, 'hostile', 'kem-66', 'forge-cycles'), join(cand, 'forge-cycles'), { recursive: true });
  cpSync(join(fixtures, 'hostile', 'kem-66', 'honest'), join(cand, 'honest'), { recursive: true });
  for (const inc of ['got_write.inc', 'got_patch.inc']) cpSync(join(fixtures, 'hostile', 'kem-66', inc), join(cand, inc));
  // forge-cycles includes the toy KEM by a path relative to the fixtures' tree.
  const kemOf = (dirName) => {
    const file = join(cand, dirName, 'KEM_AlgorithmInstance.c');
    writeFileSync(file, readFileSync(file, 'utf8').replace('../../../campaign/kem-1/common/toy_kem.inc', 'toy_kem.inc'));
  };
  kemOf('forge-cycles');
  kemOf('honest');
  const inst = (label, dirName, defines) =>
    `  - label: ${label}\n    dir: ${dirName}\n${defines ? `    defines: [${defines}]\n` : ''}    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ${common}]\n`;
  writeFileSync(
    join(cand, 'candidate.yml'),
    `id: kem-66\ntype: kem\nalgorithm: toy\ninstances:\n${inst('honest', 'honest')}${PERCENTS.map((p) => inst(`under-${p}`, 'forge-cycles', `UNDER_PERCENT=${p}`)).join('')}`,
  );
  // The toy KEM's digest (kem-1/good's): every instance computes it, whatever it says of its cycles.
  const good = readFileSync(join(fixtures, 'hostile', 'kem-66', 'kat.sha256'), 'utf8').match(/^([0-9a-f]{64}) strict honest\//m)[1];
  const labels = ['honest', ...PERCENTS.map((p) => `under-${p}`)];
  writeFileSync(join(cand, 'kat.sha256'), labels.map((l) => `${good} strict ${l}/KAT_KEM_${l}.txt\n`).join(''));
  writeFileSync(join(dir, 'ngcc-perf.yml'), `planning:\n  trials: 3\n  trial_target_s: ${trialS}\n  op_budget_s: 60\n  warmups: 3\n`);
  return dir;
}

for (const trialS of lengths) {
  const dir = campaign(trialS);
  const out = join(work, `out${trialS}`);
  // Exit 1 is expected: the caught under-reports' measurements fail.
  const run = spawnSync('node', [cli, 'run', dir, '--system', 's', '--out', out, '--phases', 'build,kat,measure'], { encoding: 'utf8' });
  if (run.status !== 0 && run.status !== 1) throw new Error(`run exited ${run.status}: ${run.stderr}`);
  const records = join(out, 's', 'records', 'kem-66');
  const rec = (label, op) => JSON.parse(readFileSync(join(records, `${label}__${op}.json`), 'utf8'));
  const ratios = [];
  const trusted = [];
  for (const f of readdirSync(records).filter((f) => f.startsWith('honest__')))
    for (const t of JSON.parse(readFileSync(join(records, f), 'utf8')).trials) {
      if (t.kernel_cpu_s !== undefined) ratios.push(t.kernel_cpu_s / (t.cycles / t.clock_hz));
      if (t.trusted_cycles !== undefined) trusted.push(t.cycles / t.trusted_cycles);
    }
  ratios.sort((a, b) => a - b);
  trusted.sort((a, b) => a - b);
  console.log(
    `\ntrials of ${trialS} s: honest CPU ÷ cycles-time over ${ratios.length} trials: ${ratios[0]?.toFixed(4)}–${ratios.at(-1)?.toFixed(4)}`,
  );
  // The trusted half's margin (src/measure/trustedClock.ts): what an honest trial's own reads leave out.
  console.log(
    `  honest cycles ÷ the trusted half's over ${trusted.length} trials: ${trusted[0]?.toFixed(5)}–${trusted.at(-1)?.toFixed(5)}`,
  );
  for (const p of PERCENTS) {
    const ops = ['keygen', 'enc', 'dec'].map((op) => rec(`under-${p}`, op));
    const complete = ops.filter((r) => r.status === 'complete').length;
    console.log(
      `  under-report ${String(p).padStart(2)} %: ${complete}/3 complete${complete < 3 ? ` (${ops.find((r) => r.status !== 'complete').failure})` : ''}`,
    );
  }
}
console.log(`\n(work folder: ${work})`);
