import type { DeclaredSecurity } from '../config/schemas.js';
import type { TimingRecord } from '../evidence/fileTypes.js';
import { instanceStatus } from '../kat/status.js';
import { hashMessageBytes, hashOperation } from '../measure/hashOperations.js';
import { refusedTrials, partialStop } from '../measure/refusals.js';
import { deriveStatistics, recordSpread } from '../measure/stats.js';
import { formatSpread } from '../text/format.js';
import { isNoisy } from './spread.js';
import type { CandidateView, InstanceView, ReportModel } from './views.js';

/**
 * Who is fastest at each claimed security level (docs/pages.md#rankings): the summary's rankings as
 * plain data. Every figure is an operation's median trial per call, never the guide's mean, so that
 * a few slow trials on a busy host do not reorder the table.
 */

/** What a category ranks by: its operations, and the figure its order follows. */
export interface RankingRule {
  type: CandidateView['type'];
  title: string;
  /** The operations shown, in the column order. */
  ops: readonly string[];
  /** The order's figure, as its column is headed. */
  key: string;
  /** The figure the order follows, from an instance's per-operation medians (all of `ops` present). */
  keyOf: (medians: Readonly<Record<string, number>>) => number;
  /** What each figure is: cycles per call, or a hash's cycles per message byte. */
  unit: 'cycles' | 'cycles per byte';
}

const HASH_LONGEST = 65536;
const HASH_SHORTEST = 32;

const RANKING_RULES: readonly RankingRule[] = [
  {
    type: 'kem',
    title: 'Key encapsulation',
    ops: ['keygen', 'enc', 'dec'],
    key: 'keygen + enc + dec',
    keyOf: (m) => m.keygen! + m.enc! + m.dec!,
    unit: 'cycles',
  },
  {
    type: 'sig',
    title: 'Digital signatures',
    ops: ['keygen', 'sign', 'verify'],
    key: 'sign + verify',
    keyOf: (m) => m.sign! + m.verify!,
    unit: 'cycles',
  },
  { type: 'kex', title: 'Key exchange', ops: ['exchange'], key: 'exchange', keyOf: (m) => m.exchange!, unit: 'cycles' },
  {
    type: 'hash',
    title: 'Hash functions',
    ops: [hashOperation(HASH_SHORTEST), hashOperation(HASH_LONGEST)],
    key: 'cycles per byte at 64 KiB',
    keyOf: (m) => m[hashOperation(HASH_LONGEST)]!,
    unit: 'cycles per byte',
  },
];

/** One instance in a ranking: its medians per operation and its place in each. */
interface RankedRow {
  candidate: CandidateView;
  inst: InstanceView;
  medians: Record<string, number>;
  key: number;
  /** 1 for the group's fastest, per operation. */
  place: Record<string, number>;
  /** Its place by the order's figure: rows of equal figures share one (1, 1, 3). */
  rank: number;
}

/** A level's group: NIST level N, a claimed number of bits, or none declared. */
export interface LevelGroup {
  title: string;
  /** Short, for a chart's labels: "L1", "128 b", "(none)". */
  tag: string;
  ranked: RankedRow[];
}

/** An instance kept out of the ranking, and why. */
interface UnrankedRow {
  candidate: CandidateView;
  inst: InstanceView;
  group: string;
  why: string;
}

export interface CategoryRanking {
  rule: RankingRule;
  groups: LevelGroup[];
  unranked: UnrankedRow[];
}

/** "L1 · 128 bits", "L3", "192 bits", or "none": what an instance claims. */
export function claimShown(s: DeclaredSecurity | undefined): string {
  const parts = [
    ...(s?.nist_level !== undefined ? [`L${s.nist_level}`] : []),
    ...(s?.security_bits !== undefined ? [`${s.security_bits} bits`] : []),
  ];
  return parts.length > 0 ? parts.join(' · ') : 'none';
}

/** The group an instance's claim puts it in, with its place in the page's order. */
function groupOf(s: DeclaredSecurity | undefined): { title: string; tag: string; order: number } {
  if (s?.nist_level !== undefined) return { title: `NIST level ${s.nist_level}`, tag: `L${s.nist_level}`, order: s.nist_level };
  if (s?.security_bits !== undefined)
    return { title: `${s.security_bits}-bit security (no NIST level)`, tag: `${s.security_bits} b`, order: 10 + s.security_bits };
  return { title: 'No declared level', tag: '(none)', order: Number.MAX_SAFE_INTEGER };
}

