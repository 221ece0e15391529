// Disturbed trials and the pull-request comparison with a competitor on the measuring core
// (docs/benchmarks.md, (i)).
//   npm run build && node bench/disturbed.mjs [rounds] [paired|separate] [detect [SPIN]]
//     SPIN: the +12 % detection only, with TOY_KEM_SLOWDOWN SPIN instead of a sizing probe
//   node bench/disturbed.mjs [rounds] paired aa     the A/A rounds with the competitor only
//   node bench/disturbed.mjs [rounds] separate aa adaptive   the same with adaptive precision
//     (`run --adaptive`: trials of 0.1 s until ±1 %, 5 to 30 of them), against the fixed plan's rate
//     default 8 rounds (8 rounds x 6 operations = 48 comparisons), paired
// Every campaign run measures the toy KEM and PQClean ML-KEM-512 (5 interleaved trials of 0.1 s; a
// paired run takes 16 a side, PAIRED_TRIALS).
// paired: base and head in one run (`run HEAD --against BASE`, as a pull request is measured), their
// trials interleaved; separate: base and head in two runs one after the other.
// "With the competitor": a CPU-bound shell pinned to the measuring core runs during a random part
// (30-60 %) of each run, starting at a random moment. Prints
//   - the disturbed-trial detection: every trial attempt (kept or run again) that overlapped the
//     competitor by at least half its duration, and how many were flagged; flags on attempts that
//     did not overlap it at all;
//   - A/A false alarms (the same code, two runs, compared) with and without the competitor;
//   - detection of an injected slowdown of about +5 % and +12 % of the toy KEM (a busy loop sized on
//     this machine first), with the competitor.
import { execFileSync, spawn } from 'node:child_process';
import { benchCampaign } from './benchCampaign.mjs';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const rounds = Number(process.argv[2] ?? 8);
const mode = process.argv[3] ?? 'paired';
// `detect`: the injected slowdowns only, without the A/A rounds.
const detectOnly = process.argv[4] === 'detect';
const fixedSpin = process.argv[5] && process.argv[5] !== 'adaptive' ? Number(process.argv[5]) : undefined;
// `adaptive`: every run plans adaptively (a paired run stays on the fixed plan: run --against ignores it).
const adaptive = process.argv.slice(4).includes('adaptive');
if (mode !== 'paired' && mode !== 'separate') throw new Error(`mode: paired or separate, not ${mode}`);
const work = mkdtempSync(join(tmpdir(), 'ngcc-disturbed-'));
const _iccs = join(root, 'native', 'iccs');
const _toy = join(root, 'test', 'fixtures', 'campaign', 'kem-1');
const _pq = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');
const cpu = Number(
  readFileSync('/proc/self/status', 'utf8')
    .match(/^Cpus_allowed_list:\s*(.*)$/m)[1]
    .split(',')
    .at(-1)
    .split('-')
    .at(-1),
);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Competitor on/off intervals (ms since the epoch) of every run, to judge the flags against. */
const competitorIntervals = [];

/**
 * One campaign run into `out` (with `against`, the base campaign measured alongside into
 * against.out); with `competitor`, a spinning shell on the core for part of it.
 */
