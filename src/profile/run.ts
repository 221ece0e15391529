import { basename, relative, resolve } from 'node:path';
import { buildProfiled, wrapCatalog, type ProfileBuildResult } from '../build/profileBuild.js';
import { flagsFor, type BuildRequest } from '../build/compile.js';
import type { HarnessTools } from '../build/harnessTools.js';
import type { evidencePaths } from '../evidence/layout.js';
import type { BuildEntry, HashProfile, TimingRecord } from '../evidence/types.js';
import { inputBytes, OPERATIONS } from '../measure/operation.js';
import { parseDriverOutput, runProcess } from '../sandbox/run.js';
import { readJsonIfExists, sha256Hex, writeJsonAtomic } from '../util/fsx.js';
import { shares } from '../report/profile.js';

export interface ProfileRequest {
  request: BuildRequest;
  entry: BuildEntry;
  campaignDir: string;
  tools: HarnessTools;
  paths: ReturnType<typeof evidencePaths>;
  cpu: number;
  /** Symbols wrapped for NIST-API code (ngcc-perf.yml profile.nist_symbols). */
  nistSymbols: string[];
  targetSeconds: number;
  timeoutMs: number;
  force?: boolean;
}

/**
 * The profile phase of one instance: hash/DRNG shares per operation (wrapped relink, ngcc_prof)
 * and the memory of each operation alone (ngcc_mem on the plain library).
 */
export async function profileInstance(p: ProfileRequest): Promise<void> {
  const { candidate, instance } = p.request;
  const api = candidate.api;
  const wanted = api === 'nist' ? p.nistSymbols : wrapCatalog('wrap_iccs.c');
  // What the profiles depend on besides the library: the symbols asked to be wrapped.
  const symbols = sha256Hex(wanted.join(','));
  let profiled: ProfileBuildResult | undefined;
  const build = async () => (profiled ??= await buildProfiled(p.request, flagsFor(p.request), wanted));
  const library = resolve(p.campaignDir, p.entry.library!);
  for (const operation of OPERATIONS[candidate.type]) {
    const profilePath = p.paths.profile(candidate.id, instance.label, operation);
    const memoryPath = p.paths.memory(candidate.id, instance.label, operation);
    const previous = readJsonIfExists<HashProfile & { library_sha256?: string; profile_symbols?: string }>(profilePath);
    const upToDate =
      !p.force &&
      previous?.library_sha256 === p.entry.library_sha256 &&
      previous?.profile_symbols === symbols &&
      readJsonIfExists<{ library_sha256?: string }>(memoryPath)?.library_sha256 === p.entry.library_sha256;
    if (upToDate) continue;
    const record = readJsonIfExists<TimingRecord>(p.paths.record(candidate.id, instance.label, operation));
    const perCall = typeof record?.mean_seconds === 'number' ? record.mean_seconds : undefined;
    const ops = perCall ? Math.min(100_000, Math.max(10, Math.round(p.targetSeconds / perCall))) : 100;
    const b = await build();
    if (b.ok) {
      const argv = [p.tools.prof, b.library, candidate.type, operation, String(ops), '1', String(p.cpu), candidate.katRng];
      const run = await runProcess(argv, { timeoutMs: p.timeoutMs, maxOutputBytes: 1 << 20 });
      const out = parseDriverOutput(run.stdout);
      const total = out.lines.find((l) => l[0] === 'TOTAL');
      const calls = out.lines.filter((l) => l[0] === 'CALL').map((l) => ({ fn: l[1]!, in_bits: Number(l[2]), out_bits: Number(l[3]), calls: Number(l[4]), ticks: Number(l[5]) }));
      const complete = run.exitCode === 0 && out.status === 'complete' && total !== undefined;
      const totals = { operations: Number(total?.[1] ?? 0), ticks: Number(total?.[2] ?? 0) };
      writeJsonAtomic(profilePath, {
        schema: 2,
        candidate: candidate.id,
        label: instance.label,
        operation,
        input_bytes: inputBytes(candidate.type, operation),
        status: complete ? 'complete' : 'failed',
        command: argv.map((a) => (a === p.tools.prof ? basename(a) : a === b.library ? relative(p.campaignDir, a) : a)),
        stderr: run.stderr,
        meta: { ...out.meta, tick_source: out.meta.counter ?? 'unknown', wrapped: b.wrapped.join(' ') },
        library_sha256: p.entry.library_sha256,
        profile_symbols: symbols,
        total: totals,
        calls,
        ...(complete && totals.ticks > 0 ? shares(totals.ticks, calls) : {}),
      });
    }
    const mem = await runProcess([p.tools.mem, library, candidate.type, operation, candidate.katRng], { timeoutMs: p.timeoutMs, maxOutputBytes: 1 << 20 });
    const m = parseDriverOutput(mem.stdout);
    const num = (k: string) => (m.meta[k] !== undefined ? Number(m.meta[k]) : null);
    writeJsonAtomic(memoryPath, {
      schema: 1,
      candidate: candidate.id,
      label: instance.label,
      operation,
      status: mem.exitCode === 0 && m.status === 'complete' ? 'complete' : 'failed',
      library_sha256: p.entry.library_sha256,
      stack_bytes: num('stack_bytes'),
      stack_baseline_bytes: num('stack_baseline_bytes'),
      stack_net_bytes: num('stack_net_bytes'),
      heap_peak_bytes: num('heap_peak_bytes'),
      heap_allocations: num('heap_allocations'),
      vmhwm_bytes: num('vmhwm_bytes'),
      ...(mem.exitCode === 0 ? {} : { failure: m.statusDetail ?? (mem.signal ? `killed by ${mem.signal}` : `exit ${mem.exitCode}`) }),
    });
  }
}
