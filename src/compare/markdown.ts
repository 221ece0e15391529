import type { Html, RootContent } from 'mdast';
import { HISTORY_MIN_RUNS, HISTORY_SIGMAS } from '../config/defaults.js';
import { NOISY_TRIAL_SPREAD } from '../measure/stats.js';
import { PARTIAL_MARK, PARTIAL_NOTE, REFUSED_NOTE, refusedMark } from '../measure/refusals.js';
import { MISSING, pyFixed, pyGeneral, plural, signedPct } from '../text/format.js';
import { pairCount } from './compare.js';
import { type Cell, type Inline, bullets, code, heading, link, para, root, serialize, strong, table, text } from '../text/md.js';
import { amount, cycles, firstLine, sideFigure, spreadText } from './cells.js';
import { ctSite } from './ctChanges.js';
import { COMPILER_MADE_NOTE } from '../ct/findings.js';
import { kindMeanings } from '../ct/meanings.js';
import { DISTURBED_OFF_CPU_SHARE } from './stats.js';
import type { CompareReport, CompareRow, PullRequestContext, SideStats, ValueChange, Verdict } from './compareReport.js';

/**
 * The Markdown of one system's comparison: the headline, the finding groups, and a rendering that
 * stays within a size limit by dropping whole rows. Pure functions: a CompareReport in, text out.
 * Everything is an mdast tree serialized once by text/md.ts, and every number goes through
 * text/format.ts.
 */

export interface MarkdownOptions {
  /** The published pages / full report of this comparison. */
  reportUrl?: string;
  /** The workflow run that measured it. */
  runUrl?: string;
  pr?: PullRequestContext;
}

/** A limit on the rendered text, measured by `measure` (characters, bytes, …). */
export interface Bound {
  limit: number;
  measure: (text: string) => number;
  /** A line put before the text, counted within the limit. */
  leadingLine?: string;
}

const CHANGED: ReadonlySet<Verdict> = new Set<Verdict>(['regression', 'improvement', 'new', 'removed']);

/** Order of the changed table: what needs attention first. */
const VERDICT_RANK: Record<Verdict, number> = {
  regression: 0,
  improvement: 1,
  new: 2,
  removed: 3,
  noisy: 4,
  inconclusive: 5,
  unchanged: 6,
};

const VERDICT_CELL: Record<Verdict, string> = {
  regression: '⚠ regression',
  improvement: '✅ improvement',
  new: '🆕 new',
  removed: '➖ removed',
  inconclusive: '❔ inconclusive',
  noisy: '〰 noisy',
  unchanged: 'unchanged',
};

/** What a row carried over from the baseline reads instead of a verdict: nothing was measured. */
const NOT_MEASURED = 'not measured (unchanged inputs)';

/**
 * A row whose head is the baseline's own record: the comparison saw the same record on both sides,
 * or the pull request did not measure the candidate (its inputs did not change) and the two sides
 * agree. A row that differs anyway keeps its verdict: a change is never hidden as "not measured".
 */
export function isCarriedOver(r: CompareRow, pr?: PullRequestContext): boolean {
  if (r.carried_over === true) return true;
  return (
    pr !== undefined && r.base !== undefined && r.head !== undefined && r.verdict === 'unchanged' && !pr.measured.includes(r.candidate)
  );
}

/** Said before the verdicts when a side's evidence does not validate: its figures may not be what was measured. */
function validationWarnings(report: CompareReport): RootContent[] {
  return (['base', 'head'] as const).flatMap((side) => {
    const problems = report.evidence_problems?.[side] ?? [];
    if (problems.length === 0) return [];
    return [
      para(
        `⚠ The ${side} evidence does not validate (${plural(problems.length, 'problem')}; the first: `,
        code(problems[0]!),
        '): its figures may not be what was measured. ',
        code('ngcc-perf validate'),
        ' lists them all.',
      ),
    ];
  });
}

/** The rows whose figures are marked below (a trial refused, a measurement stopped early), named before the verdicts. */
function refusedWarning(report: CompareReport): RootContent[] {
  const named = (has: (s: SideStats) => boolean) =>
    report.rows.flatMap((r) =>
      (['base', 'head'] as const)
        .filter((side) => r[side] && has(r[side]!))
        .map((side) => `${r.candidate}/${r.label} ${r.operation} (${side})`),
    );
  const refused = named((s) => (s.refused_trials ?? 0) > 0);
  const partial = named((s) => s.partial === true);
  return [
    ...(refused.length > 0 ? [para(`Trials refused in ${refused.join(', ')}. ${REFUSED_NOTE}`)] : []),
    ...(partial.length > 0 ? [para(`Measured in part: ${partial.join(', ')}. ${PARTIAL_NOTE}`)] : []),
  ];
}

