import type { Root, RootContent } from 'mdast';
import { signedPct } from '../../compare/cells.js';
import type { CompareRow } from '../../compare/types.js';
import { formatCycles, formatSpread, pyFixed, pyGeneral } from '../format.js';
import { causesBetween, type AttributedChange, type Night, type TrendModel, type TrendSeries } from '../history.js';
import { code, heading, link, mermaid, para, sectionsPage, table, text, type Cell, type Inline, type Section } from '../md.js';
import type { ReportModel } from '../types.js';

/** The trend page of one system: every night's figures, their charts, change points and unstable rows. */
type TrendSection = Section<[ReportModel, TrendModel]>;

/** At most this many lines share a chart: more are not told apart by colour. */
const LINES_PER_CHART = 4;
/** The charts' line colours, in order, and their names for the caption. */
const PALETTE = [
  ['#1f77b4', 'blue'],
  ['#ff7f0e', 'orange'],
  ['#2ca02c', 'green'],
  ['#d62728', 'red'],
] as const;

export const trendsPagePath = (system: string) => `performance/trends_${system}.md`;

/** "20" for the 20th night, as every table and chart of the page counts them. */
const nightNumber = (n: number) => String(n + 1);

/** "2026-12-03 01:17 · 3f2a9c1" — a night's name: its run's start and the campaign's commit. */
export function nightName(night: Night): string {
  const when = night.started_utc.replace('T', ' ').slice(0, 16);
  const commit = night.commit ? ` · ${night.commit.slice(0, 7)}${night.changed ? '+' : ''}` : '';
  return `${when}${commit}`;
}

/** A night's evidence link as seen from a page `depth` folders below the pages' root (a URL as it is). */
const nightHref = (href: string, depth: number) => (/^[a-z][a-z+.-]*:/i.test(href) ? href : `${'../'.repeat(depth)}${href}`);

const nightCell = (nights: Night[], n: number, depth: number): Cell => {
  const night = nights[n]!;
  return night.link ? link(nightHref(night.link, depth), `#${nightNumber(n)}`) : `#${nightNumber(n)}`;
};

export const causeText = (c: AttributedChange) => c.causes.join(', ');

const title: TrendSection = (model, t) => [
  heading(1, `Trends on ${model.system}`),
  para(
    `${t.nights.length} nights, oldest first: #1 ran ${nightName(t.nights[0]!)}, #${t.nights.length} (these pages) ${nightName(t.nights.at(-1)!)}. `,
    "A night is one version of the system's evidence, named by its run's start (UTC) and the campaign repository's commit (",
    code('+'),
    ': uncommitted changes). Its figure for an operation is the median trial in cycles per call, with the spread of its trials (slowest over fastest per call). ',
    'A change point is a step in a series (or a regression and its return) that a permutation test finds at p ≤ 0.01 and that is at least the regression threshold; ',
    'it is attributed to the submission when its build key changed within a night of it, to the harness when the harness version did, to the machine when the host or the counter rate did, else to "unknown" (',
    link(`method_${model.system}.md`, 'method'),
    ').',
  ),
];

const nights: TrendSection = (_model, t) => [
  heading(2, 'Nights'),
  table(
    ['night', 'started (UTC)', 'campaign commit', 'harness', 'evidence'],
    t.nights.map((n, i): Cell[] => [
      `#${nightNumber(i)}`,
      n.started_utc.replace('T', ' ').slice(0, 19),
      n.commit ? code(`${n.commit.slice(0, 12)}${n.changed ? '+' : ''}`) : n.commit === null ? 'not a git checkout' : 'not recorded',
      n.harness_version ? code(n.harness_version) : 'not recorded',
      n.link ? link(nightHref(n.link, 1), 'evidence') : 'these pages',
    ]),
  ),
  ...(t.skipped.length > 0
    ? [
        para(`Left out (${t.skipped.length}):`),
        table(
          ['history folder', 'why'],
          t.skipped.map((s): Cell[] => [code(s.folder), s.reason]),
        ),
      ]
    : []),
];

