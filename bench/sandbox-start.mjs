// What a sandbox costs to start, per mode: a sandboxed /usr/bin/true spawned from node, as the
// runner spawns every compile and driver (docs/benchmarks.md (u″)).
//   node bench/sandbox-start.mjs [ROUNDS]
//   SB_SRC=<another checkout>/src/sandbox/bwrap.ts node bench/sandbox-start.mjs [ROUNDS]
// ROUNDS (default 100) of each variant, interleaved and in alternating order, so a drift of the host
// moves all alike: `true` bare, under bwrap (when it runs here) and under unshare, with the runner's
// address-space cap (8 GiB); with SB_SRC also that checkout's unshare sandbox (its cap through
// prlimit when its script does not set one). Prints per variant the median and quartiles in ms.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 100);
if (!(rounds >= 1)) {
  console.error('usage: node bench/sandbox-start.mjs [ROUNDS]');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'ngcc-sandbox-start-'));
async function load(src, name) {
  const outfile = join(work, `${name}.mjs`);
  await build({ entryPoints: [src], bundle: true, format: 'esm', platform: 'node', outfile, logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}
const CAP = 8 * 2 ** 30;
const TRUE = '/usr/bin/true';
try {
  const current = await load(join(root, 'src/sandbox/bwrap.ts'), 'current');
  const system = current.hostSystemView();
  const spec = (mode) => ({ mode, readOnly: [join(root, 'native')], writable: [work] });
  const opts = { env: current.sandboxEnv({ PATH: '/usr/bin:/bin' }), system, addressSpaceBytes: CAP };
  const capped = (argv) => (argv.some((a) => a.includes('ulimit -v')) ? argv : null);
  const variants = {
    bare: [TRUE],
    bwrap: ['bwrap', ...current.bwrapArgs(spec('bwrap'), opts), '--', 'prlimit', `--as=${CAP}`, '--', TRUE],
    unshare: current.unshareArgv(spec('unshare'), opts, [TRUE]),
  };
  if (process.env.SB_SRC) {
    const other = await load(process.env.SB_SRC, 'other');
    const argv = other.unshareArgv(spec('unshare'), opts, [TRUE]);
    variants['unshare (SB_SRC)'] = capped(argv) ?? other.unshareArgv(spec('unshare'), opts, ['prlimit', `--as=${CAP}`, '--', TRUE]);
  }
  for (const [name, argv] of Object.entries(variants))
    if (spawnSync(argv[0], argv.slice(1)).status !== 0) {
      console.log(`${name}: does not run here, left out`);
      delete variants[name];
    }
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const entries = Object.entries(variants);
  for (let i = 0; i < rounds; i++)
    for (const [name, argv] of i % 2 ? entries : [...entries].reverse()) {
      const t0 = process.hrtime.bigint();
      spawnSync(argv[0], argv.slice(1));
      times[name].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  for (const [name, t] of Object.entries(times)) {
    const s = [...t].sort((a, b) => a - b);
    const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(1);
    console.log(`${name}: median ${q(0.5)} ms (quartiles ${q(0.25)}–${q(0.75)}), ${rounds} starts`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
