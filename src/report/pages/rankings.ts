import type { RootContent } from 'mdast';
import { formatCycles, formatCyclesPerByte } from '../../text/format.js';
import { code, heading, link, mermaid, para, table, type Cell, type Section } from '../../text/md.js';
import { type CategoryRanking, claimShown, type LevelGroup, rankingsOf, type RankingRule, shownOp } from '../rankings.js';
import type { ReportModel } from '../views.js';
import { candidatePageLink } from './cells.js';

/** The summary's "Fastest at each security level" (docs/pages.md#rankings): tables per level, charts across levels. */

const figure = (rule: RankingRule, x: number): string => (rule.unit === 'cycles per byte' ? formatCyclesPerByte(x) : formatCycles(x));

/** A column's heading: the operation, and for a hash what its figure is. */
const opHeader = (rule: RankingRule, op: string): string => (rule.unit === 'cycles per byte' ? `${shownOp(op)} (cycles/byte)` : op);

function groupTable(model: ReportModel, rule: RankingRule, group: LevelGroup): RootContent[] {
  const sumColumn = rule.ops.length > 1 && rule.type !== 'hash';
  const rows = group.ranked.map((row): Cell[] => [
    String(row.rank),
    [link(candidatePageLink(row.candidate.id, model.system), row.candidate.id)],
    code(row.inst.label),
    claimShown(row.inst.security),
    ...rule.ops.map((op) => `${figure(rule, row.medians[op]!)} (#${row.place[op]})`),
    ...(sumColumn ? [figure(rule, row.key)] : []),
  ]);
  return [
    heading(4, group.title),
    table(
      ['rank', 'candidate', 'instance', 'claimed', ...rule.ops.map((op) => opHeader(rule, op)), ...(sumColumn ? [rule.key] : [])],
      rows,
    ),
  ];
}

/** The category's ranked instances in the page's order (level, then rank), labelled for a chart. */
function chartPoints(ranking: CategoryRanking) {
  return ranking.groups.flatMap((g) => g.ranked.map((row) => ({ row, label: `${row.candidate.id}/${row.inst.label} ${g.tag}` })));
}

/** One bar chart per operation across the levels: the ranked instances in the tables' order. */
function charts(ranking: CategoryRanking): RootContent[] {
  const points = chartPoints(ranking);
  if (points.length === 0) return [];
  const { rule } = ranking;
  const labels = points.map((p) => JSON.stringify(p.label)).join(', ');
  const ops = rule.type === 'hash' ? [rule.ops[rule.ops.length - 1]!] : rule.ops;
  return [
    para(
      `Median trial ${rule.unit} of each ranked instance, grouped by level (a label's tag), in the tables' order${rule.type === 'hash' ? ' (each candidate page charts cycles per byte against message length)' : ''}:`,
    ),
    ...ops.map((op) =>
      mermaid(
        `xychart-beta\n  title "${rule.title}: ${shownOp(op)}, median ${rule.unit}"\n  x-axis [${labels}]\n  y-axis "${rule.unit}"\n  bar [${points.map((p) => plotted(rule, p.row.medians[op]!)).join(', ')}]`,
      ),
    ),
  ];
}

/** A chart's value: whole cycles, or cycles per byte to the table's one decimal. */
const plotted = (rule: RankingRule, x: number): number => (rule.unit === 'cycles per byte' ? Math.round(x * 10) / 10 : Math.round(x));

function categorySection(model: ReportModel, ranking: CategoryRanking): RootContent[] {
  const { rule } = ranking;
  const unranked: Cell[][] = ranking.unranked.map((u) => [
    [link(candidatePageLink(u.candidate.id, model.system), u.candidate.id)],
    code(u.inst.label),
    claimShown(u.inst.security),
    u.why,
  ]);
  return [
    heading(3, `Ranking: ${rule.title.toLowerCase()}`),
    para(`Ordered by ${rule.key}; `, '(#N) is the place in its group for that operation.'),
    ...(ranking.groups.length > 0 ? ranking.groups.flatMap((g) => groupTable(model, rule, g)) : [para('No instance can be ranked yet.')]),
    ...(unranked.length > 0 ? [heading(4, 'Not ranked'), table(['candidate', 'instance', 'claimed', 'why'], unranked)] : []),
    ...charts(ranking),
  ];
}

export const rankingsSection: Section<[ReportModel]> = (model) => {
  const rankings = rankingsOf(model);
  if (rankings.length === 0) return [];
  return [
    heading(2, 'Fastest at each security level'),
    para(
      'Each instance is grouped by the security its ',
      code('candidate.yml'),
      ' claims (',
      code('nist_level'),
      ', ',
      code('security_bits'),
      '; none declared: a group of its own) and ranked by its median trial per call, which a few slow trials on a busy host do not move as they move the mean in the tables below. ',
      'An instance that cannot be ranked fairly is listed under "Not ranked" in its category, with why.',
    ),
    ...rankings.flatMap((r) => categorySection(model, r)),
  ];
};