/** Rows whose two sides were both measured: untouched candidates only repeat the baseline. */
function comparedRows(report: CompareReport, pr?: PullRequestContext): CompareRow[] {
  return report.rows.filter((r) => r.base && r.head && !isCarriedOver(r, pr));
}

/**
 * Compared rows judged noisy, and unchanged rows with a noisy side (listed so that the reader sees the
 * core was shared). A change or an inconclusive row with noisy sides appears under its own heading
 * alone, marked there (verdictCell): a row has one heading.
 */
function noisyRows(report: CompareReport, pr?: PullRequestContext): CompareRow[] {
  return comparedRows(report, pr).filter((r) => r.verdict === 'noisy' || (r.noisy === true && r.verdict === 'unchanged'));
}

const noisyVerdicts = (report: CompareReport, pr?: PullRequestContext): number =>
  comparedRows(report, pr).filter((r) => r.verdict === 'noisy').length;

/** What a noisy side's change reads beside its verdict: judged all the same, since the ranges stand apart. */
const NOISY_APART_MARK = '(noisy sides, ranges apart)';

function verdictCell(r: CompareRow): string {
  return r.noisy === true && CHANGED.has(r.verdict) ? `${VERDICT_CELL[r.verdict]} ${NOISY_APART_MARK}` : VERDICT_CELL[r.verdict];
}

/** The comment's first line, also the findings named when the comment cannot be posted. */
export function headline(report: CompareReport, pr?: PullRequestContext): string {
  const n = report.counts;
  const newRows = report.rows.filter((r) => r.verdict === 'new').length;
  const removedRows = report.rows.filter((r) => r.verdict === 'removed').length;
  const inconclusive = report.rows.filter((r) => r.verdict === 'inconclusive').length;
  const bad: string[] = [];
  if (n.kat_failures > 0) bad.push(`❌ KAT: ${plural(n.kat_failures, 'failure')}`);
  if (report.invalid_candidates.length > 0) bad.push(`❌ ${plural(report.invalid_candidates.length, 'invalid candidate')}`);
  if (report.build_failures.length > 0) bad.push(`❌ ${plural(report.build_failures.length, 'build failure')}`);
  if (n.regressions > 0) bad.push(`⚠ ${plural(n.regressions, 'regression')}`);
  if (n.size_mismatches > 0) bad.push(`⚠ ${plural(n.size_mismatches, 'size mismatch', 'size mismatches')}`);
  if ((n.ct_findings ?? 0) > 0) bad.push(`⚠ ${plural(n.ct_findings ?? 0, 'new constant-time finding')}`);
  const unbuilt = (report.ct_build_failures ?? []).length;
  if (unbuilt > 0) bad.push(`⚠ ${plural(unbuilt, 'ct build')} not built`);
  if (pr && pr.stillFailing.length > 0) bad.push(`⚠ ${plural(pr.stillFailing.length, 'KAT')} still failing`);
  // A noisy row could hide a regression: the headline must not read as a clean pass.
  const noisy = noisyVerdicts(report, pr);
  if (noisy > 0) bad.push(`〰 ${plural(noisy, 'noisy measurement')}`);
  const info: string[] = [];
  if (n.improvements > 0) info.push(plural(n.improvements, 'improvement'));
  if (newRows > 0) info.push(`${newRows} new`);
  if (removedRows > 0) info.push(`${removedRows} removed`);
  let verdict: string;
  // Without a baseline every row is "new": a ✅ would read as a pass of something never compared.
  if (pr && !pr.baseline) verdict = [`⚠ no baseline evidence for ${report.system}: nothing was compared`, ...bad].join(', ');
  else if (bad.length > 0) verdict = [...bad, ...info].join(', ');
  else if (pr && pr.measured.length === 0) verdict = 'ℹ no candidate touched: nothing measured';
  else if (info.length > 0) verdict = `✅ ${info.join(', ')}`;
  else verdict = '✅ no significant change';
  if (inconclusive > 0) verdict += ` · ${inconclusive} inconclusive`;
  return `ngcc-perf ${report.system}: ${verdict}`;
}

