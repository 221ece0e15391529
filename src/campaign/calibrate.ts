import { mkdirSync } from 'node:fs';
import { makeScratch, removeScratch } from '../util/scratch.js';
import { join } from 'node:path';
import { compareEvidence, pairCount, rowKey, undecidedRows } from '../compare/compare.js';
import { DEFAULT_ALPHA } from '../config/defaults.js';
import { type Calibration, type CalibrationVerdict, summarizeCalibration } from '../evidence/calibration.js';
import { evidencePaths } from '../evidence/layout.js';
import { lockSystem, otherLiveWriter } from '../evidence/lock.js';
import { InputError } from '../errors.js';
import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import type { CampaignOptions } from './plan.js';
import { runCampaign } from './run.js';

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
  /** An empty folder for the runs' evidence (default: a new one under TMPDIR), removed at the end. */
  scratch?: string;
}

/**
 * Calibrates the pull-request check on this machine: the campaign measured paired against itself,
 * unchanged code on both sides, exactly as a pull request is measured and judged (first rounds, then
 * extra rounds for the rows they leave undecided), `repeats` times; what the rule called is
 * summarised into DATA_DIR/<system>/calibration.json, which the method page shows. The runs' own
 * evidence stays in a scratch folder: the system's records are never touched.
 */
export async function calibratePairedCheck(opts: CalibrateOptions): Promise<{ calibration: Calibration; path: string }> {
  const systemDir = join(opts.dataDir, opts.system);
  // What would refuse the result is said before hours of runs, not after.
  mkdirSync(systemDir, { recursive: true });
  const writer = otherLiveWriter(systemDir);
  if (writer !== undefined)
    throw new InputError(systemDir, '', `another run (pid ${writer}) is writing this evidence; wait for it or use another --out`);
  const work = opts.scratch ?? makeScratch('calibrate');
  const [headData, baseData] = [join(work, 'head'), join(work, 'base')];
  const started_utc = new Date().toISOString();
  const common = {
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
  const compare = () =>
    compareEvidence({ baseDir: baseData, headDir: headData, system: opts.system, thresholdPct: opts.thresholdPct, alpha: DEFAULT_ALPHA });
  const repeats: CalibrationVerdict[][] = [];
  let cpus: number[] = [];
  let harness = 'unknown';
  try {
    for (let i = 1; i <= opts.repeats; i++) {
      const summary = await runCampaign({
        ...common,
        phases: new Set(['build', 'kat', 'measure'] as const),
        force: true,
        pairedTrials: opts.rounds,
      });
      let report = compare();
      const undecided = opts.extraRounds > 0 ? undecidedRows(report) : [];
      if (undecided.length > 0)
        await runCampaign({
          ...common,
          phases: new Set(['measure'] as const),
          force: false,
          pairedTrials: opts.rounds,
          extraRounds: { pairs: opts.extraRounds, operations: new Set(undecided.map(rowKey)) },
        });
      if (undecided.length > 0) report = compare();
      const rows = report.rows.filter((r) => r.paired === true);
      repeats.push(
        rows.map((r) => ({
          row: rowKey(r),
          verdict: r.verdict,
          pairs: pairCount(r),
          ...(r.mde_pct !== undefined ? { mde_pct: r.mde_pct } : {}),
        })),
      );
      const alarms = rows.filter((r) => r.verdict === 'regression' || r.verdict === 'improvement').length;
      opts.log?.(
        `calibrate: repeat ${i} of ${opts.repeats}: ${rows.length} rows judged, ${alarms} called a change, ${undecided.length} given ${opts.extraRounds} more pairs`,
      );
      const campaign = readJsonIfExists<{ harness_version?: string; cpus?: number[] }>(evidencePaths(summary.systemDir).campaign);
      harness = campaign?.harness_version ?? harness;
      cpus = Array.isArray(campaign?.cpus) ? campaign.cpus : cpus;
    }
  } finally {
    removeScratch(work);
  }
  const calibration = summarizeCalibration(repeats, {
    started_utc,
    ended_utc: new Date().toISOString(),
    harness_version: harness,
    cpus,
    threshold_pct: opts.thresholdPct,
    alpha: DEFAULT_ALPHA,
    rounds: opts.rounds,
    extra_rounds: opts.extraRounds,
  });
  const release = lockSystem(systemDir);
  try {
    const path = evidencePaths(systemDir).calibration;
    writeJsonAtomic(path, calibration);
    return { calibration, path };
  } finally {
    release();
  }
}
