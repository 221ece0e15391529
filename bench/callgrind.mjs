// Cross-check of the hash shares measured by the link-time wrappers against valgrind callgrind.
//   npm run build && node bench/callgrind.mjs
// The wrappers time outermost calls in cycles (rdtsc); callgrind counts instructions of the same
// outermost calls (edges from code outside the wrapped set into it) on the unwrapped library.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-callgrind-'));
const data = join(work, 'data');
const campaign = join(root, 'examples', 'campaign');
try {
  execFileSync('node', [join(root, 'dist', 'cli.js'), 'run', campaign, '--system', 'cg', '--out', data, '--only', '^kem-(80/ml-kem-512|90)', '--trial-target', '0.2'], { stdio: 'pipe' });
} catch (e) {
  if (e.status !== 1) throw e;
}
const n = join(root, 'native');
const loop = join(work, 'callgrind_loop');
execFileSync('gcc', ['-std=gnu11', '-O2', `-I${n}`, '-o', loop, join(root, 'bench', 'callgrind_loop.c'), join(n, 'harness.c'), '-ldl']);
// The same symbol set the wrappers use: the ICCS helpers for ICCS code, the NIST catalog otherwise.
const catalogOf = (file) => new Set([...readFileSync(join(n, 'hashprof', file), 'utf8').matchAll(/^#ifdef NGCC_WRAP_(\w+)/gm)].map((m) => m[1]));
const RANDOM = new Set(['randombytes', 'PQCLEAN_randombytes', 'get_random_number']);

/** Inclusive instructions of calls from outside the catalog into it, over the total of the loop. */
function callgrindShares(file, catalog) {
  let total = 0;
  let fn;
  let cfn;
  let pending = false;
  let hash = 0;
  let rand = 0;
  const names = new Map();
  const name = (s) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(s);
    if (!m) return s;
    if (m[2]) names.set(m[1], m[2]);
    return names.get(m[1]);
  };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('summary:') || line.startsWith('totals:')) total = Number(line.split(/\s+/)[1]);
    else if (line.startsWith('fn=')) fn = name(line.slice(3));
    else if (line.startsWith('cfn=')) cfn = name(line.slice(4));
    else if (line.startsWith('calls=')) pending = true;
    else if (pending && /^[0-9+*-]/.test(line)) {
      const cost = Number(line.split(/\s+/)[1]);
      if (catalog.has(cfn) && !catalog.has(fn)) RANDOM.has(cfn) ? (rand += cost) : (hash += cost);
      pending = false;
    }
  }
  return { hash: hash / total, rand: rand / total };
}

const rows = [];
for (const [id, label, wraps] of [['kem-90', 'ML-KEM-512-ICCS', 'wrap_iccs.c'], ['kem-80', 'ml-kem-512', 'wrap_nist.c']]) {
  const build = JSON.parse(readFileSync(join(data, 'cg', 'build.json'), 'utf8')).instances[`${id}/${label}`];
  const lib = join(campaign, build.library);
  for (const op of ['keygen', 'enc', 'dec']) {
    const prof = JSON.parse(readFileSync(join(data, 'cg', 'profile', id, `${label}__${op}.json`), 'utf8'));
    const out = join(work, `cg-${id}-${op}.out`);
    execFileSync('valgrind', ['--tool=callgrind', `--toggle-collect=loop_${op}`, '--compress-strings=no', '--compress-pos=no', `--callgrind-out-file=${out}`, loop, lib, op, '200'], { stdio: 'pipe' });
    const cg = callgrindShares(out, catalogOf(wraps));
    rows.push({ inst: `${id}/${label}`, op, wrappers: prof.hash_share * 100, callgrind: cg.hash * 100 });
  }
}
console.log('instance | op | wrappers (cycles) | callgrind (instructions) | difference (pp)');
for (const r of rows) console.log(`${r.inst} | ${r.op} | ${r.wrappers.toFixed(1)}% | ${r.callgrind.toFixed(1)}% | ${(r.wrappers - r.callgrind).toFixed(1)}`);
rmSync(work, { recursive: true, force: true });
