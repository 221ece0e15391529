// bench/ct-model.mjs held against a real ct phase (docs/benchmarks.md (ad)): for each instance of
// SYSTEM_DIR, the model's seconds of its ct step from the instance's KAT call seconds, each build's
// measured slowdown and each operation's paths, against the step's measured seconds (build.json
// step_seconds). Valgrind's start is read from the runs; what no file records (a coverage run's
// fixed cost, the coverage build's slowdown, the division check's factor) is fitted (least squares),
// and the fit's error printed per instance and in total. `--params R,C,D` fits nothing and prices
// with constants another run fitted (an out-of-sample check: the catalogue's on the example campaign).
//   node bench/ct-model-check.mjs SYSTEM_DIR [--params R,C,D]
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CT, ctInstanceSeconds } from './ct-model.mjs';

const usage = 'usage: node bench/ct-model-check.mjs SYSTEM_DIR [--params R,C,D]';
let args;
try {
  args = parseArgs({ allowPositionals: true, options: { params: { type: 'string' } } });
} catch (e) {
  console.error(`${e.message}\n${usage}`);
  process.exit(2);
}
const [dir] = args.positionals;
const fields = args.values.params?.split(',');
const given = fields?.every((f) => /^\s*\d+(\.\d+)?\s*$/.test(f)) ? fields.map(Number) : undefined;
if (!dir || args.positionals.length > 1 || (fields && (fields.length !== 3 || !given))) {
  console.error(fields ? `--params: three numbers of at least 0, R,C,D, not '${args.values.params}'\n${usage}` : usage);
  process.exit(2);
}
if (!existsSync(join(dir, 'build.json'))) {
  console.error(`${dir}: no build.json (give a system's folder of a run: DATA_DIR/ID)\n${usage}`);
  process.exit(2);
}

