// A 10^11-cycle keygen with the default ngcc-perf.yml, every phase, ct included (issue: real code at
// scale; docs/benchmarks.md (t)): each phase completes, or is skipped with a reason that names its
// budget; none ends in TIMEOUT, because every timeout follows what the KAT measured of the calls
// (src/measure/cost.ts).
//   npm run build && node bench/slow-keygen.mjs [CYCLES]
// The toy KEM of the fixtures with a keygen that first spins a volatile loop of CYCLES / 1.1
// iterations (default 10^11 cycles: about a minute on a 2-GHz core). Prints each phase's outcome,
// the KAT's call seconds, the ct slowdown or skip reason, and the wall time of each step.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cycles = Number(process.argv[2] ?? 1e11);
const work = mkdtempSync(join(tmpdir(), 'ngcc-slow-'));
const campaign = join(work, 'campaign');
const fixtures = join(root, 'test', 'fixtures', 'campaign', 'kem-1');
const iccs = join(root, 'native', 'iccs');
mkdirSync(join(campaign, 'kem-1'), { recursive: true });
cpSync(join(fixtures, 'common'), join(campaign, 'kem-1', 'common'), { recursive: true });
cpSync(join(fixtures, 'good'), join(campaign, 'kem-1', 'spin'), { recursive: true });
// About 1.1 cycles per iteration of a volatile add on the machines measured.
const iterations = Math.round(cycles / 1.1);
writeFileSync(
  join(campaign, 'kem-1', 'spin', 'KEM_AlgorithmInstance.c'),
  `#include "KEM_AlgorithmInstance.h"
#define kem_keygen honest_kem_keygen
#include "../common/toy_kem.inc"
#undef kem_keygen
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
  volatile unsigned long long spin = 0;
  for (unsigned long long i = 0; i < ${iterations}ull; i++) spin += i;
  return honest_kem_keygen(pk, pk_len, sk, sk_len);
}
`,
);
writeFileSync(
  join(campaign, 'kem-1', 'candidate.yml'),
  `id: kem-1\ntype: kem\nalgorithm: toy with a slow keygen\ninstances:\n  - label: spin\n    dir: spin\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
);
const digest = readFileSync(join(fixtures, 'kat.sha256'), 'utf8')
  .split('\n')
  .find((l) => l.endsWith(' good/KAT_KEM_good.txt'))
  .split(' ')[0];
writeFileSync(join(campaign, 'kem-1', 'kat.sha256'), `${digest} strict spin/KAT_KEM_spin.txt\n`);
// The default settings: an empty ngcc-perf.yml.
writeFileSync(join(campaign, 'ngcc-perf.yml'), '{}\n');

const out = join(work, 'out');
const started = Date.now();
const r = spawnSync(
  'node',
  [join(root, 'dist', 'cli.js'), 'run', campaign, '--system', 's', '--out', out, '--phases', 'build,kat,measure,profile,ct'],
  {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  },
);
const wall = (Date.now() - started) / 1000;
const system = join(out, 's');
const json = (...p) => JSON.parse(readFileSync(join(system, ...p), 'utf8'));
const entry = json('build.json').instances['kem-1/spin'];
console.log(`# a ${cycles.toExponential(0)}-cycle keygen, default settings, every phase: exit ${r.status}, ${wall.toFixed(0)} s`);
console.log(`KAT ${entry.kat}; call seconds ${JSON.stringify(entry.call_seconds)}; step seconds ${JSON.stringify(entry.step_seconds)}`);
for (const op of ['keygen', 'enc', 'dec']) {
  const t = json('records', 'kem-1', `spin__${op}.json`);
  const p = json('profile', 'kem-1', `spin__${op}.json`);
  const m = json('memory', 'kem-1', `spin__${op}.json`);
  console.log(
    `${op}: timing ${t.status}${t.failure ? ` (${t.failure})` : ''}, ${t.trials.length} trials × ${t.plan?.iterations_per_trial} calls; profile ${p.status}${p.failure ? ` (${p.failure})` : ''}; memory ${m.status}${m.failure ? ` (${m.failure})` : ''}`,
  );
}
const ct = json('ct', 'kem-1', 'spin.json');
console.log(`ct slowdown: ${JSON.stringify(ct.slowdown)}`);
for (const [op, o] of Object.entries(ct.operations)) console.log(`ct ${op}: ${o.status}${o.reason ? ` (${o.reason})` : ''}`);
console.log(`campaign.json phases: ${JSON.stringify(readdirSync(system))}`);
console.log(r.stdout.split('\n').slice(-3).join('\n'));
