// How long a run with nothing left to time takes while another process holds the timing core
// (docs/benchmarks.md, issue: waits counted apart): the example campaign is run once to fill its
// evidence, then flock(1) holds the timing core's host-wide lock while the same run is made again
// (everything kept) and a campaign whose only candidate is INVALID is run; each one's wall seconds.
//   npm run build && node bench/zero-work.mjs [REPEATS] [CPU]
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const repeats = Number(process.argv[2] ?? 3);
const cpu = String(process.argv[3] ?? 1);
const work = mkdtempSync(join(tmpdir(), 'ngcc-zero-work-'));
const locks = join(work, 'locks');
const env = { ...process.env, NGCC_PERF_CPU_LOCK_DIR: locks };
const cli = join(root, 'dist', 'cli.js');
const data = join(work, 'data');
const run = (campaign, out) => {
  const started = performance.now();
  const r = spawnSync(
    process.execPath,
    [cli, 'run', campaign, '--system', 'local', '--out', out, '--cpu', cpu, '--phases', 'build,kat,measure'],
    {
      env,
      encoding: 'utf8',
    },
  );
  return { seconds: (performance.now() - started) / 1000, status: r.status, waited: /waits for/.test(r.stderr) };
};

const campaign = join(root, 'examples', 'campaign');
const first = run(campaign, data);
console.log(`first run (fills the evidence): ${first.seconds.toFixed(1)} s, exit ${first.status}`);
// An INVALID-only campaign: one candidate whose candidate.yml has a typo.
const broken = join(work, 'broken');
cpSync(join(campaign, 'kem-90'), join(broken, 'kem-90'), { recursive: true });
writeFileSync(join(broken, 'kem-90', 'candidate.yml'), 'id: kem-90\ntype: kem\nalgorithm: x\nnist_prefx: X\ninstances: []\n');

// The holder: flock(1) on the core's lock file, for longer than the runs below take.
spawnSync('mkdir', ['-p', locks]);
const holder = spawn('flock', [join(locks, `cpu${cpu}.lock`), 'sleep', '600'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 500));
try {
  for (let k = 1; k <= repeats; k++) {
    const kept = run(campaign, data);
    const invalid = run(broken, join(work, `invalid-${k}`));
    console.log(
      `repeat ${k}: everything kept ${kept.seconds.toFixed(2)} s (exit ${kept.status}${kept.waited ? ', waited' : ''}); every candidate INVALID ${invalid.seconds.toFixed(2)} s (exit ${invalid.status}${invalid.waited ? ', waited' : ''})`,
    );
  }
} finally {
  holder.kill();
  rmSync(work, { recursive: true, force: true });
}
