// Calibration of the night rule (src/compare/nights.ts) on simulated systems of 8 rows over 30
// nights: how many claims A/A histories get per operation-night (found steps, and last-night calls of
// every night as it came); how often a step of +5 % or +10 % at night 20 in row 0 is found there; how
// often a +10 % regression on nights 11–20, mended on night 21, is found at both ends.
//   node bench/change-points.mjs [systems]        (default 300 systems per cell)
// Each row's night figure is its level × the host's move that night (shared by every row, sd 10 %) ×
// the row's own noise; its 5 trials scatter around it by half that noise (at least 1 %). A row in
// twenty is rebuilt on a night (REBUILD=0.05; a change elsewhere in its library), its figure untouched.
// Row noise models: normal sd 1 % and 2 %; uniform ±2 %; Student's t with 3 degrees of freedom scaled
// to sd 2 % (heavy tails); normal sd 1 % with one night in 20 disturbed by +10 % for that row alone.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-change-points-'));
const outfile = join(work, 'nights.mjs');
await build({
  entryPoints: [join(root, 'src/compare/nights.ts')],
  bundle: true,
  format: 'esm',
  platform: 'node',
  outfile,
  logLevel: 'warning',
});
const { judgeNights } = await import(pathToFileURL(outfile).href);
rmSync(work, { recursive: true, force: true });

const systems = Number(process.argv[2] ?? 300);
const ROWS = 8;
/** The chance that a row is rebuilt on a night (a change elsewhere in its library), its figure untouched. */
const REBUILD = Number(process.env.REBUILD ?? 0.05);
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
/** Each model: a row's log noise on a night, and its sd (the trials scatter by half of it). */
const NOISE = {
  'normal, sd 1 %': [() => 0.01 * normal(), 0.01],
  'normal, sd 2 %': [() => 0.02 * normal(), 0.02],
  'uniform, ±2 %': [() => Math.log(1 + 0.02 * (2 * rand() - 1)), 0.0115],
  // (clipped at −50 %: a figure must stay positive, and t₃'s tail reaches that once in millions of draws)
  't₃, sd 2 %': [() => Math.log(Math.max(0.5, 1 + (0.02 * studentT3()) / Math.sqrt(3))), 0.02],
  'normal sd 1 % + 1 night in 20 at +10 %': [() => 0.01 * normal() + (rand() < 0.05 ? Math.log(1.1) : 0), 0.01],
};
const SHAPES = {
  'A/A': () => 1,
  '+5 % step': (i) => (i >= STEP_AT ? 1.05 : 1),
  '+10 % step': (i) => (i >= STEP_AT ? 1.1 : 1),
  '+10 % on nights 11–20': (i) => (i >= BUMP[0] && i < BUMP[1] ? 1.1 : 1),
};

function system(noise, sd, shape) {
  const host = Array.from({ length: NIGHTS }, () => Math.exp(0.1 * normal()));
  return Array.from({ length: ROWS }, (_, row) => {
    const level = 1e4 * (1 + 99 * rand());
    let build = 0;
    return {
      key: `row-${row}`,
      nights: host.map((h, t) => {
        if (t > 0 && rand() < REBUILD) build++;
        const figure = level * h * Math.exp(noise()) * (row === 0 ? shape(t) : 1);
        const perCall = Array.from({ length: 5 }, () => figure * Math.exp(Math.max(0.01, sd / 2) * normal()));
        return { median: [...perCall].sort((a, b) => a - b)[2], perCall, build: String(build) };
      }),
    };
  });
}

/** Claims of an A/A system: its found steps, and the last-night calls of every night as it came. */
function claimsOf(rows) {
  let claims = 0;
  for (const steps of judgeNights(rows).steps.values()) claims += steps.length;
  for (let n = 2; n <= NIGHTS; n++) {
    const prefix = rows.map((r) => ({ ...r, nights: r.nights.slice(0, n) }));
    for (const v of judgeNights(prefix).lastNight.values()) if (v.verdict === 'regression' || v.verdict === 'improvement') claims++;
  }
  return claims;
}

const out = [];
for (const [name, [noise, sd]] of Object.entries(NOISE)) {
  const row = { noise: name };
  for (const [shape, step] of Object.entries(SHAPES)) {
    let hit = 0;
    let extra = 0;
    let claims = 0;
    for (let s = 0; s < systems; s++) {
      const rows = system(noise, sd, step);
      if (shape === 'A/A') {
        claims += claimsOf(rows);
        continue;
      }
      const found = judgeNights(rows).steps.get('row-0');
      const at = shape.startsWith('+10 % on') ? BUMP : [STEP_AT];
      if (at.every((a) => found.some((c) => c.index === a))) hit++;
      if (found.some((c) => !at.includes(c.index))) extra++;
    }
    const pct = (k) => `${((100 * k) / systems).toFixed(1)} %`;
    if (shape === 'A/A')
      row['A/A: claims per operation-night'] =
        `1 in ${Math.round((systems * ROWS * NIGHTS) / Math.max(claims, 1))}${claims === 0 ? '+' : ''}`;
    else {
      row[`${shape}: found at its night`] = pct(hit);
      row[`${shape}: another one too`] = pct(extra);
    }
  }
  out.push(row);
  console.log(JSON.stringify(row));
}
console.table(out);