const changePointsSection: TrendSection = (_model, t) => {
  const rows = t.series.flatMap((s) =>
    s.changes.map((c): Cell[] => [
      s.candidate,
      code(s.label),
      s.operation,
      nightCell(t.nights, c.night, 1),
      signedPct(c.delta_pct),
      pyGeneral(c.p_value, 2),
      causeText(c),
      c.detail || '—',
    ]),
  );
  return [
    heading(2, 'Change points'),
    table(['candidate', 'instance', 'operation', 'from night', 'step', 'p', 'attributed to', 'what changed that night'], rows, [
      text('none found'),
      '—',
      '—',
      '—',
      '—',
      '—',
      '—',
      '—',
    ]),
  ];
};

const unstableSection: TrendSection = (_model, t) => {
  const unstable = t.series.filter((s) => s.unstable);
  if (unstable.length === 0) return [];
  return [
    heading(2, 'Unstable rows'),
    para(
      'Between adjacent nights of unchanged code (the same build key, harness and machine), the pull-request rule called a regression or an improvement at least twice for these rows: their verdicts flip with the noise, so a pull request is not failed by them.',
    ),
    table(
      ['candidate', 'instance', 'operation', 'called on nights'],
      unstable.map((s): Cell[] => [s.candidate, code(s.label), s.operation, s.falseCalls.map((n) => `#${nightNumber(n)}`).join(', ')]),
    ),
  ];
};

/** A Mermaid line chart of some of a candidate's instances for one operation, and its caption. */
function chart(candidate: string, operation: string, series: TrendSeries[], count: number): RootContent[] {
  const full = series.filter((s) => s.points.every(Boolean));
  const gaps = series.filter((s) => !s.points.every(Boolean));
  const out: RootContent[] = [];
  for (let k = 0; k < full.length; k += LINES_PER_CHART) {
    const group = full.slice(k, k + LINES_PER_CHART);
    const palette = PALETTE.slice(0, group.length);
    const lines = group.map((s) => `  line [${s.points.map((p) => pyFixed(p!.cycles, 0)).join(', ')}]`).join('\n');
    const init = `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${palette.map(([hex]) => hex).join(', ')}"}}}}%%`;
    out.push(
      para(
        `Median trial, cycles per call, nights #1–#${count}: `,
        ...group.flatMap((s, i): Inline[] => [i > 0 ? ', ' : '', code(s.label), ` ${palette[i]![1]}`]),
        '.',
      ),
      mermaid(
        `${init}\nxychart-beta\n  title "${candidate} ${operation}"\n  x-axis [${Array.from({ length: count }, (_, i) => nightNumber(i)).join(', ')}]\n  y-axis "cycles per call"\n${lines}`,
      ),
    );
  }
  if (gaps.length > 0)
    out.push(
      para(
        'Not charted, lacking a figure on some night (the table has what there is): ',
        ...gaps.flatMap((s, i): Inline[] => [i > 0 ? ', ' : '', code(s.label)]),
        '.',
      ),
    );
  return out;
}

/** A night's cell: figure, spread, and a mark where a change point starts. */
function figureCell(s: TrendSeries, n: number): string {
  const p = s.points[n];
  if (!p) return '—';
  const change = s.changes.find((c) => c.night === n);
  const spread = p.spread !== undefined ? ` · ${formatSpread(p.spread)}` : '';
  return `${formatCycles(p.cycles)}${spread}${change ? ` · ${change.delta_pct >= 0 ? '▲' : '▼'} ${signedPct(change.delta_pct)}` : ''}`;
}

