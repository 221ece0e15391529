// Cross-check of the hash shares measured by the link-time wrappers, three ways:
//   npm run build && node bench/callgrind.mjs [ROUNDS]
// - wrappers: cycles (rdtsc) of the outermost wrapped calls over the loop, on the relinked library;
// - sampling: instruction-pointer samples (bench/sample_loop.c) inside the code that only the wrapped
//   functions reach, taken in the same run as the wrappers' figure, and again on the unwrapped library
//   (no wrappers at all);
// - callgrind: instructions of the same outermost calls (edges from code outside the wrapped set into
//   it) on the unwrapped library; and, on the relinked library, the number of those calls, which must
//   equal the wrappers' count in the same execution.
// Sampling and the wrappers measure time; callgrind counts instructions. Rounds alternate the two
// sampled runs so that drift of the machine hits both alike; figures are medians over the rounds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 7);
const work = mkdtempSync(join(tmpdir(), 'ngcc-callgrind-'));
const data = join(work, 'data');
const campaign = join(root, 'examples', 'campaign');
const cpu = String(Number(readFileSync('/sys/devices/system/cpu/online', 'utf8').trim().split(/[-,]/).pop()));
const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
try {
  execFileSync(
    'node',
    [
      join(root, 'dist', 'cli.js'),
      'run',
      campaign,
      '--system',
      'cg',
      '--out',
      data,
      '--only',
      '^kem-(80/ml-kem-512|90)',
      '--trial-target',
      '0.2',
    ],
    { stdio: 'pipe' },
  );
} catch (e) {
  if (e.status !== 1) throw e;
}
const n = join(root, 'native');
const sampler = join(work, 'sample_loop');
sh('gcc', [
  '-std=gnu11',
  '-O2',
  `-I${n}`,
  '-o',
  sampler,
  join(root, 'bench', 'sample_loop.c'),
  join(n, 'harness.c'),
  join(n, 'ops.c'),
  '-ldl',
  '-lrt',
]);