/**
 * Whether the comparison has anything a reader must see: `comment: on-change` creates a comment
 * only then (and always updates one that exists).
 */
export function hasFindings(report: CompareReport, pr?: PullRequestContext): boolean {
  return (
    report.rows.some((r) => CHANGED.has(r.verdict)) ||
    noisyVerdicts(report, pr) > 0 ||
    report.kat_changes.length > 0 ||
    report.build_failures.length > 0 ||
    report.invalid_candidates.length > 0 ||
    report.size_mismatches.length > 0 ||
    (report.ct_findings ?? []).length > 0 ||
    (report.ct_build_failures ?? []).length > 0 ||
    (report.fell_back ?? []).length > 0 ||
    report.size_changes.length > 0 ||
    report.memory_changes.length > 0 ||
    (pr !== undefined && (!pr.baseline || pr.stillFailing.length > 0))
  );
}

const ROW_HEADER = ['candidate', 'instance', 'operation', 'base', 'head', 'Δ%', 'verdict'];
/** A paired comparison's rows also say how many trial pairs each was judged on, and in which rounds. */
const PAIRED_ROW_HEADER = [...ROW_HEADER, 'trial pairs'];
const rowHeader = (report: CompareReport) => (report.rows.some((r) => r.paired) ? PAIRED_ROW_HEADER : ROW_HEADER);

/** `16`, or `6 + 16` when extra rounds were added; empty for an unpaired row. */
function pairsCell(r: CompareRow): Cell {
  if (!r.paired) return MISSING;
  return r.rounds ? r.rounds.join(' + ') : String(pairCount(r));
}

/** A side's figure, marked when a check refused one of its trials or it stopped before its plan (measure/refusals.ts). */
function figureCell(s: SideStats | undefined): string {
  const marks = [refusedMark(s?.refused_trials ?? 0), s?.partial ? PARTIAL_MARK : ''].filter(Boolean);
  return [cycles(sideFigure(s)), ...marks].join(' ');
}

function rowCells(r: CompareRow, pr: PullRequestContext | undefined, paired: boolean): Cell[] {
  const pairs = paired ? [pairsCell(r)] : [];
  if (isCarriedOver(r, pr))
    return [r.candidate, r.label, r.operation, figureCell(r.base), MISSING, MISSING, NOT_MEASURED, ...(paired ? [MISSING] : [])];
  return [r.candidate, r.label, r.operation, figureCell(r.base), figureCell(r.head), signedPct(r.delta_pct), verdictCell(r), ...pairs];
}

const UNDECIDED_HEADER = ['candidate', 'instance', 'operation', 'Δ%', 'trial pairs', 'why'];

/** Rows whose change reached the threshold but not significance: what they were judged on, and what they could have shown. */
function undecidedCells(r: CompareRow): Cell[] {
  return [r.candidate, r.label, r.operation, signedPct(r.delta_pct), pairsCell(r), r.reason];
}

const NOISY_HEADER = ['candidate', 'instance', 'operation', 'base spread', 'head spread', 'Δ%', 'verdict'];

function noisyCells(r: CompareRow): Cell[] {
  return [r.candidate, r.label, r.operation, spreadText(r.base), spreadText(r.head), signedPct(r.delta_pct), verdictCell(r)];
}

function changedRows(report: CompareReport): CompareRow[] {
  const changed = report.rows.filter((r) => CHANGED.has(r.verdict));
  // Stable: within a verdict, the largest |Δ| first, then the report's own order.
  return changed
    .map((r, i) => ({ r, i }))
    .sort(
      (a, b) =>
        VERDICT_RANK[a.r.verdict] - VERDICT_RANK[b.r.verdict] || Math.abs(b.r.delta_pct ?? 0) - Math.abs(a.r.delta_pct ?? 0) || a.i - b.i,
    )
    .map(({ r }) => r);
}

/** Head's instances measured with the harness defaults, the guide's flags having failed: as the seed harness does, but said. */
function fellBack(report: CompareReport): RootContent[] {
  const fell = report.fell_back ?? [];
  if (fell.length === 0) return [];
  return [
    para(strong('Measured with the harness defaults')),
    para('The guide build of these failed (to build, or its KAT), so the harness defaults were measured instead:'),
    bullets(capped(fell.map((f): Inline[] => [code(f.key), `: ${shortLine(f.why)}`]))),
  ];
}

