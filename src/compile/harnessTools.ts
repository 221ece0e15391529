import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../sandbox/run.js';
import { sha256Hex } from '../util/fsx.js';
import { nativeDir } from '../util/paths.js';
import { CC, ccVersion } from '../env/toolchain.js';

export interface HarnessTools {
  dir: string;
  /** Hash of the harness's native sources and the compiler: part of every build key. */
  version: string;
  kat: string;
  time: string;
  prof: string;
  mem: string;
}

/** Hash over every native source file (sorted), so any harness change rebuilds libraries. */
export function harnessVersion(): string {
  const root = nativeDir();
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(c|h)$/.test(e.name)) files.push(p);
    }
  };
  walk(root);
  const parts = files.map((f) => `${f.slice(root.length)}\n${sha256Hex(readFileSync(f))}`);
  return sha256Hex(`${parts.join('\n')}\n${ccVersion()}`).slice(0, 16);
}

let built: Promise<HarnessTools> | undefined;

/** Compiles the drivers once per harness version into a shared cache folder. */
export function harnessTools(): Promise<HarnessTools> {
  built ??= compileTools();
  return built;
}

async function compileTools(): Promise<HarnessTools> {
  const version = harnessVersion();
  const dir = join(process.env.NGCC_CACHE_DIR ?? join(tmpdir(), `ngcc-perf-${process.getuid?.() ?? 0}`), `harness-${version}`);
  const tools = {
    dir,
    version,
    kat: join(dir, 'ngcc_kat'),
    time: join(dir, 'ngcc_time'),
    prof: join(dir, 'ngcc_prof'),
    mem: join(dir, 'ngcc_mem'),
  };
  if ([tools.kat, tools.time, tools.prof, tools.mem].every((t) => existsSync(t))) return tools;
  const n = nativeDir();
  const staging = `${dir}.tmp-${process.pid}`;
  mkdirSync(staging, { recursive: true });
  const common = ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-Werror', `-I${n}`];
  const targets: Array<[string, string[], string[]]> = [
    ['ngcc_kat', [join(n, 'ngcc_kat.c'), join(n, 'harness.c')], ['-ldl']],
    ['ngcc_time', [join(n, 'ngcc_time.c'), join(n, 'harness.c'), join(n, 'ops.c'), join(n, 'cpucycles.c')], ['-ldl']],
    ['ngcc_prof', [join(n, 'hashprof', 'ngcc_prof.c'), join(n, 'harness.c'), join(n, 'ops.c')], ['-ldl']],
    // -z now: lazy symbol binding inside the measured call would count as its stack.
    ['ngcc_mem', [join(n, 'ngcc_mem.c'), join(n, 'harness.c'), join(n, 'ops.c')], ['-Wl,-z,now', '-ldl', '-lpthread']],
  ];
  for (const [name, sources, link] of targets) {
    const r = await runProcess([CC, ...common, '-o', join(staging, name), ...sources, ...link], { timeoutMs: 120_000 });
    if (r.exitCode !== 0) throw new Error(`building the native harness (${name}) failed:\n${r.stderr}`);
  }
  try {
    renameSync(staging, dir);
  } catch {
    // Another process won the race (its tools are identical), or an older, incomplete set is
    // in the way: replace that one.
    if (![tools.kat, tools.time, tools.prof, tools.mem].every((t) => existsSync(t))) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    } else rmSync(staging, { recursive: true, force: true });
  }
  return tools;
}
