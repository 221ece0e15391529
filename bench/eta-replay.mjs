// Replays a recorded run through the ETA model (docs/benchmarks.md (m)): how far the ETA would have
// been off at 10, 25, 50 and 75 % of the run, and the wall time the layout predicts from the run's
// own step seconds (how well it follows the scheduler), without running anything again.
//   node bench/eta-replay.mjs WORK [K]      WORK of `node bench/round1.mjs --runs N --work WORK`; K ≥ 2 (default 2)
// Run K's timeline comes from WORK/run-K-campaign.json (the pool's stage spans, the cores' holds) and
// WORK/run-K-build.json (each step's seconds); the estimates are run K−1's step seconds
// (WORK/run-(K−1)-build.json) as a forced rerun is planned: the KAT's part of `prepare`, `profile-build`
// without its relink. The tracker and layout are src/campaign/tracker.ts and forecast.ts of this
// checkout, bundled on the fly, so a changed model can be replayed on the same runs.
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [work, kArg] = process.argv.slice(2);
const k = Number(kArg ?? 2);
if (!work || !(k >= 2)) {
  console.error('usage: node bench/eta-replay.mjs WORK [K]   (K ≥ 2: the run replayed, planned from run K−1)');
  process.exit(2);
}
const json = (name) => JSON.parse(readFileSync(join(work, name), 'utf8'));
const previous = json(`run-${k - 1}-build.json`).instances;
const current = json(`run-${k}-build.json`).instances;
const campaign = json(`run-${k}-campaign.json`);

const out = mkdtempSync(join(tmpdir(), 'ngcc-eta-replay-'));
const load = async (name) => {
  const outfile = join(out, `${name}.mjs`);
  await build({
    entryPoints: [join(root, 'src', 'campaign', `${name}.ts`)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile,
    logLevel: 'error',
  });
  return import(pathToFileURL(outfile).href);
};
const { RunTracker } = await load('tracker');
const { layout, longestFirst } = await load('forecast');

const CATEGORY = { kem: 'kem', sign: 'sig', kex: 'kex', hash: 'hash' };
const kindOf = (key) => CATEGORY[key.split('-')[0]] ?? 'kem';
const estimate = (seconds) => (seconds === undefined ? { source: 'none' } : { seconds, source: 'previous' });
const keys = Object.keys(current).filter((key) => current[key].step_seconds);
const forecasts = keys.map((key) => {
  const p = previous[key]?.step_seconds ?? {};
  const survey = p['profile-build'] === undefined ? undefined : p['profile-build'] - (p['profile-build-relink'] ?? 0);
  return {
    key,
    kind: kindOf(key),
    stages: [
      {
        lane: 'pool',
        kind: 'pool',
        steps: [
          { name: 'prepare', estimate: estimate(p['prepare-kat'] ?? p.prepare) },
          { name: 'stale', estimate: { seconds: 0, source: 'plan' } },
          { name: 'profile-build', estimate: estimate(survey) },
        ],
      },
      { lane: 'timing', kind: 'timing', steps: [{ name: 'measure', estimate: estimate(p.measure) }] },
      { lane: 'pool', kind: 'exclusive', steps: [{ name: 'profile', estimate: estimate(p.profile) }] },
    ],
  };
});

// The run's events: each stage's start, each step's end (a pool stage's steps end one after another
// within its span, at their recorded seconds).
const events = [];
const at = (utc) => Date.parse(utc);
for (const span of campaign.schedule.pool_spans) {
  const key = span.what.split(' ')[0];
  if (!current[key]) continue;
  const seconds = current[key].step_seconds;
  const [from, to] = [at(span.started_utc), at(span.ended_utc)];
  events.push({ at: from, apply: (t) => t.stageStarted(key) });
  let end = from;
  for (const step of ['prepare', 'stale', 'profile-build']) {
    const s = step === 'stale' ? 0 : (seconds[step] ?? 0);
    end = step === 'profile-build' ? to : Math.min(to, end + s * 1000);
    const when = end;
    events.push({ at: when, apply: (t) => t.stepDone(key, step, s, false) });
  }
}
for (const hold of campaign.cpu_holds) {
  const [key, step] = hold.what.split(' ');
  if (!current[key]) continue;
  const [from, to] = [at(hold.acquired_utc), at(hold.released_utc)];
  events.push({ at: from, apply: (t) => t.stageStarted(key) });
  events.push({ at: to, apply: (t) => t.stepDone(key, step, (to - from) / 1000, false) });
}
events.sort((a, b) => a.at - b.at);
const [start, end] = [events[0].at, events.at(-1).at];
const wall = (end - start) / 1000;

// The tracker reads the clock: the replay sets it.
let now = start;
Date.now = () => now;
const tracker = new RunTracker(forecasts, campaign.schedule.workers ?? 1, 1);
const marks = [0.1, 0.25, 0.5, 0.75].map((f) => ({ f, at: start + f * (end - start) }));
const lines = [`run ${k} of ${work}: ${keys.length} instances, ${wall.toFixed(1)} s from its first stage to its last`];
lines.push(
  `  planned from run ${k - 1}'s figures: ${tracker.predictedWall.toFixed(1)} s (actual ${(wall / tracker.predictedWall).toFixed(2)}×)`,
);
for (const e of events) {
  while (marks.length > 0 && marks[0].at <= e.at) {
    const m = marks.shift();
    now = m.at;
    const predicted = (now - start) / 1000 + tracker.eta();
    lines.push(
      `  ETA at ${(m.f * 100).toFixed(0)} % of the run: ${predicted.toFixed(1)} s, ${((predicted / wall - 1) * 100).toFixed(1)} %`,
    );
  }
  now = e.at;
  e.apply(tracker);
}
// The layout of the run's own step seconds, in the order served: what the scheduler should have done.
const units = keys.map((key) => {
  const s = current[key].step_seconds;
  return {
    stages: [
      { lane: 'pool', kind: 'pool', seconds: (s.prepare ?? 0) + (s.stale ?? 0) + (s['profile-build'] ?? 0) },
      { lane: 'timing', kind: 'timing', seconds: s.measure ?? 0 },
      { lane: 'pool', kind: 'exclusive', seconds: s.profile ?? 0 },
    ],
  };
});
const cost = (u) => u.stages.reduce((a, s) => a + s.seconds, 0);
const laid = layout(longestFirst(units, cost), campaign.schedule.workers ?? 1, 1).total;
lines.push(`  the layout of its own step seconds: ${laid.toFixed(1)} s (actual ${(wall / laid).toFixed(3)}×)`);
console.log(lines.join('\n'));
rmSync(out, { recursive: true, force: true });
