// What a pull request costs: the action in pull-request mode, started as the runner starts it,
// on a one-instance change, from the job's start to the comment posted to a local fake GitHub API.
//   npm run build && node bench/pr-cost.mjs [slowdown-percent] [pr-extra-rounds]
// The repository holds two candidates: kem-1, a copy of PQClean's ML-KEM-768 (clean) that the pull
// request slows down in enc by about `slowdown-percent` (default 5) with a busy loop, and kem-2,
// ML-KEM-512, untouched. The baseline evidence (a default run of the base commit, committed with it)
// is made before the clock starts: it is the nightly's cost, not the pull request's. The planning
// is the harness's default, and so are pr-rounds and, unless given, pr-extra-rounds.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pq = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');
const slowdownPct = Number(process.argv[2] ?? 5);
const extraRounds = process.argv[3];
const work = mkdtempSync(join(tmpdir(), 'ngcc-pr-cost-'));
const repo = join(work, 'repo');
const TOKEN = 'bench-token';
const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', encoding: 'utf8' }).trim();
const seconds = (ms) => (ms / 1000).toFixed(1);

function writeCampaign() {
  const kem1 = join(repo, 'submissions', 'kem-1');
  cpSync(join(pq, 'crypto_kem', 'ml-kem-768', 'clean'), join(kem1, 'ml-kem-768'), { recursive: true });
  const common = { extra: `[${pq}/common/fips202.c]`, include: `[${pq}/common]` };
  writeFileSync(
    join(kem1, 'candidate.yml'),
    `id: kem-1\ntype: kem\nalgorithm: ML-KEM\napi: nist\ninstances:\n  - label: ml-kem-768\n    nist_level: 3\n    dir: ml-kem-768\n    extra_sources: ${common.extra}\n    include: ${common.include}\n    nist_prefix: PQCLEAN_MLKEM768_CLEAN_\n`,
  );
  const kat = readFileSync(join(root, 'examples', 'campaign', 'kem-80', 'kat.sha256'), 'utf8').split('\n');
  writeFileSync(join(kem1, 'kat.sha256'), `${kat.filter((l) => l.includes('ml-kem-768/')).join('\n')}\n`);
  const kem2 = join(repo, 'submissions', 'kem-2');
  mkdirSync(kem2, { recursive: true });
  writeFileSync(
    join(kem2, 'candidate.yml'),
    `id: kem-2\ntype: kem\nalgorithm: ML-KEM\napi: nist\ninstances:\n  - label: ml-kem-512\n    nist_level: 1\n    dir: ${pq}/crypto_kem/ml-kem-512/clean\n    extra_sources: ${common.extra}\n    include: ${common.include}\n    nist_prefix: PQCLEAN_MLKEM512_CLEAN_\n`,
  );
  writeFileSync(join(kem2, 'kat.sha256'), `${kat.filter((l) => l.includes('ml-kem-512/')).join('\n')}\n`);
  writeFileSync(join(repo, 'submissions', 'ngcc-perf.yml'), '# The harness defaults: what a runner measures unless told otherwise.\n');
  writeFileSync(join(repo, '.gitignore'), 'performance/data/*/build/\n');
}

/** The base commit with its evidence, as the nightly leaves it: the baseline the pull request finds. */
function baseCommit() {
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  git('config', 'user.email', 'bench@example.org');
  git('config', 'user.name', 'bench');
  writeCampaign();
  const started = Date.now();
  const cli = join(root, 'dist', 'cli.js');
  execFileSync('node', [cli, 'run', 'submissions', '--system', 'x86_1', '--out', 'performance/data'], { cwd: repo, stdio: 'pipe' });
  console.log(`baseline: the base commit measured in ${seconds(Date.now() - started)} s (not counted)`);
  git('add', '-A');
  git('commit', '-q', '-m', 'base: submissions and their evidence');
  return git('rev-parse', 'HEAD');
}

/**
 * Busy-loop iterations that cost about `pct` % of enc's mean on the baseline: each is a dependent
 * multiply and add (about 4 cycles), kept by an empty asm that the compiler cannot see through; the
 * comparison measures what it really costs.
 */
function spinsFor(pct) {
  const dir = join(repo, 'performance', 'data', 'x86_1', 'records', 'kem-1');
  const file = readdirSync(dir).find((f) => f.includes('enc'));
  const record = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  return { spins: Math.round((record.mean_cycles * pct) / 100 / 4), cycles: record.mean_cycles };
}

