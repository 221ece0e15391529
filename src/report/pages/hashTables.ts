import { figureMarks } from '../spread.js';
import { instanceStatus } from '../../kat/status.js';
import { anyCt, CT_NOTE_MEANING, withCtNote } from './ctSection.js';
import type { RootContent } from 'mdast';
import type { TimingRecord } from '../../evidence/fileTypes.js';
import { HASH_MESSAGE_BYTES, hashMessageBytes, hashOperation } from '../../measure/hashOperations.js';
import { ICCS_HELPERS, iccsLabel, xofLabelFor } from '../../measure/iccsBaseline.js';
import { formatCycles, formatCyclesPerByte, pyFixed } from '../../text/format.js';
import { code, heading, link, para, table, type Cell } from '../../text/md.js';
import type { CandidateView, InstanceView, ReportModel } from '../views.js';
import { candidatePageLink } from './cells.js';

/** The hash tables (docs/pages.md#hash-functions): a hash page's §4 cells, and the summary's two sections. */

const timed = (r: TimingRecord | undefined): r is TimingRecord & { mean_cycles: number } =>
  r !== undefined && typeof r.mean_cycles === 'number' && (r.trials?.length ?? 0) > 0;

/** "32 B", "65536 B": the message of a hash operation, in bytes as the guide's S1–S8. */
export const messageCell = (op: string): string => `${hashMessageBytes(op) ?? '?'} B`;

/** Cycles per message byte, one decimal. */
export const cyclesPerByteCell = (r: TimingRecord, op: string): string => formatCyclesPerByte(r.mean_cycles! / (hashMessageBytes(op) ?? 1));

/** Message bytes per second in 10^6, one decimal (the record's own figure when it has one). */
export function megabytesPerSecondCell(r: TimingRecord, op: string): string {
  const mb =
    typeof r.throughput_MB_per_second === 'number' ? r.throughput_MB_per_second : (hashMessageBytes(op) ?? 0) / r.mean_seconds! / 1e6;
  return pyFixed(mb, 1);
}

/** A hash instance's digest length in bits: what its records or its KAT said. */
function digestBits(inst: InstanceView): number | undefined {
  for (const r of Object.values(inst.records)) {
    const bytes = (r?.sizes as { digest_bytes?: number } | undefined)?.digest_bytes;
    if (typeof bytes === 'number' && bytes > 0) return bytes * 8;
  }
  const bytes = inst.build?.sizes?.digest_bytes;
  return typeof bytes === 'number' && bytes > 0 ? bytes * 8 : undefined;
}

const KIB_LABEL = (bytes: number) => (bytes >= 1024 ? `${bytes / 1024} KiB` : `${bytes} B`);

const iccsSection = (model: ReportModel): RootContent[] => {
  const base = model.iccsBaseline;
  if (!base) return [];
  const byLabel = new Map(base.instances.map((i) => [i.label, i]));
  const rows = ICCS_HELPERS.flatMap(({ helper, bits }) =>
    bits.flatMap((b): Cell[][] => {
      const inst = byLabel.get(iccsLabel(helper, b));
      if (!inst) return [];
      const cells = HASH_MESSAGE_BYTES.map((n) => {
        const r = inst.records[hashOperation(n)];
        return timed(r) ? formatCycles(r.mean_cycles) : '—';
      });
      const last = inst.records[hashOperation(65536)];
      return [[code(helper), String(b), ...cells, timed(last) ? formatCyclesPerByte(last.mean_cycles / 65536) : '—']];
    }),
  );
  return [
    heading(2, 'ICCS hash helpers'),
    para(
      'The ICCS placeholder functions of the helper library the submissions ship (',
      code('auxfunc.c'),
      '), timed as hash instances at the guide’s S1–S8 message lengths (mean cycles per call), once per system. ',
      code('pseudohash'),
      ' exists only with 512-, 768- and 1024-bit output; ',
      code('pseudoXOF'),
      ' is given at every digest width of a hash candidate.',
    ),
    table(['ICCS helper', 'output bits', ...HASH_MESSAGE_BYTES.map(KIB_LABEL), 'cycles/byte (64 KiB)'], rows),
  ];
};

/** The sizes the summary's hash rows show. */
const SUMMARY_BYTES = [32, 1024, 65536] as const;

/** "1690 (0.60×)": cycles and their ratio to the pseudoXOF of the same output length and message. */
function ratioCell(model: ReportModel, inst: InstanceView, bytes: number): string {
  const r = inst.records[hashOperation(bytes)];
  if (!timed(r)) return '—';
  const bits = digestBits(inst);
  const xof = bits !== undefined ? model.iccsBaseline?.instances.find((i) => i.label === xofLabelFor(bits)) : undefined;
  const base = xof?.records[hashOperation(bytes)];
  return `${formatCycles(r.mean_cycles)} (${timed(base) ? `${pyFixed(r.mean_cycles / base.mean_cycles, 2)}×` : 'ratio –'})${figureMarks(r)}`;
}

const hashSection = (model: ReportModel): RootContent[] => {
  const cands = model.candidates.filter((c) => c.type === 'hash');
  if (cands.length === 0) return [];
  const rows = cands.flatMap((c: CandidateView) =>
    c.instances.map((inst): Cell[] => {
      const kat = instanceStatus(inst.build);
      const flagged = kat !== undefined && kat !== 'PASS';
      return [
        [link(candidatePageLink(c.id, model.system), c.id)],
        c.page ? [`${c.algorithm} `, link(c.page, 'page')] : c.algorithm,
        flagged ? [code(inst.label), ` ⚠ KAT ${kat}`] : code(inst.label),
        ...SUMMARY_BYTES.map((n) => ratioCell(model, inst, n)),
        withCtNote(flagged ? 'KAT/output caveat; see candidate page' : '–', inst),
      ];
    }),
  );
  return [
    heading(2, 'Hash functions'),
    para(
      'Mean cycles of CryptHash at three message sizes; in parentheses the cycles divided by those of the ICCS ',
      code('pseudoXOF'),
      ' with the same output width and message length, timed the same way (',
      // Without the baseline's records there is no such section to point to: say how to get it.
      ...(model.iccsBaseline
        ? [link('#iccs-hash-helpers', 'ICCS helpers')]
        : ['not measured on this system: ', code('ngcc-perf iccs-baseline'), ' adds them']),
      '): a relative speed, not an estimate of a production replacement. ⚠ marks a KAT status other than PASS.',
    ),
    table(
      [
        'id',
        'algorithm',
        'instance performance report',
        '32 B cycles (× pseudoXOF)',
        '1 KiB cycles (× pseudoXOF)',
        '64 KiB cycles (× pseudoXOF)',
        'notes',
      ],
      rows,
    ),
    ...(anyCt(cands.flatMap((c) => c.instances)) ? [para(CT_NOTE_MEANING)] : []),
  ];
};

/** The summary's `## ICCS hash helpers` then `## Hash functions`, as the harness orders them. */
export const hashSummarySections = (model: ReportModel): RootContent[] => [...iccsSection(model), ...hashSection(model)];
