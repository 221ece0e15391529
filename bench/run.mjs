// Benchmarks of the harness itself (numbers go into docs/benchmarks.md).
//   node bench/run.mjs            both benchmarks
// (a) timing-loop overhead per call on an operation that does nothing;
// (b) ML-KEM-512 keygen mean cycles: the full harness vs. a minimal independent loop over the
//     same library, interleaved run by run so that drift of the machine hits both alike.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-bench-'));
const cpu = String(Number(readFileSync('/sys/devices/system/cpu/online', 'utf8').trim().split(/[-,]/).pop()));
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', ...opts });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const n = join(root, 'native');

// The timing driver, built as the harness builds it (native/binaries.json).
const driver = join(work, 'ngcc_driver');
const { sources, link } = JSON.parse(readFileSync(join(n, 'binaries.json'), 'utf8')).binaries.ngcc_driver;
sh('gcc', ['-std=gnu11', '-O2', `-I${n}`, '-o', driver, ...sources.map((f) => join(n, f)), ...link]);

// (a) Empty operation.
const emptyLib = join(work, 'libempty.so');
sh('gcc', ['-std=c99', '-O2', '-fPIC', '-shared', '-o', emptyLib, join(root, 'test', 'fixtures', 'empty-op', 'empty_kem.c')]);
const overhead = [];
for (let i = 0; i < 7; i++) {
  // No spot checks: an empty operation's keys do not work (it changes one byte of each, no more).
  const out = sh(driver, [emptyLib, 'time', 'kem', 'keygen', '2000000', '1000', cpu, 'iccs-drng', '0']);
  const [, count, , cycles] = out
    .split('\n')
    .find((l) => l.startsWith('TRIAL'))
    .split('\t');
  overhead.push(Number(cycles) / Number(count));
}
const overheadCycles = median(overhead);

// (b) Harness vs minimal loop on PQClean ML-KEM-512 (guide reference flags).
const data = join(work, 'data');
sh(
  'node',
  [
    join(root, 'dist', 'cli.js'),
    'run',
    join(root, 'examples', 'campaign'),
    '--system',
    'bench',
    '--out',
    data,
    '--only',
    '^kem-80/ml-kem-512$',
    '--phases',
    'build,kat',
    '--cpu',
    cpu,
  ],
  { stdio: 'pipe' },
);
const build = JSON.parse(readFileSync(join(data, 'bench', 'build.json'), 'utf8'));
const lib = join(root, 'examples', 'campaign', build.instances['kem-80/ml-kem-512'].library);
const minimal = join(work, 'minimal_loop');
sh('gcc', ['-O2', '-o', minimal, join(root, 'bench', 'minimal_loop.c'), '-ldl']);
const harness = [];
const independent = [];
const ROUNDS = 9;
for (let round = 0; round < ROUNDS; round++) {
  sh(
    'node',
    [
      join(root, 'dist', 'cli.js'),
      'run',
      join(root, 'examples', 'campaign'),
      '--system',
      'bench',
      '--out',
      data,
      '--only',
      '^kem-80/ml-kem-512$',
      '--phases',
      'build,kat,measure',
      '--cpu',
      cpu,
      '--force',
      '--trial-target',
      '0.5',
    ],
    { stdio: 'pipe' },
  );
  const rec = JSON.parse(readFileSync(join(data, 'bench', 'records', 'kem-80', 'ml-kem-512__keygen.json'), 'utf8'));
  harness.push(rec.mean_cycles);
  const iters = rec.plan.iterations_per_trial * rec.plan.trials;
  independent.push(Number(sh('taskset', ['-c', cpu, minimal, lib, String(iters)]).trim()));
}
const h = median(harness);
const m = median(independent);
const fastest = Math.min(m, ...harness);
console.log(`host: ${sh('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]).trim()}, cpu ${cpu}`);
console.log(`(a) timing loop overhead on an empty operation: ${overheadCycles.toFixed(1)} cycles/call (median of 7 trials of 2e6 calls)`);
console.log(`    = ${((overheadCycles / fastest) * 100).toFixed(3)}% of ML-KEM-512 keygen`);
const hMin = Math.min(...harness);
const mMin = Math.min(...independent);
console.log(
  `(b) ML-KEM-512 keygen mean cycles over ${ROUNDS} interleaved rounds: median harness ${h.toFixed(0)} vs minimal loop ${m.toFixed(0)} (${(((h - m) / m) * 100).toFixed(2)}%); best round ${hMin.toFixed(0)} vs ${mMin.toFixed(0)} (${(((hMin - mMin) / mMin) * 100).toFixed(2)}%)`,
);
console.log(`    harness rounds: ${harness.map((x) => x.toFixed(0)).join(' ')}`);
console.log(`    minimal rounds: ${independent.map((x) => x.toFixed(0)).join(' ')}`);
rmSync(work, { recursive: true, force: true });
