// The projected wall time of the real Round-1 nightly on one runner (README "A nightly of Round 1",
// docs/benchmarks.md (o) and (v)): on paper, from the synthetic Round-1 model at its real costs
// (scale 1, bench/synthetic), the planner's own arithmetic (src/measure/plan.ts) and what the
// catalogue run measured (bench (v)): the fixed cost of a timing process, what each process makes
// before its calls (a key pair, dec's ciphertexts, verify's 16 signed messages), the KAT's records
// (the guide's ten, two fresh ones and the flipped checks), the hash KAT_Loop's 10^6 hashes of 1024
// bytes, and the ct phase as bench/ct-model.mjs prices it with what the catalogue's ct run measured
// (bench (ad)). Nothing is run.
//   node bench/project-round1.mjs [--cores 8] [--ghz 3] [--process-s 0.05] [--adaptive-trials 6]
//        [--build-s 10] [--ct-factor 55] [--ct-division 1.75] [--ct-division-share 0.28]
//        [--ct-needed 3] [--ct-rare-needed 30] [--ct-rare-share 0.15] [--ct-coverage-run-s 0.60]
//        [--ct-coverage-x 1.36] [--ct-startup-s 0.87] [--ct-builds 3] [--seed 1]
import { model } from './synthetic/generate.mjs';
import { ctInstanceSeconds, setupSeconds } from './ct-model.mjs';

