// Timing inside the sandbox against timing outside it (docs/benchmarks.md, (h)).
//   node bench/sandbox.mjs [rounds]      default 5
// The same PQClean ML-KEM-512 source, built and measured by the CLI once with `sandbox: bwrap` and
// once with `sandbox: none`, in interleaved rounds so that drift of the machine hits both alike.
// Prints, per operation, the median over rounds of each side's mean cycles and their ratio.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 5);
const work = mkdtempSync(join(tmpdir(), 'ngcc-bench-sandbox-'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Two campaigns holding the example's ML-KEM-512 candidate, its `dir` made absolute (the other
// paths are relative to `dir`).
const example = join(root, 'examples', 'campaign', 'kem-80');
const candidate = readFileSync(join(example, 'candidate.yml'), 'utf8').replace(
  /^(\s+dir: )(\S+)/gm,
  (_, key, dir) => `${key}${resolve(example, dir)}`,
);
const campaigns = {};
for (const mode of ['bwrap', 'none']) {
  const dir = join(work, mode);
  mkdirSync(join(dir, 'kem-80'), { recursive: true });
  writeFileSync(join(dir, 'kem-80', 'candidate.yml'), candidate);
  writeFileSync(join(dir, 'kem-80', 'kat.sha256'), readFileSync(join(example, 'kat.sha256')));
  writeFileSync(join(dir, 'ngcc-perf.yml'), `sandbox: ${mode}\nplanning:\n  trials: 5\n  trial_target_s: 0.2\n  op_budget_s: 10\n`);
  campaigns[mode] = dir;
}

const ops = ['keygen', 'enc', 'dec'];
const means = Object.fromEntries(['bwrap', 'none'].map((mode) => [mode, Object.fromEntries(ops.map((op) => [op, []]))]));
for (let round = 0; round < rounds; round++) {
  for (const mode of round % 2 ? ['none', 'bwrap'] : ['bwrap', 'none']) {
    const data = join(work, `data-${mode}`);
    execFileSync(
      'node',
      [
        join(root, 'dist', 'cli.js'),
        'run',
        campaigns[mode],
        '--system',
        'b',
        '--out',
        data,
        '--only',
        '^kem-80/ml-kem-512$',
        '--phases',
        'build,kat,measure',
        '--force',
      ],
      { stdio: 'pipe' },
    );
    for (const op of ['keygen', 'enc', 'dec']) {
      const record = JSON.parse(readFileSync(join(data, 'b', 'records', 'kem-80', `ml-kem-512__${op}.json`), 'utf8'));
      means[mode][op].push(record.mean_cycles);
    }
  }
}

console.log(`PQClean ML-KEM-512, ${rounds} interleaved rounds, median of the rounds' mean cycles`);
console.log('operation  sandbox: bwrap  sandbox: none  bwrap / none  round spread (max/min) bwrap, none');
const spread = (xs) => Math.max(...xs) / Math.min(...xs);
for (const op of ops) {
  const [a, b] = [median(means.bwrap[op]), median(means.none[op])];
  const noise = `${spread(means.bwrap[op]).toFixed(3)}, ${spread(means.none[op]).toFixed(3)}`;
  console.log(`${op.padEnd(10)} ${a.toFixed(0).padStart(14)} ${b.toFixed(0).padStart(14)} ${(a / b).toFixed(4).padStart(13)}  ${noise}`);
}
rmSync(work, { recursive: true, force: true });
