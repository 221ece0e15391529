import { mkdirSync } from 'node:fs';
import { makeScratch, removeScratch } from '../util/scratch.js';
import { join } from 'node:path';
import { pairCount, rowKey } from '../compare/compare.js';
import { DEFAULT_ALPHA } from '../config/defaults.js';
import { type Calibration, type CalibrationVerdict, summarizeCalibration } from '../evidence/calibration.js';
import { evidencePaths } from '../evidence/layout.js';
import { lockSystem, otherLiveWriter } from '../evidence/lock.js';
import { InputError } from '../errors.js';
import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import type { CampaignOptions } from '../campaign/runPlan.js';
import { judgePullRequest, runPairedRounds } from './pairedRounds.js';

export interface CalibrateOptions
  extends Pick<CampaignOptions, 'campaignDir' | 'system' | 'dataDir' | 'only' | 'cpu' | 'trialTarget' | 'progress' | 'argumentNames'> {
  /** How many times the paired A/A check runs. */
  repeats: number;
  /** Trial pairs of the first rounds (the action's `pr-rounds`). */
  rounds: number;
  /** More pairs for each row the first rounds leave undecided (`pr-extra-rounds`; 0: none). */
  extraRounds: number;
  thresholdPct: number;
  /** Progress of the repeats, one line each. */
  log?: (line: string) => void;
  /**
   * An empty folder for the runs' evidence, left for the caller (default: a new one under TMPDIR,
   * removed at the end).
   */
  scratch?: string;
}

/** What every repeat ran on (campaign.json), for the calibration's header. */
interface RunFacts {
  harness: string;
  cpus: number[];
}

/**
 * Calibrates the pull-request check on this machine: the campaign measured paired against itself,
 * unchanged code on both sides, by the action's own rounds and judgement (prcheck/pairedRounds.ts),
 * `repeats` times; what the rule called is summarised into DATA_DIR/<system>/calibration.json,
 * which the method page shows. The runs' own evidence stays in a scratch folder: the system's
 * records are never touched.
 */
export async function calibratePairedCheck(opts: CalibrateOptions): Promise<{ calibration: Calibration; path: string }> {
  const systemDir = join(opts.dataDir, opts.system);
  refuseOtherWriter(systemDir);
  const work = opts.scratch ?? makeScratch('calibrate');
  const started_utc = new Date().toISOString();
  const repeats: CalibrationVerdict[][] = [];
  const facts: RunFacts = { harness: 'unknown', cpus: [] };
  try {
    for (let i = 1; i <= opts.repeats; i++) repeats.push(await calibrationRepeat(opts, work, i, facts));
  } finally {
    if (!opts.scratch) removeScratch(work);
  }
  const calibration = summarizeCalibration(repeats, {
    started_utc,
    ended_utc: new Date().toISOString(),
    harness_version: facts.harness,
    cpus: facts.cpus,
    threshold_pct: opts.thresholdPct,
    alpha: DEFAULT_ALPHA,
    rounds: opts.rounds,
    extra_rounds: opts.extraRounds,
  });
  return { calibration, path: writeCalibration(systemDir, calibration) };
}

/** What would refuse the result is said before hours of runs, not after. */
function refuseOtherWriter(systemDir: string): void {
  mkdirSync(systemDir, { recursive: true });
  const writer = otherLiveWriter(systemDir);
  if (writer !== undefined)
    throw new InputError(systemDir, '', `another run (pid ${writer}) is writing this evidence; wait for it or use another --out`);
}

/** The scratch folders of the calibration's head and base sides. */
export const calibrationSides = (work: string) => ({ headData: join(work, 'head'), baseData: join(work, 'base') });

/** One paired A/A check, as a pull request is measured and judged: each paired row's verdict. */
async function calibrationRepeat(opts: CalibrateOptions, work: string, i: number, facts: RunFacts): Promise<CalibrationVerdict[]> {
  const { headData, baseData } = calibrationSides(work);
  // One set of options for both runs of a repeat: its progress counts on across them.
  const run = {
    campaignDir: opts.campaignDir,
    system: opts.system,
    dataDir: headData,
    only: opts.only,
    cpu: opts.cpu,
    trialTarget: opts.trialTarget,
    progress: opts.progress,
    argumentNames: opts.argumentNames,
    against: { campaignDir: opts.campaignDir, dataDir: baseData },
  };
  const { summary, report, undecided } = await runPairedRounds({
    campaign: () => run,
    phases: new Set(['build', 'kat', 'measure'] as const),
    rounds: opts.rounds,
    extraRounds: opts.extraRounds,
    judge: () =>
      judgePullRequest({
        baseDir: baseData,
        headDir: headData,
        system: opts.system,
        thresholdPct: opts.thresholdPct,
      }),
  });
  const rows = report.rows.filter((r) => r.paired === true);
  const alarms = rows.filter((r) => r.verdict === 'regression' || r.verdict === 'improvement').length;
  opts.log?.(
    `calibrate: repeat ${i} of ${opts.repeats}: ${rows.length} rows judged, ${alarms} called a change, ${undecided.length} given ${opts.extraRounds} more pairs`,
  );
  const campaign = readJsonIfExists<{ harness_version?: string; cpus?: number[] }>(evidencePaths(summary.systemDir).campaign);
  facts.harness = campaign?.harness_version ?? facts.harness;
  facts.cpus = Array.isArray(campaign?.cpus) ? campaign.cpus : facts.cpus;
  return rows.map((r) => ({
    row: rowKey(r),
    verdict: r.verdict,
    pairs: pairCount(r),
    ...(r.mde_pct !== undefined ? { mde_pct: r.mde_pct } : {}),
  }));
}

/** calibration.json, written under the evidence lock. */
function writeCalibration(systemDir: string, calibration: Calibration): string {
  const release = lockSystem(systemDir);
  try {
    const path = evidencePaths(systemDir).calibration;
    writeJsonAtomic(path, calibration);
    return path;
  } finally {
    release();
  }
}