/** An operation's median trial per call (per message byte for a hash), or why there is none to rank. */
function medianOf(rule: RankingRule, inst: InstanceView, op: string): number | string {
  const r: TimingRecord | undefined = inst.records[op];
  if (!r?.trials?.length) return r?.status === 'failed' ? `${shownOp(op)} failed` : `${shownOp(op)} not measured`;
  if (refusedTrials(r.processes).length > 0) return `${shownOp(op)}: a trial refused`;
  if (partialStop(r) !== undefined) return `${shownOp(op)}: partial`;
  const spread = recordSpread(r);
  if (isNoisy(spread)) return `${shownOp(op)} noisy (trials spread ${formatSpread(spread)})`;
  const perCall = deriveStatistics(r.trials).median_trial_cycles;
  // A trial of no calls (a harness dataset's) gives no figure: never a NaN in a table or a chart.
  if (!Number.isFinite(perCall) || perCall <= 0) return `${shownOp(op)}: no figure`;
  return rule.unit === 'cycles per byte' ? perCall / (hashMessageBytes(op) ?? 1) : perCall;
}

/** "64 KiB", "keygen": an operation as the rankings name it. */
export function shownOp(op: string): string {
  const bytes = hashMessageBytes(op);
  if (bytes === undefined) return op;
  return bytes >= 1024 ? `${bytes / 1024} KiB` : `${bytes} B`;
}

/** Why an instance cannot be ranked, or its medians. */
function standing(rule: RankingRule, inst: InstanceView): Record<string, number> | string {
  const status = instanceStatus(inst.build);
  if (status === 'FORGED') return 'FORGED: its outputs were not its own work';
  if (status === undefined) return 'KAT not checked';
  if (status !== 'PASS') return `KAT ${status}`;
  const medians: Record<string, number> = {};
  const problems: string[] = [];
  for (const op of rule.ops) {
    const m = medianOf(rule, inst, op);
    if (typeof m === 'string') problems.push(m);
    else medians[op] = m;
  }
  return problems.length > 0 ? problems.join('; ') : medians;
}

/** Each operation's place among the rows, 1 for the fastest (equal figures share a place). */
function placeRows(rule: RankingRule, rows: RankedRow[]): void {
  for (const op of rule.ops) {
    const sorted = rows.map((r) => r.medians[op]!).sort((a, b) => a - b);
    for (const r of rows) r.place[op] = sorted.indexOf(r.medians[op]!) + 1;
  }
}

function rankCategory(rule: RankingRule, candidates: readonly CandidateView[]): CategoryRanking {
  const groups = new Map<string, LevelGroup & { order: number }>();
  const unranked: UnrankedRow[] = [];
  for (const candidate of candidates.filter((c) => c.type === rule.type)) {
    for (const inst of candidate.instances) {
      const g = groupOf(inst.security);
      const got = standing(rule, inst);
      if (typeof got === 'string') {
        unranked.push({ candidate, inst, group: g.title, why: got });
        continue;
      }
      const group = groups.get(g.title) ?? { title: g.title, tag: g.tag, order: g.order, ranked: [] };
      groups.set(g.title, group);
      group.ranked.push({ candidate, inst, medians: got, key: rule.keyOf(got), place: {}, rank: 0 });
    }
  }
  const ordered = [...groups.values()].sort((a, b) => a.order - b.order);
  for (const g of ordered) {
    g.ranked.sort((a, b) => a.key - b.key || a.candidate.id.localeCompare(b.candidate.id) || a.inst.label.localeCompare(b.inst.label));
    placeRows(rule, g.ranked);
    for (const r of g.ranked) r.rank = g.ranked.findIndex((x) => x.key === r.key) + 1;
  }
  return { rule, groups: ordered.map(({ order: _order, ...g }) => g), unranked };
}

/** Every category the model has candidates of, in the summary's order. */
export function rankingsOf(model: ReportModel): CategoryRanking[] {
  return RANKING_RULES.filter((rule) => model.candidates.some((c) => c.type === rule.type)).map((rule) =>
    rankCategory(rule, model.candidates),
  );
}
