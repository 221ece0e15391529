// Bundles the two entry points into dist/ as ESM (the @actions/* 3.x packages are ESM-only).
// The output is deterministic so that a test can rebuild into a temporary folder and compare.
import { build } from 'esbuild';

const outdir = process.argv[2] ?? 'dist';
const banner = "import { createRequire as __ngccCreateRequire } from 'node:module'; const require = __ngccCreateRequire(import.meta.url);";

await build({
  entryPoints: { index: 'src/index.ts', cli: 'src/cli.ts' },
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: banner },
  legalComments: 'none',
  logLevel: 'warning',
});
