// The synthetic Round-1 campaign, end to end (docs/benchmarks.md (m)): generates it, runs
//   node dist/cli.js run CAMPAIGN --system synth --out DATA --force [--phases …] [--only …] [EXTRA]
// with its stderr kept (one line per progress step, with the second it arrived), and reports wall
// time, time inside timed operations, core holds, the pool, the plan against the outcome, the ETA
// after 10 % of the run, adaptive plans against the fixed one, KAT statuses and calibration.
//   node bench/round1.mjs [--subset N] [--scale S] [--keep-below CYCLES] [--ci-target R] [--seed N] [--trial-target S] [--op-budget S]
//        [--profile-target S] [--profile-rounds N] [--build-functions N] [--phases LIST] [--work DIR]
//        [--runs N] [--extra "--adaptive --serial …"]
// With --runs N the same campaign runs N times into one evidence folder: from the second run on, the
// plan and the ETA start from the previous run's step times. Each run's build.json and campaign.json are
// copied to WORK/run-K-build.json and WORK/run-K-campaign.json.
import { spawn } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './synthetic/generate.mjs';
import { analyse, renderReport } from './synthetic/report.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Scaled down (docs/benchmarks.md (m)): every modelled cost divided by 1000. */
const DEFAULTS = {
  subset: undefined,
  scale: 1000,
  keepBelow: 0,
  ciTarget: undefined,
  seed: 1,
  trialTarget: 0.05,
  opBudget: 5,
  profileTarget: 0.02,
  profileRounds: 5,
  buildFunctions: 200,
  phases: undefined,
  work: undefined,
  runs: 1,
  extra: '',
};
const OPTIONS = {
  '--subset': 'subset',
  '--scale': 'scale',
  '--keep-below': 'keepBelow',
  '--ci-target': 'ciTarget',
  '--seed': 'seed',
  '--trial-target': 'trialTarget',
  '--op-budget': 'opBudget',
  '--profile-target': 'profileTarget',
  '--profile-rounds': 'profileRounds',
  '--build-functions': 'buildFunctions',
  '--phases': 'phases',
  '--work': 'work',
  '--runs': 'runs',
  '--extra': 'extra',
};

function parseArgs(argv) {
  const o = { ...DEFAULTS };
  for (let i = 0; i < argv.length; i += 2) {
    const key = OPTIONS[argv[i]];
    if (!key || argv[i + 1] === undefined) throw new Error(`unknown option or missing value: ${argv[i]}`);
    o[key] = ['phases', 'work', 'extra'].includes(key) ? argv[i + 1] : Number(argv[i + 1]);
  }
  return o;
}

/** N candidates taken in turn from each category, so that a small subset has all four. */
export function subsetIds(candidates, n) {
  const byType = ['kem', 'sig', 'kex', 'hash'].map((t) => candidates.filter((c) => c.type === t).map((c) => c.id));
  const out = [];
  for (let i = 0; out.length < n && byType.some((ids) => i < ids.length); i++)
    for (const ids of byType) if (i < ids.length && out.length < n) out.push(ids[i]);
  return out;
}

/** Runs the CLI; every stderr line is kept with its arrival second, in memory and in `logFile`. */
function runCli(args, logFile) {
  return new Promise((resolveRun) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const log = createWriteStream(logFile);
    const lines = [];
    let partial = '';
    const child = spawn(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(process.stdout);
    child.stderr.on('data', (chunk) => {
      const parts = (partial + chunk.toString('utf8')).split(/\r|\n/);
      partial = parts.pop() ?? '';
      for (const text of parts.filter((p) => p.trim() !== '')) {
        const line = { t: seconds(), text };
        lines.push(line);
        log.write(`${line.t.toFixed(3)}\t${text}\n`);
        process.stderr.write(`${text}\n`);
      }
    });
    child.on('close', (code) => {
      if (partial.trim()) lines.push({ t: seconds(), text: partial });
      log.end();
      resolveRun({ code, lines, wallS: seconds() });
    });
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const work = resolve(o.work ?? mkdtempSync(join(tmpdir(), 'ngcc-round1-')));
  mkdirSync(work, { recursive: true });
  const campaign = join(work, 'campaign');
  const data = join(work, 'data');
  const model = generate(campaign, {
    scale: o.scale,
    keepBelow: o.keepBelow,
    seed: o.seed,
    buildFunctions: o.buildFunctions,
    planning: {
      trials: 5,
      trial_target_s: o.trialTarget,
      op_budget_s: o.opBudget,
      warmups: 3,
      // An adaptive run's target (--extra --adaptive turns it on); ngcc-perf's default otherwise.
      ...(o.ciTarget !== undefined ? { adaptive: { ci_target: o.ciTarget } } : {}),
    },
    profile: { target_s: o.profileTarget, rounds: o.profileRounds },
  });
  const ids = o.subset ? subsetIds(model.candidates, o.subset) : undefined;
  const args = ['run', campaign, '--system', 'synth', '--out', data, '--force', ...o.extra.split(/\s+/).filter(Boolean)];
  if (o.phases) args.push('--phases', o.phases);
  if (ids) args.push('--only', `^(${ids.join('|')})(/|$)`);
  console.log(
    `campaign ${campaign}: ${ids ? `${ids.length} of ` : ''}${model.candidates.length} candidates, scale ${o.scale}${o.keepBelow ? ` above ${o.keepBelow} cycles` : ''}, seed ${o.seed}`,
  );
  const used = ids ? { ...model, candidates: model.candidates.filter((c) => ids.includes(c.id)) } : model;
  const reports = [];
  for (let k = 1; k <= o.runs; k++) {
    const run = await runCli(args, join(work, `stderr-${k}.log`));
    const figures = {
      run: { n: k, exit: run.code, work, options: o },
      ...analyse({ systemDir: join(data, 'synth'), lines: run.lines, wallS: run.wallS, model: used }),
    };
    reports.push(figures);
    console.log(renderReport(figures));
    // What the next run plans from, and what this one did: an ETA model can be replayed on them.
    for (const file of ['build.json', 'campaign.json']) copyFileSync(join(data, 'synth', file), join(work, `run-${k}-${file}`));
  }
  writeFileSync(join(work, 'round1-report.json'), `${JSON.stringify(reports, null, 1)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
