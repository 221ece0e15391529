// Memory of PQClean ML-KEM-512 alone, three ways (docs/benchmarks.md, (f)):
//   node bench/memory.mjs
// - ngcc_mem: the harness's driver (painted stack, net of its empty-function baseline; heap
//   through its malloc interposition), built with the harness's own flags;
// - valgrind massif --stacks=yes on bench/massif_loop.c: the operation repeated on a fresh
//   thread once the main thread is parked, minus the same run with an empty function (the
//   call-site level); the figure is the peak snapshot's mem_stacks_B;
// - GCC's static bound: the deepest path through the -fcallgraph-info=su call graph of the
//   library's sources (PQClean, fips202, the NIST shim and DRBG), from the library's entry
//   point down: the shim's kem_keygen/kem_enc/kem_dec, which is what ngcc_mem and massif_loop
//   call (their frames add 32/32/16 bytes to PQClean's crypto_kem_*). Own frames only;
//   functions without a frame size in the graph, i.e. libc, count 0.
// Needs gcc and valgrind. Runtime: a few seconds.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-memory-'));
const sh = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
const n = join(root, 'native');
const OPS = { keygen: 'kem_keygen', enc: 'kem_enc', dec: 'kem_dec' };
const PREFIX = 'PQCLEAN_MLKEM512_CLEAN_';
// Enough for the deepest frame to be seen many times; the peak is reached in the first call.
const MASSIF_ITERATIONS = 300;