/** At most LISTED_MOST items, then how many more: a Round-1 campaign must not outgrow the comment. */
const LISTED_MOST = 10;
const capped = (items: Inline[][]): Inline[][] =>
  items.length <= LISTED_MOST
    ? items
    : [...items.slice(0, LISTED_MOST), [`… and ${items.length - LISTED_MOST} more (comparison.json lists them all)`]];
/** A build error's line, cut to a length a comment holds. */
const shortLine = (s: string): string => {
  const line = firstLine(s);
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
};

/** The constant-time builds of head that failed to build: nothing of theirs was checked, and the comment says so. */
function ctUnbuilt(report: CompareReport): RootContent[] {
  const failed = report.ct_build_failures ?? [];
  if (failed.length === 0) return [];
  return [
    para(strong('Constant-time builds not checked')),
    para('These builds of the constant-time matrix failed to build, so nothing was checked in them:'),
    bullets(
      capped(
        failed.map((f): Inline[] => [
          code(f.key),
          ' ',
          code(f.build),
          `: ${shortLine(f.failure)}${f.campaign_build ? " (the campaign's own compiler and flag set, which the measured build fell back from: `fail-on: ct` counts it)" : ''}`,
        ]),
      ),
    ),
  ];
}

interface Groups {
  details: Cell[][];
  noisy: Cell[][];
  undecided: Cell[][];
  changed: Cell[][];
  memory: Cell[][];
  sizes: Cell[][];
  mismatches: Cell[][];
  ct: Cell[][];
  heldTo: Inline[][];
  stillFailing: Inline[][];
  kat: Cell[][];
  builds: Inline[][];
  invalid: Inline[][];
}

/**
 * The parts of the comment whose rows may be dropped to respect a size limit, in the order they
 * are dropped (from the end of each): the full listing first, then the changed table, the
 * audit tables, and last the KAT findings and build failures, which matter most.
 */
const DROP_ORDER = [
  'details',
  'undecided',
  'noisy',
  'changed',
  'memory',
  'sizes',
  'mismatches',
  'ct',
  'heldTo',
  'stillFailing',
  'kat',
  'builds',
  'invalid',
] as const;

function valueDelta(c: ValueChange): number | undefined {
  return c.base !== undefined && c.head !== undefined && c.base !== 0 ? ((c.head - c.base) / c.base) * 100 : undefined;
}

function groups(report: CompareReport, pr?: PullRequestContext): Groups {
  const paired = rowHeader(report) === PAIRED_ROW_HEADER;
  const valueRow = (c: ValueChange): Cell[] => [c.key, c.item, amount(c.base), amount(c.head), signedPct(valueDelta(c))];
  return {
    details: report.rows.map((r) => rowCells(r, pr, paired)),
    noisy: noisyRows(report, pr).map(noisyCells),
    undecided: report.rows.filter((r) => r.verdict === 'inconclusive').map(undecidedCells),
    changed: changedRows(report).map((r) => rowCells(r, pr, paired)),
    memory: report.memory_changes.map(valueRow),
    sizes: report.size_changes.map(valueRow),
    mismatches: report.size_mismatches.map((m) => [m.id, m.instance, m.item, amount(m.catalog), amount(m.api), m.basis]),
    ct: (report.ct_findings ?? []).map((f) => [
      f.key,
      f.kind,
      code(f.function),
      code(ctSite(f)),
      `${f.operations.join(', ')}${f.build ? ` (${f.build} build)` : ''}${f.also_in ? `; new in ${f.also_in.join(', ')} too` : ''}${f.compiler_made ? `; ${COMPILER_MADE_NOTE[f.compiler_made]}` : ''}`,
      f.baseline_checked
        ? String(f.count)
        : `${f.count} (${f.build ? `the baseline did not check its ${f.build} build` : 'no ct evidence on the baseline'})`,
    ]),
    heldTo: (report.held_to ?? []).map((h) => [code(h.key), `: ${h.held_to}`]),
    stillFailing: (pr?.stillFailing ?? []).map((k) => [code(k.key), `: ${k.status}${k.detail ? ` (${firstLine(k.detail)})` : ''}`]),
    kat: report.kat_changes.map((k) => [k.key, k.base ?? MISSING, k.head ?? MISSING]),
    invalid: report.invalid_candidates.map((c) => [code(c.id), ': INVALID (', code(firstLine(c.problem)), ')']),
    builds: report.build_failures.map((b) => {
      const error = pr?.buildErrors[b];
      return error ? [code(b), ': ', code(firstLine(error))] : [code(b)];
    }),
  };
}

