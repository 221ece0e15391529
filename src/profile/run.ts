import { basename, relative, resolve } from 'node:path';
import { buildProfiled, wrapCatalog } from '../compile/profileBuild.js';
import { flagsFor, type BuildRequest } from '../compile/compile.js';
import type { HarnessTools } from '../compile/harnessTools.js';
import type { evidencePaths } from '../evidence/layout.js';
import type { BuildEntry, HashProfile, TimingRecord } from '../evidence/types.js';
import { inputBytes, OPERATIONS } from '../measure/operation.js';
import { parseDriverOutput, runProcess } from '../sandbox/run.js';
import { readJsonIfExists, sha256Hex, writeJsonAtomic } from '../util/fsx.js';
import { medianRound, shares } from '../measure/shares.js';

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
  /** Fresh ngcc_prof processes per operation; the figure is the median round's. */
  rounds: number;
  timeoutMs: number;
  force?: boolean;
}

/** One run of ngcc_prof: a fresh process timing `operations` calls of one operation. */
interface ProfileRound {
  argv: string[];
  stderr: string;
  complete: boolean;
  meta: Record<string, string>;
  total: { operations: number; ticks: number };
  calls: HashProfile['calls'];
  hashShare: number;
}

/**
 * The profile phase of one instance: hash/DRNG shares per operation (wrapped relink, ngcc_prof)
 * and the memory of each operation alone (ngcc_mem on the plain library).
 * Shares come from `rounds` fresh processes per operation, interleaved across the operations like
 * timing trials, so that a passing disturbance of the machine moves one round, not the figure.
 */
export async function profileInstance(p: ProfileRequest): Promise<void> {
  const { candidate, instance } = p.request;
  const api = candidate.api;
  const wanted = api === 'nist' ? p.nistSymbols : wrapCatalog('wrap_iccs.c');
  // What the profiles depend on besides the library: the symbols asked to be wrapped.
  const symbols = sha256Hex(wanted.join(','));
  const library = resolve(p.campaignDir, p.entry.library!);
  const stale = OPERATIONS[candidate.type].filter((operation) => {
    const previous = readJsonIfExists<HashProfile & { library_sha256?: string; profile_symbols?: string }>(p.paths.profile(candidate.id, instance.label, operation));
    const memory = readJsonIfExists<{ library_sha256?: string }>(p.paths.memory(candidate.id, instance.label, operation));
    return p.force || previous?.library_sha256 !== p.entry.library_sha256 || previous?.profile_symbols !== symbols || memory?.library_sha256 !== p.entry.library_sha256;
  });
  if (stale.length === 0) return;

  const profiled = await buildProfiled(p.request, flagsFor(p.request), wanted);
  const rounds = new Map(stale.map((operation) => [operation, [] as ProfileRound[]]));
  if (profiled.ok) {
    const opsPerRound = new Map(
      stale.map((operation) => {
        const record = readJsonIfExists<TimingRecord>(p.paths.record(candidate.id, instance.label, operation));
        const perCall = typeof record?.mean_seconds === 'number' ? record.mean_seconds : undefined;
        return [operation, perCall ? Math.min(100_000, Math.max(10, Math.round(p.targetSeconds / p.rounds / perCall))) : 100];
      }),
    );
    for (let round = 0; round < p.rounds; round++) {
      for (const operation of stale) {
        const done = rounds.get(operation)!;
        if (done.some((r) => !r.complete)) continue; // a failed operation is not retried
        const argv = [p.tools.prof, profiled.library, candidate.type, operation, String(opsPerRound.get(operation)), '1', String(p.cpu), candidate.katRng];
        const run = await runProcess(argv, { timeoutMs: p.timeoutMs, maxOutputBytes: 1 << 20 });
        const out = parseDriverOutput(run.stdout);
        const total = out.lines.find((l) => l[0] === 'TOTAL');
        const calls = out.lines.filter((l) => l[0] === 'CALL').map((l) => ({ fn: l[1]!, in_bits: Number(l[2]), out_bits: Number(l[3]), calls: Number(l[4]), ticks: Number(l[5]) }));
        const totals = { operations: Number(total?.[1] ?? 0), ticks: Number(total?.[2] ?? 0) };
        const complete = run.exitCode === 0 && out.status === 'complete' && total !== undefined && totals.ticks > 0;
        done.push({ argv, stderr: run.stderr, complete, meta: out.meta, total: totals, calls, hashShare: complete ? shares(totals.ticks, calls).hash_share : NaN });
      }
    }
  }

  for (const operation of stale) {
    if (profiled.ok) {
      const done = rounds.get(operation)!;
      const failed = done.find((r) => !r.complete);
      const chosen = failed ?? medianRound(done)!;
      writeJsonAtomic(p.paths.profile(candidate.id, instance.label, operation), {
        schema: 2,
        candidate: candidate.id,
        label: instance.label,
        operation,
        input_bytes: inputBytes(candidate.type, operation),
        status: failed ? 'failed' : 'complete',
        command: chosen.argv.map((a) => (a === p.tools.prof ? basename(a) : a === profiled.library ? relative(p.campaignDir, a) : a)),
        stderr: chosen.stderr,
        meta: { ...chosen.meta, tick_source: chosen.meta.counter ?? 'unknown', wrapped: profiled.wrapped.join(' ') },
        library_sha256: p.entry.library_sha256,
        profile_symbols: symbols,
        total: chosen.total,
        calls: chosen.calls,
        ...(failed ? {} : { ...shares(chosen.total.ticks, chosen.calls), round_hash_shares: done.map((r) => r.hashShare) }),
      });
    }
    await recordMemory(p, library, operation);
  }
}

/** ngcc_mem on the plain library: painted stack and interposed heap of one operation alone. */
async function recordMemory(p: ProfileRequest, library: string, operation: string): Promise<void> {
  const { candidate, instance } = p.request;
  const mem = await runProcess([p.tools.mem, library, candidate.type, operation, candidate.katRng], { timeoutMs: p.timeoutMs, maxOutputBytes: 1 << 20 });
  const m = parseDriverOutput(mem.stdout);
  const num = (k: string) => (m.meta[k] !== undefined ? Number(m.meta[k]) : null);
  writeJsonAtomic(p.paths.memory(candidate.id, instance.label, operation), {
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
