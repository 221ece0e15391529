import type { InstanceView } from './views.js';

/**
 * A key exchange's figures as the pages show them, from whatever evidence holds them: build.json
 * `sizes` (this tool's KAT), else a timing record's `sizes` and `kex` (both tools' records).
 */
export interface KexFigures {
  passes?: number;
  /** Each message's bytes in pass order, from the exchange the harness ran. */
  messages: number[];
  total?: number;
  pk?: number;
  sk?: number;
  ss?: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function kexFigures(inst: InstanceView): KexFigures {
  const record = Object.values(inst.records).find((r) => r && typeof r.sizes === 'object' && r.sizes !== null);
  const recordSizes = (record?.sizes ?? {}) as Record<string, unknown>;
  const recordKex = (record?.kex ?? {}) as Record<string, unknown>;
  const sizes: Record<string, unknown> = { ...recordSizes, ...(inst.build?.sizes ?? {}) };
  const passes = num(sizes.kex_passes) ?? num(recordKex.kex_passes);
  const messages: number[] = [];
  for (let p = 1; num(sizes[`msg${p}_bytes`]) !== undefined; p++) messages.push(num(sizes[`msg${p}_bytes`])!);
  return {
    passes,
    messages,
    total: num(sizes.total_msg_bytes) ?? (messages.length ? messages.reduce((a, b) => a + b, 0) : undefined),
    pk: num(sizes.pk_bytes),
    sk: num(sizes.sk_bytes),
    ss: num(sizes.ss_actual_bytes) ?? num(sizes.ss_bytes),
  };
}

/** The most passes among a candidate's instances (its operations list names each pass). */
export function kexPassesOf(instances: InstanceView[]): number | undefined {
  const known = instances.map((i) => kexFigures(i).passes).filter((p): p is number => p !== undefined);
  if (known.length > 0) return Math.max(...known);
  const passOps = instances.flatMap((i) => Object.keys(i.records)).flatMap((op) => /^pass(\d+)$/.exec(op)?.[1] ?? []);
  return passOps.length ? Math.max(...passOps.map(Number)) : undefined;
}
