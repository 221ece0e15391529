// A KAT in pieces against the serial KAT (docs/benchmarks.md (aq)): the wall time of `runKat` for
// PQClean schemes of the pqclean package, each built once, then its KAT of 100 records run as 1 and
// as N pieces, alternating (1, N, N, 1 …), with the joined file's digest checked against the serial one.
//   node bench/kat-pieces.mjs [pieces=2] [rounds=2] [scheme …]   default mceliece348864 sphincs-shake-128f-simple
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleHarness } from './harness-bundle.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [piecesArg, roundsArg, ...named] = process.argv.slice(2);
const pieces = Number(piecesArg ?? 2);
const rounds = Number(roundsArg ?? 2);
const schemes = named.length > 0 ? named : ['mceliece348864', 'sphincs-shake-128f-simple'];
if (!(Number.isInteger(pieces) && pieces >= 2 && Number.isInteger(rounds) && rounds >= 1)) {
  console.error('usage: node bench/kat-pieces.mjs [pieces>=2] [rounds>=1] [scheme …]');
  process.exit(2);
}

// The harness's own code, bundled inside the checkout: it finds native/ from where it sits.
const scratch = join(root, '.bench-kat-pieces');
const work = mkdtempSync(join(tmpdir(), 'ngcc-kat-pieces-'));
const harness = await bundleHarness(root, scratch, [
  "export { buildInstance } from './src/compile/compile.ts';",
  "export { harnessTools } from './src/compile/harnessTools.ts';",
  "export { loadCandidate } from './src/config/campaign.ts';",
  "export { runKat } from './src/kat/runKat.ts';",
  "export { pqcleanSchemes, writePqcleanCampaign } from './src/catalogs/pqclean.ts';",
]);
const PQCLEAN = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');

/** A one-instance candidate of the scheme, as the PQClean catalogue writes it (ngcc-perf pqclean-campaign). */
function candidateOf(info) {
  const out = join(work, 'campaign', info.scheme);
  harness.writePqcleanCampaign(out, [info], [], PQCLEAN);
  const id = info.kind === 'sig' ? 'sign-1' : info.katRng ? 'kem-2' : 'kem-1';
  return harness.loadCandidate(join(out, id), 'candidate.yml');
}

const sha = (text) => createHash('sha256').update(text, 'latin1').digest('hex');

try {
  const tools = await harness.harnessTools();
  const all = harness.pqcleanSchemes(PQCLEAN);
  console.log(`| scheme | serial, s | ${pieces} pieces, s | serial / pieces |`);
  console.log('|---|---|---|---|');
  for (const scheme of schemes) {
    const info = all.find((s) => s.scheme === scheme);
    if (!info) throw new Error(`the pqclean package has no scheme ${scheme}`);
    const candidate = candidateOf(info);
    const outDir = join(work, 'build', scheme);
    const b = await harness.buildInstance({
      candidate,
      instance: candidate.instances[0],
      index: 0,
      outDir,
      flagSet: 'guide',
      variant: 'reference',
      extraFlags: [],
      harnessVersion: tools.version,
      timeoutMs: 900_000,
      compiler: 'gcc',
    });
    if (!b.ok) throw new Error(`${scheme}: the build failed`);
    const seconds = { 1: [], [pieces]: [] };
    const digests = new Set();
    for (let r = 0; r < rounds; r++)
      for (const n of r % 2 ? [pieces, 1] : [1, pieces]) {
        const kats = join(work, 'kat', `${scheme}-${r}-${n}`);
        const started = performance.now();
        const o = await harness.runKat({
          candidate,
          label: scheme,
          nistPrefix: info.prefix,
          library: b.library,
          driver: tools.driver,
          outDir: kats,
          manifest: [],
          timeoutMs: 1_800_000,
          pieces: n,
        });
        seconds[n].push((performance.now() - started) / 1000);
        if (o.status !== 'NOKAT') throw new Error(`${scheme}, ${n} piece(s): ${o.status} ${o.detail ?? ''}`);
        digests.add(sha(readFileSync(join(kats, o.file), 'latin1')));
      }
    if (digests.size !== 1) throw new Error(`${scheme}: the joined KAT differs from the serial one`);
    const [serial, split] = [seconds[1], seconds[pieces]].map((xs) => xs.map((x) => x.toFixed(1)).join(', '));
    const ratio = seconds[1].reduce((a, b) => a + b) / seconds[pieces].reduce((a, b) => a + b);
    console.log(`| ${scheme} | ${serial} | ${split} | ${ratio.toFixed(2)}× |`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
