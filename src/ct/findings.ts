/**
 * The constant-time check's evidence as plain data (CONTRACT §8, docs/evidence-format.md), and the
 * few facts the pages and comparisons derive from it.
 */

import type { CtEvidence, CtFinding } from './findingKinds.js';

export type { CtDivision, CtFinding } from './findingKinds.js';
export { COMPILER_MADE_NOTE, CT_KINDS } from './findingKinds.js';
/** The pages' and comparisons' name for a ct file. */
export type CtFile = CtEvidence;

/** A finding's site: what two runs of the same code agree on (not its count). */
export const siteOf = (f: CtFinding): string => `${f.kind} ${f.function} ${f.file ?? '?'}:${f.line ?? '?'}`;

/** Operations whose status is `flagged`: what the summary's `ct: N flagged` counts. */
export const flaggedOperations = (ct: CtFile): string[] =>
  Object.entries(ct.operations)
    .filter(([, o]) => o.status === 'flagged')
    .map(([op]) => op);