const html = (value: string): Html => ({ type: 'html', value });

interface Layout {
  /** A line before the Markdown (the sticky comment's marker). */
  leadingLine?: string;
  opts: MarkdownOptions;
  /** How many rows of each group to keep. */
  keep: Record<keyof Groups, number>;
  dropped: number;
}

/** What each part of one rendering reads: the report, and its rows as many as the layout keeps. */
interface Page {
  report: CompareReport;
  g: Groups;
  pr?: PullRequestContext;
  /** A group's rows that the layout keeps. */
  take<T>(name: keyof Groups, rows: T[]): T[];
}

function render(report: CompareReport, g: Groups, layout: Layout): string {
  const { keep, opts } = layout;
  const page: Page = { report, g, pr: opts.pr, take: (name, rows) => rows.slice(0, keep[name]) };
  const out: RootContent[] = [
    heading(3, headline(report, page.pr)),
    ...preamble(page),
    ...changedSection(page),
    ...undecidedSection(page),
    ...noisySection(page),
    ...katAndBuildSection(page),
    ...heldToSection(page),
    ...auditSections(page),
    ...detailsSection(page),
    ...closing(page, layout),
  ];
  const body = serialize(root(out));
  return layout.leadingLine === undefined ? body : `${layout.leadingLine}\n${body}`;
}

/** What the verdicts are read with: warnings about the evidence, the rule, and how many rows were compared. */
function preamble({ report, g, pr }: Page): RootContent[] {
  const compared = comparedRows(report, pr).length;
  const carried = report.rows.filter((r) => isCarriedOver(r, pr)).length;
  return [
    ...noBaselineWarning(report, pr),
    ...sandboxWarning(report),
    ...validationWarnings(report),
    ...refusedWarning(report),
    para(...ruleText(report, pr)),
    para(
      `${plural(compared, 'measurement')} compared, ${g.changed.length} changed`,
      carried > 0 ? `; ${carried} of untouched candidates carried over from the baseline, not measured.` : '.',
    ),
  ];
}

function noBaselineWarning(report: CompareReport, pr: PullRequestContext | undefined): RootContent[] {
  if (!pr || pr.baseline) return [];
  return [
    para(
      `⚠ No evidence for ${report.system} on the base commit `,
      code(`${pr.looked.baseRef}@${pr.looked.baseSha.slice(0, 7)}`),
      ' nor on the data branch ',
      code(pr.looked.dataBranch),
      ': every measurement below is new, nothing was compared. Publish nightly evidence to the data branch (or commit it to the base branch) first.',
    ),
  ];
}

function sandboxWarning(report: CompareReport): RootContent[] {
  if (report.sandbox !== 'none') return [];
  return [
    para(
      '⚠ Not sandboxed: the campaign set ',
      code('sandbox: none'),
      ", so the submissions' code ran with the rights of the runner user (see docs/security.md in ngcc-perf).",
    ),
  ];
}

function changedSection({ report, g, pr, take }: Page): RootContent[] {
  const changed = take('changed', g.changed);
  if (g.changed.length === 0)
    return [
      para(
        noisyVerdicts(report, pr) > 0
          ? 'No measurement changed significantly; the noisy ones below could not be judged.'
          : 'No measurement changed significantly.',
      ),
    ];
  if (changed.length > 0) return [para(strong('Changed measurements')), table(rowHeader(report), changed)];
  return [];
}

function undecidedSection({ g, take }: Page): RootContent[] {
  const undecided = take('undecided', g.undecided);
  if (undecided.length === 0) return [];
  return [
    para(strong('Inconclusive measurements')),
    para('A change of at least the threshold that the trials could not tell from their spread: neither a regression nor an improvement.'),
    table(UNDECIDED_HEADER, undecided),
  ];
}