try {
  // The library exactly as a campaign builds it (reference flags, NIST shim and DRBG).
  const data = join(work, 'data');
  const campaign = join(root, 'examples', 'campaign');
  sh('node', [
    join(root, 'dist', 'cli.js'),
    'run',
    campaign,
    '--system',
    'mem',
    '--out',
    data,
    '--only',
    '^kem-80/ml-kem-512$',
    '--phases',
    'build,kat',
  ]);
  const entry = JSON.parse(readFileSync(join(data, 'mem', 'build.json'), 'utf8')).instances['kem-80/ml-kem-512'];
  const lib = join(campaign, entry.library);

  // Drivers: ngcc_mem as src/compile/harnessTools.ts builds it (native/binaries.json); massif_loop
  // alike, with ngcc_mem's operations (its sources but its main, native/bin/mem.c).
  const common = ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-Werror', `-I${n}`];
  const built = JSON.parse(readFileSync(join(n, 'binaries.json'), 'utf8')).binaries.ngcc_mem;
  const mem = join(work, 'ngcc_mem');
  sh('gcc', [...common, '-o', mem, ...built.sources.map((f) => join(n, f)), ...built.link]);
  const operations = built.sources.filter((f) => !f.startsWith('bin/')).map((f) => join(n, f));
  const loop = join(work, 'massif_loop');
  sh('gcc', [...common, '-o', loop, join(root, 'bench', 'massif_loop.c'), ...operations, '-ldl', '-lpthread']);

  const meta = (out) =>
    Object.fromEntries(
      out
        .split('\n')
        .filter((l) => l.startsWith('META\t'))
        .map((l) => l.split('\t').slice(1)),
    );
  const driver = {};
  for (const op of Object.keys(OPS)) driver[op] = meta(sh(mem, [lib, 'mem', 'kem', op, 'nist-ctr-drbg']));

  // massif: --peak-inaccuracy=0 because massif_loop's 1 MiB ballast would make the default
  // 1 % (≈ 10 KB) swallow the whole stack; the peak snapshot is the one marked heap_tree=peak.
  const massifPeak = (args, tag) => {
    const out = join(work, `massif.${tag}.out`);
    sh('valgrind', ['--tool=massif', '--stacks=yes', '--peak-inaccuracy=0', `--massif-out-file=${out}`, loop, lib, 'kem', ...args]);
    for (const snap of readFileSync(out, 'utf8').split(/^#-+\nsnapshot=\d+\n#-+\n/m)) {
      if (/^heap_tree=peak$/m.test(snap)) return Number(/^mem_stacks_B=(\d+)$/m.exec(snap)[1]);
    }
    throw new Error(`no peak snapshot in ${out}`);
  };
  const massif = {};
  for (const op of Object.keys(OPS)) {
    const peak = massifPeak([op, String(MASSIF_ITERATIONS)], op);
    const base = massifPeak([op, String(MASSIF_ITERATIONS), 'empty'], `${op}-empty`);
    massif[op] = { peak, base, net: peak - base };
  }

  // Static bound over the library's own sources (those in its build log) with the build's flags.
  const cmd = readFileSync(join(dirname(lib), 'build.log'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('$ '));
  const words = cmd.slice(2).split(/\s+/);
  const sources = words.filter((w) => w.endsWith('.c'));
  const cflags = words.filter((w) => /^-(std=|O|f|D|I)/.test(w));
  const ci = join(work, 'ci');
  mkdirSync(ci);
  sources.forEach(
    (src, i) => void sh('gcc', [...cflags, '-fcallgraph-info=su', '-c', src, '-o', join(ci, `${i}-${basename(src, '.c')}.o`)]),
  );
  const frame = new Map();
  const callees = new Map();
  const unq = (s) => s.replace(/\\"/g, '"');
  for (const f of readdirSync(ci).filter((x) => x.endsWith('.ci'))) {
    for (const line of readFileSync(join(ci, f), 'utf8').split('\n')) {
      let m = /^node: \{ title: "((?:[^"\\]|\\.)*)" label: "((?:[^"\\]|\\.)*)"/.exec(line);
      if (m) {
        const size = /\\n(\d+) bytes \(([^)]*)\)$/.exec(m[2]);
        if (size) frame.set(unq(m[1]), { bytes: Number(size[1]), kind: size[2] });
        continue;
      }
      m = /^edge: \{ sourcename: "((?:[^"\\]|\\.)*)" targetname: "((?:[^"\\]|\\.)*)"/.exec(line);
      if (m) {
        const from = unq(m[1]);
        if (!callees.has(from)) callees.set(from, new Set());
        callees.get(from).add(unq(m[2]));
      }
    }
  }
  const notes = new Set();
  const deepest = new Map();
  const onPath = new Set();
  const depth = (fn) => {
    if (deepest.has(fn)) return deepest.get(fn);
    const own = frame.get(fn);
    if (!own) {
      if (fn.includes('indirect')) notes.add(`indirect call (${fn}) counted 0`);
      return { bytes: 0, path: [] };
    }
    if (own.kind !== 'static') notes.add(`${fn}: ${own.kind} frame`);
    if (onPath.has(fn)) throw new Error(`recursion through ${fn}: no static bound`);
    onPath.add(fn);
    let best = { bytes: 0, path: [] };
    for (const c of callees.get(fn) ?? []) {
      const d = depth(c);
      if (d.bytes > best.bytes) best = d;
    }
    onPath.delete(fn);
    const r = { bytes: own.bytes + best.bytes, path: [fn, ...best.path] };
    deepest.set(fn, r);
    return r;
  };
  const bound = Object.fromEntries(Object.entries(OPS).map(([op, fn]) => [op, depth(fn)]));

  console.log(
    `PQClean ML-KEM-512 (${entry.build_flags}), gcc ${sh('gcc', ['-dumpfullversion']).trim()}, ${sh('valgrind', ['--version']).trim()}`,
  );
  console.log(`massif: op repeated ${MASSIF_ITERATIONS} times; call-site level (empty function) subtracted`);
  console.log(
    'op | ngcc_mem net stack | massif stack (peak − call-site level) | static bound (-fcallgraph-info=su) | ngcc_mem heap peak (allocations)',
  );
  for (const op of Object.keys(OPS)) {
    const d = driver[op];
    const m = massif[op];
    console.log(
      `${op} | ${d.stack_net_bytes} | ${m.net} (${m.peak} − ${m.base}) | ${bound[op].bytes} | ${d.heap_peak_bytes} (${d.heap_allocations})`,
    );
  }
  console.log('\ndeepest static paths:');
  const short = (f) => f.replace(/^.*:/, '').replace(PREFIX, '');
  for (const op of Object.keys(OPS)) console.log(`  ${op}: ${bound[op].path.map((f) => `${short(f)} ${frame.get(f).bytes}`).join(' → ')}`);
  for (const note of notes) console.log(`  note: ${note}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
