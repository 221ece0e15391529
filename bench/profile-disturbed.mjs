// The profile phase's hash share with a competitor on the measuring core (docs/benchmarks.md, (j)).
//   npm run build && node bench/profile-disturbed.mjs [runs]       default 8
// PQClean ML-KEM-768 enc. The reference is wrapper-free: instruction-pointer sampling of the plain
// library (bench/sample_loop.c) inside the code that only the hash functions reach (callgrind's call
// graph says which), median of 5 quiet rounds. Then `runs` profile phases (`run --phases profile
// --force`), each with a CPU-bound shell pinned to the same core during a random 30-60 % of it.
// Prints each run's kept share, the share the median of all its rounds (disturbed ones included)
// would have given, and how far each is from the reference.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSampler, catalogOf, functionsOf, median, RANDOM, readCallgrind, reachedOnlyFrom, sampledShares, sh } from './sampling.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const runs = Number(process.argv[2] ?? 8);
const work = mkdtempSync(join(tmpdir(), 'ngcc-profile-disturbed-'));
const pq = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');
const cpu = String(Number(readFileSync('/sys/devices/system/cpu/online', 'utf8').trim().split(/[-,]/).pop()));
// The profile rounds hold a core of their own beside the timing core (docs/campaign.md#parallel-preparation):
// the first other online CPU, or the timing core on a host with one.
const online = readFileSync('/sys/devices/system/cpu/online', 'utf8').trim();
const roundsCore = online.includes('-') || online.includes(',') ? String(Number(online.split(/[-,]/)[0])) : cpu;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (x) => `${(x * 100).toFixed(1)}%`;

const campaign = join(work, 'campaign');
mkdirSync(join(campaign, 'kem-7'), { recursive: true });
writeFileSync(
  join(campaign, 'kem-7', 'candidate.yml'),
  `id: kem-7\ntype: kem\nalgorithm: ML-KEM\napi: nist\ninstances:\n  - label: ml-kem-768\n    dir: ${pq}/crypto_kem/ml-kem-768/clean\n    extra_sources: [${pq}/common/fips202.c]\n    include: [${pq}/common]\n    nist_prefix: PQCLEAN_MLKEM768_CLEAN_\n`,
);
writeFileSync(join(campaign, 'ngcc-perf.yml'), 'planning:\n  trials: 3\n  trial_target_s: 0.1\n');
const data = join(work, 'data');
const cliRun = (phases) =>
  new Promise((resolve, reject) => {
    const child = spawn('node', [cli, 'run', campaign, '--system', 'p', '--out', data, '--force', '--phases', phases, '--cpu', cpu], {
      stdio: 'ignore',
    });
    // Exit 1 is expected: the bench campaign carries no KAT manifest (NOKAT).
    child.on('exit', (code) => (code === 0 || code === 1 ? resolve() : reject(new Error(`run exited ${code}`))));
  });
await cliRun('build,kat,measure,profile');

// The wrapper-free reference.
const entry = JSON.parse(readFileSync(join(data, 'p', 'build.json'), 'utf8')).instances['kem-7/ml-kem-768'];
const plain = join(campaign, entry.library);
const sampler = buildSampler(work);
const hashCatalog = new Set([...catalogOf('wrap_nist.c')].filter((f) => !RANDOM.has(f)));
const graph = join(work, 'cg.out');
sh('valgrind', [
  '--tool=callgrind',
  '--zero-before=run_loop',
  '--dump-after=run_loop',
  '--compress-strings=no',
  '--compress-pos=no',
  `--callgrind-out-file=${graph}`,
  sampler,
  plain,
  'kem',
  'enc',
  '100',
  '-1',
  'nosample',
]);
const reached = reachedOnlyFrom(hashCatalog, readCallgrind(`${graph}.1`, hashCatalog).callers);
const fns = functionsOf(plain);
const reference = median(
  Array.from({ length: 5 }, () => sampledShares(sh(sampler, [plain, 'kem', 'enc', '4000', cpu]), fns, reached).sampled),
);
console.log(`PQClean ML-KEM-768 enc on cpu ${cpu}; wrapper-free sampling (median of 5 quiet rounds): ${pct(reference)}`);

const profile = () => JSON.parse(readFileSync(join(data, 'p', 'profile', 'kem-7', 'ml-kem-768__enc.json'), 'utf8'));
let within = 0;
let withinAll = 0;
for (let r = 0; r < runs; r++) {
  const run = cliRun('profile');
  // The profile phase lasts about 2 s here: start within its first half, stay 30-60 % of it.
  await sleep(100 + Math.random() * 900);
  const spin = spawn('taskset', ['-c', roundsCore, 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
  await Promise.race([run, sleep(600 + Math.random() * 600)]);
  spin.kill('SIGKILL');
  await run;
  const p = profile();
  const all = median([...p.round_hash_shares, ...(p.left_out_rounds ?? []).map((x) => x.hash_share)]);
  const d = Math.abs(p.hash_share - reference);
  if (d <= 0.05) within++;
  if (Math.abs(all - reference) <= 0.05) withinAll++;
  console.log(
    `run ${r + 1}: kept ${pct(p.hash_share)} (${(100 * (p.hash_share - reference)).toFixed(1)} pp) from ${p.round_hash_shares.length} rounds, ` +
      `${(p.left_out_rounds ?? []).length} left out${p.disturbed_rounds ? `, ${p.disturbed_rounds} kept disturbed` : ''}; ` +
      `median of every round ${pct(all)} (${(100 * (all - reference)).toFixed(1)} pp)`,
  );
}
console.log(`within 5 points of sampling: kept share ${within}/${runs}; median of every round ${withinAll}/${runs}`);
rmSync(work, { recursive: true, force: true });
