// The harness's own TypeScript, bundled for a bench: `exports` are export lines relative to the
// checkout ("export { runTrial } from './src/measure/trial.ts';"). The bundle sits inside the
// checkout (`scratch`), so it finds native/ from where it is, as dist/ does; the caller removes it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

export async function bundleHarness(root, scratch, exports) {
  mkdirSync(scratch, { recursive: true });
  const outfile = join(scratch, 'harness.mjs');
  await build({
    stdin: { contents: exports.join('\n'), resolveDir: root, loader: 'ts' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    // The packages stay where node_modules has them: the bundle sits inside the checkout.
    packages: 'external',
    outfile,
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
}
