// How much one trial varies on this machine, before any harness is involved (docs/benchmarks.md (p)):
// what an adaptive plan's ±1 % can reach here. bench/noise_loops.c's two loops of fixed work, each
// run as separate processes pinned to one core (as trials are), of about 0.02, 0.1 and 1 s:
//   node bench/trial-noise.mjs [trials] [--cpu N] [--beside spin|build]     default 30 trials, cpu 1
// For each loop and trial length: the trials' coefficient of variation, the slowest and fastest
// trial against the mean, the drift (the spread of the means of consecutive thirds), and how many
// such trials ±1 % (the 95 % interval of the mean) needs at that variation. --beside keeps the other
// core busy meanwhile (a spinning shell, or gcc in a loop) to show what a build beside timing costs.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const cpu = Number(option('--cpu') ?? 1);
const beside = option('--beside');
const trials = Number(args[0] ?? 30);
const work = mkdtempSync(join(tmpdir(), 'ngcc-noise-'));
const loops = join(work, 'noise_loops');
execFileSync('gcc', ['-O2', '-o', loops, join(root, 'bench', 'noise_loops.c')]);

const ticks = (kind, iterations) =>
  Number(execFileSync('taskset', ['-c', String(cpu), loops, kind, String(iterations)], { encoding: 'utf8' }));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
/** Trials for a 95 % interval within ±1 % at coefficient of variation `cv` (t ≈ 2 beyond 10 trials). */
const trialsForOnePercent = (cv) => {
  for (let n = 2; n <= 10000; n++)
    if ((n < 10 ? [0, 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306][n] : 2.1) * cv <= 0.01 * Math.sqrt(n)) return n;
  return Number.POSITIVE_INFINITY;
};

const other = cpu === 0 ? 1 : 0;
const COMPETITORS = {
  spin: 'while :; do :; done',
  build: `while :; do gcc -O2 -c -o ${join(work, 'x.o')} -I${join(root, 'native')} ${join(root, 'native', 'core', 'harness.c')}; done`,
};
if (beside && !COMPETITORS[beside]) throw new Error(`--beside takes spin or build, not ${beside}`);
// In a process group of its own, so that the shell and its gcc go together at the end.
const competitor = beside
  ? spawn('taskset', ['-c', String(other), 'sh', '-c', COMPETITORS[beside]], { stdio: 'ignore', detached: true })
  : undefined;
try {
  console.log(
    `${trials} trials per row, separate processes on cpu ${cpu}${beside ? `, ${beside} on cpu ${other}` : ', the other core idle'}`,
  );
  console.log('| loop | trial | CV | slowest, fastest / mean | drift of thirds | trials for ±1 % |');
  console.log('|---|---|---|---|---|---|');
  for (const kind of ['latency', 'throughput']) {
    // Iterations per second of this loop, from one process of 5·10^7 (0.1–0.2 s, its start included).
    const iterationsPerSecond = (() => {
      const t0 = process.hrtime.bigint();
      ticks(kind, 5e7);
      return 5e7 / (Number(process.hrtime.bigint() - t0) / 1e9);
    })();
    for (const seconds of [0.02, 0.1, 1]) {
      const n = Math.round(seconds * iterationsPerSecond);
      const xs = Array.from({ length: trials }, () => ticks(kind, n));
      const m = mean(xs);
      const cv = sd(xs) / m;
      const third = Math.floor(xs.length / 3);
      const thirds = [0, 1, 2].map((k) => mean(xs.slice(k * third, (k + 1) * third)) / m);
      console.log(
        `| ${kind} | ${seconds} s | ${(100 * cv).toFixed(2)} % | ${(Math.max(...xs) / m).toFixed(3)}, ${(Math.min(...xs) / m).toFixed(3)} | ${(100 * (Math.max(...thirds) - Math.min(...thirds))).toFixed(1)} % | ${trialsForOnePercent(cv)} |`,
      );
    }
  }
} finally {
  if (competitor) process.kill(-competitor.pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
