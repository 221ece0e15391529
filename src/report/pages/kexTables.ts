import { figureMarks } from '../spread.js';
import { instanceStatus } from '../../kat/status.js';
import { anyCt, CT_NOTE_MEANING, withCtNote } from './ctSection.js';
import type { TimingRecord } from '../../evidence/fileTypes.js';
import { kexSteps } from '../../measure/kexOperations.js';
import { formatCycles, formatShare } from '../../text/format.js';
import { code, heading, link, para, table, type Cell, type Section } from '../../text/md.js';
import { hashShares } from '../profile.js';
import { kexFigures } from '../kexModel.js';
import type { CandidateView, InstanceView, ReportModel } from '../views.js';
import { candidatePageLink, notMeasuredReason, unreadableCell, unreadableFile } from './cells.js';

/** The key-exchange tables of the pages (candidate §6, the summary's Key exchange, the method page's step sums). */

const orNot = (n: number | undefined) => (n === undefined ? 'not recorded' : String(n));

/** Candidate page §6 for a key exchange: passes, each message, their total, long-term keys, shared secret. */
export function kexSizesSection(c: CandidateView) {
  const rows = c.instances.map((inst): Cell[] => {
    const f = kexFigures(inst);
    if (f.passes === undefined && f.messages.length === 0) return [code(inst.label), notMeasuredReason(inst), '—', '—', '—', '—'];
    return [
      code(inst.label),
      orNot(f.passes),
      f.messages.length ? f.messages.join(' / ') : 'not recorded',
      orNot(f.total),
      `${orNot(f.pk)} / ${orNot(f.sk)}`,
      orNot(f.ss),
    ];
  });
  return [
    heading(2, '6. Transmission and storage overhead'),
    table(['instance', 'passes', 'messages (bytes)', 'total', 'long-term pk / sk', 'shared secret'], rows),
  ];
}

/** "1.33 M (69%)": the exchange's mean cycles with its hash share, as the summary shows them. */
function exchangeCell(inst: InstanceView): string {
  const r = inst.records.exchange;
  if (!r && unreadableFile(inst, 'timing', 'exchange')) return unreadableCell('timing');
  if (!r || r.mean_cycles === undefined || !r.trials?.length) return r?.status === 'failed' ? 'failed' : '–';
  const p = inst.profiles.exchange;
  return `${formatCycles(r.mean_cycles)}${p ? ` (${formatShare(hashShares(p).hash)})` : ''}${figureMarks(r)}`;
}

/** The summary's Key exchange section, in the layout of the existing harness's summary. */
export const keyExchangeSummary: Section<[ReportModel]> = (model) => {
  const cands = model.candidates.filter((c) => c.type === 'kex');
  if (cands.length === 0) return [];
  const rows = cands.flatMap((c) =>
    c.instances.map((inst): Cell[] => {
      const kat = instanceStatus(inst.build) ?? 'not checked';
      const total = kexFigures(inst).total;
      return [
        [link(candidatePageLink(c.id, model.system), c.id)],
        c.page ? [`${c.algorithm} `, link(c.page, 'page')] : c.algorithm,
        kat === 'PASS' ? code(inst.label) : [code(inst.label), ` ⚠ KAT ${kat}`],
        exchangeCell(inst),
        total === undefined ? '–' : String(total),
        withCtNote(kat === 'PASS' ? '–' : 'KAT/output caveat; see candidate page', inst),
      ];
    }),
  );
  return [
    heading(2, 'Key exchange'),
    para(
      'One full exchange (both parties, every pass, both derivations; no network time), mean cycles with the share spent in the ICCS placeholder hash functions in parentheses; transferred is the sum of the protocol messages in bytes.',
    ),
    table(['id', 'algorithm', 'instance performance report', 'exchange cycles (sym %)', 'transferred (B)', 'notes'], rows),
    ...(anyCt(cands.flatMap((c) => c.instances)) ? [para(CT_NOTE_MEANING)] : []),
  ];
};

/** How the steps' mean cycles add up against the exchange's, for one instance. */
export interface StepSum {
  exchange: number;
  steps: number;
  sum: number;
  /** Counter ticks an empty span costs (the time job's META span_overhead_cycles), when recorded. */
  overhead?: number;
  /** What the sum may differ by: each step's span overhead plus the exchange's own trial range per call. */
  allowed: number;
  within: boolean;
}

const perCall = (r: TimingRecord) => r.trials.map((t) => t.cycles / t.measurements);

export function stepSum(c: CandidateView, inst: InstanceView): StepSum | undefined {
  const ex = inst.records.exchange;
  const steps = kexSteps(c.operations).map((op) => inst.records[op]);
  if (!ex?.trials?.length || ex.mean_cycles === undefined || steps.some((r) => !r?.trials?.length || r.mean_cycles === undefined))
    return undefined;
  const sum = steps.reduce((a, r) => a + r!.mean_cycles!, 0);
  const overheads = [ex, ...steps].flatMap((r) =>
    ((r!.processes ?? []) as Array<{ meta?: Record<string, string> }>).flatMap((p) =>
      p.meta?.span_overhead_cycles !== undefined ? [Number(p.meta.span_overhead_cycles)] : [],
    ),
  );
  const overhead = overheads.length ? Math.max(...overheads) : undefined;
  const trials = perCall(ex);
  const noise = Math.max(...trials) - Math.min(...trials);
  const allowed = (overhead ?? 0) * steps.length + noise;
  return { exchange: ex.mean_cycles, steps: steps.length, sum, overhead, allowed, within: Math.abs(sum - ex.mean_cycles) <= allowed };
}

/** The method page's check: the steps, each timed inside full exchanges, add up to the exchange. */
export const kexStepSums: Section<[ReportModel]> = (model) => {
  const rows = model.candidates
    .filter((c) => c.type === 'kex')
    .flatMap((c) =>
      c.instances.flatMap((inst): Cell[][] => {
        const s = stepSum(c, inst);
        if (!s) return [[code(c.id), code(inst.label), 'not measured', '—', '—', '—', '—']];
        const diff = s.sum - s.exchange;
        return [
          [
            code(c.id),
            code(inst.label),
            formatCycles(s.exchange),
            formatCycles(s.sum),
            `${diff >= 0 ? '+' : '−'}${formatCycles(Math.abs(diff))} (${formatShare(Math.abs(diff) / s.exchange)})`,
            `${formatCycles(s.allowed)}${s.overhead === undefined ? ' (span overhead not recorded)' : ` (${s.steps} × ${s.overhead} + trial range)`}`,
            s.within ? 'yes' : '⚠ no',
          ],
        ];
      }),
    );
  if (rows.length === 0) return [];
  return [
    heading(2, 'Key exchange: steps against the exchange'),
    para(
      "Each step (init_a, init_b, pass1 … passN, derive_a, derive_b) is timed inside full exchanges, so its mean and the exchange's come from separate processes. Their sum should equal the exchange's mean within what each counted span adds (two counter reads, the empty span's ticks) and the exchange's own spread between trials; ⚠ marks an instance where it does not.",
    ),
    table(['candidate', 'instance', 'exchange (mean cycles)', 'sum of the steps', 'difference', 'allowed', 'within'], rows),
  ];
};
