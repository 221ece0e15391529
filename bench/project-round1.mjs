// The projected wall time of the real Round-1 nightly on one runner (README "A nightly of Round 1",
// docs/benchmarks.md (o) and (v)): on paper, from the synthetic Round-1 model at its real costs
// (scale 1, bench/synthetic), the planner's own arithmetic (src/measure/plan.ts) and what the
// catalogue run measured (bench (v)): the fixed cost of a timing process, what each process makes
// before its calls (a key pair, dec's ciphertexts, verify's 16 signed messages), the KAT's records
// (the guide's ten, two fresh ones and the flipped checks), the hash KAT_Loop's 10^6 hashes of 1024
// bytes, and the ct phase as bench/ct-model.mjs prices it with what the catalogue's ct run measured
// (bench (ad)). Since issue 48: a KAT's records in pieces over the pool's cores (src/kat/katPieces.ts),
// an operation whose call takes a second or more planned in calls (src/measure/plan.ts), and, with
// --side-by-side 1, an instance's operations dealt over the timing cores (src/campaign/sideBySide.ts;
// off by default, as benchmarks.md#side-by-side-timing says). Nothing is run.
//   node bench/project-round1.mjs [--cores 8] [--ghz 3] [--process-s 0.05] [--adaptive-trials 6]
//        [--kat-pieces 0 (the pool's cores)] [--call-plan-s 1] [--call-min 3] [--side-by-side 0]
//        [--shared-keys 0]
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
  // A KAT's pieces: 0 gives as many as the pool has cores (src/kat/katPieces.ts), 1 a serial KAT.
  'kat-pieces': 0,
  // An operation whose call takes this long or more is planned in calls, at least this many
  // (src/config/defaults.ts CALL_PLAN_S, CALL_PLAN_MIN_CALLS); its KAT's call figure sizes it.
  'call-plan-s': 1,
  'call-min': 3,
  // 1: an instance's operations dealt round-robin over the timing cores (off by default).
  'side-by-side': 0,
  // 1: what if sign's and verify's processes shared one key pair per operation (see inputSeconds).
  'shared-keys': 0,
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
  if (t >= o['call-plan-s']) return callPlanSeconds(t, setup);
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
  if (t >= o['call-plan-s']) return callPlanSeconds(t, setup);
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

/**
 * An operation planned in calls (src/measure/plan.ts planCalls), in either plan: one call a process
 * after one warm-up, until the ±1 % interval holds (`adaptive-trials` calls on a quiet runner, an
 * assumption), at least `call-min` and at most what the budget holds with the warm-ups, the floor
 * winning. No calibration: the KAT's records timed the call. Then the replay of one trial
 * (src/measure/replay.ts): 0 or 2 warm-ups and the call, 2 calls on average.
 */
function callPlanSeconds(t, setup) {
  const most = Math.max(o['call-min'], Math.floor(FIXED.op_budget_s / (2 * t)));
  const calls = Math.min(most, Math.max(o['call-min'], o['adaptive-trials']));
  return calls * (2 * t + P + setup(2)) + 2 * t + P + setup(2);
}

/** What a process of `calls` calls of `op` makes first: a key pair, dec's ciphertexts, verify's pool (src/measure/cost.ts). */
const setupOf = (type, op, s) => (calls) => inputSeconds(type, op, s, calls);

/**
 * What one process makes before its calls (src/measure/cost.ts). With --shared-keys 1, a what-if no
 * code does yet for sign and verify: their processes take one key pair made once per operation, as
 * dec's trials do (src/measure/decInputs.ts keyPairSource), so a process makes only verify's
 * signatures; the key pair itself is charged once, in `sharedKeySeconds`.
 */
function inputSeconds(type, op, s, calls) {
  if (o['shared-keys'] && type === 'sig' && (op === 'sign' || op === 'verify')) return setupSeconds(type, op, s, calls) - (s.keygen ?? 0);
  return setupSeconds(type, op, s, calls);
}
const sharedKeySeconds = (c, inst) => (o['shared-keys'] && c.type === 'sig' ? (2 * inst.ops.keygen) / hz : 0);

/** KAT records of each operation: the guide's ten and two of fresh seeds (src/kat, native/jobs/kat.c). */
const KAT_RECORDS = 12;
/** The hash KAT_Loop: 10^6 hashes of a 1024-byte message (native/jobs/kat_hash.c). */
const HASH_LOOP = 1e6;

