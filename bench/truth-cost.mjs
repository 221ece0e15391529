// What holding libraries to truth from outside costs (docs/benchmarks.md (ah)): dec's key pair and
// ciphertexts made by two processes of their own, the unseen-seed runs, and a pull request's base
// replaying a segment of head's trials, against the tool before them.
//   npm run build && node bench/truth-cost.mjs [RUNS] [BEFORE_REV]
// BEFORE_REV (default 8462165, the last commit without them) is checked out into a temporary
// worktree, whose committed dist/cli.js is the tool before. Then, alternating, RUNS times each
// (default 2):
// 1. the example campaign, `run --force` into a fresh folder: before; now without a seed; now with
//    NGCC_UNSEEN_SEED (a first night: every instance answers the unseen seed once);
// 2. a one-instance pull request: `run --only ^kem-90/ --against BASE --against-out …` of a head
//    whose kem-90 library changed (one more function) under the same KAT manifest, build, KAT and
//    measure (now: held to the base).
// Prints the median wall time of each, and now ÷ before. ONLY=example or ONLY=one runs one part.
import { appendFileSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeTool, median, sh } from './beforeTool.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 2);
const rev = process.argv[3] ?? '8462165';
if (!(runs >= 1)) {
  console.error('usage: node bench/truth-cost.mjs [RUNS] [BEFORE_REV]');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'ngcc-truth-'));

const before = beforeTool(root, work, rev);
const tools = { before: before.cli, now: join(root, 'dist', 'cli.js') };
const example = join(root, 'examples', 'campaign');
// The pull request's head: kem-90's library changed, its outputs and manifest not. A checkout of its
// own, since a campaign's sources must lie inside the repository that holds it.
const headTree = join(work, 'head-tree');
sh('git', ['-C', root, 'worktree', 'add', '--detach', headTree, 'HEAD']);
const head = join(headTree, 'examples', 'campaign');
// The example's PQClean sources, copied: a link out of the checkout would make its candidates INVALID.
cpSync(join(root, 'node_modules', 'pqclean'), join(headTree, 'node_modules', 'pqclean'), { recursive: true });
appendFileSync(join(head, 'kem-90', 'src', 'KEM_AlgorithmInstance.c'), '\nint ngcc_bench_changed(void) { return 1; }\n');

const seed = { NGCC_UNSEEN_SEED: 'ab'.repeat(32) };
const configs = {
  'example campaign': [
    ['before', tools.before, {}],
    ['now, no seed', tools.now, {}],
    ['now, unseen seed (first night)', tools.now, seed],
  ],
  'one-instance pull request (kem-90, paired, build+kat+measure)': [
    ['before', tools.before, {}],
    ['now (held to its base)', tools.now, {}],
  ],
};

function args(kind, out) {
  if (kind.startsWith('example')) return ['run', example, '--system', 'b', '--out', out, '--force'];
  return [
    'run',
    head,
    '--system',
    'b',
    '--out',
    out,
    '--only',
    '^kem-90/',
    '--phases',
    'build,kat,measure',
    '--against',
    example,
    '--against-out',
    `${out}-base`,
  ];
}

console.log(`# truth from outside: ${rev} (before) against the working tree (now), ${runs} runs each, alternating`);
for (const [kind, list] of Object.entries(configs).filter(([k]) => !process.env.ONLY || k.startsWith(process.env.ONLY))) {
  const walls = Object.fromEntries(list.map(([name]) => [name, []]));
  for (let i = 0; i < runs; i++)
    for (const [name, tool, env] of i % 2 ? [...list].reverse() : list) {
      const out = join(work, `${kind.slice(0, 3)}-${name.replace(/\W+/g, '-')}-${i}`);
      const t0 = process.hrtime.bigint();
      sh('node', [tool, ...args(kind, out)], { env: { ...process.env, ...env } });
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      walls[name].push(wall);
      console.error(`${kind}: ${name} run ${i + 1}: ${wall.toFixed(1)} s`);
    }
  const base = median(walls.before);
  console.log(`\n## ${kind}\n\n| tool | wall s (median) | runs | now ÷ before |\n|---|---:|---|---:|`);
  for (const [name] of list)
    console.log(
      `| ${name} | ${median(walls[name]).toFixed(1)} | ${walls[name].map((w) => w.toFixed(1)).join(', ')} | ${(median(walls[name]) / base).toFixed(3)} |`,
    );
}
before.remove();
sh('git', ['-C', root, 'worktree', 'remove', '--force', headTree], { mayFail: true });