function noisySection({ g, take }: Page): RootContent[] {
  const noisy = take('noisy', g.noisy);
  if (noisy.length === 0) return [];
  return [
    para(strong('Noisy measurements')),
    para(
      `On a side of each of these rows the trials spread ${NOISY_TRIAL_SPREAD}× or more (slowest over fastest trial, per call), or a trial spent more than ${DISTURBED_OFF_CPU_SHARE * 100}% of its time off the CPU ("off-CPU"): something else ran on the core. Such a row is "noisy", never a regression or an improvement, unless the two sides' worst-case ranges do not overlap at all; re-run to judge it.`,
    ),
    table(NOISY_HEADER, noisy),
  ];
}

function katAndBuildSection({ g, take }: Page): RootContent[] {
  const kat = take('kat', g.kat);
  const builds = take('builds', g.builds);
  const still = take('stillFailing', g.stillFailing);
  const invalid = take('invalid', g.invalid);
  if (kat.length === 0 && builds.length === 0 && still.length === 0 && invalid.length === 0) return [];
  const out: RootContent[] = [para(strong('KAT and build'))];
  if (invalid.length > 0) out.push(para('Candidates not built because their candidate.yml or kat.sha256 is wrong:'), bullets(invalid));
  if (kat.length > 0) out.push(table(['instance', 'base KAT', 'head KAT'], kat));
  if (builds.length > 0) out.push(para('Build failures in head (first compiler error):'), bullets(builds));
  if (still.length > 0)
    out.push(para('KATs of the measured candidates that still fail as on the baseline (not counted as new failures):'), bullets(still));
  return out;
}

function heldToSection({ g, take }: Page): RootContent[] {
  const held = take('heldTo', g.heldTo);
  if (held.length === 0) return [];
  return [
    para(strong('Outputs held to')),
    para('What the outputs of each changed library were checked against, beyond its own run of the published KAT:'),
    bullets(held),
  ];
}

/** The audits: the size catalog, the constant-time check, the builds that fell back, sizes and memory. */
function auditSections(page: Page): RootContent[] {
  const { report, g, take } = page;
  // Each finding under its own title: the size audit is the catalog against the API, nothing else.
  const mismatches = take('mismatches', g.mismatches);
  return [
    ...(mismatches.length > 0
      ? [
          para(strong('Size audit')),
          para('Catalog sizes that differ from what the API reports:'),
          table(['candidate', 'instance', 'item', 'catalog (bytes)', 'API (bytes)', 'basis'], mismatches),
        ]
      : []),
    ...ctFindingsSection(page),
    ...ctUnbuilt(report),
    ...fellBack(report),
    ...valueChangeSections(page),
  ];
}

function ctFindingsSection({ report, g, take }: Page): RootContent[] {
  const ct = take('ct', g.ct);
  if (ct.length === 0) return [];
  return [
    para(strong('Constant-time findings')),
    para(
      'Unsuppressed sites that memcheck flagged in head and the baseline did not have (secrets marked undefined; a branch, a memory index, a division or a system call that depends on them). Sites are matched per function and file, so moved lines alone are not new. Mark data that is public by definition in the candidate’s ',
      code('ct-suppressions.yml'),
      ', with a reason.',
    ),
    table(['instance', 'kind', 'function', 'site', 'operations', 'reports'], ct),
    ...kindMeanings((report.ct_findings ?? []).map((f) => f.kind)),
  ];
}

function valueChangeSections({ g, take }: Page): RootContent[] {
  const sizes = take('sizes', g.sizes);
  const memory = take('memory', g.memory);
  const valueHeader = ['instance', 'item', 'base', 'head', 'Δ%'];
  return [
    ...(sizes.length > 0 ? [para(strong('Size changes')), para('Sizes the API reports (bytes):'), table(valueHeader, sizes)] : []),
    ...(memory.length > 0
      ? [
          para(strong('Memory changes')),
          para('The static ELF image (elf_load_bytes) and the peak RSS of an operation (peak_rss_bytes), in bytes:'),
          table(valueHeader, memory),
        ]
      : []),
  ];
}

function detailsSection({ report, g, take }: Page): RootContent[] {
  const details = take('details', g.details);
  if (details.length === 0) return [];
  const shown = details.length < g.details.length ? ` (first ${details.length} shown)` : '';
  return [
    html(`<details>\n<summary>All ${plural(report.rows.length, 'operation')}${shown}</summary>`),
    table(rowHeader(report), details),
    html('</details>'),
  ];
}

