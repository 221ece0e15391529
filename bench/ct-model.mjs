// The constant-time phase of one instance, on paper: the steps src/campaign/ctPhase.ts takes, priced with
// the instance's native call seconds. Used by bench/project-round1.mjs for the Round-1 projection and
// checked against a real run by bench/ct-model-check.mjs (docs/benchmarks.md (ad)).
//
// Per build (the measured one, then each of ct.variants × ct.compilers besides it):
//   - one call of the cheapest operation under memcheck measures the build's slowdown (killed at the
//     budget: then every operation of that build is skipped);
//   - each operation whose calls are predicted within ct.op_budget_s runs under memcheck, and again
//     under the division check when the build's divisions are reachable;
//   - the measured build first searches the operation's rare paths natively in its -O0 coverage
//     build (ct.path_calls calls, then a bisection down to the fewest that take them all) and checks
//     that many calls, as the budget allows; the other builds check as many, as their own budgets allow.

/** ngcc-perf.yml's ct defaults and the harness's constants (src/config/defaults.ts, src/campaign/ctPhase.ts). */
export const CT = {
  calls: 3,
  path_calls: 64,
  startup_s: 2,
  op_budget_s: 60,
  max_calls: 1000,
  // What the path search assumes of the coverage build to fit its calls to the budget.
  coverage_slowdown_assumed: 10,
  slowdown_min: 10,
  // The slowdown the harness assumes where it has none measured (ct.valgrind_factor).
  valgrind_factor: 50,
};

/** Verify's pool of signed messages per process (native/core/calls.h VERIFY_POOL). */
const VERIFY_POOL = 16;

/** What a process of `calls` calls of `op` makes first: a key pair, dec's ciphertexts, verify's pool (src/measure/cost.ts). */
export function setupSeconds(type, op, s, calls) {
  const k = s.keygen ?? 0;
  if (type === 'kem' && op === 'enc') return k;
  if (type === 'kem' && op === 'dec') return k + calls * (s.enc ?? 0);
  if (type === 'sig' && op === 'sign') return k;
  if (type === 'sig' && op === 'verify') return k + Math.min(calls, VERIFY_POOL) * (s.sign ?? 0);
  return 0;
}

/** Native seconds of a process of `calls` calls and their inputs (src/measure/cost.ts processSeconds). */
export const processSeconds = (type, op, s, calls) => setupSeconds(type, op, s, calls) + calls * s[op];

/** The call counts the path search runs, in order (src/ct/pathSearch.ts), when `needed` calls take every path. */
export function searchRuns(from, upTo, needed) {
  if (upTo <= from) return [upTo];
  const runs = [upTo, from];
  if (needed <= from) return runs;
  let [low, high] = [from, upTo];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    runs.push(mid);
    if (mid >= needed) high = mid;
    else low = mid;
  }
  return runs;
}

/**
 * Seconds of one instance's ct step (the core it holds) and the compiles of its ct-build step.
 *   type: kem | sig | kex | hash; seconds: native seconds per call of each operation;
 *   builds: [{ factor, divisions(op) → 0..1 }], the measured build first: its memcheck slowdown
 *     and whether (or how likely) an operation's division check runs;
 *   m: what a run costs besides its calls (measured): { startup_s, coverage_run_s,
 *     coverage_slowdown, division_factor, needed(op) → calls that take every path }.
 */
export function ctInstanceSeconds(type, seconds, builds, m) {
  if (type === 'hash') return { core: 0, compiles: 0, runs: 0 };
  const ops = Object.keys(seconds).filter((op) => seconds[op] > 0);
  const proc = (op, n) => processSeconds(type, op, seconds, n);
  const cap = CT.op_budget_s + CT.startup_s;
  let core = 0;
  let runs = 0;
  // The parts two measured constants multiply, for bench/ct-model-check.mjs's fit.
  let coverageRuns = 0;
  let coverageNative = 0;
  let divided = 0;
  const callsOf = {};
  builds.forEach((b, i) => {
    const measured = i === 0;
    const cheapest = ops.map((op) => ({ op, s: proc(op, 1) })).sort((x, y) => x.s - y.s)[0];
    if (!cheapest || CT.startup_s + CT.slowdown_min * cheapest.s > CT.op_budget_s) return;
    const calibration = m.startup_s + b.factor * cheapest.s;
    core += Math.min(calibration, cap);
    runs++;
    if (calibration > cap) return;
    for (const op of ops) {
      const perCall = proc(op, CT.calls) / CT.calls;
      if (perCall * CT.calls * b.factor + CT.startup_s > CT.op_budget_s) continue;
      // Another build makes the measured build's calls, as many as its own slowdown affords.
      const affordable = Math.floor((CT.op_budget_s - CT.startup_s) / (perCall * b.factor));
      let calls = Math.max(CT.calls, Math.min(callsOf[op] ?? CT.calls, affordable));
      if (measured) {
        const fitting = Math.floor(CT.op_budget_s / (perCall * CT.coverage_slowdown_assumed));
        const upTo = Math.min(CT.path_calls, CT.max_calls, Math.max(CT.calls, fitting));
        const needed = Math.min(upTo, Math.max(CT.calls, m.needed(op)));
        calls = Math.max(CT.calls, Math.min(needed, affordable));
        const searched = upTo > CT.calls ? searchRuns(CT.calls, upTo, needed) : [];
        // Coverage of the checked calls: the search's run of as many, else one of its own.
        const counted = searched.includes(calls) ? searched : [...searched, calls];
        for (const n of counted) {
          core += m.coverage_run_s + m.coverage_slowdown * proc(op, n);
          coverageNative += proc(op, n);
        }
        runs += counted.length;
        coverageRuns += counted.length;
        callsOf[op] = calls;
      }
      // Stopped at twice the budget when memcheck runs it slower than predicted.
      const run = Math.min(m.startup_s + b.factor * proc(op, calls), 2 * CT.op_budget_s + CT.startup_s);
      core += run * (1 + m.division_factor * b.divisions(op));
      divided += run * b.divisions(op);
      runs += 1 + b.divisions(op);
    }
  });
  // The ct build and its coverage build, then each other build.
  return { core, compiles: builds.length + 1, runs, coverageRuns, coverageNative, divided };
}
