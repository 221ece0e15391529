/** What `compare` finds between the base and head evidence of one system. */

export type Verdict = 'regression' | 'improvement' | 'unchanged' | 'inconclusive' | 'new' | 'removed';

export interface SideStats {
  /** Mean cycles per call over all trials (the record's mean_cycles). */
  mean_cycles: number;
  /** Per-trial cycles per call, the samples the test compares. */
  trial_cycles: number[];
  peak_rss_bytes?: number;
  elf_load_bytes?: number;
}

export interface CompareRow {
  candidate: string;
  label: string;
  operation: string;
  base?: SideStats;
  head?: SideStats;
  /** (head − base) / base in percent, when both sides have numbers. */
  delta_pct?: number;
  /** Two-sided p-value of the difference of trial means (exact permutation test when small). */
  p_value?: number;
  verdict: Verdict;
  /** One short sentence on why: threshold, p, history spread. */
  reason: string;
}

export interface KatChange {
  key: string;
  base?: string;
  head?: string;
}

export interface ValueChange {
  key: string;
  item: string;
  base?: number;
  head?: number;
}

export interface SizeMismatch {
  id: string;
  instance: string;
  item: string;
  catalog: number;
  api?: number;
  basis: string;
}

export interface CompareReport {
  system: string;
  threshold_pct: number;
  alpha: number;
  rows: CompareRow[];
  kat_changes: KatChange[];
  /** Builds that fail in head and did not fail on the base (always reported). */
  build_failures: string[];
  /** Candidates whose candidate.yml or kat.sha256 head cannot read, and base could (status INVALID). */
  invalid_candidates: Array<{ id: string; problem: string }>;
  /** How the head run isolated submission code (campaign.json `sandbox`); absent in evidence older than the sandbox. */
  sandbox?: 'bwrap' | 'none';
  size_changes: ValueChange[];
  memory_changes: ValueChange[];
  size_mismatches: SizeMismatch[];
  counts: { regressions: number; improvements: number; kat_failures: number; size_mismatches: number };
}

/** Where the numbers a pull request is compared with came from. */
export interface Baseline {
  source: 'base commit' | 'data branch';
  /** The pull request's base branch, or the data branch. */
  ref: string;
  sha: string;
}

/** What only the pull-request run knows about a comparison; without it the text stays generic. */
export interface PullRequestContext {
  /** Undefined: neither the base commit nor the data branch had evidence, nothing was compared. */
  baseline?: Baseline;
  /** Where the baseline was looked for, to say so when there is none. */
  looked: { baseRef: string; baseSha: string; dataBranch: string };
  /** Candidates measured in head; the others were carried over from the baseline unmeasured. */
  measured: string[];
  /** Nightly evidence versions behind the spread rule (0: the rule did not apply). */
  historyRuns: number;
  /** The compiler's first error of each head build failure, by instance key. */
  buildErrors: Record<string, string>;
  /** Measured instances whose KAT fails in head as it did on the baseline (not a change, so not counted). */
  stillFailing: Array<{ key: string; status: string; detail?: string }>;
  /** Campaign folder relative to the repository, for the reproduce hint. */
  campaign: string;
  /** The command that starts this ngcc-perf on a submitter's machine (default `npx ngcc-perf`). */
  cli?: string;
}
