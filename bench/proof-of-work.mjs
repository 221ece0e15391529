// What proof of work (native/core/calls.c, src/measure/replay.ts) costs and moves, against the tool
// before it (docs/benchmarks.md (r)).
//   npm run build && node bench/proof-of-work.mjs [RUNS] [BEFORE_REV]
// BEFORE_REV (default e1421b1, the last commit without it) is checked out into a temporary
// worktree, whose committed dist/cli.js is "today's tool". Both tools then run, alternating,
// RUNS times each (default 3):
// 1. the example campaign, `run examples/campaign --force` into a folder of each tool's own: the
//    run's wall time, and every operation's mean cycles per call;
// 2. a campaign of PQClean ML-KEM-768 and ML-DSA-65 (`pqclean-campaign --only`), 7 trials of
//    0.25 s, measure phase only: cold inputs (this tool: every call its own) against repeated ones
//    (before).
// Prints per table the median over runs of each figure, and new ÷ before.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeTool, median, sh } from './beforeTool.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 3);
const rev = process.argv[3] ?? 'e1421b1';
if (!(runs >= 1)) {
  console.error('usage: node bench/proof-of-work.mjs [RUNS] [BEFORE_REV]');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'ngcc-pow-'));

const before = beforeTool(root, work, rev);
const tools = { before: before.cli, now: join(root, 'dist', 'cli.js') };

/** Mean cycles per call of every record of a system folder, by "candidate/label op". */
function figures(systemDir) {
  const out = {};
  const dir = join(systemDir, 'records');
  for (const id of readdirSync(dir))
    for (const f of readdirSync(join(dir, id))) {
      const r = JSON.parse(readFileSync(join(dir, id, f), 'utf8'));
      if (r.status === 'complete' && r.mean_cycles) out[`${id}/${r.label} ${r.operation}`] = r.mean_cycles;
    }
  return out;
}

function table(title, samples) {
  console.log(`\n${title}`);
  console.log("| figure | before | now | now ÷ before | before's own spread (max ÷ min over its runs) |");
  console.log('|---|---:|---:|---:|---:|');
  const keys = Object.keys(samples.now[0] ?? {}).sort();
  const ratios = [];
  for (const k of keys) {
    const values = (t) => samples[t].map((s) => s[k]).filter((v) => v !== undefined);
    const [b, n] = ['before', 'now'].map((t) => median(values(t)));
    if (b === undefined || n === undefined) continue;
    const fmt = (v) => (k === 'wall s' ? v.toFixed(1) : Math.round(v).toLocaleString('en'));
    const spread = Math.max(...values('before')) / Math.min(...values('before'));
    console.log(`| ${k} | ${fmt(b)} | ${fmt(n)} | ${(n / b).toFixed(3)} | ${spread.toFixed(3)} |`);
    if (k !== 'wall s') ratios.push(n / b);
  }
  const geomean = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
  console.log(`\nnow ÷ before over the ${ratios.length} figures: geometric mean ${geomean.toFixed(3)}`);
}

function campaignRuns(campaign, args) {
  const samples = { before: [], now: [] };
  for (let i = 0; i < runs; i++)
    for (const tool of i % 2 ? ['now', 'before'] : ['before', 'now']) {
      const out = join(work, `${tool}-${i}-${campaign.split('/').pop()}`);
      const t0 = process.hrtime.bigint();
      sh('node', [tools[tool], 'run', campaign, '--system', 'b', '--out', out, '--force', ...args], { mayFail: true });
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      samples[tool].push({ 'wall s': wall, ...figures(join(out, 'b')) });
      console.error(`${tool} run ${i + 1}: ${wall.toFixed(1)} s`);
    }
  return samples;
}

console.log(`# proof of work: ${rev} (before) against the working tree (now), ${runs} runs each, alternating`);
table('## the example campaign (whole run; mean cycles per call)', campaignRuns(join(root, 'examples', 'campaign'), []));

const pq = join(work, 'pqclean');
sh('node', [tools.now, 'pqclean-campaign', pq, '--only', '^(ml-kem-768|ml-dsa-65)$']);
writeFileSync(join(pq, 'ngcc-perf.yml'), 'planning:\n  trials: 7\n  trial_target_s: 0.25\n  op_budget_s: 30\n  warmups: 3\n');
if (!existsSync(join(pq, 'ngcc-perf.yml'))) throw new Error('no campaign');
table(
  '## PQClean ML-KEM-768 and ML-DSA-65, 0.25-s trials: cold inputs (now) against repeated ones (before)',
  campaignRuns(pq, ['--phases', 'build,kat,measure']),
);
before.remove();
