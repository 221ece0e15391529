// Wall time of the example campaign against the time inside its timed operations (docs/benchmarks.md (l)).
//   node bench/example-wall.mjs [RUNS] [serial|parallel|both]
// Each run is `ngcc-perf run examples/campaign --force` into one evidence folder (so from the second
// run on the plan has the previous run's durations). Reported per run:
// - wall: the command's own wall clock, start to exit;
// - timing: the time inside timed operations, as the time the timing core was held for timing: Σ of
//   campaign.json's `measure` holds (calibration, trials, re-runs of disturbed trials, and the
//   parent's bookkeeping between them);
// - processes: Σ processes[].wall_s of the trials and their re-runs alone (a stricter reading);
// - trials: Σ trials[].seconds, the timed loops alone (for scale);
// - wall / timing, wall / processes, and the plan's predicted wall time (campaign.json `forecast`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 3);
const modes = { serial: ['serial'], parallel: ['parallel'], both: ['serial', 'parallel'] }[process.argv[3] ?? 'both'];
if (!modes || !(runs >= 1)) {
  console.error('usage: node bench/example-wall.mjs [RUNS] [serial|parallel|both]');
  process.exit(2);
}

/** Every record of a system folder, parsed. */
function records(systemDir) {
  const dir = join(systemDir, 'records');
  return readdirSync(dir).flatMap((id) => readdirSync(join(dir, id)).map((f) => JSON.parse(readFileSync(join(dir, id, f), 'utf8'))));
}

function measureRun(data, mode) {
  const args = [
    'run',
    join(root, 'examples', 'campaign'),
    '--system',
    'bench',
    '--out',
    data,
    '--force',
    ...(mode === 'serial' ? ['--serial'] : []),
  ];
  const t0 = process.hrtime.bigint();
  const r = spawnSync('node', [join(root, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) {
    console.error(r.stderr.slice(-3000));
    throw new Error(`run exited ${r.status}`);
  }
  const sys = join(data, 'bench');
  const recs = records(sys);
  const processes = recs.reduce(
    (a, rec) => a + rec.processes.reduce((b, p) => b + (p.wall_s ?? 0) + (p.retried ?? []).reduce((c, x) => c + (x.wall_s ?? 0), 0), 0),
    0,
  );
  const trials = recs.reduce((a, rec) => a + rec.trials.reduce((b, t) => b + t.seconds, 0), 0);
  const campaign = JSON.parse(readFileSync(join(sys, 'campaign.json'), 'utf8'));
  // A serial run holds the core once per instance for measure and profile: only the measure part is timing.
  const held = (h) => (Date.parse(h.released_utc) - Date.parse(h.acquired_utc)) / 1000;
  const timing = campaign.cpu_holds.filter((h) => / measure$/.test(h.what)).reduce((a, h) => a + held(h), 0);
  const retries = recs.reduce((a, rec) => a + (rec.disturbed_retries ?? 0), 0);
  const cycles = Object.fromEntries(recs.map((rec) => [`${rec.candidate}/${rec.label} ${rec.operation}`, rec.mean_cycles]));
  return {
    mode,
    retries,
    cycles,
    wall,
    timing,
    processes,
    trials,
    ratio: wall / timing,
    strict: wall / processes,
    predicted: campaign.forecast?.predicted_wall_s,
  };
}

const rows = [];
for (const mode of modes) {
  const data = mkdtempSync(join(tmpdir(), 'ngcc-bench-wall-'));
  try {
    for (let i = 0; i < runs; i++) {
      const row = measureRun(data, mode);
      rows.push(row);
      console.log(
        `${mode.padEnd(8)} run ${i + 1}: wall ${row.wall.toFixed(1)} s, timing ${row.timing.toFixed(1)} s (processes ${row.processes.toFixed(1)} s, trials ${row.trials.toFixed(1)} s), wall/timing ${row.ratio.toFixed(2)}× (wall/processes ${row.strict.toFixed(2)}×), predicted wall ${row.predicted?.toFixed(1) ?? '?'} s, ${row.retries} disturbed trials re-run`,
      );
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
for (const mode of modes) {
  const mine = rows.filter((r) => r.mode === mode);
  console.log(
    `${mode}: median wall ${median(mine.map((r) => r.wall)).toFixed(1)} s, median wall/timing ${median(mine.map((r) => r.ratio)).toFixed(2)}× (wall/processes ${median(mine.map((r) => r.strict)).toFixed(2)}×) over ${mine.length} run(s)`,
  );
}
if (modes.length === 2) {
  const [s, p] = modes.map((m) => median(rows.filter((r) => r.mode === m).map((r) => r.wall)));
  console.log(`speed-up of the parallel preparation: ${(s / p).toFixed(2)}× (serial ${s.toFixed(1)} s, parallel ${p.toFixed(1)} s)`);
  // Does building beside the timing move the numbers? Each operation's median mean cycles, parallel over serial.
  const perMode = (m) => {
    const mine = rows.filter((r) => r.mode === m);
    return Object.fromEntries(Object.keys(mine[0].cycles).map((k) => [k, median(mine.map((r) => r.cycles[k]))]));
  };
  const [cs, cp] = [perMode('serial'), perMode('parallel')];
  const ratios = Object.keys(cs).map((k) => cp[k] / cs[k]);
  console.log(
    `mean cycles, parallel over serial, per operation (${ratios.length}): median ${median(ratios).toFixed(3)}, range ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`,
  );
}