/** How to reproduce, where to read more, and how many rows the size limit left out. */
function closing({ report, pr }: Page, layout: Layout): RootContent[] {
  const { opts } = layout;
  const out: RootContent[] = [];
  if (pr && pr.measured.length > 0) out.push(reproduceHint(report.system, pr));

  const links: Inline[] = [];
  if (opts.reportUrl) links.push(link(opts.reportUrl, 'Full report'));
  if (opts.runUrl) links.push(...(links.length > 0 ? [' · '] : []), link(opts.runUrl, 'Workflow run'));
  if (links.length > 0) out.push(para(...links));

  if (layout.dropped > 0) {
    const see: Inline = opts.reportUrl ? link(opts.reportUrl, 'full report') : text('full report');
    out.push(para(`… ${layout.dropped} more rows not shown (comment size limit); see the `, see));
  }
  return out;
}

/** The rule compare.ts applies, with this run's numbers. */
function ruleText(report: CompareReport, pr?: PullRequestContext): Inline[] {
  const where: Inline[] = pr?.baseline
    ? [` (baseline: evidence on the ${pr.baseline.source} `, code(`${pr.baseline.ref}@${pr.baseline.sha.slice(0, 7)}`), ')']
    : [];
  const spread = `|Δ| is more than ${HISTORY_SIGMAS}× the run-to-run spread of the operation`;
  // Distinct measurements when the comparison counted them (a record in several commits is one
  // run); a comparison without that count has only the number of evidence versions read.
  const runs = report.history_runs ?? pr?.historyRuns;
  const nightly = (n: number) => plural(n, report.history_runs !== undefined ? 'distinct nightly measurement' : 'nightly evidence version');
  const history =
    runs === undefined
      ? `, and, when a nightly history exists, ${spread} in it`
      : runs >= HISTORY_MIN_RUNS
        ? `, and ${spread} over its last ${nightly(runs)}`
        : runs === 0
          ? ' (no nightly history on the data branch: no spread rule)'
          : ` (${nightly(runs)} of history, fewer than ${HISTORY_MIN_RUNS}: no spread rule)`;
  const pairedNote =
    pr?.paired && pr.paired > 0
      ? [
          ` The base commit's code of the measured candidates was built and measured in this run, its trials interleaved with head's (${plural(pr.paired, 'operation')}): drift between runs cannot pass for a change.`,
          ...(pr.extraRounds
            ? [
                ` ${plural(pr.extraRounds.rows, 'row')} the first rounds could not decide (inconclusive, noisy, or unchanged on too few pairs to show a change of the threshold) got ${plural(pr.extraRounds.pairs, 'more trial pair')} each, judged on all of their pairs.`,
              ]
            : []),
        ]
      : [];
  return [
    `Head against base on ${report.system}`,
    ...where,
    `: Δ is the change of the median trial; a change counts when |Δ| ≥ ${pyFixed(report.threshold_pct, 1)}%, a rank permutation test of the trials gives p ≤ ${pyGeneral(report.alpha, 3)}${history}; otherwise it is unchanged or inconclusive. A row is noisy when a side's trials spread ${NOISY_TRIAL_SPREAD}× or more or one spent more than ${DISTURBED_OFF_CPU_SHARE * 100}% of its time off the CPU, unless the two sides' worst-case ranges do not overlap.`,
    ...pairedNote,
  ];
}

/** One line a submitter can paste; the --only filter is left out when it would be unreadably long. */
function reproduceHint(system: string, pr: PullRequestContext): RootContent {
  const only = pr.measured.length <= 8 ? ` --only '^(${pr.measured.join('|')})/'` : '';
  const cli = pr.cli ?? 'node ngcc-perf/dist/cli.js';
  return para(
    'Reproduce locally: ',
    code(`${cli} run ${pr.campaign} --system ${system} --out data${only}`),
    ', then ',
    code(`${cli} compare --base baseline --head data --system ${system} --campaign ${pr.campaign}`),
    ' with the baseline evidence in ',
    code(`baseline/${system}`),
    '.',
  );
}

/** How many rows of each group remain after dropping `drop` rows in DROP_ORDER. */
function keepAfter(g: Groups, drop: number): Record<keyof Groups, number> {
  let left = drop;
  const keep = {} as Record<keyof Groups, number>;
  for (const name of DROP_ORDER) {
    const n = g[name].length;
    const d = Math.min(n, left);
    keep[name] = n - d;
    left -= d;
  }
  return keep;
}

