// A week of real nights of the example campaign on this host (docs/benchmarks.md, the night rule):
// the campaign is measured anew each night (`run --force --phases build,kat,measure`), each night's
// evidence folder kept, and the night rule (src/compare/nights.ts through src/trend/history.ts)
// judges every night as it came: what "Since last night" claims, how the host moved, and at the end
// the change points of the whole week.
//   npm run build && node bench/nights-week.mjs [NIGHTS] [--slow-from N] [--spin ITERATIONS] [--pair] [--keep DIR] [--judge DIR]
// With --slow-from N, kem-90's keygen spins a volatile loop of ITERATIONS (default 60000) from night N
// on: its library is rebuilt, only keygen is slower. Without it, an A/A week: nothing changes.
// --keep DIR keeps the nights' folders there (for report --history); --judge DIR judges nights kept there.
// --pair: a night whose kem-90 source changed measures kem-90 beside the night before's campaign
// (run --against … --against-only '^kem-90/'), as the action's nightly pairs a rebuilt library.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'slow-from': { type: 'string' },
    spin: { type: 'string' },
    keep: { type: 'string' },
    judge: { type: 'string' },
    pair: { type: 'boolean', default: false },
  },
});
const nights = Number(positionals[0] ?? 7);
const slowFrom = values['slow-from'] === undefined ? undefined : Number(values['slow-from']);
const spin = Number(values.spin ?? 60000);
const work = mkdtempSync(join(tmpdir(), 'ngcc-nights-'));
const keep = values.keep ?? join(work, 'nights');

// A copy of the example campaign two folders below the root, as examples/campaign is: its paths up
// to the root's native/ and node_modules/ hold as they are. out/ is git-ignored.
const campaign = join(root, 'out', `nights-campaign-${process.pid}`);
cpSync(join(root, 'examples', 'campaign'), campaign, { recursive: true });
const keygen = join(campaign, 'kem-90', 'src', 'KEM_AlgorithmInstance.c');
const honest = readFileSync(keygen, 'utf8');
const slowed = honest.replace(
  'int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len)\n{\n',
  `int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len)\n{\n    { volatile unsigned long spin = 0; for (unsigned long i = 0; i < ${spin}UL; i++) spin += i; }\n`,
);
if (slowed === honest) throw new Error('kem-90 keygen: the function to slow was not found');

const data = join(work, 'data');
const dirs = [];
// --judge DIR: the nights kept there by an earlier run, judged again without measuring.
if (values.judge) for (let n = 1; n <= nights; n++) dirs.push(join(values.judge, `night-${n}`, 'local'));
// The night before's campaign, for --pair (beside the campaign, so that its paths hold as they are).
const before = join(root, 'out', `nights-campaign-before-${process.pid}`);
for (let n = 1; n <= (values.judge ? 0 : nights); n++) {
  const source = slowFrom !== undefined && n >= slowFrom ? slowed : honest;
  const changed = n > 1 && source !== readFileSync(keygen, 'utf8');
  if (values.pair && changed) {
    rmSync(before, { recursive: true, force: true });
    cpSync(campaign, before, { recursive: true });
  }
  writeFileSync(keygen, source);
  const started = Date.now();
  const pairing =
    values.pair && changed ? ['--against', before, '--against-out', join(work, `before-${n}`), '--against-only', '^kem-90/'] : [];
  const r = spawnSync(
    process.execPath,
    [
      join(root, 'dist', 'cli.js'),
      'run',
      campaign,
      '--system',
      'local',
      '--out',
      data,
      '--force',
      '--phases',
      'build,kat,measure',
      ...pairing,
    ],
    { encoding: 'utf8' },
  );
  // Exit 1 is a finding (a noisy row, say), not a failed night; an INVALID candidate or a worse exit is.
  if ((r.status !== 0 && r.status !== 1) || /^INVALID/m.test(r.stdout))
    throw new Error(`night ${n}: run exited ${r.status}\n${r.stdout.slice(-3000)}`);
  const dir = join(keep, `night-${n}`, 'local');
  mkdirSync(dirname(dir), { recursive: true });
  cpSync(join(data, 'local'), dir, { recursive: true });
  dirs.push(dir);
  console.log(
    `night ${n}: measured in ${((Date.now() - started) / 1000).toFixed(1)} s${slowFrom !== undefined && n >= slowFrom ? ' (kem-90 keygen slowed)' : ''}`,
  );
}