/** The pull request: enc of kem-1 slowed by a busy loop at its start. */
function headCommit() {
  git('checkout', '-q', '-b', 'change');
  const { spins, cycles } = spinsFor(slowdownPct);
  const kem = join(repo, 'submissions', 'kem-1', 'ml-kem-768', 'kem.c');
  const text = readFileSync(kem, 'utf8');
  const at = text.indexOf('{', text.indexOf('int PQCLEAN_MLKEM768_CLEAN_crypto_kem_enc_derand(')) + 1;
  writeFileSync(
    kem,
    `${text.slice(0, at)}\n    { uint64_t x = pk[0]; for (unsigned i = 0; i < ${spins}u; i++) { x = x * 6364136223846793005u + 1442695040888963407u; __asm__ volatile("" : "+r"(x)); } }${text.slice(at)}`,
  );
  git('commit', '-q', '-am', `kem-1: enc slowed by ${spins} spins`);
  console.log(`change: kem-1 enc (${Math.round(cycles)} cycles on the baseline) slowed by ${spins} spins, about ${slowdownPct} %`);
  return git('rev-parse', 'HEAD');
}

async function fakeGithub() {
  const out = join(work, 'fakeGithub.mjs');
  await build({
    entryPoints: [join(root, 'test', 'helpers', 'fakeGithub.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: out,
    logLevel: 'warning',
  });
  const { startFakeGithub } = await import(pathToFileURL(out).href);
  return startFakeGithub({ token: TOKEN });
}

/** The runner's environment for a pull_request event. */
function runnerEnv(api, base, head) {
  const dir = join(work, 'runner');
  mkdirSync(dir, { recursive: true });
  const event = join(dir, 'event.json');
  writeFileSync(
    event,
    JSON.stringify({
      action: 'synchronize',
      number: 7,
      pull_request: {
        number: 7,
        base: { sha: base, ref: 'main', repo: { full_name: 'ngcc/submissions' } },
        head: { sha: head, ref: 'change', repo: { full_name: 'ngcc/submissions' } },
      },
    }),
  );
  const output = join(dir, 'output');
  writeFileSync(output, '');
  const summary = join(dir, 'summary');
  writeFileSync(summary, '');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('INPUT_') && !k.startsWith('GITHUB_')));
  return {
    output,
    env: {
      ...env,
      GITHUB_WORKSPACE: repo,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: event,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_REPOSITORY: 'ngcc/submissions',
      GITHUB_API_URL: api.url,
      GITHUB_RUN_ID: '1',
      RUNNER_TEMP: dir,
      INPUT_MODE: 'pull-request',
      INPUT_CAMPAIGN: 'submissions',
      INPUT_SYSTEM: 'x86_1',
      'INPUT_DATA-DIR': 'performance/data',
      INPUT_COMMENT: 'always',
      INPUT_TOKEN: TOKEN,
      INPUT_PUBLISH: 'none',
      'INPUT_FAIL-ON': 'regression',
      ...(extraRounds ? { 'INPUT_PR-EXTRA-ROUNDS': extraRounds } : {}),
    },
  };
}

/** The action as the runner starts it; when its comment arrived and when it ended, from its start. */
async function runAction(api, env) {
  const started = Date.now();
  let commented;
  const poll = setInterval(() => {
    if (commented === undefined && api.comments('ngcc', 'submissions', 7).length > 0) commented = Date.now() - started;
  }, 100);
  const child = spawn('node', [join(root, 'dist', 'index.js')], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  const code = await new Promise((res) => child.on('close', res));
  clearInterval(poll);
  const ended = Date.now() - started;
  commented ??= api.comments('ngcc', 'submissions', 7).length > 0 ? ended : undefined;
  writeFileSync(join(work, 'action.log'), log);
  return { code, commented, ended };
}

const base = baseCommit();
const head = headCommit();
const api = await fakeGithub();
try {
  const { env, output } = runnerEnv(api, base, head);
  const { code, commented, ended } = await runAction(api, env);
  const outputs = Object.fromEntries(
    [...readFileSync(output, 'utf8').matchAll(/^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)].map((m) => [m[1], m[3]]),
  );
  const comparison = JSON.parse(readFileSync(outputs['comparison-path'], 'utf8'));
  console.log(
    `action: exit ${code}; comment posted after ${commented === undefined ? 'never' : `${seconds(commented)} s`}; job ended after ${seconds(ended)} s`,
  );
  for (const r of comparison.rows.filter((x) => x.paired === true)) {
    const pairs = Math.min(r.base?.trial_cycles.length ?? 0, r.head?.trial_cycles.length ?? 0);
    const delta = typeof r.delta_pct === 'number' ? `${r.delta_pct > 0 ? '+' : ''}${r.delta_pct.toFixed(1)} %` : '—';
    const mde = typeof r.mde_pct === 'number' ? `, smallest callable change ±${r.mde_pct.toFixed(1)} %` : '';
    console.log(
      `  ${r.candidate}/${r.label}/${r.operation}: ${r.verdict}, ${delta}, ${pairs} trial pairs${r.rounds ? ` (${r.rounds.join(' + ')})` : ''}${mde}`,
    );
  }
  console.log(`log: ${join(work, 'action.log')}`);
} finally {
  await api.stop();
}
