// Adaptive precision against the fixed plan (docs/benchmarks.md, (l)): the time spent timing the toy
// KEM and PQClean ML-KEM-512 (bench/benchCampaign.mjs) with the guide's fixed 5 trials x 1 s, and
// with adaptive trials of 0.1 s until the 95 % interval of the mean per call is within ±1 % (5 to 30
// trials), the two runs alternating.
//   npm run build && node bench/adaptive.mjs [rounds]     default 3 rounds
// Prints per operation and plan the timing seconds (the wall time of its timing processes, from the
// records), the trials, the precision reached (each record's `precision`) and whether ±1 % was met;
// then the totals and the adaptive plan's share of the fixed plan's timing time.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCampaign } from './benchCampaign.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const rounds = Number(process.argv[2] ?? 3);
const work = mkdtempSync(join(tmpdir(), 'ngcc-adaptive-'));

const PLANS = {
  fixed: 'planning:\n  trials: 5\n  trial_target_s: 1\n  op_budget_s: 60\n',
  adaptive:
    'planning:\n  op_budget_s: 60\n  adaptive:\n    enabled: true\n    ci_target: 0.01\n    min_trials: 5\n    max_trials: 30\n    trial_target_s: 0.1\n',
};
const campaigns = Object.fromEntries(
  Object.entries(PLANS).map(([name, yml]) => {
    const dir = benchCampaign(work, name, 0);
    writeFileSync(join(dir, 'ngcc-perf.yml'), yml);
    return [name, dir];
  }),
);

/** One run of a plan: its records' timing seconds, trials and precision per operation, and the run's wall time. */
function measure(plan, round) {
  const out = join(work, `${plan}-${round}`);
  const started = Date.now();
  try {
    execFileSync('node', [cli, 'run', campaigns[plan], '--system', 'bench', '--out', out, '--phases', 'build,kat,measure'], {
      stdio: 'ignore',
    });
  } catch (e) {
    // Exit 1 is expected: the bench campaigns carry no KAT manifest (NOKAT); they are measured anyway.
    if (e.status !== 1) throw e;
  }
  const wall = (Date.now() - started) / 1000;
  const recordsDir = join(out, 'bench', 'records');
  const ops = readdirSync(recordsDir).flatMap((id) =>
    readdirSync(join(recordsDir, id)).map((f) => {
      const r = JSON.parse(readFileSync(join(recordsDir, id, f), 'utf8'));
      return {
        op: `${id}/${f.replace(/\.json$/, '')}`,
        seconds: r.processes.reduce((a, p) => a + (p.wall_s ?? 0), 0),
        trials: r.trials.length,
        ci: r.precision?.ci95_rel ?? Number.NaN,
        met: r.precision?.met,
      };
    }),
  );
  return { wall, ops };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const runs = { fixed: [], adaptive: [] };
for (let r = 0; r < rounds; r++)
  for (const plan of r % 2 ? ['adaptive', 'fixed'] : ['fixed', 'adaptive']) runs[plan].push(measure(plan, r));

console.log(`${rounds} rounds; fixed: 5 trials x 1 s; adaptive: trials of 0.1 s until ±1 % (5 to 30)`);
console.log('| operation | fixed: timing s, trials, ±% | adaptive: timing s, trials, ±%, met |');
console.log('| - | - | - |');
const names = runs.fixed[0].ops.map((o) => o.op);
for (const name of names) {
  const pick = (plan) => runs[plan].map((run) => run.ops.find((o) => o.op === name)).filter(Boolean);
  const [f, a] = [pick('fixed'), pick('adaptive')];
  const cell = (xs) =>
    `${median(xs.map((o) => o.seconds)).toFixed(2)} s, ${median(xs.map((o) => o.trials))}, ±${(100 * median(xs.map((o) => o.ci))).toFixed(2)} %`;
  console.log(`| ${name} | ${cell(f)} | ${cell(a)}, ${a.filter((o) => o.met).length}/${a.length} |`);
}
const total = (plan) => median(runs[plan].map((run) => run.ops.reduce((s, o) => s + o.seconds, 0)));
const wall = (plan) => median(runs[plan].map((run) => run.wall));
console.log(
  `timing seconds per run (median): fixed ${total('fixed').toFixed(2)} s, adaptive ${total('adaptive').toFixed(2)} s = ${(total('adaptive') / total('fixed')).toFixed(3)} of fixed; ` +
    `run wall time (build and KAT included): fixed ${wall('fixed').toFixed(1)} s, adaptive ${wall('adaptive').toFixed(1)} s`,
);
rmSync(work, { recursive: true, force: true });
