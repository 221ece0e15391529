import { existsSync } from 'node:fs';
import { harnessTools } from '../compile/harnessTools.js';
import { hostEnvironment, hostProblems } from '../env/host.js';
import { probeSandbox } from '../env/sandboxProbe.js';
import { lockSystem } from '../evidence/lock.js';
import { readJsonIfExists, writeJsonAtomic } from '../util/fsx.js';
import type { CampaignSummary, InstanceContext, InstanceSummary, PhaseStep, RunContext } from './context.js';
import { measure } from './measure.js';
import { planRun, type CampaignOptions, type RunPlan } from './plan.js';
import { prepare } from './prepare.js';
import { profile } from './profile.js';
import { stale } from './stale.js';

export { katShown, type CampaignSummary, type InstanceContext, type InstanceSummary, type PhaseStep, type RunContext } from './context.js';
export { PHASES, type CampaignOptions, type Phase, type RunPlan, type Unit } from './plan.js';

/**
 * What a run does for each instance, in order. A new phase is a file exporting a PhaseStep and
 * one entry here; a step that names a `phase` runs only when the run's phases include it.
 */
export const PHASE_STEPS: readonly PhaseStep[] = [prepare, stale, measure, profile];

/**
 * One run of a campaign into DATA_DIR/<system>: checked in full before anything runs (planRun),
 * then, holding the folder's lock, every step of `steps` for each instance.
 */
export async function runCampaign(opts: CampaignOptions, steps: readonly PhaseStep[] = PHASE_STEPS): Promise<CampaignSummary> {
  const plan = planRun(opts);
  const release = lockSystem(plan.systemDir);
  try {
    return await runLocked(plan, opts, steps);
  } finally {
    release();
  }
}

async function runLocked(plan: RunPlan, opts: CampaignOptions, steps: readonly PhaseStep[]): Promise<CampaignSummary> {
  let counter: string | undefined;
  const run: RunContext = {
    plan,
    tools: await harnessTools(),
    environment: hostEnvironment(plan.cpu),
    progress: opts.progress,
    buildCache: opts.buildCache,
    onCounter: (c) => {
      counter ??= c;
    },
  };
  run.counterHz = (await probeSandbox({ mode: plan.settings.sandbox, probeTool: run.tools.probe, cpu: plan.cpu })).counterHz;
  const writeCampaign = campaignWriter(run);
  writeCampaign({ ended_utc: null });
  // A run whose candidates are all INVALID still leaves a dataset that report and validate read.
  if (!existsSync(plan.paths.build)) writeJsonAtomic(plan.paths.build, { instances: {} });

  const active = steps.filter((s) => s.phase === undefined || plan.phases.has(s.phase));
  run.progress?.start(plan.invalid.length + plan.units.reduce((a, u) => a + active.reduce((n, s) => n + s.ticks(run, u), 0), 0));
  for (const c of plan.invalid) run.progress?.tick(`${c.id} INVALID (not built): ${c.problem}`);
  const instances: InstanceSummary[] = [];
  for (const unit of plan.units) {
    const summary: InstanceSummary = { key: unit.key, operations: [] };
    instances.push(summary);
    const ctx: InstanceContext = { run, unit, summary, tick: (message) => run.progress?.tick(`${unit.key} ${message}`) };
    for (const step of active) await step.run(ctx);
  }
  writeCampaign({ ended_utc: new Date().toISOString(), ...(counter ? { counter_source: counter } : {}) });
  run.progress?.done();
  return { systemDir: plan.systemDir, instances, invalid: plan.invalid };
}

/**
 * campaign.json: the start of the first run and the end of the last, the host as every run found
 * it (host_checks, one per run), the planning and flags in force.
 */
function campaignWriter(run: RunContext): (extra: Record<string, unknown>) => void {
  const { plan, environment } = run;
  const campaignJson = readJsonIfExists<Record<string, unknown>>(plan.paths.campaign) ?? {};
  const hostChecks = (campaignJson.host_checks as unknown[] | undefined) ?? [];
  const started = (campaignJson.started_utc as string | undefined) ?? new Date().toISOString();
  hostChecks.push({
    phase: [...plan.phases].join(','),
    cpu: plan.cpu,
    utc: new Date().toISOString(),
    problems: hostProblems(environment),
    ...(plan.shard ? { shard: `${plan.shard.index}/${plan.shard.count}` } : {}),
  });
  return (extra) =>
    writeJsonAtomic(plan.paths.campaign, {
      schema: 2,
      system_id: plan.system,
      tool: 'ngcc-perf',
      harness_version: run.tools.version,
      ...campaignJson,
      started_utc: started,
      environment_at_start: campaignJson.environment_at_start ?? environment,
      environment_latest: environment,
      host_checks: hostChecks,
      planning: plan.settings.planning,
      flags: plan.settings.flags,
      fixed_clock_hz: plan.settings.systems[plan.system]?.fixed_clock_hz ?? null,
      // The latest run's view: a candidate mended since is no longer listed.
      invalid_candidates: plan.invalid,
      // One unsandboxed run makes the folder's evidence unsandboxed.
      sandbox: campaignJson.sandbox === 'none' ? 'none' : plan.settings.sandbox,
      ...extra,
    });
}
