// Rendering time of a synthetic full system: 120 candidates x 4 instances x 3 operations,
// with timing records and hash profiles, through the real CLI (`report`, then `report --check`).
//   npm run build && node bench/render.mjs
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'ngcc-render-'));
const sys = join(work, 'data', 'x86_1');
const env = {
  architecture: 'x86_64',
  cpu_model: 'Synthetic CPU',
  cpu_number: 2,
  memory_total_kib: 32e6,
  os: 'Debian',
  kernel: '6.12',
  compiler: 'gcc 14',
  cmake: 'cmake 3.31',
  cpufreq_min_khz: '2100000',
  cpufreq_max_khz: '2100000',
  cpufreq_governor: 'performance',
  intel_pstate_no_turbo: '1',
  smt_control: 'off',
};
let seed = 1;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const build = {};
for (let c = 0; c < 120; c++) {
  const sig = c % 2 === 1;
  const id = `${sig ? 'sign' : 'kem'}-${c + 1}`;
  const ops = sig ? ['keygen', 'sign', 'verify'] : ['keygen', 'enc', 'dec'];
  for (let i = 0; i < 4; i++) {
    const label = `inst-${128 * (i + 1)}`;
    build[`${id}/${label}`] = {
      candidate: id,
      label,
      instance: label,
      variant: 'reference',
      flags: 'guide',
      kat: i === 3 && c % 7 === 0 ? 'NOKAT' : 'PASS',
      elf_load_bytes: 30000 + i,
    };
    for (const op of ops) {
      const cyc = 1e4 * 10 ** (rand() * 5);
      const iters = Math.max(20, Math.round(1e9 / cyc));
      const trials = Array.from({ length: 5 }, () => ({
        measurements: iters,
        seconds: (cyc * iters) / 2.1e9,
        cycles: cyc * iters * (1 + rand() * 0.01),
      }));
      const total = trials.reduce((a, t) => a + t.cycles, 0);
      const secs = trials.reduce((a, t) => a + t.seconds, 0);
      const rec = {
        schema: 2,
        status: 'complete',
        candidate: id,
        label,
        operation: op,
        kat: 'PASS',
        plan: { iterations_per_trial: iters, trials: 5 },
        environment: env,
        trials,
        measurements: 5 * iters,
        mean_cycles: total / (5 * iters),
        mean_seconds: secs / (5 * iters),
        median_trial_seconds: secs / (5 * iters),
        operations_per_second: (5 * iters) / secs,
        baseline_rss_bytes: 1.5e6,
        peak_rss_bytes: 1.6e6,
        sizes: { pk_bytes: 800, sk_bytes: 1632, ct_bytes: 768, ss_bytes: 32, signature_bytes: sig ? 2420 : 0 },
      };
      mkdirSync(join(sys, 'records', id), { recursive: true });
      writeFileSync(join(sys, 'records', id, `${label}__${op}.json`), JSON.stringify(rec, null, 1));
      const prof = {
        schema: 2,
        candidate: id,
        label,
        operation: op,
        status: 'complete',
        total: { operations: 1000, ticks: 1e6 },
        calls: [
          { fn: 'pseudoXOF', in_bits: 256, out_bits: 1024, calls: 3000, ticks: 4e5 },
          { fn: 'drng', in_bits: 0, out_bits: 256, calls: 1000, ticks: 2e4 },
        ],
      };
      mkdirSync(join(sys, 'profile', id), { recursive: true });
      writeFileSync(join(sys, 'profile', id, `${label}__${op}.json`), JSON.stringify(prof));
    }
  }
}
writeFileSync(join(sys, 'build.json'), JSON.stringify({ instances: build }, null, 1));
writeFileSync(
  join(sys, 'campaign.json'),
  JSON.stringify({ system_id: 'x86_1', started_utc: '2026-11-01T00:00:00Z', ended_utc: '2026-11-02T00:00:00Z', environment_at_end: env }),
);

const cli = join(root, 'dist', 'cli.js');
const pages = join(work, 'pages');
const time = (args) => {
  const t0 = process.hrtime.bigint();
  execFileSync('node', [cli, ...args], { stdio: 'pipe' });
  return Number(process.hrtime.bigint() - t0) / 1e9;
};
const render = [];
const check = [];
for (let i = 0; i < 3; i++) {
  render.push(time(['report', sys, '--out', pages]));
  check.push(time(['report', sys, '--out', pages, '--check']));
}
const med = (xs) => [...xs].sort((a, b) => a - b)[1];
console.log(`synthetic system: 120 candidates x 4 instances x 3 operations (1440 records, 1440 profiles)`);
console.log(
  `report (render + write 125 pages, node start-up included): median ${med(render).toFixed(2)} s of ${render.map((x) => x.toFixed(2)).join(', ')}`,
);
console.log(`report --check: median ${med(check).toFixed(2)} s`);
rmSync(work, { recursive: true, force: true });
