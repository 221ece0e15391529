// Calibration of the trend pages' change-point search (src/compare/changePoints.ts) on simulated
// 30-night series: how often an A/A series (no change) gets a change point; how often a step of
// +5 % or +10 % at night 20 is found there (within one night); and how often a +10 % regression on
// nights 11–20, mended on night 21, is found at both ends.
//   node bench/change-points.mjs [series]        (default 1000 series per cell)
// Each night's figure is 1e5 cycles × (1 + noise) × (1 + step). Noise models: normal with sd 1 % and
// 2 %; uniform within ±2 %; Student's t with 3 degrees of freedom scaled to sd 2 % (heavy tails);
// and normal sd 1 % with one night in 20 disturbed by +10 % (a busy host).
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-change-points-'));
const outfile = join(work, 'changePoints.mjs');
await build({
  entryPoints: [process.env.CP_SRC ?? join(root, 'src/compare/changePoints.ts')],
  bundle: true,
  format: 'esm',
  platform: 'node',
  outfile,
  logLevel: 'warning',
});
const { changePoints } = await import(pathToFileURL(outfile).href);
rmSync(work, { recursive: true, force: true });

const series = Number(process.argv[2] ?? 1000);
const NIGHTS = 30;
const STEP_AT = 19; // night 20, counted from 1
const BUMP = [10, 20]; // nights 11–20 slower, mended on night 21

// mulberry32: 32-bit integer arithmetic throughout (Math.imul), a period of 2^32.
let state = 12345;
const rand = () => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 2 ** 32;
};
const normal = () => Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
const studentT3 = () => normal() / Math.sqrt((normal() ** 2 + normal() ** 2 + normal() ** 2) / 3);
const NOISE = {
  'normal, sd 1 %': () => 0.01 * normal(),
  'normal, sd 2 %': () => 0.02 * normal(),
  'uniform, ±2 %': () => 0.02 * (2 * rand() - 1),
  // (clipped at −50 %: a figure must stay positive, and t₃'s tail reaches that once in millions of draws)
  't₃, sd 2 %': () => Math.max(-0.5, (0.02 * studentT3()) / Math.sqrt(3)),
  'normal sd 1 % + 1 night in 20 at +10 %': () => 0.01 * normal() + (rand() < 0.05 ? 0.1 : 0),
};
const SHAPES = {
  'A/A': () => 0,
  '+5 % step': (i) => (i >= STEP_AT ? 0.05 : 0),
  '+10 % step': (i) => (i >= STEP_AT ? 0.1 : 0),
  '+10 % on nights 11–20': (i) => (i >= BUMP[0] && i < BUMP[1] ? 0.1 : 0),
};
const near = (found, at) => found.some((c) => Math.abs(c.index - at) <= 1);

const rows = [];
for (const [name, noise] of Object.entries(NOISE)) {
  const row = { noise: name };
  for (const [shape, step] of Object.entries(SHAPES)) {
    let hit = 0;
    let extra = 0;
    for (let s = 0; s < series; s++) {
      const values = Array.from({ length: NIGHTS }, (_, i) => 1e5 * (1 + noise()) * (1 + step(i)));
      const found = changePoints(values);
      const at = shape === 'A/A' ? [] : shape.startsWith('+10 % on') ? BUMP : [STEP_AT];
      if (shape === 'A/A' ? found.length > 0 : at.every((a) => near(found, a))) hit++;
      if (found.some((c) => !at.some((a) => Math.abs(c.index - a) <= 1))) extra++;
    }
    const pct = (k) => `${((100 * k) / series).toFixed(1)} %`;
    if (shape === 'A/A') row['A/A: series with a change point'] = pct(hit);
    else {
      row[`${shape}: found (±1 night)`] = pct(hit);
      row[`${shape}: another one too`] = pct(extra);
    }
  }
  rows.push(row);
  console.log(JSON.stringify(row));
}
console.table(rows);