async function measure(camp, out, competitor, against) {
  const started = Date.now();
  const run = new Promise((resolve, reject) => {
    const paired = against ? ['--against', against.camp, '--against-out', against.out] : [];
    const child = spawn(
      'node',
      [
        cli,
        'run',
        camp,
        '--system',
        'bench',
        '--out',
        out,
        '--force',
        '--phases',
        'build,kat,measure',
        '--cpu',
        String(cpu),
        ...paired,
        ...(adaptive ? ['--adaptive'] : []),
      ],
      {
        stdio: 'ignore',
      },
    );
    // Exit 1 is expected: the bench campaigns carry no KAT manifest (NOKAT); they are measured anyway.
    child.on('exit', (code) => (code === 0 || code === 1 ? resolve() : reject(new Error(`run exited ${code}`))));
  });
  if (competitor) {
    // A run lasts about 8 s here (about 40 s paired: 16 trials a side): start within its first
    // half, stay 30-60 % of it.
    const scale = against ? 5 : 1;
    await sleep(scale * (500 + Math.random() * 3500));
    const on = Date.now();
    const spin = spawn('taskset', ['-c', String(cpu), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
    await Promise.race([run, sleep(scale * (2500 + Math.random() * 2500))]);
    spin.kill('SIGKILL');
    competitorIntervals.push([on, Date.now()]);
  }
  await run;
  return Date.now() - started;
}

const compare = (a, b) => {
  let text;
  try {
    text = execFileSync('node', [cli, 'compare', '--base', a, '--head', b, '--system', 'bench', '--format', 'json'], { encoding: 'utf8' });
  } catch (e) {
    text = e.stdout;
  }
  return JSON.parse(text);
};

/** Every trial attempt of a data folder: [start ms, end ms, flagged]. */
function attempts(dataDir) {
  const out = [];
  const recordsDir = join(dataDir, 'bench', 'records');
  for (const id of readdirSync(recordsDir))
    for (const f of readdirSync(join(recordsDir, id))) {
      const r = JSON.parse(readFileSync(join(recordsDir, id, f), 'utf8'));
      for (const p of r.processes ?? []) {
        for (const a of p.retried ?? []) out.push([Date.parse(a.started_utc), Date.parse(a.started_utc) + a.wall_s * 1000, true]);
        if (!p.started_utc) continue;
        const flagged = (p.trials ?? []).some((t) => t.disturbed);
        out.push([Date.parse(p.started_utc), Date.parse(p.started_utc) + p.wall_s * 1000, flagged]);
      }
    }
  return out;
}

const overlap = ([s, e]) => competitorIntervals.reduce((sum, [on, off]) => sum + Math.max(0, Math.min(e, off) - Math.max(s, on)), 0);

const verdictCounts = (rows) => ({
  alarms: rows.filter((r) => r.verdict === 'regression' || r.verdict === 'improvement').length,
  noisy: rows.filter((r) => r.verdict === 'noisy').length,
  rows: rows.length,
});

const plain = benchCampaign(work, 'plain', 0);
const dataDirs = [];

/** Base `a` of campaign `baseCamp` and head `b` of `headCamp`, in one run or two (mode). */
async function measureBoth(baseCamp, a, headCamp, b, competitor) {
  if (mode === 'paired') return measure(headCamp, b, competitor, { camp: baseCamp, out: a });
  await measure(baseCamp, a, competitor);
  await measure(headCamp, b, competitor);
}

/** The precision of every record of a data folder: trials, ci95_rel, met (adaptive records). */
function precisions(dataDir) {
  const recordsDir = join(dataDir, 'bench', 'records');
  return readdirSync(recordsDir).flatMap((id) =>
    readdirSync(join(recordsDir, id)).map((f) => {
      const r = JSON.parse(readFileSync(join(recordsDir, id, f), 'utf8'));
      return { trials: r.trials?.length ?? 0, ci: r.precision?.ci95_rel ?? null, met: r.precision?.met };
    }),
  );
}

/** Trials per record and the precision reached, over the A/A data folders. */
function precisionSummary(dirs) {
  const all = dirs.flatMap(precisions);
  const ci = all.map((p) => p.ci).filter((x) => x !== null);
  const met = all.filter((p) => p.met === true).length;
  return `trials per record median ${median(all.map((p) => p.trials))} (max ${Math.max(...all.map((p) => p.trials))}), ±${(100 * median(ci)).toFixed(2)} % median${adaptive ? `, target met ${met}/${all.length}` : ''}`;
}

async function aa(withCompetitor) {
  const total = { alarms: 0, noisy: 0, rows: 0 };
  const dirs = [];
  for (let r = 0; r < rounds; r++) {
    const a = join(work, `aa-${withCompetitor}-${r}-a`);
    const b = join(work, `aa-${withCompetitor}-${r}-b`);
    await measureBoth(plain, a, plain, b, withCompetitor);
    dirs.push(a, b);
    if (withCompetitor) dataDirs.push(a, b);
    const c = verdictCounts(compare(a, b).rows);
    for (const k of Object.keys(total)) total[k] += c[k];
  }
  return `false alarms ${total.alarms}/${total.rows}, noisy ${total.noisy}; ${precisionSummary(dirs)}`;
}

/** The spin count that slows the toy KEM's operations by about `pct` % here, from one probe. */
async function sizedSlowdown(pct) {
  const probe = 300;
  const a = join(work, `size-${pct}-a`);
  const b = join(work, `size-${pct}-b`);
  await measureBoth(plain, a, benchCampaign(work, `size-${pct}`, probe), b, false);
  const deltas = compare(a, b)
    .rows.filter((r) => r.candidate === 'kem-1')
    .map((r) => r.delta_pct);
  return Math.max(1, Math.round((probe * pct) / median(deltas)));
}

async function detection(pct, given) {
  const spin = given ?? (await sizedSlowdown(pct));
  const slow = benchCampaign(work, `slow-${pct}`, spin);
  let called = 0;
  let total = 0;
  const deltas = [];
  const missed = {};
  for (let r = 0; r < rounds; r++) {
    const a = join(work, `d${pct}-${r}-a`);
    const b = join(work, `d${pct}-${r}-b`);
    await measureBoth(plain, a, slow, b, true);
    dataDirs.push(a, b);
    for (const row of compare(a, b).rows.filter((x) => x.candidate === 'kem-1')) {
      total++;
      deltas.push(row.delta_pct);
      if (row.verdict === 'regression') called++;
      else {
        const what = `${row.operation} ${row.verdict}`;
        missed[what] = [...(missed[what] ?? []), row.reason];
      }
    }
  }
  const misses = Object.entries(missed).map(([what, reasons]) => `\n    missed: ${what} ×${reasons.length}, e.g. ${reasons[0]}`);
  return `injected ~+${pct} % (TOY_KEM_SLOWDOWN ${spin}, measured median +${median(deltas).toFixed(1)} %): detected ${called}/${total}${misses.join('')}`;
}

console.log(
  `cpu ${cpu}; ${mode}; ${rounds} rounds x 6 operations (toy KEM, PQClean ML-KEM-512), ${adaptive ? 'adaptive: interleaved trials of 0.1 s until ±1 % (5 to 30)' : '5 interleaved trials of 0.1 s'}`,
);
// `aa`: the A/A rounds with the competitor only.
const aaOnly = process.argv[4] === 'aa';
if (!detectOnly) {
  if (!aaOnly) console.log(`A/A without competitor:  ${await aa(false)}`);
  console.log(`A/A with competitor:     ${await aa(true)}`);
}
if (!aaOnly) {
  if (fixedSpin === undefined) console.log(await detection(5));
  console.log(await detection(12, fixedSpin));
}
const all = dataDirs.flatMap(attempts);
const hit = all.filter((a) => overlap(a) >= 0.5 * (a[1] - a[0]));
const clear = all.filter((a) => overlap(a) === 0);
console.log(
  `disturbed trials: ${hit.filter((a) => a[2]).length}/${hit.length} attempts that shared the core for at least half their time were flagged; ` +
    `${clear.filter((a) => a[2]).length}/${clear.length} attempts that never met the competitor were flagged`,
);
rmSync(work, { recursive: true, force: true });
