// The canary against real trials (docs/benchmarks.md (am)): the example campaign measured ROUNDS
// times on this host with the canary rule off (planning.canary_margin: 0), every kept trial's per-call
// cycles set against its operation's median, and its canary against the host's reference as the run
// had it (the median of the 31 trials before it on the core). Reports the correlation of the two, how
// many slow trials the off-CPU rule passed, and how many of them, and of the others, the canary
// would call disturbed at each margin.
//   npm run build && node bench/canary.mjs [ROUNDS]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 3);
const work = mkdtempSync(join(tmpdir(), 'ngcc-canary-'));
// Two folders below the root, as examples/campaign is (its paths to native/ hold). out/ is git-ignored.
const campaign = join(root, 'out', `canary-campaign-${process.pid}`);
cpSync(join(root, 'examples', 'campaign'), campaign, { recursive: true });
const manifest = join(campaign, 'ngcc-perf.yml');
writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('planning:\n', 'planning:\n  canary_margin: 0\n'));

const SLOW = 1.1; // a trial this much above its operation's median per call is "slow"
const MARGINS = [1.2, 1.3, 1.5, 2];
const trials = [];
try {
  for (let round = 1; round <= rounds; round++) {
    const data = join(work, `round-${round}`);
    const r = spawnSync(
      process.execPath,
      [join(root, 'dist', 'cli.js'), 'run', campaign, '--system', 'local', '--out', data, '--force', '--phases', 'build,kat,measure'],
      { encoding: 'utf8' },
    );
    if (r.status !== 0 && r.status !== 1) throw new Error(`round ${round}: run exited ${r.status}\n${r.stdout.slice(-2000)}`);
    const records = join(data, 'local', 'records');
    const run = [];
    for (const candidate of readdirSync(records))
      for (const file of readdirSync(join(records, candidate))) {
        const rec = JSON.parse(readFileSync(join(records, candidate, file), 'utf8'));
        const perCall = rec.trials.map((t) => t.cycles / t.measurements);
        const median = [...perCall].sort((a, b) => a - b)[Math.floor(perCall.length / 2)];
        rec.trials.forEach((t, i) => {
          const c = t.canary_cycles;
          if (!c || c.before === undefined || c.after === undefined) return;
          run.push({ started: rec.processes[i]?.started_utc ?? '', rel: perCall[i] / median, before: c.before, after: c.after, op: file });
        });
      }
    // The host's reference as the run had it: trials in the order they ran, on the one timing core.
    run.sort((a, b) => a.started.localeCompare(b.started));
    const seen = { max: [], min: [] };
    for (const t of run) {
      for (const kind of ['max', 'min']) {
        const v = Math[kind](t.before, t.after);
        const recent = seen[kind].slice(-31).sort((a, b) => a - b);
        t[kind] = recent.length >= 5 ? v / recent[Math.floor(recent.length / 2)] : undefined;
        seen[kind].push(v);
      }
      trials.push(t);
    }
    console.log(`round ${round}: ${run.length} trials`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  rmSync(campaign, { recursive: true, force: true });
}

const pearson = (xs, ys) => {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
};
const ratios = trials.map((t) => t.before / t.after).sort((a, b) => a - b);
console.log(
  `before / after a trial's windows, the median ratio of the canary's two runs: ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}`,
);
const judged = trials.filter((t) => t.max !== undefined);
const slow = judged.filter((t) => t.rel >= SLOW);
const usual = judged.filter((t) => t.rel < SLOW);
console.log(
  `${judged.length} trials judged (${trials.length} in all); ${slow.length} slow (≥ ${SLOW}× their operation's median per call), every one passed by the off-CPU rule`,
);
for (const kind of ['max', 'min']) {
  const r = pearson(
    judged.map((t) => Math.log(t.rel)),
    judged.map((t) => Math.log(t[kind])),
  );
  console.log(`canary = ${kind}(before, after): correlation of log figures with the trial's ${r.toFixed(3)}`);
  for (const m of MARGINS) {
    const caught = slow.filter((t) => t[kind] >= m).length;
    const flagged = usual.filter((t) => t[kind] >= m).length;
    console.log(
      `  margin ${m}: slow trials caught ${caught}/${slow.length} (${((100 * caught) / Math.max(1, slow.length)).toFixed(1)} %), others flagged ${flagged}/${usual.length} (${((100 * flagged) / Math.max(1, usual.length)).toFixed(1)} %)`,
    );
  }
}