const perCandidate: TrendSection = (model, t) => {
  const candidates = [...new Set(t.series.map((s) => s.candidate))];
  return candidates.flatMap((id) => {
    const ofCandidate = t.series.filter((s) => s.candidate === id);
    const operations = [...new Set(ofCandidate.map((s) => s.operation))];
    return [
      heading(2, id),
      para(link(`../${id}/perf_${model.system}.md`, `${id} on ${model.system}`)),
      ...operations.flatMap((op) => {
        const series = ofCandidate.filter((s) => s.operation === op);
        return [
          heading(3, `${id} ${op}`),
          ...chart(id, op, series, t.nights.length),
          table(
            ['night', ...series.map((s) => `${s.label}${s.unstable ? ' (unstable)' : ''}`)],
            t.nights.map((_, n): Cell[] => [nightCell(t.nights, n, 1), ...series.map((s) => figureCell(s, n))]),
          ),
        ];
      }),
    ];
  });
};

const TREND_SECTIONS: readonly TrendSection[] = [title, nights, changePointsSection, unstableSection, perCandidate];

export const trendsPage = (model: ReportModel, trends: TrendModel): Root => sectionsPage(TREND_SECTIONS, model, trends);

/** The sparkline's bars span at least this share of the lowest figure: night-to-night noise of a few percent stays low. */
export const SPARKLINE_MIN_SPAN = 0.1;

/** "▁▂▂▇█": a series' nights at a glance, from its lowest figure ▁ up (the scale spans at least SPARKLINE_MIN_SPAN). */
export function sparkline(s: TrendSeries): string {
  const values = s.points.map((p) => p?.cycles);
  const present = values.filter((v): v is number => v !== undefined);
  if (present.length === 0) return '—';
  const lo = Math.min(...present);
  const span = Math.max(Math.max(...present) - lo, SPARKLINE_MIN_SPAN * lo);
  const bars = '▁▂▃▄▅▆▇█';
  return values.map((v) => (v === undefined ? ' ' : bars[Math.round(((v - lo) / span) * (bars.length - 1))])).join('');
}

/** The index's first sections: what moved since last night, and the change points of the last nights. */
export function trendHighlights(system: string, t: TrendModel): RootContent[] {
  const since = t.sinceLastNight.map((r: CompareRow): Cell[] => [
    system,
    r.candidate,
    code(r.label),
    r.operation,
    r.verdict,
    r.delta_pct !== undefined ? signedPct(r.delta_pct) : '—',
    causeOfLastNight(t, r),
    link(trendsPagePath(system), 'trends'),
  ]);
  const changes = t.series.flatMap((s) =>
    s.changes.map((c): Cell[] => [
      system,
      s.candidate,
      code(s.label),
      s.operation,
      nightCell(t.nights, c.night, 0),
      signedPct(c.delta_pct),
      causeText(c),
      link(`${trendsPagePath(system)}#${s.candidate}-${s.operation}`.toLowerCase(), 'trends'),
    ]),
  );
  return [
    heading(2, 'Since last night'),
    para(
      t.nights.length < 2
        ? `${system}: no earlier night to compare with.`
        : `${system}: night #${t.nights.length} against #${t.nights.length - 1}, by the pull-request rule with the nights before as its history (operations beyond the noise).`,
    ),
    table(['system', 'candidate', 'instance', 'operation', 'verdict', 'Δ', 'attributed to', ''], since, [
      text(t.nights.length < 2 ? 'no earlier night' : 'no operation moved beyond the noise'),
      ...Array.from({ length: 7 }, () => '—'),
    ]),
    heading(2, `Change points in the last ${t.nights.length} nights`),
    table(['system', 'candidate', 'instance', 'operation', 'from night', 'step', 'attributed to', ''], changes, [
      text('none found'),
      ...Array.from({ length: 7 }, () => '—'),
    ]),
  ];
}

/** Why an operation moved between the last two nights, by the change-point attribution's rule. */
function causeOfLastNight(t: TrendModel, r: CompareRow): string {
  const s = t.series.find((x) => x.candidate === r.candidate && x.label === r.label && x.operation === r.operation);
  const n = t.nights.length - 1;
  return s?.points[n] && s.points[n - 1] ? causesBetween(s, n - 1, n, t.nights).causes.join(', ') : 'unknown';
}
