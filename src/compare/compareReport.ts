/** What `compare` finds between the base and head evidence of one system. */

/**
 * `noisy`: a side's trials spread too far (NOISY_TRIAL_SPREAD) to tell a change from the noise:
 * neither a regression nor an improvement, nor unchanged.
 */
export type Verdict = 'regression' | 'improvement' | 'unchanged' | 'inconclusive' | 'noisy' | 'new' | 'removed';

export interface SideStats {
  /** Mean cycles per call over all trials (the record's mean_cycles). */
  mean_cycles: number;
  /** Per-trial cycles per call, the samples the test compares. */
  trial_cycles: number[];
  /** Median of trial_cycles: the figure the verdict compares (one trial cannot move it far). */
  median_cycles?: number;
  /** Slowest over fastest trial, per call (the record's min/max_trial_seconds); absent with one trial. */
  trial_spread?: number;
  /** Per trial, kernel_cpu_s / window_s (at most 1): the share of its window on the CPU; absent unless every trial has both. */
  trial_on_cpu?: number[];
  peak_rss_bytes?: number;
  elf_load_bytes?: number;
  /** Measured in a paired run (`run --against`): trial i pairs with trial i of the other side. */
  paired?: boolean;
  /** Paired: trials per round, when a pull request appended extra rounds (the record's trial_rounds). */
  trial_rounds?: number[];
  /** Trials of the measurement a check refused (measure/refusals.ts); absent when none was: its figure is marked. */
  refused_trials?: number;
  /** The measurement stopped before its plan on a failure that was no refusal (measure/refusals.ts partialStop): marked too. */
  partial?: boolean;
}

export interface CompareRow {
  candidate: string;
  label: string;
  operation: string;
  base?: SideStats;
  head?: SideStats;
  /** (head − base) / base of the median trials, in percent, when both sides were measured. */
  delta_pct?: number;
  /** The same change of the means over all trials, which one disturbed trial can move (for reference). */
  mean_delta_pct?: number;
  /** Two-sided p-value of the rank-sum permutation test of the trials (exact when small). */
  p_value?: number;
  verdict: Verdict;
  /** One short sentence on why: threshold, p, history spread, noise. */
  reason: string;
  /** A side's trials spread at least NOISY_TRIAL_SPREAD, or one was off the CPU more than 2% of its window (whatever the verdict). */
  noisy?: boolean;
  /** Judged on trial pairs (both sides measured in one run, interleaved): Δ is the median pair ratio, p the signed-rank test. */
  paired?: boolean;
  /** Paired: trial pairs per round, when extra rounds were added to the first (`[16, 16]`). */
  rounds?: number[];
  /** Paired: the smallest change (percent) the pairs could call at alpha with 80 % power (compare/stats.ts pairedMdePct). */
  mde_pct?: number;
  /** Head holds the baseline's own record (the same start time and library): nothing was measured. */
  carried_over?: boolean;
  /** Distinct nightly measurements of the operation behind the history rule (0: none). */
  history_runs?: number;
  /** The nightly trends mark the operation unstable: a regression of it is not counted as one (fails nothing). */
  unstable?: boolean;
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

interface SizeMismatch {
  id: string;
  instance: string;
  item: string;
  catalog: number;
  api?: number;
  basis: string;
}

import type { CtBuildFailure, CtNewFinding } from './ctChanges.js';

export interface CompareReport {
  system: string;
  threshold_pct: number;
  alpha: number;
  rows: CompareRow[];
  kat_changes: KatChange[];
  /** Each head instance whose library changed, and what its outputs were held to (kat/unseen.ts heldToShown). */
  held_to?: Array<{ key: string; held_to: string }>;
  /** Builds that fail in head and did not fail on the base (always reported). */
  build_failures: string[];
  /** Candidates whose candidate.yml or kat.sha256 head cannot read, and base could (status INVALID). */
  invalid_candidates: Array<{ id: string; problem: string }>;
  /** How the head run isolated submission code (campaign.json `sandbox`); absent in evidence older than the sandbox. */
  sandbox?: 'bwrap' | 'unshare' | 'none';
  size_changes: ValueChange[];
  memory_changes: ValueChange[];
  size_mismatches: SizeMismatch[];
  /**
   * Unsuppressed constant-time sites of head that the baseline did not have (compare/ctChanges.ts);
   * absent when neither side has a constant-time check.
   */
  ct_findings?: CtNewFinding[];
  /**
   * Builds of head's constant-time matrix that failed to build, so nothing was checked in them
   * (compare/ctChanges.ts); `campaign_build`: the campaign's own compiler and flag set, which the measured
   * build fell back from. Absent when there is none.
   */
  ct_build_failures?: CtBuildFailure[];
  /** Head's instances measured with the harness defaults because their guide build failed (build.json guide_error). */
  fell_back?: Array<{ key: string; why: string }>;
  /** Most distinct nightly measurements any operation had (by record start time and library); absent without history. */
  history_runs?: number;
  /** What `validate` finds wrong in a side's evidence (absent when nothing): its figures may not be what was measured. */
  evidence_problems?: { base?: string[]; head?: string[] };
  counts: {
    regressions: number;
    improvements: number;
    kat_failures: number;
    size_mismatches: number;
    /** Rows whose verdict is `noisy` (absent in comparisons older than the noisy verdict). */
    noisy?: number;
    /** New constant-time findings (absent when neither side has a constant-time check). */
    ct_findings?: number;
  };
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
  /**
   * Nightly evidence versions read for the spread rule (0: none). The comparison's own
   * `history_runs`, which counts distinct measurements, wins when present.
   */
  historyRuns: number;
  /**
   * Operations whose base side was measured in the same run as head, trials interleaved (the base
   * commit's code built beside head's); 0 or absent: every base figure is the baseline evidence's.
   */
  paired?: number;
  /** The extra paired rounds (the action's `pr-extra-rounds`): rows the first rounds left undecided, and the pairs added to each. */
  extraRounds?: { rows: number; pairs: number };
  /** The compiler's first error of each head build failure, by instance key. */
  buildErrors: Record<string, string>;
  /** Measured instances whose KAT fails in head as it did on the baseline (not a change, so not counted). */
  stillFailing: Array<{ key: string; status: string; detail?: string }>;
  /** Campaign folder relative to the repository, for the reproduce hint. */
  campaign: string;
  /** The command that starts this ngcc-perf on a submitter's machine (default: the CLI of a checkout, `node ngcc-perf/dist/cli.js`; `npx ngcc-perf` would fetch whoever claims that npm name). */
  cli?: string;
}
