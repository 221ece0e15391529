import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessInputs, NATIVE_MANIFEST, type NativeUnit, nativeManifest } from '../src/compile/harnessTools.js';
import { repoRoot } from './helpers/tmp.js';

// native/binaries.json, the one list of what each native binary and linked unit is built from.
const native = join(repoRoot, 'native');
const manifest = nativeManifest();
const entries: Array<[string, NativeUnit & { generators?: Record<string, string>; include?: string[] }]> = [
  ...Object.entries(manifest.binaries).map(([k, v]) => [`binaries.${k}`, v] as [string, NativeUnit]),
  ...Object.entries(manifest.linked).map(([k, v]) => [`linked.${k}`, v] as [string, NativeUnit]),
  ...Object.entries(manifest.other).map(([k, v]) => [`other.${k}`, v] as [string, NativeUnit]),
];
const sourcesOf = (e: (typeof entries)[number][1]) => [...e.sources, ...Object.values(e.generators ?? {})];

/** The harness's headers a file reaches through `#include "…"`: beside the includer, under native/ (-I native), or an entry's `include` folder. */
function headersReached(sources: string[], include: string[] = []): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    for (const m of readFileSync(join(native, file), 'utf8').matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
      const hit = [join(dirname(file), m[1]!), m[1]!, ...include.map((d) => join(d, m[1]!))]
        .map((c) => normalize(c))
        .find((c) => !c.startsWith('..') && existsSync(join(native, c)));
      // Not the harness's: the scheme's api.h, PQClean's fips202.h, a system header.
      if (hit === undefined || seen.has(hit)) continue;
      seen.add(hit);
      visit(hit);
    }
  };
  for (const s of sources) visit(s);
  return [...seen].sort();
}

describe('native/binaries.json', () => {
  it('names only files that exist under native/', () => {
    for (const [, e] of entries) for (const f of [...sourcesOf(e), ...e.headers]) expect(existsSync(join(native, f)), f).toBe(true);
  });

  it('names every C source and header under native/', () => {
    const named = new Set(entries.flatMap(([, e]) => [...sourcesOf(e), ...e.headers]));
    const onDisk = readdirSync(native, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[ch]$/.test(f));
    expect(onDisk.filter((f) => !named.has(f))).toEqual([]);
  });

  it("lists each entry's headers as exactly those its sources include", () => {
    for (const [name, e] of entries) expect([name, [...e.headers].sort()]).toEqual([name, headersReached(sourcesOf(e), e.include)]);
  });

  it('gives each binary one main, in native/bin/, and keeps the jobs of ngcc_driver in native/jobs/', () => {
    for (const [name, b] of Object.entries(manifest.binaries))
      expect([name, b.sources.filter((f) => f.startsWith('bin/')).length]).toEqual([name, 1]);
    expect(manifest.binaries.ngcc_driver.sources.filter((f) => f.startsWith('jobs/')).length).toBeGreaterThan(0);
    for (const [name, b] of Object.entries(manifest.binaries))
      if (name !== 'ngcc_driver') expect([name, b.sources.filter((f) => f.startsWith('jobs/'))]).toEqual([name, []]);
  });

  it('is hashed into the harness version with every file it names', () => {
    const hashed = new Set(harnessInputs().map((f) => relative(native, f)));
    expect(hashed.has(NATIVE_MANIFEST)).toBe(true);
    for (const [, e] of entries) for (const f of [...sourcesOf(e), ...e.headers]) expect(hashed.has(f), f).toBe(true);
  });
});
