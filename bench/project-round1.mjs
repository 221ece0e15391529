// The projected wall time of the real Round-1 nightly on one runner (README "A nightly of Round 1",
// docs/benchmarks.md (o)): on paper, from the synthetic Round-1 model at its real costs (scale 1,
// bench/synthetic), the planner's own arithmetic (src/measure/plan.ts) and per-process costs measured
// by the benches here. Nothing is run.
//   node bench/project-round1.mjs [--cores 8] [--ghz 3] [--process-s 0.06] [--adaptive-trials 6]
//        [--build-s 10] [--seed 1]
import { model } from './synthetic/generate.mjs';

const argv = process.argv.slice(2);
const args = {};
for (let i = 0; i + 1 < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = Number(argv[i + 1]);
const o = {
  cores: 8,
  ghz: 3,
  // Start and end of one sandboxed driver process beside its work: bench (n) measures it here.
  'process-s': 0.06,
  // Trials an adaptive plan takes on a fast operation before its ±1 % is met, on a quiet runner (an
  // assumption: on the shared development VM they ran to the cap of 30, bench (m)).
  'adaptive-trials': 6,
  // Build (and the profile relink, the same compile again) of one real instance: an assumption.
  'build-s': 10,
  seed: 1,
  ...args,
};
const hz = o.ghz * 1e9;
const P = o['process-s'];

// The guide's reference plan and the nightly's adaptive one, as ngcc-perf.yml's defaults set them.
const FIXED = { trials: 5, trial_target_s: 1, op_budget_s: 60, min_measurements: 100, warmups: 3 };
const ADAPTIVE = { trial_target_s: 0.1, min_trials: 5, max_trials: 30 };
const PROFILE = { target_s: 0.2, rounds: 5 };

/** Seconds of timing one operation of `t` seconds per call, calibration included (src/measure/plan.ts). */
function fixedSeconds(t) {
  const p = FIXED;
  const forTarget = Math.max(1, Math.round(p.trial_target_s / t));
  const forMinimum = Math.ceil(p.min_measurements / p.trials);
  const budget = Math.max(1, Math.floor(p.op_budget_s / (p.trials * t)));
  const iterations = Math.min(Math.max(forTarget, forMinimum), budget);
  const calibration = (t < p.trial_target_s ? 1 + 5 : 1) * t + 2 * P;
  const warmups = t >= p.trial_target_s ? 1 : p.warmups;
  return calibration + p.trials * ((iterations + warmups) * t + P);
}

function adaptiveSeconds(t) {
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
  const calibration = (t < a.trial_target_s ? 1 + 5 : 1) * t + 2 * P;
  const warmups = t >= a.trial_target_s ? 1 : p.warmups;
  return calibration + trials * ((iterations + warmups) * t + P);
}

/** The pool's work for one instance: its build and relink, and its KAT (10 records of every operation; a hash's loop). */
function poolSeconds(c, inst) {
  const ops = inst.ops;
  let kat;
  if (c.type === 'hash') kat = (1e6 * ops.hash_32 + 2 * 4096 * ops.hash_512) / hz;
  else if (c.type === 'kex') kat = (10 * Object.values(ops).reduce((a, b) => a + b, 0)) / hz;
  else kat = (10 * Object.values(ops).reduce((a, b) => a + b, 0)) / hz;
  return 2 * o['build-s'] + kat;
}

/** Profile rounds and memory runs of one instance's profiled operations (a KEX: the whole exchange). */
function profileSeconds(c, inst) {
  const ops = c.type === 'kex' ? [Object.values(inst.ops).reduce((a, b) => a + b, 0)] : Object.values(inst.ops);
  // Each round at least one call (src/profile/run.ts), then one memory run of one call.
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
    const perCall = Object.values(inst.ops).map((cycles) => (c.type === 'kex' ? exchange : cycles) / hz);
    return perCall.reduce((a, t) => a + plan(t), 0) + (c.type === 'kex' ? plan(exchange / hz) : 0);
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
const poolWork = instances.map(({ c, inst }) => poolSeconds(c, inst) + profileSeconds(c, inst));
const pool = { total: sum(poolWork), longest: Math.max(...poolWork) };
const h = (s) => `${(s / 3600).toFixed(1)} h`;
console.log(
  `Round-1 model (seed ${o.seed}): ${candidates.length} candidates, ${instances.length} instances; ${o.cores} cores at ${o.ghz} GHz`,
);
console.log(
  `pool work (2 builds of ${o['build-s']} s, KAT, profile rounds): ${h(pool.total)}, longest instance ${(pool.longest / 60).toFixed(0)} min`,
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
    `${name.padEnd(14)} timing ${h(timing.total)}; longest instance ${longest.key} ${h(longest.s)} end to end; best split ${best.T} timing + ${best.W} pool cores: wall ≈ ${h(best.w)}`,
  );
  const withoutExtreme = instances.map((x) => (x.c.class === 'extreme' ? 0 : 1));
  const tt = sum(t.filter((_, i) => withoutExtreme[i]));
  const pp = sum(poolWork.filter((_, i) => withoutExtreme[i]));
  const rest = Math.max(...chains.filter((_, i) => withoutExtreme[i]).map((x) => x.s));
  const b2 = wall({ total: tt }, { total: pp }, rest);
  console.log(`${''.padEnd(14)} without the 2 extreme candidates: wall ≈ ${h(b2.w)} (${b2.T} timing + ${b2.W} pool cores)`);
}
