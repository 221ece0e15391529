// Calibration of the trend pages' change-point search (src/compare/changePoints.ts) on simulated
// 30-night series: how often an A/A series (no change) gets a change point, and how often a step
// of +5 % or +10 % at night 20 is found there (within one night).
//   node bench/change-points.mjs [series]        (default 2000 series per row)
// Each night's figure is 1e5 cycles × (1 + noise) × (1 + step from night 20 on). Noise models:
// normal with sd 1 % and 2 %; uniform within ±2 %; Student's t with 3 degrees of freedom scaled to
// sd 2 % (heavy tails); and normal sd 1 % with one night in 20 disturbed by +10 % (a busy host).
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-change-points-'));
const outfile = join(work, 'changePoints.mjs');
await build({
  entryPoints: [join(root, 'src/compare/changePoints.ts')],
  bundle: true,
  format: 'esm',
  platform: 'node',
  outfile,
  logLevel: 'warning',
});
const { changePoints } = await import(pathToFileURL(outfile).href);
rmSync(work, { recursive: true, force: true });

const series = Number(process.argv[2] ?? 2000);
const NIGHTS = 30;
const STEP_AT = 19; // night 20, counted from 1

let state = 12345;
const rand = () => {
  state = (state * 1103515245 + 12345) % 2 ** 31;
  return (state + 0.5) / 2 ** 31;
};
const normal = () => Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
const studentT3 = () => normal() / Math.sqrt((normal() ** 2 + normal() ** 2 + normal() ** 2) / 3);
const NOISE = {
  'normal, sd 1 %': () => 0.01 * normal(),
  'normal, sd 2 %': () => 0.02 * normal(),
  'uniform, ±2 %': () => 0.02 * (2 * rand() - 1),
  't₃, sd 2 %': () => (0.02 * studentT3()) / Math.sqrt(3),
  'normal sd 1 % + 1 night in 20 at +10 %': () => 0.01 * normal() + (rand() < 0.05 ? 0.1 : 0),
};

const rows = [];
for (const [name, noise] of Object.entries(NOISE)) {
  const row = { noise: name };
  for (const step of [0, 0.05, 0.1]) {
    let any = 0;
    let atStep = 0;
    let extra = 0;
    for (let s = 0; s < series; s++) {
      const values = Array.from({ length: NIGHTS }, (_, i) => 1e5 * (1 + noise()) * (1 + (i >= STEP_AT ? step : 0)));
      const found = changePoints(values);
      if (found.length > 0) any++;
      if (found.some((c) => Math.abs(c.index - STEP_AT) <= 1)) atStep++;
      if (found.some((c) => Math.abs(c.index - STEP_AT) > 1)) extra++;
    }
    const pct = (k) => `${((100 * k) / series).toFixed(1)} %`;
    if (step === 0) row['A/A: series with a change point'] = pct(any);
    else {
      row[`+${step * 100} % step found at night 20 (±1)`] = pct(atStep);
      row[`+${step * 100} %: another change point too`] = pct(extra);
    }
  }
  rows.push(row);
  console.log(JSON.stringify(row));
}
console.table(rows);
