// The figures of a synthetic campaign run (bench/round1.mjs), from the evidence folder, the run's
// stderr lines (each with the second it arrived) and the wall clock. One function per figure group,
// each taking the same loaded run, so that a new figure is a new function in FIGURES.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const readJson = (f) => JSON.parse(readFileSync(f, 'utf8'));

function recordFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? recordFiles(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
  );
}

/** Everything the figures read, loaded once: `systemDir` is DATA_DIR/<system>. */
export function loadRun({ systemDir, lines, wallS, model }) {
  const campaignFile = join(systemDir, 'campaign.json');
  const buildFile = join(systemDir, 'build.json');
  return {
    wallS,
    lines,
    model,
    campaign: existsSync(campaignFile) ? readJson(campaignFile) : {},
    build: existsSync(buildFile) ? readJson(buildFile).instances : {},
    records: recordFiles(join(systemDir, 'records')).map(readJson),
  };
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const holdSeconds = (h) => (Date.parse(h.released_utc) - Date.parse(h.acquired_utc)) / 1000;

/**
 * Wall time against time inside timed operations. `trials_s` sums trials[].seconds over every
 * record: the counted calls. A key-exchange step counts one step of each exchange while its
 * process runs whole exchanges, so `timed_s` takes trials[].loop_s where a trial has it (the whole
 * timed loop) and trials[].seconds otherwise: the time the timing core spent in timed loops.
 */
function timing(run) {
  const trials = run.records.flatMap((r) => r.trials ?? []);
  const timedS = sum(trials.map((t) => t.loop_s ?? t.seconds ?? 0));
  const byStatus = {};
  for (const r of run.records) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  return {
    wall_s: run.wallS,
    records: run.records.length,
    records_by_status: byStatus,
    trials: trials.length,
    trials_s: sum(trials.map((t) => t.seconds ?? 0)),
    timed_s: timedS,
    wall_over_timed: timedS > 0 ? run.wallS / timedS : null,
  };
}

/**
 * The host-wide core locks the run held (campaign.json cpu_holds): timing (`measure`) on the timing
 * core, profile rounds and ct runs on a core of their own. `wall_over_measure_held` is the wall time
 * against the time the timing core was held for timing (calibration, trials, re-runs and the
 * bookkeeping between them): bench/example-wall.mjs's "time inside timed operations".
 */
function holds(run) {
  const all = run.campaign.cpu_holds ?? [];
  const measure = all.filter((h) => / measure$/.test(h.what));
  const exclusive = all.filter((h) => / (profile|ct)(,ct)?$/.test(h.what));
  const measureHeld = sum(measure.map(holdSeconds));
  return {
    measure_holds: measure.length,
    measure_held_s: measureHeld,
    wall_over_measure_held: measureHeld > 0 ? run.wallS / measureHeld : null,
    exclusive_held_s: sum(exclusive.map(holdSeconds)),
    probe_held_s: sum(all.filter((h) => h.what === 'counter probe').map(holdSeconds)),
    waited_s: sum(all.map((h) => h.waited_s ?? 0)),
  };
}

/** The pool beside the timing (campaign.json schedule): how long it worked. */
function schedule(run) {
  const s = run.campaign.schedule;
  if (!s) return {};
  const spans = s.pool_spans ?? [];
  const seconds = (p) => (Date.parse(p.ended_utc) - Date.parse(p.started_utc)) / 1000;
  return { workers: s.workers, pool_cpus: (s.pool_cpus ?? []).join(',') || 'none', serial: s.serial, pool_busy_s: sum(spans.map(seconds)) };
}

/** The run's own plan against what it took (campaign.json forecast, campaign/tracker.ts). */
function forecast(run) {
  const f = run.campaign.forecast;
  if (!f) return {};
  return {
    predicted_wall_s: f.predicted_wall_s,
    actual_wall_s: f.actual_wall_s,
    actual_over_predicted: f.predicted_wall_s > 0 ? f.actual_wall_s / f.predicted_wall_s : null,
    steps: Object.fromEntries(f.steps.map((s) => [s.step, { predicted_s: s.predicted, actual_s: s.actual }])),
  };
}

/** Seconds of an ETA as the progress lines print it: "37s", "4m05s", "1h02m". */
export function etaSeconds(text) {
  const m = /ETA (?:(\d+)h(\d+)m|(\d+)m(\d+)s|(\d+)s)\b/.exec(text);
  if (!m) return null;
  if (m[1] !== undefined) return Number(m[1]) * 3600 + Number(m[2]) * 60;
  if (m[3] !== undefined) return Number(m[3]) * 60 + Number(m[4]);
  return Number(m[5]);
}

/**
 * The ETA the progress printed once 10 % of the run's wall time had passed (the first step line at or
 * after it), turned into a predicted end, against the actual end: the "within 20 %". The same
 * at 10 % of the steps, and at 25 % and 50 % of the time.
 */
function eta(run) {
  const steps = run.lines.filter((l) => /\[\d+\/\d+\]/.test(l.text) && etaSeconds(l.text) !== null);
  if (steps.length === 0) return {};
  const at = (l) => {
    const predictedEnd = l.t + etaSeconds(l.text);
    return { at_s: l.t, eta_s: etaSeconds(l.text), predicted_total_s: predictedEnd, error: (predictedEnd - run.wallS) / run.wallS };
  };
  const byTime = (f) => steps.find((l) => l.t >= f * run.wallS);
  const out = {};
  for (const f of [0.1, 0.25, 0.5]) {
    const l = byTime(f);
    if (l) out[`at_${f * 100}pct_time`] = at(l);
  }
  out.at_10pct_steps = at(steps[Math.max(0, Math.ceil(steps.length * 0.1) - 1)]);
  return out;
}

/** Cycles the toy spins for an operation: the generator's scaled_ops, else (older models) the scaled cost. */
const spun = (model, inst, op, cycles) => inst.scaled_ops?.[op] ?? cycles / model.scale;

/**
 * Adaptive plans over the fast operations (modelled below 10^6 cycles after scaling): the time they
 * spent timing, Σ of their trials' processes, against the fixed reference plan's, 5 trials of 1 s
 * (trial_target_s at the guide's default) each; and how many met their target.
 */
function adaptive(run) {
  if (!run.model) return {};
  const fast = new Set();
  for (const c of run.model.candidates)
    for (const inst of c.instances)
      for (const [op, cycles] of Object.entries(inst.ops))
        if (spun(run.model, inst, op, cycles) < 1e6) fast.add(`${c.id}/${inst.label}/${op}`);
  const recs = run.records.filter((r) => fast.has(`${r.candidate}/${r.label}/${r.operation}`) && r.plan?.adaptive);
  if (recs.length === 0) return {};
  const processSeconds = (r) => sum(r.processes.map((p) => (p.wall_s ?? 0) + sum((p.retried ?? []).map((x) => x.wall_s ?? 0))));
  const timed = sum(recs.map(processSeconds));
  const fixed = recs.length * 5 * 1;
  return {
    fast_operations: recs.length,
    met: recs.filter((r) => r.precision?.met).length,
    median_trials: median(recs.map((r) => r.trials.length)),
    max_trials: Math.max(...recs.map((r) => r.trials.length)),
    median_ci95_rel: median(recs.map((r) => r.precision?.ci95_rel ?? Number.NaN)),
    timing_s: timed,
    fixed_plan_s: fixed,
    adaptive_over_fixed: timed / fixed,
  };
}

/**
 * Seconds per phase from the progress lines: each line ends a step, and the time since the line
 * before is charged to that step's phase. Right for a run that does one step at a time; a run that
 * overlaps phases needs its own evidence of when each step ran.
 */
export function phaseOfLine(text) {
  const body = text.replace(/^\S*\s*\[\d+\/\d+\]\s*/, '');
  if (/ (ct|ct:) /.test(body)) return 'ct';
  if (/hash share|profile: |not profiled/.test(body)) return 'profile';
  if (/^\S+ [A-Za-z0-9_]+: (complete|partial|failed|unchanged|not measured)/.test(body)) return 'measure';
  if (/^\S+ (PASS|NOKAT|MISMATCH|CRYPTOFAIL|OVERFLOW|LOADFAIL|TIMEOUT|CRASH|BUILDFAIL|INVALID)\b/.test(body)) return 'build+kat';
  if (/ waits for CPU | has CPU /.test(body)) return 'wait';
  return 'other';
}

function phases(run) {
  const steps = run.lines.filter((l) => /\[\d+\/\d+\]/.test(l.text));
  const out = {};
  let last = 0;
  for (const l of steps) {
    const phase = phaseOfLine(l.text);
    out[phase] ??= { steps: 0, seconds: 0 };
    out[phase].steps++;
    out[phase].seconds += l.t - last;
    last = l.t;
  }
  return { per_phase: out, after_last_step_s: run.wallS - last };
}

/** KAT statuses (build.json): a toy that fails the driver's checks shows up here as CRYPTOFAIL. */
function kat(run) {
  const out = {};
  for (const e of Object.values(run.build)) out[e.kat ?? 'not checked'] = (out[e.kat ?? 'not checked'] ?? 0) + 1;
  return { instances: Object.keys(run.build).length, kat: out };
}

/**
 * Counter cycles per modelled cycle (synthetic.json at its scale), per category: how well the spin
 * is calibrated on this machine. Operations the scale shrank below 10^5 cycles are left out: there
 * the toy's own work and the timing loop weigh.
 */
function calibration(run) {
  if (!run.model) return {};
  const modelled = new Map();
  for (const c of run.model.candidates)
    for (const inst of c.instances)
      for (const [op, cycles] of Object.entries(inst.ops))
        modelled.set(`${c.id}/${inst.label}/${op}`, { type: c.type, cycles: spun(run.model, inst, op, cycles) });
  const ratios = {};
  for (const r of run.records) {
    const m = modelled.get(`${r.candidate}/${r.label}/${r.operation}`);
    if (!m || !r.mean_cycles || m.cycles < 1e5) continue;
    ratios[m.type] ??= [];
    ratios[m.type].push(r.mean_cycles / m.cycles);
  }
  return Object.fromEntries(
    Object.entries(ratios).map(([type, xs]) => [
      type,
      { operations: xs.length, median_measured_over_modelled: median(xs), min: Math.min(...xs), max: Math.max(...xs) },
    ]),
  );
}

/** The figure groups, in report order: add one here to extend the report. */
export const FIGURES = { timing, holds, schedule, forecast, eta, adaptive, phases, kat, calibration };

export function analyse(input) {
  const run = loadRun(input);
  return Object.fromEntries(Object.entries(FIGURES).map(([name, f]) => [name, f(run)]));
}

const fmt = (x) =>
  x === null || x === undefined ? '–' : typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(x < 10 ? 3 : 1)) : String(x);

/** The figures as indented text lines, one value per line. */
export function renderReport(figures) {
  const lines = [];
  const walk = (obj, indent) => {
    for (const [k, v] of Object.entries(obj)) {
      if (v !== null && typeof v === 'object') {
        lines.push(`${indent}${k}:`);
        walk(v, `${indent}  `);
      } else lines.push(`${indent}${k}: ${fmt(v)}`);
    }
  };
  walk(figures, '');
  return lines.join('\n');
}
