import type { CampaignSummary } from '../campaign/context.js';
import type { CampaignOptions, Phase } from '../campaign/runPlan.js';
import { runCampaign } from '../campaign/runCampaign.js';
import { compareEvidence, rowKey, undecidedRows } from '../compare/compare.js';
import type { CompareReport, CompareRow } from '../compare/compareReport.js';
import { DEFAULT_ALPHA } from '../config/defaults.js';

/**
 * The pull-request check's rule, written once: the action runs it on a pull request, and
 * `calibrate` runs it on unchanged code to measure how often it calls a change that is not there.
 * Two copies would let the calibration describe a rule the action does not run.
 */

/** What a pull request's head is judged by against its base: the rule's own settings, in one place. */
export interface Judgement {
  baseDir: string;
  headDir: string;
  system: string;
  thresholdPct: number;
  /** For the size audit's catalog (external_sizes.csv); the timing verdicts never read it. */
  campaignDir?: string;
  /** Earlier nightly evidence trees: their run-to-run spread (none in a calibration). */
  history?: string[];
  /** Rows the nightly trends mark unstable: their regressions fail nothing. */
  unstable?: ReadonlySet<string>;
}

/** Head against base, as the comment shows it (and as the calibration counts it). */
export function judgePullRequest(j: Judgement): CompareReport {
  return compareEvidence({
    baseDir: j.baseDir,
    headDir: j.headDir,
    system: j.system,
    thresholdPct: j.thresholdPct,
    alpha: DEFAULT_ALPHA,
    ...(j.campaignDir ? { campaignDir: j.campaignDir } : {}),
    ...(j.history ? { history: j.history } : {}),
    ...(j.unstable ? { unstable: j.unstable } : {}),
  });
}

/** Options of head's runs that the rounds themselves set. */
type SetByRounds = 'phases' | 'force' | 'pairedTrials' | 'extraRounds';

export interface PairedRounds {
  /**
   * Head's campaign run, its `against` naming the base side measured beside it; asked once per run,
   * so that each run may get its own progress display.
   */
  campaign: () => Omit<CampaignOptions, SetByRounds>;
  /** The first run's phases (the extra rounds measure only). */
  phases: ReadonlySet<Phase>;
  /** Trial pairs of the first rounds (`pr-rounds`). */
  rounds: number;
  /** More pairs for each row the first rounds leave undecided (`pr-extra-rounds`; 0: none). */
  extraRounds: number;
  judge: () => CompareReport;
  /** After each run, before it is judged (the action moves the base side's records into place). */
  afterRun?: () => void;
  /** The rows about to get more pairs. */
  onUndecided?: (rows: readonly CompareRow[]) => void;
}

export interface PairedOutcome {
  /** The first run's summary. */
  summary: CampaignSummary;
  report: CompareReport;
  /** The rows the first rounds left undecided, each given `extraRounds` more pairs. */
  undecided: CompareRow[];
}

/**
 * First rounds, judged; then, rather than answer "cannot tell", more pairs for the rows left
 * undecided (and only those), judged again.
 */
export async function runPairedRounds(p: PairedRounds): Promise<PairedOutcome> {
  const summary = await runCampaign({ ...p.campaign(), phases: new Set(p.phases), force: true, pairedTrials: p.rounds });
  p.afterRun?.();
  const first = p.judge();
  const undecided = p.extraRounds > 0 ? undecidedRows(first) : [];
  if (undecided.length === 0) return { summary, report: first, undecided };
  p.onUndecided?.(undecided);
  await runCampaign({
    ...p.campaign(),
    phases: new Set(['measure'] as const),
    campaignPhases: false,
    force: false,
    pairedTrials: p.rounds,
    extraRounds: { pairs: p.extraRounds, operations: new Set(undecided.map(rowKey)) },
  });
  p.afterRun?.();
  return { summary, report: p.judge(), undecided };
}
