// The repeated-input audit of verify (src/measure/repeatAudit.ts, docs/benchmarks.md (s)): the ratio
// of verify's per-call median on distinct inputs to the trials' on 16 repeated ones, for the PQClean
// signatures, honest, against the gap (1.5×) beyond which it is FORGED.
//   npm run build && node bench/repeat-audit.mjs [RUNS] [ONLY_REGEX]
// Default: 3 runs of ML-DSA-44/65/87, Falcon-512/1024 and SPHINCS+-SHA2-128f/128s-simple, measure
// phase only, the default planning (1-s trials: the audit may sign for 1 s). Prints every run's
// ratio and the audit's calls, or why it was skipped.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 3);
const only = process.argv[3] ?? '^(ml-dsa-(44|65|87)|falcon-(512|1024)|sphincs-sha2-128[fs]-simple)$';
const cli = join(root, 'dist', 'cli.js');
const work = mkdtempSync(join(tmpdir(), 'ngcc-repeat-'));

function sh(args) {
  const r = spawnSync('node', [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(' ')} failed (${r.status}):\n${r.stderr.slice(-4000)}`);
  return r;
}

const campaign = join(work, 'campaign');
sh(['pqclean-campaign', campaign, '--only', only]);
const rows = {};
for (let i = 0; i < runs; i++) {
  const out = join(work, `out${i}`);
  sh(['run', campaign, '--system', 's', '--out', out, '--phases', 'build,kat,measure', '--force']);
  const dir = join(out, 's', 'records');
  for (const id of readdirSync(dir))
    for (const f of readdirSync(join(dir, id)).filter((f) => f.endsWith('__verify.json'))) {
      const r = JSON.parse(readFileSync(join(dir, id, f), 'utf8'));
      const a = r.repeat_audit;
      const cell = a
        ? `${a.ratio.toFixed(3)} (${a.calls} calls, ${a.outcome})`
        : `skipped: ${r.repeat_audit_skipped ?? r.failure ?? r.status}`;
      rows[r.label] = [...(rows[r.label] ?? []), cell];
    }
  console.error(`run ${i + 1} of ${runs} done`);
}
console.log('| verify | distinct ÷ repeated per-call median, each run |');
console.log('|---|---|');
for (const [label, cells] of Object.entries(rows).sort()) console.log(`| ${label} | ${cells.join('; ')} |`);
