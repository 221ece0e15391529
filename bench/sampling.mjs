// What bench/callgrind.mjs and bench/profile-disturbed.mjs share: the wrapper-free sampler
// (bench/sample_loop.c), callgrind's call graph, and the share of samples inside code that only
// the wrapped functions reach.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const n = join(root, 'native');
export const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The harness's manifest of its binaries and linked units (native/binaries.json). */
const nativeManifest = () => JSON.parse(readFileSync(join(n, 'binaries.json'), 'utf8'));

/** bench/sample_loop.c built as the harness builds its drivers, into `work`: with ngcc_mem's operations (its sources but its main). */
export function buildSampler(work) {
  const sampler = join(work, 'sample_loop');
  const operations = nativeManifest().binaries.ngcc_mem.sources.filter((f) => !f.startsWith('bin/'));
  sh('gcc', [
    '-std=gnu11',
    '-O2',
    `-I${n}`,
    '-o',
    sampler,
    join(root, 'bench', 'sample_loop.c'),
    ...operations.map((f) => join(n, f)),
    '-ldl',
    '-lrt',
  ]);
  return sampler;
}

// The same symbol set the wrappers use: the ICCS helpers for ICCS code, the NIST catalog otherwise.
export const catalogOf = (file) => {
  const source = nativeManifest().linked.hashprof.sources.find((f) => f.endsWith(`/${file}`));
  return new Set([...readFileSync(join(n, source), 'utf8').matchAll(/^#ifdef NGCC_WRAP_(\w+)/gm)].map((m) => m[1]));
};
export const RANDOM = new Set(['randombytes', 'PQCLEAN_randombytes', 'get_random_number']);
// Names the wrappers record for these symbols (native/linked/hashprof/README.md).
const RECORDED = { get_random_number: 'drng', PQCLEAN_randombytes: 'randombytes' };

/** Callgrind's call graph and the cost of calls from outside the catalog into it. */
export function readCallgrind(file, catalog) {
  let total = 0;
  let fn;
  let cfn;
  let pendingCalls = 0;
  const cost = { hash: 0, rand: 0 };
  const calls = new Map();
  const callers = new Map();
  const names = new Map();
  const name = (s) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(s);
    if (!m) return s;
    if (m[2]) names.set(m[1], m[2]);
    return names.get(m[1]);
  };
  const bare = (f) => f.replace(/^__wrap_/, '');
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('summary:') || line.startsWith('totals:')) total = Number(line.split(/\s+/)[1]);
    else if (line.startsWith('fn=')) fn = name(line.slice(3));
    else if (line.startsWith('cfn=')) {
      cfn = name(line.slice(4));
      if (!callers.has(cfn)) callers.set(cfn, new Set());
      callers.get(cfn).add(fn);
    } else if (line.startsWith('calls=')) pendingCalls = Number(line.slice(6).split(/\s+/)[0]);
    else if (pendingCalls && /^[0-9+*-]/.test(line)) {
      const inclusive = Number(line.split(/\s+/)[1]);
      if (catalog.has(bare(cfn)) && !catalog.has(bare(fn))) {
        if (RANDOM.has(bare(cfn))) cost.rand += inclusive;
        else cost.hash += inclusive;
        const key = RECORDED[bare(cfn)] ?? bare(cfn);
        calls.set(key, (calls.get(key) ?? 0) + pendingCalls);
      }
      pendingCalls = 0;
    }
  }
  return { total, cost, calls, callers };
}

/** Functions reached only from `seed` (transitively): time spent in them belongs to the seed's calls. */
export function reachedOnlyFrom(seed, callers) {
  const set = new Set([...callers.keys()].filter((f) => seed.has(f.replace(/^__wrap_/, ''))));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [f, by] of callers) {
      if (!set.has(f) && by.size > 0 && [...by].every((c) => set.has(c))) {
        set.add(f);
        grew = true;
      }
    }
  }
  return set;
}

/** Address ranges of the library's functions, from its symbol table. */
export function functionsOf(lib) {
  const rows = [];
  for (const line of sh('nm', ['-S', '--defined-only', lib]).split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) [tTwW] (\S+)$/.exec(line);
    if (m) rows.push({ start: parseInt(m[1], 16), end: parseInt(m[1], 16) + parseInt(m[2], 16), name: m[3] });
  }
  return rows.sort((a, b) => a.start - b.start);
}

/** Share of the samples inside `set`, and the wrappers' own shares when the library printed them. */
export function sampledShares(out, fns, set) {
  const lines = out.split('\n').map((l) => l.split('\t'));
  const base = parseInt(lines.find((l) => l[0] === 'BASE')[1], 16);
  let total = 0;
  let inside = 0;
  for (const [tag, ip, count] of lines) {
    if (tag !== 'SAMPLE') continue;
    total += Number(count);
    const off = parseInt(ip, 16) - base;
    let lo = 0;
    let hi = fns.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (fns[mid].start > off) hi = mid - 1;
      else if (off >= fns[mid].end) lo = mid + 1;
      else {
        if (set.has(fns[mid].name)) inside += Number(count);
        break;
      }
    }
  }
  const totalLine = lines.find((l) => l[0] === 'TOTAL');
  let hash = 0;
  let all = 0;
  for (const l of lines) {
    if (l[0] !== 'CALL') continue;
    all += Number(l[5]);
    if (!RANDOM.has(l[1]) && l[1] !== 'drng') hash += Number(l[5]);
  }
  const ticks = totalLine ? Number(totalLine[2]) : NaN;
  const ops = totalLine ? Number(totalLine[1]) : NaN;
  return {
    sampled: inside / total,
    samples: total,
    wrappersHash: hash / ticks,
    wrappersAll: all / ticks,
    hashTicksPerOp: hash / ops,
    otherTicksPerOp: (ticks - all) / ops,
  };
}
