import { renderComparison, type MarkdownOptions } from '../compare/markdown.js';
import type { CompareReport } from '../compare/compareReport.js';
import { SYSTEM_ID, SYSTEM_ID_RULE } from '../config/defaults.js';

/**
 * The comparison as GitHub takes it: the sticky comment with its marker, and the job summary,
 * each within GitHub's limit. The Markdown itself is compare/markdown.ts's.
 */

/**
 * The hidden first line that identifies the one sticky comment of a system. The inputs were
 * checked against the same rule, so a bad id here is a bug, not an input error.
 */
export const COMMENT_MARKER = (system: string): string => {
  if (!SYSTEM_ID.test(system)) throw new RangeError(`COMMENT_MARKER: system id ${JSON.stringify(system)} must be ${SYSTEM_ID_RULE}`);
  return `<!-- ngcc-perf:${system} -->`;
};

/** GitHub rejects issue comments longer than this many characters. */
const COMMENT_MAX_CHARS = 65_536;
/** GitHub's limit on a step's job summary (bytes of UTF-8). */
const JOB_SUMMARY_MAX_BYTES = 1 << 20;

export interface CommentOptions extends MarkdownOptions {
  /** Upper bound on the comment's length in characters (default 65,536, GitHub's limit). */
  maxChars?: number;
}

/** The sticky pull-request comment: the marker on the first line, at most `maxChars` characters. */
export function renderComment(report: CompareReport, opts: CommentOptions = {}): string {
  const { maxChars = COMMENT_MAX_CHARS, ...rest } = opts;
  return renderComparison(report, rest, { limit: maxChars, measure: (s) => s.length, leadingLine: COMMENT_MARKER(report.system) });
}

/** The same content for the job summary: no marker, bounded by GitHub's 1 MiB per step. */
export function renderJobSummary(report: CompareReport, opts: MarkdownOptions = {}): string {
  return renderComparison(
    report,
    { reportUrl: opts.reportUrl, runUrl: opts.runUrl, pr: opts.pr },
    { limit: JOB_SUMMARY_MAX_BYTES, measure: (s) => Buffer.byteLength(s, 'utf8') },
  );
}