/**
 * An instance's KAT: `work`, the pool's seconds, and `span`, how long it holds up the instance: its
 * longest piece (src/kat/katPieces.ts pieceRanges: the fresh records count as records after the
 * last). It assumes every pool core free to borrow when the KAT starts (a core a profile round or a
 * ct run holds is not lent). A hash's KAT_Loop chains its hashes and cannot be cut; a key
 * exchange's records are cheap and counted whole.
 */
function katSeconds(c, inst, poolCores) {
  const ops = inst.ops;
  const all = Object.values(ops).reduce((a, b) => a + b, 0) / hz;
  // A KEM's dec and a signature's verify run twice more on the fresh records (the flipped bit).
  const flipped = c.type === 'kem' ? (2 * ops.dec) / hz : c.type === 'sig' ? (2 * ops.verify) / hz : 0;
  if (c.type === 'hash' || c.type === 'kex') {
    const whole = (c.type === 'hash' ? (HASH_LOOP * ops.hash_1024) / hz : 0) + KAT_RECORDS * all + flipped;
    return { work: whole, span: whole };
  }
  const pieces = Math.max(1, Math.min(o['kat-pieces'] || poolCores, KAT_RECORDS));
  const work = KAT_RECORDS * all + flipped + (pieces > 1 ? pieces * P : 0);
  return { work, span: pieces > 1 ? Math.ceil(KAT_RECORDS / pieces) * all + flipped + P : work };
}

/** The pool's work for one instance besides its KAT: its build and relink. */
const buildSeconds = () => 2 * o['build-s'];

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

/**
 * Profile rounds and memory runs of one instance's profiled operations (a KEX: the whole exchange).
 * Each round is a process of at least one call (src/profile/profileInstance.ts), then one memory run
 * of one call; each process prepares its inputs as a timing process does (native/jobs/prof.c): sign
 * and verify make a key pair first.
 */
function profileSeconds(c, inst, inputs = true) {
  const seconds = Object.fromEntries(Object.entries(inst.ops).map(([op, cycles]) => [op, cycles / hz]));
  const ops = c.type === 'kex' ? [['exchange', Object.values(inst.ops).reduce((a, b) => a + b, 0) / hz]] : Object.entries(seconds);
  return ops.reduce(
    (a, [op, t]) => {
      const calls = Math.max(1, Math.round(PROFILE.target_s / PROFILE.rounds / t));
      const setup = (n) => (c.type === 'kex' || !inputs ? 0 : inputSeconds(c.type, op, seconds, n));
      return a + PROFILE.rounds * (calls * t + setup(calls) + P) + t + setup(1) + P;
    },
    inputs ? sharedKeySeconds(c, inst) : 0,
  );
}

const candidates = model({ seed: o.seed });
const instances = candidates.flatMap((c) => c.instances.map((inst) => ({ c, inst, extreme: c.class === 'extreme' })));

/** Seconds of timing each operation of an instance under `plan` (a KEX: its steps and the exchange, one unit). */
function operationSeconds(plan, { c, inst }, inputs = true) {
  const exchange = Object.values(inst.ops).reduce((a, b) => a + b, 0);
  const seconds = Object.fromEntries(Object.entries(inst.ops).map(([op, cycles]) => [op, cycles / hz]));
  // A KEX step is timed inside whole exchanges: each of its calls costs an exchange.
  if (c.type === 'kex') {
    const none = () => 0;
    return [Object.keys(inst.ops).reduce((a) => a + plan(exchange / hz, none), 0) + plan(exchange / hz, none)];
  }
  // With --shared-keys, sign's and verify's key pair is made once, before their first process.
  const shared = (op) => (inputs && (op === 'sign' || op === 'verify') ? sharedKeySeconds(c, inst) / 2 : 0);
  return Object.entries(inst.ops).map(([op, cycles]) => plan(cycles / hz, inputs ? setupOf(c.type, op, seconds) : () => 0) + shared(op));
}

/** How long an instance's timing holds it up on `T` timing cores: its operations one after another, or dealt round-robin over them. */
function timingSpan(ops, T) {
  if (!o['side-by-side'] || T < 2) return sum(ops);
  const cores = Array.from({ length: Math.min(T, ops.length) }, () => 0);
  ops.forEach((x, i) => {
    cores[i % cores.length] += x;
  });
  return Math.max(...cores);
}