const argv = process.argv.slice(2);
const args = {};
for (let i = 0; i + 1 < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = Number(argv[i + 1]);
const o = {
  cores: 8,
  ghz: 3,
  // Start and end of one sandboxed timing process beside its loops (bench (u): bwrap on a quiet core).
  'process-s': 0.05,
  // Trials an adaptive plan takes on a fast operation before its ±1 % is met, on a quiet runner (an
  // assumption: on the shared development VM they ran to the cap of 30, bench (m)).
  'adaptive-trials': 6,
  // Build (and the profile relink, the same compile again) of one real instance: an assumption.
  'build-s': 10,
  // The ct phase (bench (ad), the catalogue's ct run at the defaults): memcheck's slowdown, the
  // median of the builds' measured ones; the division check's run against the memcheck run of the
  // same calls, and the share of builds whose divisions the API reaches; the calls an operation's
  // rare paths need: most operations the check's 3, a share of them more (9 of 61, 11–55, about 30
  // on average); a native coverage run's cost besides its calls, and its calls against native ones
  // (both fitted, bench/ct-model-check.mjs); valgrind's start.
  'ct-factor': 55,
  'ct-division': 1.74,
  'ct-division-share': 0.28,
  'ct-needed': 3,
  'ct-rare-needed': 30,
  'ct-rare-share': 0.15,
  'ct-coverage-run-s': 0.6,
  'ct-coverage-x': 1.36,
  'ct-startup-s': 0.87,
  // Builds the ct phase checks: the measured one and ct.variants' two others (one compiler).
  'ct-builds': 3,
  seed: 1,
  ...args,
};
const hz = o.ghz * 1e9;
const P = o['process-s'];

// The guide's reference plan and the nightly's adaptive one, as ngcc-perf.yml's defaults set them.
const FIXED = { trials: 5, trial_target_s: 1, op_budget_s: 60, min_measurements: 100, warmups: 3 };
const ADAPTIVE = { trial_target_s: 0.1, min_trials: 5, max_trials: 30 };
const PROFILE = { target_s: 0.2, rounds: 5 };

/**
 * Seconds of timing one operation of `t` seconds per call, calibration included (src/measure/plan.ts);
 * `setup(calls)` is what each of its processes makes first (src/measure/cost.ts setupSeconds).
 */
function fixedSeconds(t, setup) {
  const p = FIXED;
  const forTarget = Math.max(1, Math.round(p.trial_target_s / t));
  const forMinimum = Math.ceil(p.min_measurements / p.trials);
  const budget = Math.max(1, Math.floor(p.op_budget_s / (p.trials * t)));
  const iterations = Math.min(Math.max(forTarget, forMinimum), budget);
  const calibration = (t < p.trial_target_s ? 1 + 5 : 1) * t + 2 * P + 2 * setup(1);
  const warmups = t >= p.trial_target_s ? 1 : p.warmups;
  return calibration + p.trials * ((iterations + warmups) * t + P + setup(iterations + warmups));
}

function adaptiveSeconds(t, setup) {
  const a = ADAPTIVE;
  const p = FIXED;
  const forTarget = Math.max(1, Math.round(a.trial_target_s / t));
  const forMinimum = Math.ceil(p.min_measurements / a.max_trials);
  const budget = Math.max(1, Math.floor(p.op_budget_s / (a.min_trials * t)));
  const iterations = Math.min(Math.max(forTarget, forMinimum), budget);
  const cap = Math.max(1, Math.min(a.max_trials, Math.floor(p.op_budget_s / (iterations * t))));
  // The rule stops after min_trials at the earliest, and only once the guide's 100 calls are in.
  const needed = Math.max(o['adaptive-trials'], Math.ceil(p.min_measurements / iterations));
  const trials = Math.min(cap, needed);
  const calibration = (t < a.trial_target_s ? 1 + 5 : 1) * t + 2 * P + 2 * setup(1);
  const warmups = t >= a.trial_target_s ? 1 : p.warmups;
  return calibration + trials * ((iterations + warmups) * t + P + setup(iterations + warmups));
}

/** What a process of `calls` calls of `op` makes first: a key pair, dec's ciphertexts, verify's pool (src/measure/cost.ts). */
const setupOf = (type, op, s) => (calls) => setupSeconds(type, op, s, calls);

/** KAT records of each operation: the guide's ten and two of fresh seeds (src/kat, native/jobs/kat.c). */
const KAT_RECORDS = 12;
/** The hash KAT_Loop: 10^6 hashes of a 1024-byte message (native/jobs/kat_hash.c). */
const HASH_LOOP = 1e6;

/** The pool's work for one instance: its build and relink, and its KAT (a hash's loop besides its records). */
function poolSeconds(c, inst) {
  const ops = inst.ops;
  const all = Object.values(ops).reduce((a, b) => a + b, 0);
  let kat;
  if (c.type === 'hash') kat = (HASH_LOOP * ops.hash_1024 + KAT_RECORDS * all) / hz;
  // A KEM's dec and a signature's verify run twice more on the fresh records (the flipped bit).
  else if (c.type === 'kem') kat = (KAT_RECORDS * all + 2 * ops.dec) / hz;
  else if (c.type === 'sig') kat = (KAT_RECORDS * all + 2 * ops.verify) / hz;
  else kat = (KAT_RECORDS * all) / hz;
  return 2 * o['build-s'] + kat;
}

/** One instance's ct phase (bench/ct-model.mjs): its compiles on the pool, its runs on a core it holds. */
function ctSeconds(c, inst) {
  const seconds = Object.fromEntries(Object.entries(inst.ops).map(([op, cycles]) => [op, cycles / hz]));
  const builds = Array.from({ length: o['ct-builds'] }, () => ({ factor: o['ct-factor'], divisions: () => o['ct-division-share'] }));
  const m = (needed) => ({
    startup_s: o['ct-startup-s'],
    coverage_run_s: o['ct-coverage-run-s'],
    coverage_slowdown: o['ct-coverage-x'],
    division_factor: o['ct-division'],
    needed: () => needed,
  });
  // Each operation's cost adds up, so the expected seconds of the rare-path share weigh the two cases.
  const p = o['ct-rare-share'];
  const common = ctInstanceSeconds(c.type, seconds, builds, m(o['ct-needed']));
  const rare = ctInstanceSeconds(c.type, seconds, builds, m(o['ct-rare-needed']));
  const runs = (1 - p) * common.core + p * rare.core;
  return { runs, compiles: runs > 0 ? common.compiles * o['build-s'] : 0 };
}

/** Profile rounds and memory runs of one instance's profiled operations (a KEX: the whole exchange). */
function profileSeconds(c, inst) {
  const ops = c.type === 'kex' ? [Object.values(inst.ops).reduce((a, b) => a + b, 0)] : Object.values(inst.ops);
  // Each round at least one call (src/profile/profileInstance.ts), then one memory run of one call.
  return ops.reduce(
    (a, cycles) => a + Math.max(PROFILE.target_s, (PROFILE.rounds * cycles) / hz) + cycles / hz + (PROFILE.rounds + 1) * P,
    0,
  );
}

const candidates = model({ seed: o.seed });
const instances = candidates.flatMap((c) => c.instances.map((inst) => ({ c, inst })));
const timed = (plan) =>
  instances.map(({ c, inst }) => {
    // A KEX step is timed inside whole exchanges: each of its calls costs an exchange.
    const exchange = Object.values(inst.ops).reduce((a, b) => a + b, 0);
    const seconds = Object.fromEntries(Object.entries(inst.ops).map(([op, cycles]) => [op, cycles / hz]));
    const none = () => 0;
    return (
      Object.entries(inst.ops).reduce(
        (a, [op, cycles]) => a + plan((c.type === 'kex' ? exchange : cycles) / hz, c.type === 'kex' ? none : setupOf(c.type, op, seconds)),
        0,
      ) + (c.type === 'kex' ? plan(exchange / hz, none) : 0)
    );
  });

/**
 * Wall time with T timing cores and the rest as the pool: at least the busier side's work over its
 * cores, and at least the longest instance's own chain (its preparation, timing and profile one after
 * the other).
 */
function wall(timing, pool, chain) {
  let best;
  for (let T = 1; T < o.cores; T++) {
    const W = o.cores - T;
    const w = Math.max(timing.total / T, pool.total / W, chain);
    if (!best || w < best.w) best = { w, T, W };
  }
  return best;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const h = (s) => `${(s / 3600).toFixed(1)} h`;
const ctParts = instances.map(({ c, inst }) => ctSeconds(c, inst));
const ctWork = ctParts.map((p) => p.runs + p.compiles);
console.log(
  `Round-1 model (seed ${o.seed}): ${candidates.length} candidates, ${instances.length} instances; ${o.cores} cores at ${o.ghz} GHz; ${o['process-s']} s per timing process`,
);
for (const withCt of [false, true]) {
  const poolWork = instances.map(({ c, inst }, i) => poolSeconds(c, inst) + profileSeconds(c, inst) + (withCt ? ctWork[i] : 0));
  const pool = { total: sum(poolWork), longest: Math.max(...poolWork) };
  console.log(
    `${withCt ? 'with ct' : 'without ct'}: pool work (2 builds of ${o['build-s']} s, KAT, profile rounds${withCt ? `, ct at ${o['ct-factor']}× under memcheck: ${h(sum(ctWork))}, its runs ${h(sum(ctParts.map((p) => p.runs)))} and its ${o['ct-builds'] + 1} compiles ${h(sum(ctParts.map((p) => p.compiles)))}` : ''}): ${h(pool.total)}, longest instance ${(pool.longest / 60).toFixed(0)} min`,
  );
  for (const [name, plan] of [
    ['fixed 5 × 1 s', fixedSeconds],
    ['adaptive ±1 %', adaptiveSeconds],
  ]) {
    const t = timed(plan);
    const timing = { total: sum(t), longest: Math.max(...t) };
    const chains = instances.map((x, i) => ({ key: `${x.c.id}/${x.inst.label}`, s: t[i] + poolWork[i] }));
    const longest = chains.reduce((a, b) => (b.s > a.s ? b : a));
    const best = wall(timing, pool, longest.s);
    console.log(
      `  ${name.padEnd(14)} timing ${h(timing.total)}; longest instance ${longest.key} ${h(longest.s)} end to end; best split ${best.T} timing + ${best.W} pool cores: wall ≈ ${h(best.w)}`,
    );
    const keep = instances.map((x) => x.c.class !== 'extreme');
    const b2 = wall(
      { total: sum(t.filter((_, i) => keep[i])) },
      { total: sum(poolWork.filter((_, i) => keep[i])) },
      Math.max(...chains.filter((_, i) => keep[i]).map((x) => x.s)),
    );
    console.log(`  ${''.padEnd(14)} without the 2 extreme candidates: wall ≈ ${h(b2.w)} (${b2.T} timing + ${b2.W} pool cores)`);
  }
}
