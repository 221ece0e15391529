// Does a trial on one timing core move a trial on another (docs/benchmarks.md#side-by-side-timing)?
// What decides whether ngcc-perf.yml's `side_by_side` may be on for a machine.
//   node bench/side-by-side.mjs [rounds]      default 180 rounds (about 3 s each): 9–10 minutes on a 2-core VM
// The example campaign's ML-KEM-512 and ML-DSA-44 (built and KAT-checked first) give six operations,
// each timed as the measure step times it: a sandboxed trial process of about 0.1 s pinned to a
// core, started by this process (runTrial). Two timing cores, the last two this process may use,
// held by their host-wide locks for the whole bench. Each round runs two blocks, in alternating order:
//   (a) alone: each operation on each core in turn, the other core idle;
//   (b) at once: each operation on the first core while the next operation of the list runs on the
//       second, so every operation gets one trial on each core with another trial beside it.
// Per operation: the per-call median (cycles) over the trials' medians in (a) and in (b), (b) against
// (a), the trials' spread in each (relative IQR and max/min of the trials' medians), and the A/A
// difference between (a)'s trials of even and odd rounds. The last line says what the figures allow.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleHarness } from './harness-bundle.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 180);
if (!(Number.isInteger(rounds) && rounds >= 1)) {
  console.error('usage: node bench/side-by-side.mjs [rounds]');
  process.exit(2);
}
const TRIAL_S = 0.1;
const WARMUPS = 3;
const campaign = join(root, 'examples', 'campaign');
const LIBRARIES = [
  { key: 'kem-80/ml-kem-512', type: 'kem', operations: ['keygen', 'enc', 'dec'] },
  { key: 'sign-80/ml-dsa-44', type: 'sig', operations: ['keygen', 'sign', 'verify'] },
];