/** Everything one instance costs on a split of T timing and W pool cores, and its chain's parts. */
function instanceCosts(x, plan, T, W, withCt, i) {
  const ops = operationSeconds(plan, x);
  const kat = katSeconds(x.c, x.inst, W);
  const profile = profileSeconds(x.c, x.inst);
  const ct = withCt ? ctWork[i] : 0;
  const timing = timingSpan(ops, T);
  // What its timing and profile processes spend making their inputs: key pairs, verify's signatures.
  const inputs = timing - timingSpan(operationSeconds(plan, x, false), T) + profile - profileSeconds(x.c, x.inst, false);
  return {
    timing: sum(ops),
    pool: buildSeconds() + kat.work + profile + ct,
    parts: { build: buildSeconds(), KAT: kat.span, timing, profile, ct },
    inputs,
  };
}

/**
 * The night's wall on T timing and W pool cores: at least the timing work over T, the pool's work over
 * W, and the longest instance's chain (build, KAT, timing, profile and ct, one after the other).
 */
function night(xs, plan, withCt) {
  let best;
  for (let T = 1; T < o.cores; T++) {
    const W = o.cores - T;
    const costs = xs.map((x) => instanceCosts(x, plan, T, W, withCt, x.i));
    const chains = costs.map((k, j) => ({
      key: `${xs[j].c.id}/${xs[j].inst.label}`,
      parts: k.parts,
      inputs: k.inputs,
      s: sum(Object.values(k.parts)),
    }));
    const longest = chains.reduce((a, b) => (b.s > a.s ? b : a));
    const bounds = [
      { name: `timing ${h(sum(costs.map((k) => k.timing)))} over ${T} core${T > 1 ? 's' : ''}`, s: sum(costs.map((k) => k.timing)) / T },
      { name: `the pool's ${h(sum(costs.map((k) => k.pool)))} over ${W} cores`, s: sum(costs.map((k) => k.pool)) / W },
      { name: `the chain of ${longest.key}`, s: longest.s },
    ];
    const bound = bounds.reduce((a, b) => (b.s > a.s ? b : a));
    if (!best || bound.s < best.w) best = { w: bound.s, T, W, bound, longest };
  }
  return best;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const h = (s) => `${(s / 3600).toFixed(1)} h`;
const min = (s) => `${(s / 60).toFixed(0)} min`;
const ctParts = instances.map(({ c, inst }) => ctSeconds(c, inst));
const ctWork = ctParts.map((p) => p.runs + p.compiles);
instances.forEach((x, i) => {
  x.i = i;
});
console.log(
  `Round-1 model (seed ${o.seed}): ${candidates.length} candidates, ${instances.length} instances; ${o.cores} cores at ${o.ghz} GHz; ${o['process-s']} s per timing process; KAT in ${o['kat-pieces'] || "the pool's cores as"} pieces; calls of ${o['call-plan-s']} s or more planned in calls (at least ${o['call-min']}); side by side ${o['side-by-side'] ? 'on' : 'off'}`,
);
for (const withCt of [false, true]) {
  if (withCt)
    console.log(
      `with ct: ct at ${o['ct-factor']}× under memcheck: ${h(sum(ctWork))}, its runs ${h(sum(ctParts.map((p) => p.runs)))} and its ${o['ct-builds'] + 1} compiles ${h(sum(ctParts.map((p) => p.compiles)))}, on the pool's cores`,
    );
  else console.log('without ct:');
  for (const [name, plan] of [
    ['fixed 5 × 1 s', fixedSeconds],
    ['adaptive ±1 %', adaptiveSeconds],
  ]) {
    const all = night(instances, plan, withCt);
    const parts = Object.entries(all.longest.parts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${min(v)}`)
      .join(', ');
    console.log(
      `  ${name.padEnd(14)} best split ${all.T} timing + ${all.W} pool cores: wall ≈ ${h(all.w)}, bound by ${all.bound.name}; longest instance ${all.longest.key} ${h(all.longest.s)} (${parts}; of it, its timing and profile processes making their own inputs, a key pair each: ${h(all.longest.inputs)})`,
    );
    const trimmed = night(
      instances.filter((x) => !x.extreme),
      plan,
      withCt,
    );
    console.log(
      `  ${''.padEnd(14)} without the 2 extreme candidates: wall ≈ ${h(trimmed.w)} (${trimmed.T} timing + ${trimmed.W} pool cores), bound by ${trimmed.bound.name}`,
    );
  }
}
