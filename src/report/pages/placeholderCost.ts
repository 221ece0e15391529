import type { RootContent } from 'mdast';
import { formatCallsPerOperation, formatCycles, formatShare } from '../../text/format.js';
import { code, heading, link, para, table, type Cell, type Inline } from '../../text/md.js';
import { placeholderBaseline, placeholderCost } from '../placeholderCost.js';
import { hashShares } from '../profile.js';
import type { CandidateView, ReportModel } from '../views.js';

/**
 * "What the placeholder costs" (docs/pages.md#what-the-placeholder-costs): on an ICCS-API KEM,
 * signature or key exchange page, the cycles each profiled operation spends in sm3hash, pseudohash
 * and pseudoXOF, priced from this system's ICCS helper baseline, beside the profile's measured share.
 */
export function placeholderCostSection(model: ReportModel, c: CandidateView): RootContent[] {
  if (c.api !== 'iccs' || c.type === 'hash') return [];
  const profiled = c.instances.flatMap((inst) =>
    c.operations.flatMap((op) => (inst.profiles[op] ? [{ inst, op, p: inst.profiles[op]! }] : [])),
  );
  if (profiled.length === 0) return [];
  const base = placeholderBaseline(model.iccsBaseline);
  if (!base)
    return [
      heading(3, 'What the placeholder costs'),
      para(
        'Not estimated on this system: it has no ICCS helper baseline. ',
        code('ngcc-perf iccs-baseline --system ID --out DATA_DIR'),
        ' times the helpers once per system; the pages then price every helper call the profile saw.',
      ),
    ];
  const scaled = new Set<string>();
  const unpriced = new Set<string>();
  const rows = profiled.map(({ inst, op, p }): Cell[] => {
    const cost = placeholderCost(p, base);
    for (const s of cost.scaledFrom) scaled.add(s);
    for (const u of cost.unpriced) unpriced.add(u);
    const r = inst.records[op];
    const mean = r?.trials?.length && typeof r.mean_cycles === 'number' ? r.mean_cycles : undefined;
    const mark = cost.unpriced.length > 0 ? ' (part)' : '';
    return [
      code(inst.label),
      op,
      mean !== undefined ? formatCycles(mean) : 'not timed',
      formatCallsPerOperation(cost.calls),
      cost.calls > 0 ? `${formatCycles(cost.cycles)}${mark}` : '0',
      mean !== undefined ? `${formatShare(cost.cycles / mean)}${mark}` : '—',
      formatShare(hashShares(p).hash),
    ];
  });
  const notes: Inline[] = [
    ...(scaled.size > 0
      ? [
          ` A pseudoXOF output length the baseline does not time is priced from the nearest one (${[...scaled].join(', ')}) per 256-bit SM3 output block.`,
        ]
      : []),
    ...(unpriced.size > 0 ? [` (part): calls no baseline label prices are left out (${[...unpriced].join(', ')}).`] : []),
  ];
  return [
    heading(3, 'What the placeholder costs'),
    para(
      'Cycles per operation in the ICCS placeholder hash functions (sm3hash, pseudohash, pseudoXOF; not the DRNG): each call the profile saw, at its message and output length, priced at this system’s ',
      link(`../performance/summary_${model.system}.md#iccs-hash-helpers`, 'ICCS helper baseline'),
      ' (mean cycles at S1–S8, interpolated in SM3 blocks). A hash k times as fast as the placeholder would save about 1 − 1/k of them. The last column is the profile’s own share, from its wrapper ticks: two independent figures for the same cost.',
      ...notes,
    ),
    table(
      [
        'instance',
        'operation',
        'mean cycles',
        'helper calls per operation',
        'placeholder cycles (baseline)',
        'share of mean cycles',
        'measured share (wrappers)',
      ],
      rows,
    ),
  ];
}