// The harness's own code, bundled inside the checkout: it finds native/ from where it sits.
const scratch = join(root, '.bench-side-by-side');
const data = mkdtempSync(join(tmpdir(), 'ngcc-side-by-side-'));
const harness = await bundleHarness(root, scratch, [
  "export { harnessTools } from './src/compile/harnessTools.ts';",
  "export { runTrial } from './src/measure/trial.ts';",
  "export { keyPairSource } from './src/measure/decInputs.ts';",
  "export { resolveSandbox } from './src/env/sandboxProbe.ts';",
  "export { allowedCpus } from './src/env/cpus.ts';",
  "export { lockCore } from './src/env/cpuLock.ts';",
]);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quantile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = p * (s.length - 1);
  const lo = Math.floor(at);
  return s[lo] + (s[Math.min(s.length - 1, lo + 1)] - s[lo]) * (at - lo);
};
const pct = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)} %`;

/** The libraries as a run builds and checks them: the example campaign's build and KAT. */
function buildLibraries() {
  const only = `^(${LIBRARIES.map((l) => l.key).join('|')})$`;
  execFileSync(
    'node',
    [join(root, 'dist', 'cli.js'), 'run', campaign, '--system', 'bench', '--out', data, '--only', only, '--phases', 'build,kat'],
    { stdio: 'pipe' },
  );
  const instances = JSON.parse(readFileSync(join(data, 'bench', 'build.json'), 'utf8')).instances;
  return LIBRARIES.flatMap((l) => {
    const entry = instances[l.key];
    if (entry?.kat !== 'PASS') throw new Error(`${l.key}: KAT ${entry?.kat ?? 'not run'}`);
    return l.operations.map((operation) => ({ name: `${l.key} ${operation}`, type: l.type, operation, entry }));
  });
}

/** One trial of `item` on `cpu`: the median cycles of its calls, or undefined when the process failed. */
async function trial(tools, sandbox, item, cpu, iterations) {
  const p = await harness.runTrial({
    driver: tools.driver,
    library: resolve(campaign, item.entry.library),
    type: item.type,
    operation: item.operation,
    iterations,
    warmups: WARMUPS,
    cpu,
    rng: 'nist-ctr-drbg',
    timeoutMs: 120_000,
    memoryLimitBytes: 8192 * 1024 * 1024,
    sandbox,
    ...(item.entry.kat_draws?.[item.operation] ? { katDraws: item.entry.kat_draws[item.operation] } : {}),
    ...(item.entry.sizes ? { sizes: item.entry.sizes } : {}),
    ...(item.keys ? { keys: item.keys } : {}),
  });
  if (p.status !== 'complete') {
    item.failed = (item.failed ?? 0) + 1;
    return undefined;
  }
  return p.trials[0]?.per_call_cycles?.median ?? p.trials[0].cycles / p.trials[0].measurements;
}

/** Calls per trial of about TRIAL_S, from a calibration of 5 calls on the first core. */
async function calibrate(tools, sandbox, item, cpu) {
  const p = await harness.runTrial({
    driver: tools.driver,
    library: resolve(campaign, item.entry.library),
    type: item.type,
    operation: item.operation,
    iterations: 5,
    warmups: 1,
    cpu,
    rng: 'nist-ctr-drbg',
    timeoutMs: 120_000,
    sandbox,
    calibration: true,
    ...(item.entry.sizes ? { sizes: item.entry.sizes } : {}),
    ...(item.keys ? { keys: item.keys } : {}),
  });
  const t = p.trials[0];
  if (p.status !== 'complete' || !t) throw new Error(`${item.name}: calibration failed (${p.failure})`);
  return Math.max(10, Math.round(TRIAL_S / (t.seconds / t.measurements)));
}

/** Block (a): every operation on each core, one process at a time. */
async function alone(ctx, round) {
  for (const item of ctx.items)
    for (const cpu of round % 2 ? [...ctx.cpus].reverse() : ctx.cpus) {
      const x = await trial(ctx.tools, ctx.sandbox, item, cpu, item.iterations);
      if (x !== undefined) item.a.push({ x, round });
    }
}

/** Block (b): operation i on the first core beside operation i+1 on the second, for every i. */
async function atOnce(ctx) {
  const n = ctx.items.length;
  for (let i = 0; i < n; i++) {
    const [first, second] = [ctx.items[i], ctx.items[(i + 1) % n]];
    const [x, y] = await Promise.all([
      trial(ctx.tools, ctx.sandbox, first, ctx.cpus[0], first.iterations),
      trial(ctx.tools, ctx.sandbox, second, ctx.cpus[1], second.iterations),
    ]);
    if (x !== undefined) first.b.push(x);
    if (y !== undefined) second.b.push(y);
  }
}

function report(items) {
  console.log(
    '| operation | (a) alone, cycles/call | (b) at once | (b) vs (a) | A/A of (a) | rel. IQR (a) | rel. IQR (b) | max/min (a) | max/min (b) | trials (a), (b) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const rows = items.map((item) => {
    const a = item.a.map((t) => t.x);
    const [ma, mb] = [median(a), median(item.b)];
    const even = item.a.filter((t) => t.round % 2 === 0).map((t) => t.x);
    const odd = item.a.filter((t) => t.round % 2 === 1).map((t) => t.x);
    const aa = even.length && odd.length ? median(odd) / median(even) - 1 : Number.NaN;
    const iqr = (xs, m) => (quantile(xs, 0.75) - quantile(xs, 0.25)) / m;
    const row = { diff: mb / ma - 1, aa, iqrA: iqr(a, ma), iqrB: iqr(item.b, mb) };
    console.log(
      `| ${item.name} | ${ma.toFixed(0)} | ${mb.toFixed(0)} | ${pct(row.diff)} | ${Number.isNaN(aa) ? '–' : pct(aa)} | ${(100 * row.iqrA).toFixed(2)} % | ${(100 * row.iqrB).toFixed(2)} % | ${(Math.max(...a) / Math.min(...a)).toFixed(3)} | ${(Math.max(...item.b) / Math.min(...item.b)).toFixed(3)} | ${a.length}, ${item.b.length}${item.failed ? ` (${item.failed} failed)` : ''} |`,
    );
    return row;
  });
  const worst = Math.max(...rows.map((r) => Math.abs(r.diff)));
  // Without two rounds there is no A/A: the bound is then (a)'s own spread.
  const bound = Math.max(...rows.map((r) => (Number.isNaN(r.aa) ? r.iqrA / 2 : Math.abs(r.aa))), 0.01);
  const wider = rows.filter((r) => r.iqrB > 1.5 * r.iqrA).length;
  const allowed = worst <= bound && wider === 0;
  console.log(
    `rule: side_by_side may be on where no operation's median moves beyond (a)'s own A/A difference (at least 1 %) and none spreads over 1.5× wider at once; here the largest move is ${pct(worst)} against ${pct(bound)}, ${wider} of ${rows.length} spread wider: ${allowed ? 'allowed' : 'not allowed'} on this machine`,
  );
}

const leases = [];
try {
  const allowed = harness.allowedCpus() ?? [];
  if (allowed.length < 2) throw new Error('needs two CPUs this process may use');
  const cpus = allowed.slice(-2);
  const tools = await harness.harnessTools();
  const sandbox = harness.resolveSandbox('auto');
  const items = buildLibraries().map((item) => ({
    ...item,
    a: [],
    b: [],
    ...(item.type === 'kem' && item.operation === 'dec' ? { keys: harness.keyPairSource() } : {}),
  }));
  // No ngcc-perf run times on these cores meanwhile, nor this bench beside one.
  for (const cpu of cpus)
    leases.push(await harness.lockCore([cpu], { what: 'bench/side-by-side.mjs', onWait: (l) => console.error(`bench ${l}`) }));
  for (const item of items) item.iterations = await calibrate(tools, sandbox, item, cpus[0]);
  console.log(`${rounds} round(s) on CPU ${cpus.join(' and ')}, trials of about ${TRIAL_S} s, sandbox ${sandbox}`);
  const ctx = { tools, sandbox, items, cpus };
  const started = Date.now();
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      await alone(ctx, round);
      await atOnce(ctx);
    } else {
      await atOnce(ctx);
      await alone(ctx, round);
    }
    console.error(`round ${round + 1}/${rounds} done after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  report(items);
  for (const item of items) item.keys?.dispose();
} finally {
  for (const lease of leases) lease.release();
  rmSync(scratch, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
}