/** Characters of plain text in a cell: what its serialization can only add to. */
function textLength(c: Cell): number {
  const one = (x: Inline): number => {
    if (typeof x === 'string') return x.length;
    const n = x as { value?: unknown; children?: Inline[] };
    return typeof n.value === 'string' ? n.value.length : (n.children ?? []).reduce((a, k) => a + one(k), 0);
  };
  return Array.isArray(c) ? c.reduce((a, x) => a + one(x), 0) : one(c);
}

/**
 * A lower bound on the characters a row adds: a table row is `| a | b |` plus its line break,
 * a list item `- a` plus its line break. Escaping and markup only add to it.
 */
function rowFloor(name: keyof Groups, cells: Cell[]): number {
  const text = cells.reduce((a, c) => a + textLength(c), 0);
  return name === 'builds' || name === 'stillFailing' ? text + 3 : 2 + cells.length * 3 + text;
}

/**
 * Renders with as many rows as fit in `limit` (measured by `measure`). Rows go whole, dropped in
 * DROP_ORDER from the end of each group; the result is the fullest rendering that fits. A probe
 * renders what it keeps, so the search never renders more rows than a lower bound says could
 * fit: the cost follows the limit, not the length of the report.
 */
function renderBounded(report: CompareReport, opts: MarkdownOptions, bound: Bound): string {
  const { leadingLine, limit, measure: size } = bound;
  const g = groups(report, opts.pr);
  const total = DROP_ORDER.reduce((n, name) => n + g[name].length, 0);
  const at = (drop: number): string => render(report, g, { leadingLine, opts, keep: keepAfter(g, drop), dropped: drop });
  const bare = at(total);
  const bareSize = size(bare);
  if (bareSize > limit)
    throw new RangeError(`ngcc-perf comparison: even without any table row the text needs ${bareSize} of at most ${limit}`);
  if (total === 0) return bare;

  // floorKept[d]: lower bound on what the rows still kept after dropping d rows add. The slack
  // covers the truncation note, whose count has fewer digits than in `bare`.
  const dropped: number[] = [];
  for (const name of DROP_ORDER) for (let i = g[name].length - 1; i >= 0; i--) dropped.push(rowFloor(name, g[name][i]!));
  const floorKept: number[] = new Array<number>(total + 1).fill(0);
  for (let d = total - 1; d >= 0; d--) floorKept[d] = floorKept[d + 1]! + dropped[d]!;
  const slack = 16;
  const estimate = (d: number): number => bareSize - slack + floorKept[d]!;
  let minDrop = 0;
  while (minDrop < total && estimate(minDrop) > limit) minDrop++;

  // Invariant: dropping `hi` rows fits (size sHi), dropping `lo` rows does not (size, or a lower
  // bound of it, sLo); lo = -1 before anything is known not to fit.
  let lo = minDrop - 1;
  let sLo = lo >= 0 ? estimate(lo) : Infinity;
  let hi = total;
  let sHi = bareSize;
  let best = bare;
  const probe = (d: number): void => {
    const text = at(d);
    const s = size(text);
    if (s <= limit) [hi, sHi, best] = [d, s, text];
    else [lo, sLo] = [d, s];
  };
  probe(minDrop);
  // Sizes fall almost linearly with the rows dropped: interpolate, and bisect if that stalls.
  for (let step = 0; hi - lo > 1; step++) {
    let d = lo + Math.floor((hi - lo) / 2);
    if (step < 8 && Number.isFinite(sLo) && sLo > sHi) d = lo + Math.ceil(((sLo - limit) / (sLo - sHi)) * (hi - lo));
    probe(Math.min(hi - 1, Math.max(lo + 1, d)));
  }
  return best;
}

/**
 * The comparison as Markdown. With a bound, rows are dropped (least important first) until the
 * text fits, and a last line says how many; a bound the text cannot meet even without rows throws.
 */
export function renderComparison(report: CompareReport, opts: MarkdownOptions = {}, bound?: Bound): string {
  if (bound) return renderBounded(report, opts, bound);
  const g = groups(report, opts.pr);
  return render(report, g, { opts, keep: keepAfter(g, 0), dropped: 0 });
}
