/**
 * The constant-time check's evidence as plain data (CONTRACT §8, docs/evidence-format.md), and the
 * few facts the pages and comparisons derive from it.
 */

export const CT_KINDS = ['branch', 'index', 'division', 'syscall'] as const;
export type CtKind = (typeof CT_KINDS)[number];
export type CtStatus = 'clean' | 'flagged' | 'skipped' | 'failed';

export interface CtFinding {
  kind: CtKind;
  function: string;
  file?: string;
  line?: number;
  /** How often memcheck reported the site over the operation's calls. */
  count: number;
  suppressed: boolean;
  /** A suppression's reason; for an unsuppressed finding, what is known about it. */
  reason?: string;
}

export interface CtOperation {
  status: CtStatus;
  calls: number;
  findings: CtFinding[];
  /** Why the operation was skipped or failed. */
  reason?: string;
}

/**
 * A division instruction in code the API reaches (ct/division.ts). `tainted`: memcheck flagged the
 * division's function, so its operands may depend on a secret (the finding is then of kind
 * `division`); false: "division reachable, operands not shown tainted".
 */
export interface CtDivision {
  function: string;
  instruction: string;
  address: string;
  file?: string;
  line?: number;
  tainted: boolean;
}

export interface CtFile {
  schema: number;
  tool: string;
  library_sha256: string;
  operations: Record<string, CtOperation>;
  /** Division sites reachable from the API (an extension of §8: absent in files that predate it). */
  divisions?: CtDivision[];
}

/** A finding's site: what two runs of the same code agree on (not its count). */
export const siteOf = (f: CtFinding): string => `${f.kind} ${f.function} ${f.file ?? '?'}:${f.line ?? '?'}`;

/** Every unsuppressed finding of a file, one per site (an instance's operations share code). */
export function flaggedSites(ct: CtFile): CtFinding[] {
  const sites = new Map<string, CtFinding>();
  for (const op of Object.values(ct.operations))
    for (const f of op.findings ?? []) {
      if (f.suppressed) continue;
      const had = sites.get(siteOf(f));
      sites.set(siteOf(f), had ? { ...had, count: had.count + f.count } : f);
    }
  return [...sites.values()];
}

/** Operations whose status is `flagged`: what the summary's `ct: N flagged` counts. */
export const flaggedOperations = (ct: CtFile): string[] =>
  Object.entries(ct.operations)
    .filter(([, o]) => o.status === 'flagged')
    .map(([op]) => op);