const read = (f) => JSON.parse(readFileSync(f, 'utf8'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A build's slowdown: its own measurement, else its checked calls' seconds against the native calls'. */
function factorOf(build, cs, fallback) {
  const s = build.slowdown;
  if (s && 'factor' in s) return s.factor;
  if (s && 'failure' in s) return Number.POSITIVE_INFINITY;
  const ratios = Object.entries(build.operations)
    .filter(([op, o]) => o.calls_s !== undefined && o.calls > 0 && cs[op] > 0)
    .map(([op, o]) => o.calls_s / (o.calls * cs[op]));
  return ratios.length > 0 ? median(ratios) : fallback;
}

const entries = Object.values(read(join(dir, 'build.json')).instances);
const rows = [];
const startups = [];
for (const e of entries) {
  const file = join(dir, 'ct', e.candidate, `${e.label}.json`);
  const seconds = e.step_seconds?.ct;
  if (!existsSync(file) || seconds === undefined || !e.call_seconds || e.type === 'hash') continue;
  const ct = read(file);
  const all = [ct, ...(ct.builds ?? [])];
  const measuredFactor = factorOf(ct, e.call_seconds, CT.valgrind_factor);
  // Valgrind's start and end: a keygen run's seconds beyond its calls (keygen makes no inputs first).
  for (const b of all) {
    const k = b.operations.keygen;
    if (k?.seconds !== undefined && k.calls_s !== undefined) startups.push(k.seconds - k.calls_s);
  }
  const needed = (op) => ct.operations[op]?.coverage?.paths?.needed ?? CT.calls;
  const builds = all.map((b) => ({
    factor: factorOf(b, e.call_seconds, measuredFactor),
    divisions: () => ((b.division_sites ?? []).length > 0 ? 1 : 0),
  }));
  rows.push({
    key: `${e.candidate}/${e.label}`,
    type: e.type,
    cs: e.call_seconds,
    builds,
    needed,
    measured: seconds,
    ctBuild: e.step_seconds['ct-build'],
  });
}
if (rows.length === 0) {
  console.error(`no instance of ${dir} has a ct file and its ct step's seconds`);
  process.exit(1);
}

const startup = median(startups);
const base = { startup_s: startup, coverage_slowdown: 0, needed: undefined, coverage_run_s: 0, division_factor: 0 };
const parts = rows.map((r) => ctInstanceSeconds(r.type, r.cs, r.builds, { ...base, needed: r.needed }));
// measured ≈ the rest + R × coverage runs + C × their native seconds + D × the divided runs' seconds:
// least squares for R, C and D, none negative (one found negative is left out and the rest fitted again).
const y = rows.map((r, i) => r.measured - parts[i].core);
const columns = [parts.map((p) => p.coverageRuns), parts.map((p) => p.coverageNative), parts.map((p) => p.divided)];
const [R, C, D] = given ?? nonNegativeLeastSquares(columns, y);

function nonNegativeLeastSquares(xs, target) {
  const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
  let active = xs.map((_, i) => i);
  for (;;) {
    const A = active.map((i) => active.map((j) => dot(xs[i], xs[j])));
    const b = active.map((i) => dot(xs[i], target));
    const solved = solve(A, b);
    const negative = solved.findIndex((v) => !(v >= 0));
    if (negative < 0) {
      const out = xs.map(() => 0);
      active.forEach((i, k) => {
        out[i] = solved[k];
      });
      return out;
    }
    active = active.filter((_, k) => k !== negative);
    if (active.length === 0) return xs.map(() => 0);
  }
}

/** Gaussian elimination with partial pivoting; a singular system gives NaN, which the caller drops. */
function solve(A, b) {
  const n = b.length;
  const M = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    if (M[c][c] === 0) return b.map(() => Number.NaN);
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / M[c][c];
      for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  const x = new Array(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r][n];
    for (let k = r + 1; k < n; k++) s -= M[r][k] * x[k];
    x[r] = s / M[r][r];
  }
  return x;
}

const fitted = { ...base, coverage_run_s: R, coverage_slowdown: C, division_factor: D };
let [sumMeasured, sumModel] = [0, 0];
const errors = [];
console.log('instance'.padEnd(40), 'measured s', 'model s', 'error', 'runs', 'ct-build s');
rows.forEach((r) => {
  const m = ctInstanceSeconds(r.type, r.cs, r.builds, { ...fitted, needed: r.needed });
  sumMeasured += r.measured;
  sumModel += m.core;
  // An instance whose every operation was skipped at once has no error to speak of.
  const err = r.measured >= 1 ? (m.core - r.measured) / r.measured : 0;
  if (r.measured >= 1) errors.push(Math.abs(err));
  console.log(
    r.key.padEnd(40),
    r.measured.toFixed(1).padStart(10),
    m.core.toFixed(1).padStart(7),
    (r.measured >= 1 ? `${(100 * err).toFixed(0)} %` : '—').padStart(6),
    String(m.runs).padStart(4),
    (r.ctBuild ?? Number.NaN).toFixed(1).padStart(10),
  );
});
const ctBuilds = rows.map((r) => r.ctBuild).filter((s) => s !== undefined);
console.log(
  `\n${rows.length} instances: measured ${(sumMeasured / 60).toFixed(1)} min of ct steps, model ${(sumModel / 60).toFixed(1)} min (${((100 * (sumModel - sumMeasured)) / sumMeasured).toFixed(1)} %); per instance |error| median ${(100 * median(errors)).toFixed(0)} %, max ${(100 * Math.max(...errors)).toFixed(0)} %`,
);
console.log(
  `valgrind start and end ${startup.toFixed(2)} s (median of ${startups.length} keygen runs); ${given ? 'given' : 'fitted'}: a coverage run ${R.toFixed(2)} s besides its calls, which run ${C.toFixed(2)}× their native seconds; the division check ${D.toFixed(2)}× its memcheck run`,
);
console.log(`ct-build step: median ${median(ctBuilds).toFixed(1)} s an instance (${rows[0].builds.length + 1} compiles)`);
