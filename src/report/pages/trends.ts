import type { Root, RootContent } from 'mdast';
import { signedPct, formatCycles, formatShare, formatSpread, pyFixed } from '../../text/format.js';
import { NIGHT_ALPHA, NIGHT_CANARY_MARGIN, NIGHT_MIN_AFTER, NIGHT_MIN_BEFORE } from '../../config/defaults.js';
import type { AttributedChange, Night, NightChange, TrendModel, TrendSeries } from '../../trend/history.js';
import { code, heading, link, mermaid, para, sectionsPage, table, text, type Cell, type Inline, type Section } from '../../text/md.js';
import type { ReportModel } from '../views.js';

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
function nightName(night: Night): string {
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
    "Each night's figures are judged net of the host's level that night, fitted on every row that kept its build (the same build key, harness and machine) across nights. ",
    `A change point is a step that stands out of the night-to-night noise at p ≤ ${NIGHT_ALPHA} and is at least the regression threshold: `,
    'at a night where the build key, the harness or the machine changed, tested where it is and attributed to it; elsewhere found by a search over the nights, ',
    `with at least ${NIGHT_MIN_BEFORE} nights before it and ${NIGHT_MIN_AFTER} after, and never attributed to the submission (`,
    link(`method_${model.system}.md`, 'method'),
    ').',
  ),
];

/** A night's host level: '+16.1%', or why there is none. */
const hostLevelCell = (pct: number | undefined): string =>
  pct === undefined ? 'not seen (too few rows kept their build)' : signedPct(pct);

/** A night's canary against the nights' median: '1.02×', '1.31× (slow host)', or that none was kept. */
const canaryCell = (c: TrendModel['canary'][number]): string =>
  c === undefined ? 'not kept' : `${pyFixed(c.ratio, 2)}×${c.slow ? ' (slow host)' : ''}`;