const bundle = join(work, 'history.mjs');
await build({
  entryPoints: [join(root, 'src/trend/history.ts')],
  bundle: true,
  format: 'esm',
  platform: 'node',
  outfile: bundle,
  logLevel: 'warning',
  // Some dependencies require() Node's modules: give the ESM bundle a require.
  banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" },
});
const { loadTrends } = await import(pathToFileURL(bundle).href);
let claims = 0;
for (let n = 2; n <= nights; n++) {
  const t = loadTrends(
    dirs[n - 1],
    'local',
    dirs.slice(0, n - 1).map((dir) => ({ dir })),
  );
  const host = t.hostMove
    ? `host ${t.hostMove.pct >= 0 ? '+' : ''}${t.hostMove.pct.toFixed(1)}% on ${t.hostMove.rows} rows`
    : 'host not seen';
  const said = t.sinceLastNight.map(
    (r) =>
      `${r.candidate}/${r.label} ${r.operation} ${r.verdict} ${r.delta_pct.toFixed(1)}% (${r.causes.join(',')}${r.paired ? `, on ${r.paired.pairs} pairs` : ''})`,
  );
  claims += said.length;
  console.log(
    `night ${n} since night ${n - 1}: ${host}; noise ${(t.noise.tau * 100).toFixed(1)}% on ${t.noise.pairs} pairs; ${said.length === 0 ? 'no claim' : said.join('; ')}`,
  );
}
const last = loadTrends(
  dirs.at(-1),
  'local',
  dirs.slice(0, -1).map((dir) => ({ dir })),
);
const rows = last.series.length;
const points = last.series.flatMap((s) =>
  s.changes.map((c) => `${s.candidate}/${s.label} ${s.operation} night ${c.night + 1} ${c.delta_pct.toFixed(1)}% (${c.causes.join(',')})`),
);
console.log(`change points over ${nights} nights: ${points.length === 0 ? 'none' : points.join('; ')}`);
// Each night's canary (fixed work beside every trial, no library's) against its fitted host level.
const canaries = last.canary.map((c, i) => {
  const level = last.hostLevels[i];
  return `#${i + 1} ${c ? `${c.ratio.toFixed(2)}×${c.slow ? ' (slow host)' : ''}` : 'none'} / ${level === undefined ? 'no level' : `${level >= 0 ? '+' : ''}${level.toFixed(1)}%`}`;
});
console.log(`canary / host level per night: ${canaries.join('; ')}`);
const both = last.canary.flatMap((c, i) =>
  c && last.hostLevels[i] !== undefined ? [[Math.log(c.ratio), Math.log1p(last.hostLevels[i] / 100)]] : [],
);
if (both.length >= 3) {
  const mean = (k) => both.reduce((a, p) => a + p[k], 0) / both.length;
  const [mx, my] = [mean(0), mean(1)];
  const cov = both.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const sd = (k, m) => Math.sqrt(both.reduce((a, p) => a + (p[k] - m) ** 2, 0));
  console.log(
    `correlation of the nights' log canary with their log host level: ${(cov / (sd(0, mx) * sd(1, my))).toFixed(3)} over ${both.length} nights`,
  );
}
console.log(`rows ${rows}, operation-nights judged ${rows * (nights - 1)}, last-night claims ${claims}, change points ${points.length}`);
if (!values.judge) console.log(`nights kept in ${keep}`);
rmSync(campaign, { recursive: true, force: true });
rmSync(before, { recursive: true, force: true });
if (values.keep === undefined) rmSync(work, { recursive: true, force: true });