// The same symbol set the wrappers use: the ICCS helpers for ICCS code, the NIST catalog otherwise.
const catalogOf = (file) =>
  new Set([...readFileSync(join(n, 'hashprof', file), 'utf8').matchAll(/^#ifdef NGCC_WRAP_(\w+)/gm)].map((m) => m[1]));
const RANDOM = new Set(['randombytes', 'PQCLEAN_randombytes', 'get_random_number']);
// Names the wrappers record for these symbols (native/hashprof/README.md).
const RECORDED = { get_random_number: 'drng', PQCLEAN_randombytes: 'randombytes' };

/** Callgrind's call graph and the cost of calls from outside the catalog into it. */
function readCallgrind(file, catalog) {
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
function reachedOnlyFrom(seed, callers) {
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
function functionsOf(lib) {
  const rows = [];
  for (const line of sh('nm', ['-S', '--defined-only', lib]).split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) [tTwW] (\S+)$/.exec(line);
    if (m) rows.push({ start: parseInt(m[1], 16), end: parseInt(m[1], 16) + parseInt(m[2], 16), name: m[3] });
  }
  return rows.sort((a, b) => a.start - b.start);
}

/** Share of the samples inside `set`, and the wrappers' own shares when the library printed them. */
function sampledShares(out, fns, set) {
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

const rows = [];
for (const [id, label, wraps] of [
  ['kem-90', 'ML-KEM-512-ICCS', 'wrap_iccs.c'],
  ['kem-80', 'ml-kem-512', 'wrap_nist.c'],
]) {
  const entry = JSON.parse(readFileSync(join(data, 'cg', 'build.json'), 'utf8')).instances[`${id}/${label}`];
  const plain = join(campaign, entry.library);
  const wrapped = join(data, 'cg', 'build', id, label, 'profile', `lib${label}.so`);
  const catalog = catalogOf(wraps);
  for (const op of ['keygen', 'enc', 'dec']) {
    const prof = JSON.parse(readFileSync(join(data, 'cg', 'profile', id, `${label}__${op}.json`), 'utf8'));
    const graphs = {};
    let wrapperCalls;
    for (const [kind, lib] of [
      ['plain', plain],
      ['wrapped', wrapped],
    ]) {
      const out = join(work, `cg-${id}-${op}-${kind}.out`);
      // Costs and call counts from the entry of run_loop to its return (dump number 1), preparation excluded.
      const printed = sh('valgrind', [
        '--tool=callgrind',
        '--zero-before=run_loop',
        '--dump-after=run_loop',
        '--compress-strings=no',
        '--compress-pos=no',
        `--callgrind-out-file=${out}`,
        sampler,
        lib,
        'kem',
        op,
        '200',
        '-1',
        'nosample',
      ]);
      const cg = readCallgrind(`${out}.1`, catalog);
      graphs[kind] = { cg, fns: functionsOf(lib), reached: reachedOnlyFrom(catalog, cg.callers) };
      if (kind === 'wrapped') {
        wrapperCalls = new Map();
        for (const l of printed.split('\n').map((x) => x.split('\t')))
          if (l[0] === 'CALL') wrapperCalls.set(l[1], (wrapperCalls.get(l[1]) ?? 0) + Number(l[4]));
      }
    }
    // The same 200 calls under callgrind: what the wrappers counted against the calls callgrind saw.
    const cgCalls = graphs.wrapped.cg.calls;
    const countsAgree = [...new Set([...wrapperCalls.keys(), ...cgCalls.keys()])].every((f) => wrapperCalls.get(f) === cgCalls.get(f));
    const r = { wrappersHash: [], wrappersAll: [], sampledSame: [], sampledPlain: [], hashTicksPerOp: [], otherTicksPerOp: [] };
    for (let round = 0; round < rounds; round++) {
      const same = sampledShares(sh(sampler, [wrapped, 'kem', op, '4000', cpu]), graphs.wrapped.fns, graphs.wrapped.reached);
      r.wrappersHash.push(same.wrappersHash);
      r.wrappersAll.push(same.wrappersAll);
      r.sampledSame.push(same.sampled);
      r.hashTicksPerOp.push(same.hashTicksPerOp);
      r.otherTicksPerOp.push(same.otherTicksPerOp);
      r.sampledPlain.push(sampledShares(sh(sampler, [plain, 'kem', op, '4000', cpu]), graphs.plain.fns, graphs.plain.reached).sampled);
    }
    const cg = graphs.plain.cg;
    rows.push({
      inst: `${id}/${label}`,
      op,
      profile: prof.hash_share,
      ...Object.fromEntries(Object.entries(r).map(([k, xs]) => [k, median(xs)])),
      hashSpread: [Math.min(...r.wrappersHash), Math.max(...r.wrappersHash)],
      callgrindHash: cg.cost.hash / cg.total,
      callgrindAll: (cg.cost.hash + cg.cost.rand) / cg.total,
      hashInstrPerOp: cg.cost.hash / 200,
      otherInstrPerOp: (cg.total - cg.cost.hash - cg.cost.rand) / 200,
      countsAgree,
    });
  }
}
const pct = (x) => `${(x * 100).toFixed(1)}%`;
const pp = (a, b) => ((a - b) * 100).toFixed(1);
console.log(`medians of ${rounds} rounds of 4000 calls each on cpu ${cpu}; callgrind over 200 calls`);
console.log('\nHash share (DRNG/randombytes excluded)');
console.log(
  'instance | op | profile phase (evidence) | wrappers, cycles [min–max] | callgrind, instructions | wrappers − callgrind (pp) | instructions per TSC tick, hashing / outside the wrapped calls | wrapped calls = callgrind calls',
);
for (const r of rows) {
  const ipc = `${(r.hashInstrPerOp / r.hashTicksPerOp).toFixed(2)} / ${(r.otherInstrPerOp / r.otherTicksPerOp).toFixed(2)}`;
  console.log(
    `${r.inst} | ${r.op} | ${pct(r.profile)} | ${pct(r.wrappersHash)} [${pct(r.hashSpread[0])}–${pct(r.hashSpread[1])}] | ${pct(r.callgrindHash)} | ${pp(r.wrappersHash, r.callgrindHash)} | ${ipc} | ${r.countsAgree ? 'yes' : 'NO'}`,
  );
}
console.log('\nShare of all wrapped calls (hash and randomness): time by the wrappers and by sampling');
console.log(
  'instance | op | wrappers, cycles | sampled, same run | sampled, no wrappers | callgrind, instructions | wrappers − sampled same run (pp) | wrappers − sampled no wrappers (pp)',
);
for (const r of rows) {
  console.log(
    `${r.inst} | ${r.op} | ${pct(r.wrappersAll)} | ${pct(r.sampledSame)} | ${pct(r.sampledPlain)} | ${pct(r.callgrindAll)} | ${pp(r.wrappersAll, r.sampledSame)} | ${pp(r.wrappersAll, r.sampledPlain)}`,
  );
}
rmSync(work, { recursive: true, force: true });
