// The fixed cost of a timing process, per sandbox mode (docs/benchmarks.md (u)).
//   node bench/process-cost.mjs [RUNS] [bwrap,unshare]
// Each run is the example campaign's `run --phases build,kat,measure --force` with ngcc-perf.yml's
// `sandbox:` set to the mode, on a copy of examples/campaign inside the repository (its candidates
// name the harness and node_modules by relative paths). Reported per run, from campaign.json's
// `timing_processes` (the parent's clock at the driver's marks, src/measure/processCost.ts): the
// processes, the seconds inside the timed loops against the processes' whole wall time, and per
// process its start (sandbox, exec, the library's load), prepare, between and finish in ms; their
// sum is the fixed cost besides the loops. The command's wall time beside it.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 3);
const modes = (process.argv[3] ?? 'bwrap,unshare').split(',');
if (!(runs >= 1) || modes.some((m) => !['bwrap', 'unshare', 'none'].includes(m))) {
  console.error('usage: node bench/process-cost.mjs [RUNS] [bwrap,unshare]');
  process.exit(2);
}

const ms = (s) => (s * 1000).toFixed(1);
const scratch = join(root, '.bench-process-cost');
try {
  for (const mode of modes)
    for (let i = 1; i <= runs; i++) {
      rmSync(scratch, { recursive: true, force: true });
      const campaign = join(scratch, 'campaign');
      cpSync(join(root, 'examples', 'campaign'), campaign, { recursive: true });
      appendFileSync(join(campaign, 'ngcc-perf.yml'), `\nsandbox: ${mode}\n`);
      const data = mkdtempSync(join(tmpdir(), 'ngcc-process-cost-'));
      const args = ['run', campaign, '--system', 'bench', '--out', data, '--phases', 'build,kat,measure', '--force'];
      const t0 = process.hrtime.bigint();
      const r = spawnSync('node', [join(root, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.status !== 0) {
        console.error(r.stdout.slice(-2000), r.stderr.slice(-2000));
        throw new Error(`run exited ${r.status}`);
      }
      const c = JSON.parse(readFileSync(join(data, 'bench', 'campaign.json'), 'utf8'));
      const t = c.timing_processes;
      const n = t.processes;
      const whole = t.start_s + t.prepare_s + t.loops_s + t.between_s + t.finish_s;
      const fixed = (t.start_s + t.prepare_s + t.between_s + t.finish_s) / n;
      console.log(
        `${mode} run ${i}: ${n} processes, loops ${t.loops_s.toFixed(1)} s of ${whole.toFixed(1)} s; per process start ${ms(t.start_s / n)} (load ${ms(t.load_s / n)}), prepare ${ms(t.prepare_s / n)}, between ${ms(t.between_s / n)}, finish ${ms(t.finish_s / n)}: ${ms(fixed)} ms besides the loops; command wall ${wall.toFixed(1)} s`,
      );
      rmSync(data, { recursive: true, force: true });
    }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
