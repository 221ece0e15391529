import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJson } from './fsx.js';

let cached: string | undefined;

/** The ngcc-perf checkout (or installed package): found from this file, bundled or not. */
export function toolRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && readJson<{ name?: string }>(pkg).name === 'ngcc-perf') {
      cached = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the ngcc-perf package root');
    dir = up;
  }
}

export const nativeDir = (): string => join(toolRoot(), 'native');

/** The package's version (package.json), which the evidence records beside the host's tools. */
export const toolVersion = (): string => readJson<{ version: string }>(join(toolRoot(), 'package.json')).version;
