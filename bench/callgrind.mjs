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
import { buildSampler, catalogOf, functionsOf, median, readCallgrind, reachedOnlyFrom, sampledShares, sh } from './sampling.mjs';
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
const sampler = buildSampler(work);

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
