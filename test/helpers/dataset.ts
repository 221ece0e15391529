import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SyntheticOp {
  id: string;
  label: string;
  op: string;
  /** Per-trial cycles per call. */
  trials: number[];
  iters?: number;
  peakRss?: number;
  flags?: string;
  /** Per trial, the share of its window the process spent off the CPU (kernel_cpu_s, window_s); left out unless given. */
  offCpu?: number[];
  /** The record's start (which measurement it is); left out unless given. */
  startedUtc?: string;
  librarySha256?: string;
}

export interface SyntheticInstance {
  id: string;
  label: string;
  kat?: string;
  sizes?: Record<string, number>;
  elf?: number;
}

const medianOf = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Writes a minimal but valid evidence folder DATA_DIR/<system>/ with the given numbers. */
export function writeSyntheticSystem(dataDir: string, system: string, instances: SyntheticInstance[], ops: SyntheticOp[]): string {
  const dir = join(dataDir, system);
  mkdirSync(dir, { recursive: true });
  // Each instance's library: the one an op names, else a made-up hash of its own, in build.json and its records alike.
  const libraryOf = (id: string, label: string) =>
    ops.find((o) => o.id === id && o.label === label && o.librarySha256)?.librarySha256 ??
    createHash('sha256').update(`${id}/${label}`).digest('hex');
  const build = Object.fromEntries(
    instances.map((i) => [
      `${i.id}/${i.label}`,
      {
        candidate: i.id,
        label: i.label,
        instance: i.label,
        variant: 'reference',
        flags: 'guide',
        kat: i.kat ?? 'PASS',
        sizes: i.sizes,
        elf_load_bytes: i.elf,
        library_sha256: libraryOf(i.id, i.label),
      },
    ]),
  );
  // A KAT log for every status that has one, as the kat phase leaves it (validate checks its RESULT line).
  for (const i of instances) {
    const kat = i.kat ?? 'PASS';
    if (kat === 'BUILDFAIL' || kat === 'NOKAT') continue;
    const log = `# synthetic\nRESULT ${i.id} ${i.label} ${kat}\n`;
    mkdirSync(join(dir, 'kat', i.id), { recursive: true });
    writeFileSync(join(dir, 'kat', i.id, `${i.label}.log`), log);
    Object.assign(build[`${i.id}/${i.label}`]!, {
      kat_log: `kat/${i.id}/${i.label}.log`,
      kat_log_sha256: createHash('sha256').update(log).digest('hex'),
    });
  }
  writeFileSync(join(dir, 'build.json'), JSON.stringify({ instances: build }, null, 1));
  writeFileSync(join(dir, 'campaign.json'), JSON.stringify({ system_id: system, environment_at_end: { architecture: 'x86_64' } }));
  for (const o of ops) {
    const iters = o.iters ?? 1000;
    const trials = o.trials.map((c, i) => {
      const seconds = (c * iters) / 2e9;
      const off = o.offCpu?.[i];
      return {
        measurements: iters,
        seconds,
        cycles: c * iters,
        ...(off === undefined ? {} : { kernel_cpu_s: seconds * (1 - off), window_s: seconds }),
      };
    });
    const n = iters * trials.length;
    const cycles = trials.reduce((a, t) => a + t.cycles, 0);
    const seconds = trials.reduce((a, t) => a + t.seconds, 0);
    const inst = instances.find((i) => i.id === o.id && i.label === o.label);
    const record = {
      schema: 2,
      status: 'complete',
      candidate: o.id,
      label: o.label,
      operation: o.op,
      flags: o.flags ?? 'guide',
      kat: inst?.kat ?? 'PASS',
      plan: { iterations_per_trial: iters, trials: trials.length },
      trials,
      measurements: n,
      mean_cycles: cycles / n,
      mean_seconds: seconds / n,
      median_trial_seconds: medianOf(trials.map((t) => t.seconds / t.measurements)),
      operations_per_second: n / seconds,
      peak_rss_bytes: o.peakRss ?? 1_500_000,
      baseline_rss_bytes: 1_400_000,
      sizes: inst?.sizes,
      ...(o.startedUtc ? { started_utc: o.startedUtc } : {}),
      library_sha256: o.librarySha256 ?? libraryOf(o.id, o.label),
    };
    mkdirSync(join(dir, 'records', o.id), { recursive: true });
    writeFileSync(join(dir, 'records', o.id, `${o.label}__${o.op}.json`), JSON.stringify(record, null, 1));
  }
  return dir;
}

interface SyntheticCtFinding {
  kind: 'branch' | 'index' | 'division' | 'syscall';
  function: string;
  file?: string;
  line?: number;
  count?: number;
  suppressed?: boolean;
  reason?: string;
  compiler_made?: 'loop-bound' | 'no-branch';
}

/** One operation of a synthetic constant-time check; the status follows its unsuppressed findings unless given. */
export interface SyntheticCtOperation {
  status?: 'clean' | 'flagged' | 'skipped' | 'failed';
  calls?: number;
  findings?: SyntheticCtFinding[];
  reason?: string;
  coverage?: unknown;
}

/** Writes `ct/<id>/<label>.json` (CONTRACT §8) into a system folder, as the ct phase would. */
export function writeSyntheticCt(
  systemDir: string,
  id: string,
  label: string,
  operations: Record<string, SyntheticCtOperation>,
  extra: { divisions?: unknown[]; librarySha256?: string } = {},
): string {
  const ops = Object.fromEntries(
    Object.entries(operations).map(([op, o]) => {
      const findings = (o.findings ?? []).map((f) => ({ count: 1, suppressed: false, ...f }));
      const status = o.status ?? (findings.some((f) => !f.suppressed) ? 'flagged' : 'clean');
      return [
        op,
        {
          status,
          calls: o.calls ?? 3,
          findings,
          ...(o.reason ? { reason: o.reason } : {}),
          ...(o.coverage ? { coverage: o.coverage } : {}),
        },
      ];
    }),
  );
  const file = join(systemDir, 'ct', id, `${label}.json`);
  mkdirSync(join(systemDir, 'ct', id), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify(
      {
        schema: 1,
        tool: 'valgrind-3.19.0 memcheck',
        library_sha256: extra.librarySha256 ?? 'ab'.repeat(32),
        operations: ops,
        ...(extra.divisions ? { divisions: extra.divisions } : {}),
      },
      null,
      1,
    ),
  );
  return file;
}
