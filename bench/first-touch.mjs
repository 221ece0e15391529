// What a fresh page and a bare process cost this machine (docs/benchmarks.md (af)).
//   node bench/first-touch.mjs [RUNS] [MIB]
// Runs bench/first_touch.c RUNS times (default 5), each in a process of its own, over MIB MiB
// (default 32: a timing process's slots at most, native/core/calls.h), and times RUNS spawns of
// /usr/bin/true from node, the floor under any process the harness starts.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 5);
const mib = Number(process.argv[3] ?? 32);
if (!(runs >= 1) || !(mib >= 1)) {
  console.error('usage: node bench/first-touch.mjs [RUNS] [MIB]');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'ngcc-first-touch-'));
try {
  const bin = join(work, 'first_touch');
  execFileSync('gcc', ['-O2', '-o', bin, join(root, 'bench', 'first_touch.c')]);
  for (let i = 0; i < runs; i++) process.stdout.write(execFileSync(bin, [String(mib)], { encoding: 'utf8' }));
  const spawns = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    spawnSync('/usr/bin/true');
    spawns.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  spawns.sort((a, b) => a - b);
  console.log(`/usr/bin/true spawned from node: median ${spawns[Math.floor(runs / 2)].toFixed(2)} ms of ${runs}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