const nights: TrendSection = (model, t) => [
  heading(2, 'Nights'),
  para(
    "The host's level: how much slower (+) or faster (−) than on the first night it is fitted on the rows that kept their build ran that night; a night's figures are judged net of it. It is fitted over the nights back from the last that at least 3 rows tie each to the one before: not across a night that rebuilt nearly every row (a new harness, compiler or machine). ",
    `The canary: the night's median run of fixed reference work the driver's trusted half times beside each trial, which no library touches, over the nights' median; at ${NIGHT_CANARY_MARGIN}× or more the night ran on a slow host (`,
    link(`method_${model.system}.md`, 'method'),
    ').',
  ),
  table(
    ['night', 'started (UTC)', "host's level", 'canary', 'campaign commit', 'harness', 'evidence'],
    t.nights.map((n, i): Cell[] => [
      `#${nightNumber(i)}`,
      n.started_utc.replace('T', ' ').slice(0, 19),
      hostLevelCell(t.hostLevels[i]),
      canaryCell(t.canary[i]),
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

/** What the rule can see over these nights, in words: the page's and the docs' answer to "why none found". */
function visibility(t: TrendModel): string {
  const noise = `night-to-night noise ${formatShare(t.noise.tau)}${t.noise.measured ? ` (measured on ${t.noise.pairs} pairs of unchanged nights)` : ` (assumed: only ${t.noise.pairs} pairs of unchanged nights, too few to measure it)`}`;
  const d = t.detectable;
  const searched =
    d.searched_pct === undefined
      ? `a step of unknown cause cannot be found yet: the search needs ${d.searched_needs} nights (${NIGHT_MIN_BEFORE} before a step, ${NIGHT_MIN_AFTER} after it), these pages have ${t.nights.length}`
      : `a step of unknown cause of at least ${pyFixed(d.searched_pct, 1)}% once it has lasted ${NIGHT_MIN_AFTER} nights`;
  const known =
    d.known_pct === undefined ? '' : `; at a night whose build key changed, a step of at least ${pyFixed(d.known_pct, 1)}% on that night`;
  return `With ${t.nights.length} nights and ${noise}, the rule can find ${searched}${known}. A noisier row is held to its own noise, and needs more.`;
}

const changePointsSection: TrendSection = (_model, t) => {
  const rows = t.series.flatMap((s) =>
    s.changes.map((c): Cell[] => [
      s.candidate,
      code(s.label),
      s.operation,
      nightCell(t.nights, c.night, 1),
      signedPct(c.delta_pct),
      `${pyFixed(Math.abs(c.z), 1)} sd`,
      causeText(c),
      c.detail || (c.known ? '—' : 'nothing known: found by the search'),
    ]),
  );
  return [
    heading(2, 'Change points'),
    para(visibility(t)),
    table(
      ['candidate', 'instance', 'operation', 'from night', 'step', 'out of the noise', 'attributed to', 'what changed that night'],
      rows,
      [text('none found'), '—', '—', '—', '—', '—', '—', '—'],
    ),
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

/** The host's move into the last night, in words, when the unchanged rows show one. */
function hostLine(system: string, t: TrendModel): string {
  if (t.nights.length < 2) return '';
  const canary = t.canary.at(-1);
  const slow = canary?.slow ? ` The last night's canary ran ${pyFixed(canary.ratio, 2)}× the nights' median: a slow host.` : '';
  const m = t.hostMove;
  if (!m) return ` Too few rows kept their code to see how the host moved into the last night; figures are compared as measured.${slow}`;
  const way =
    Math.abs(m.pct) < 0.05 ? 'as fast as' : m.pct > 0 ? `${pyFixed(m.pct, 1)}% slower than` : `${pyFixed(-m.pct, 1)}% faster than`;
  return ` The host ran ${way} the night before (seen on the ${m.rows} rows that kept their build across both nights; ${system}'s figures below are judged net of it).${slow}`;
}

/** The index's first sections: what moved since last night, and the change points of the last nights. */
export function trendHighlights(system: string, t: TrendModel): RootContent[] {
  const since = t.sinceLastNight.map((r: NightChange): Cell[] => [
    system,
    r.candidate,
    code(r.label),
    r.operation,
    r.verdict,
    signedPct(r.delta_pct),
    r.causes.join(', '),
    r.paired ? `${r.paired.pairs} trial pairs beside last night's library (${r.paired.against_commit.slice(0, 7)})` : 'the nights',
    link(trendsPagePath(system), 'trends'),
  ]);
  // A step into the last night that "Since last night" lists is not listed again below it: one row, one place.
  const lastNight = t.nights.length - 1;
  const listed = new Set(t.sinceLastNight.map((r) => `${r.candidate}/${r.label}/${r.operation}`));
  const changes = t.series.flatMap((s) =>
    s.changes
      .filter((c) => c.night !== lastNight || !listed.has(`${s.candidate}/${s.label}/${s.operation}`))
      .map((c): Cell[] => [
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
        : `${system}: night #${t.nights.length} against the nights before it. Only an operation whose library was rebuilt that night can be called a change, and only beyond the noise of nights (p ≤ ${NIGHT_ALPHA}), or, where the night measured it beside last night's library, trials interleaved, by the pull-request rule on those pairs; what moved unchanged code was the host or the noise.${hostLine(system, t)}`,
    ),
    table(['system', 'candidate', 'instance', 'operation', 'verdict', 'Δ', 'attributed to', 'judged on', ''], since, [
      text(t.nights.length < 2 ? 'no earlier night' : 'no rebuilt operation moved beyond the noise'),
      ...Array.from({ length: 8 }, () => '—'),
    ]),
    heading(2, `Change points in the last ${t.nights.length} nights`),
    para(visibility(t)),
    table(['system', 'candidate', 'instance', 'operation', 'from night', 'step', 'attributed to', ''], changes, [
      text('none found'),
      ...Array.from({ length: 7 }, () => '—'),
    ]),
  ];
}
