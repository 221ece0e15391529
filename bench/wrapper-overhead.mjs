// The hash-profile wrappers' own cost per call (native/linked/hashprof/overhead_bench.c), built as the
// profile phase builds a library (reference flags) and run pinned to one core:
//   node bench/wrapper-overhead.mjs [ROUNDS]
// Prints the median over ROUNDS runs of each figure, in the accounting's ticks per call.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 7);
const work = mkdtempSync(join(tmpdir(), 'ngcc-ovb-'));
const cpu = String(Number(readFileSync('/sys/devices/system/cpu/online', 'utf8').trim().split(/[-,]/).pop()));
const src = join(root, 'native', 'linked', 'hashprof');
const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', cwd: work });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const G = ['-std=c99', '-Wpedantic', '-Wall', '-Wextra', '-O2', '-fPIC', '-D_GNU_SOURCE'];
for (const r of [1, 2, 3, 4]) sh('gcc', [...G, `-DOVB_ROLE=${r}`, '-c', join(src, 'overhead_bench.c'), '-o', `r${r}.o`]);
sh('gcc', [...G, '-c', join(src, 'hashprof.c'), '-o', 'hashprof.o']);
sh('gcc', [...G, '-shared', '-Wl,--no-undefined', '-o', 'libovb_plain.so', 'r1.o', 'r2.o', 'r3.o', 'hashprof.o']);
sh('gcc', [
  ...G,
  '-shared',
  '-Wl,--no-undefined',
  '-Wl,--wrap=ngcc_ovb_target',
  '-Wl,--wrap=ngcc_ovb_outer',
  '-o',
  'libovb_wrapped.so',
  'r1.o',
  'r2.o',
  'r3.o',
  'r4.o',
  'hashprof.o',
]);
sh('gcc', ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-o', 'ngcc_ovb_bench', join(src, 'overhead_bench.c'), '-ldl']);

const figures = new Map();
let counter = '';
for (let i = 0; i < rounds; i++) {
  for (const line of sh('taskset', ['-c', cpu, './ngcc_ovb_bench', join(work, 'libovb_plain.so'), join(work, 'libovb_wrapped.so')]).split(
    '\n',
  )) {
    const [tag, name, value] = line.split('\t');
    if (tag === 'META' && name === 'counter') counter = value;
    if (tag === 'PERCALL' || tag === 'OVERHEAD')
      figures.set(`${tag.toLowerCase()} ${name}`, [...(figures.get(`${tag.toLowerCase()} ${name}`) ?? []), Number(value)]);
  }
}
console.log(`median of ${rounds} runs on cpu ${cpu}, ${counter} ticks per call of a trivial cross-object function`);
for (const [name, xs] of figures)
  console.log(`${name.padEnd(36)} ${median(xs).toFixed(1)}   [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}]`);
rmSync(work, { recursive: true, force: true });
