import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { makeScratch, removeScratch } from './util/scratch.js';
import { diskFullError, writeFileAtomic } from './util/fsx.js';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import {
  katShown,
  KNOWN_PHASES,
  PHASES,
  REMEASURE,
  runCampaign,
  type CampaignSummary,
  type Phase,
  type Remeasure,
} from './campaign/runCampaign.js';
import { loadCampaign, loadSettings, type Candidate } from './config/campaign.js';
import { errorMessage, InputError, isInputError } from './errors.js';
import { evidencePaths, instanceKey } from './evidence/layout.js';
import { validateDataset } from './evidence/validate.js';
import {
  canonicalDigest,
  checkGeneratedLabels,
  countRecords,
  katFileLine,
  hashManifestLines,
  markRecorded,
  printedManifest,
  recordGenerated,
  type GeneratedLine,
} from './kat/manifest.js';
import { HASH_KAT_FILES, hashKatFileName } from './kat/hashKat.js';
import { formatManifestLine, type DigestMode } from './config/katManifest.js';
import { NOISY_TRIAL_SPREAD } from './measure/stats.js';
import { forgeryShown, instanceStatus } from './kat/status.js';
import { secretSeedOf, UNSEEN_SEED_ENV } from './kat/unseen.js';
import { createProgress } from './campaign/progress.js';
import { doctor } from './campaign/doctor.js';
import { defaultTrialCpu } from './campaign/runPlan.js';
import { checkCpuAllowed } from './env/cpus.js';
import { readinessExit, readinessLines } from './env/readiness.js';
import { toolRoot, toolVersion } from './util/paths.js';
import { commandHelp, commandList, HELP_COMMANDS } from './cliHelp.js';
import { nearest } from './util/nearest.js';
import { harnessVersion } from './compile/harnessTools.js';
import {
  checkOutputFolder,
  checkSystemId,
  parseCount,
  parseCpu,
  parseJobs,
  parseOnly,
  parsePositive,
  parseShard,
} from './config/arguments.js';
import { parseCommand } from './config/commandLine.js';
import {
  CALIBRATION_REPEATS,
  DEFAULT_FAIL_ON,
  DEFAULT_THRESHOLD_PCT,
  MAX_PR_PAIRS,
  PAIRED_TRIALS,
  PR_EXTRA_ROUNDS,
} from './config/defaults.js';
import { calibratePairedCheck } from './prcheck/calibrate.js';
import { stoppable } from './stoppable.js';
import { formatDetectable, formatShare, pyFixed, signedPct } from './text/format.js';
import { loadReportModel } from './report/model.js';
import { compareEvidence } from './compare/compare.js';
import { compareFails, parseFailOn } from './compare/failOn.js';
import { renderComparison } from './compare/markdown.js';
import { mergeShardFolders } from './evidence/merge.js';
import { differingPages, renderPages, writePages } from './report/pages/render.js';
import type { BuildEntry } from './evidence/fileTypes.js';
import { readBuildJson } from './evidence/dataset.js';
import { baselineVerdict, runIccsBaseline } from './campaign/iccsBaseline.js';
import { pqcleanSchemes, readPublishedDigests, writePqcleanCampaign } from './catalogs/pqclean.js';
import { keepRunPairs } from './compare/nightPairs.js';
import { calibrateNights } from './trend/nightCalibration.js';

const USAGE = `usage: ngcc-perf COMMAND [options]

${commandList()}

synopses:
  ngcc-perf run CAMPAIGN_DIR --system ID --out DATA_DIR [--only REGEX] [--phases build,kat,measure,profile,ct]
                [--trial-target S] [--op-budget S] [--adaptive] [--cpu N] [--shard K/N] [--force]
                [--jobs N | --serial] [--audit] [--remeasure noisy,failed] [--against BASE_CAMPAIGN_DIR --against-out BASE_DATA_DIR [--against-only REGEX]]
  ngcc-perf calibrate CAMPAIGN_DIR --system ID --out DATA_DIR [--only REGEX] [--repeat N] [--rounds N] [--extra-rounds N]
                      [--threshold PCT] [--trial-target S] [--cpu N]
  ngcc-perf calibrate-nights NIGHT_DIR,... --system ID [--threshold PCT] [--format text|json]
  ngcc-perf report DATA_DIR/ID [--campaign CAMPAIGN_DIR] --out PAGES_DIR [--check] [--history DIR,...]
  ngcc-perf validate DATA_DIR/ID
  ngcc-perf doctor [--cpu N] [--campaign CAMPAIGN_DIR [--system ID]] [--out DIR] [--format text|json]
  ngcc-perf compare --base DATA_DIR --head DATA_DIR --system ID [--format md|json] [--campaign CAMPAIGN_DIR]
                    [--threshold PCT] [--alpha P] [--history DATA_DIR,...] [--fail-on regression,kat,size-audit,ct]
  ngcc-perf kat-manifest DATA_DIR/ID CANDIDATE_ID [--mode strict|nolen] [--records N] [--write CAMPAIGN_DIR [--force]]
  ngcc-perf kat-digest FILE... [--label LABEL] [--mode strict|nolen] [--records N]
  ngcc-perf merge --out DATA_DIR/ID SHARD_DIR...
  ngcc-perf iccs-baseline --system ID --out DATA_DIR [--campaign CAMPAIGN_DIR] [--trial-target S] [--op-budget S]
                          [--cpu N] [--force]
  ngcc-perf example [--out DIR]
  ngcc-perf pqclean-campaign OUT_DIR [--only REGEX] [--pqclean DIR] [--digests FILE]
each option at most once (--phases, --remeasure, --history and --fail-on take comma lists);
\`ngcc-perf help COMMAND\` (or COMMAND --help) explains a command's options; \`ngcc-perf --version\` the version
exit codes: 0 success, 1 a check found problems, 2 usage or input error, 3 internal error (a bug),
            129/130/143 stopped by SIGHUP/SIGINT/SIGTERM`;

const cli = (name: string) => ['command line', `--${name}`] as const;
const number = (name: string, v: string | undefined, unit?: string) => parsePositive(v, cli(name), unit);

function parsePhases(v: string | undefined): Set<Phase> {
  if (v === undefined) return new Set(PHASES);
  const list = v.split(',').map((s) => s.trim());
  for (const p of list)
    if (!(KNOWN_PHASES as readonly string[]).includes(p))
      throw new InputError('command line', '--phases', `unknown phase '${p}' (known: ${KNOWN_PHASES.join(', ')})`);
  return new Set(list as Phase[]);
}

function parseRemeasure(v: string): Set<Remeasure> {
  const list = v.split(',').map((x) => x.trim());
  for (const x of list)
    if (!(REMEASURE as readonly string[]).includes(x))
      throw new InputError('command line', '--remeasure', `unknown '${x}' (known: ${REMEASURE.join(', ')})`);
  return new Set(list as Remeasure[]);
}

/** One line per instance; returns the exit code and the verdict line that says why. */
function printSummary(s: CampaignSummary): { code: number; verdict: string } {
  for (const c of s.invalid) console.log(`${'INVALID'.padEnd(11)} ${c.id} — ${c.problem}`);
  for (const i of s.instances) {
    const ops = i.operations.map((o) => `${o.operation} ${o.mean_cycles !== undefined ? Math.round(o.mean_cycles) : o.status}`).join(', ');
    const detail = i.forged ? forgeryShown(i.forged) : i.detail;
    const fellBack = i.fellBack ? ` — measured with the harness defaults: the guide build failed (${i.fellBack})` : '';
    console.log(`${katShown(instanceStatus(i)).padEnd(11)} ${i.key}${detail ? ` — ${detail}` : ''}${fellBack}${ops ? `  [${ops}]` : ''}`);
  }
  const forged = s.instances.filter((i) => i.forged);
  // A KAT that was not run is no finding; a measurement that produced no trial is one.
  const katFailed = s.instances.filter((i) => i.kat !== undefined && i.kat !== 'PASS');
  const unchecked = s.instances.filter((i) => i.kat === undefined);
  // A partial measurement lost some of its trials (a crash, a timeout): as much a finding as none.
  const opFailed = s.instances.flatMap((i) =>
    i.operations
      .filter((o) => o.status === 'failed' || o.status === 'partial')
      .map((o) => ({ key: `${i.key} ${o.operation}`, failure: `${o.status}${o.failure ? `: ${o.failure}` : ''}` })),
  );
  const problems = [
    s.invalid.length > 0 ? `${s.invalid.length} candidate(s) invalid, not built (${s.invalid.map((c) => c.id).join(', ')})` : '',
    katFailed.length > 0
      ? `${katFailed.length} instance(s) did not pass the KAT (${katFailed
          .map((i) => `${i.key} ${i.kat}`)
          .slice(0, 3)
          .join(', ')}${katFailed.length > 3 ? ', …' : ''})`
      : '',
    forged.length > 0
      ? `${forged.length} instance(s) FORGED, a replay gave other outputs than their trial (${forged.map((i) => `${i.key} ${i.forged!.operation}`).join(', ')})`
      : '',
    opFailed.length > 0 ? `${opFailed.length} measurement(s) failed or partial (first: ${opFailed[0]!.key} ${opFailed[0]!.failure})` : '',
  ].filter(Boolean);
  const measured = s.instances.flatMap((i) => i.operations.filter((o) => o.status === 'complete')).length;
  const noisy = s.instances.flatMap((i) =>
    i.operations.filter((o) => o.spread !== undefined && o.spread >= NOISY_TRIAL_SPREAD).map((o) => `${i.key} ${o.operation}`),
  );
  const fellBack = s.instances.filter((i) => i.fellBack);
  const notes = [
    unchecked.length > 0 ? `; ${unchecked.length} instance(s) not KAT-checked (run the kat phase)` : '',
    // Not a failure either (the seed harness falls back too), but not the guide's flags: said apart.
    fellBack.length > 0
      ? `; ${fellBack.length} instance(s) measured with the harness defaults, their guide build failed (${fellBack
          .slice(0, 3)
          .map((i) => `${i.key}: ${i.fellBack}`)
          .join('; ')}${fellBack.length > 3 ? '; …' : ''})`
      : '',
    // Not a failure: the numbers stand, but a reader should know the machine was not quiet.
    noisy.length > 0
      ? `; ${noisy.length} measurement(s) noisy, trials spread ≥ ${NOISY_TRIAL_SPREAD}× (${noisy.slice(0, 3).join(', ')}${noisy.length > 3 ? ', …' : ''}): was the core shared?`
      : '',
  ].join('');
  const t = s.timingProcesses;
  if (t) {
    const each = (x: number) => `${Math.round((x / t.processes) * 1000)} ms`;
    const inside = t.start_s + t.prepare_s + t.loops_s + t.between_s + t.finish_s;
    console.log(
      `timing processes: ${t.processes}, ${t.loops_s.toFixed(1)} s in timed loops of ${inside.toFixed(1)} s${s.forecast ? ` (the whole run ${s.forecast.outcome.actual_wall_s.toFixed(1)} s)` : ''}; each besides its loops: start ${each(t.start_s)} (of which loading the library ${each(t.load_s ?? 0)}), prepare ${each(t.prepare_s)}, between batches ${each(t.between_s)}, finish ${each(t.finish_s)}${t.inputs_s ? `; dec's inputs, made in processes of their own, ${t.inputs_s.toFixed(1)} s` : ''}`,
    );
  }
  if (problems.length > 0) return { code: 1, verdict: `exit 1: ${problems.join('; ')}${notes}` };
  return {
    code: 0,
    verdict: `ok: ${s.instances.length} instance(s), ${s.instances.length - unchecked.length} KAT-checked and passing, ${measured} measurement(s) complete${notes}`,
  };
}

async function cmdRun(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'run',
    args,
    {
      system: { type: 'string' },
      out: { type: 'string' },
      only: { type: 'string' },
      phases: { type: 'string' },
      'trial-target': { type: 'string' },
      'op-budget': { type: 'string' },
      adaptive: { type: 'boolean', default: false },
      cpu: { type: 'string' },
      shard: { type: 'string' },
      force: { type: 'boolean', default: false },
      jobs: { type: 'string' },
      serial: { type: 'boolean', default: false },
      audit: { type: 'boolean', default: false },
      remeasure: { type: 'string' },
      against: { type: 'string' },
      'against-out': { type: 'string' },
      'against-only': { type: 'string' },
    },
    { positionals: ['CAMPAIGN_DIR'], required: { system: 'ID', out: 'DATA_DIR' } },
  );
  checkSystemId(values.system, cli('system'));
  checkOutputFolder(values.out, cli('out'));
  checkOutputFolder(join(values.out, values.system), cli('out'));
  if ((values.against === undefined) !== (values['against-out'] === undefined))
    throw new InputError(
      'command line',
      values.against === undefined ? '--against' : '--against-out',
      'give --against and --against-out together',
    );
  if (values.against !== undefined && values['against-out'] !== undefined) {
    checkOutputFolder(values['against-out'], cli('against-out'));
    if (resolve(values['against-out']) === resolve(values.out))
      throw new InputError('command line', '--against-out', 'the base side needs an evidence folder of its own, not --out');
    checkOutputFolder(join(values['against-out'], values.system), cli('against-out'));
  }
  if (values['against-only'] !== undefined && values.against === undefined)
    throw new InputError('command line', '--against-only', 'give it with --against');
  const againstOnly = parseOnly(values['against-only'], cli('against-only'));
  const cpu = parseCpu(values.cpu, cli('cpu'));
  const jobs = parseJobs(values.jobs, cli('jobs'));
  if (jobs !== undefined && values.serial) throw new InputError('command line', '--serial', 'give --jobs or --serial, not both');
  const unseenSeed = secretSeedOf(process.env[UNSEEN_SEED_ENV], 'environment', UNSEEN_SEED_ENV);
  const summary = await runCampaign({
    campaignDir: positionals[0]!,
    system: values.system,
    dataDir: values.out,
    ...(unseenSeed ? { unseenSeed } : {}),
    only: parseOnly(values.only, cli('only')),
    phases: parsePhases(values.phases),
    trialTarget: number('trial-target', values['trial-target'], 'seconds'),
    opBudget: number('op-budget', values['op-budget'], 'seconds'),
    ...(values.adaptive ? { adaptive: 'always' as const } : {}),
    cpu,
    shard: parseShard(values.shard, cli('shard')),
    force: values.force,
    ...(jobs !== undefined ? { jobs } : {}),
    serial: values.serial,
    audit: values.audit,
    ...(values.remeasure !== undefined ? { remeasure: parseRemeasure(values.remeasure) } : {}),
    progress: createProgress(),
    argumentNames: { only: cli('only'), cpu: cli('cpu') },
    ...(values.against !== undefined && values['against-out'] !== undefined
      ? { against: { campaignDir: values.against, dataDir: values['against-out'], ...(againstOnly ? { only: againstOnly } : {}) } }
      : {}),
  });
  const { code, verdict } = printSummary(summary);
  if (values['against-out'] !== undefined) {
    // The pairs judged as a pull request is, and kept beside the run's evidence (paired/).
    const kept = keepRunPairs({
      systemDir: summary.systemDir,
      system: values.system,
      againstDataDir: values['against-out'],
      campaignDir: positionals[0]!,
    });
    if (kept)
      console.log(`paired: ${kept.kept} operation(s) judged on their trial pairs, kept in paired/ (against ${kept.commit.slice(0, 12)})`);
  }
  console.log(`evidence: ${relative(process.cwd(), summary.systemDir) || '.'}`);
  console.log(verdict);
  return code;
}

async function cmdCalibrate(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'calibrate',
    args,
    {
      system: { type: 'string' },
      out: { type: 'string' },
      only: { type: 'string' },
      repeat: { type: 'string' },
      rounds: { type: 'string' },
      'extra-rounds': { type: 'string' },
      threshold: { type: 'string' },
      'trial-target': { type: 'string' },
      cpu: { type: 'string' },
    },
    { positionals: ['CAMPAIGN_DIR'], required: { system: 'ID', out: 'DATA_DIR' } },
  );
  checkSystemId(values.system, cli('system'));
  checkOutputFolder(values.out, cli('out'));
  checkOutputFolder(join(values.out, values.system), cli('out'));
  const scratch = makeScratch('calibrate');
  const { calibration, path } = await stoppable(() =>
    calibratePairedCheck({
      scratch,
      campaignDir: positionals[0]!,
      system: values.system,
      dataDir: values.out,
      only: parseOnly(values.only, cli('only')),
      cpu: parseCpu(values.cpu, cli('cpu')),
      trialTarget: number('trial-target', values['trial-target'], 'seconds'),
      repeats: parseCount(values.repeat, cli('repeat'), 'repeats', 1, MAX_PR_PAIRS) ?? CALIBRATION_REPEATS,
      rounds: parseCount(values.rounds, cli('rounds'), 'trial pairs', 2, MAX_PR_PAIRS) ?? PAIRED_TRIALS,
      extraRounds: parseCount(values['extra-rounds'], cli('extra-rounds'), 'trial pairs', 0, MAX_PR_PAIRS) ?? PR_EXTRA_ROUNDS,
      thresholdPct: number('threshold', values.threshold, 'percent') ?? DEFAULT_THRESHOLD_PCT,
      progress: createProgress(),
      argumentNames: { only: cli('only'), cpu: cli('cpu') },
      log: (line) => console.log(line),
    }),
  ).finally(() => removeScratch(scratch));
  const rate = calibration.comparisons > 0 ? calibration.false_alarms / calibration.comparisons : 0;
  console.log(
    `calibrated: ${calibration.false_alarms} false alarm(s) in ${calibration.comparisons} comparisons (${formatShare(rate)}, at most ${formatShare(calibration.false_alarm_upper_95)} at 95 % confidence)${calibration.mde_pct ? `; smallest detectable change median ${formatDetectable(calibration.mde_pct.median)}` : ''}`,
  );
  const shown = relative(process.cwd(), path);
  console.log(`calibration: ${shown.startsWith('..') ? resolve(path) : shown}`);
  return 0;
}

/** The night rule judged on an A/A history of kept nights, each night as it came (trend/nightCalibration.ts). */
function cmdCalibrateNights(args: string[]): number {
  const { values, positionals } = parseCommand(
    'calibrate-nights',
    args,
    { system: { type: 'string' }, threshold: { type: 'string' }, format: { type: 'string' } },
    { positionals: ['NIGHT_DIR,...'], required: { system: 'ID' } },
  );
  checkSystemId(values.system, cli('system'));
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') throw new InputError('command line', '--format', `'${format}': give text or json`);
  const dirs = positionals[0]!.split(',').filter(Boolean);
  for (const d of dirs)
    if (!existsSync(evidencePaths(d).campaign))
      throw new InputError(d, '', 'no campaign.json: not the evidence folder of a night (DATA_DIR/ID)');
  if (dirs.length < 2) throw new InputError('command line', 'NIGHT_DIR,...', 'give at least two nights, oldest first');
  const c = calibrateNights(dirs, values.system, number('threshold', values.threshold, 'percent') ?? DEFAULT_THRESHOLD_PCT);
  if (format === 'json') {
    console.log(JSON.stringify(c, null, 2));
    return 0;
  }
  for (const claim of c.claims) console.log(`night ${claim.night}: ${claim.row} ${claim.verdict} ${signedPct(claim.delta_pct)}`);
  for (const p of c.change_points)
    console.log(`change point: ${p.row} from night ${p.night}, ${signedPct(p.delta_pct)} (${p.causes.join(', ')})`);
  const rate = c.operation_nights > 0 ? (200 * c.claims.length) / c.operation_nights : 0;
  console.log(
    `calibrated on ${c.nights} nights: ${c.claims.length} claim(s) in ${c.operation_nights} operation-nights (${pyFixed(rate, 2)} per 200; on unchanged code every one is false), ${c.change_points.length} change point(s), night noise ${pyFixed(c.noise_pct, 1)}%`,
  );
  return 0;
}

/** What `report` and `validate` read: a folder with a build.json or records/, else a usage error. */
function evidenceFolder(arg: string): string {
  const dir = resolve(arg);
  if (!existsSync(dir)) throw new InputError(arg, '', 'no such folder');
  if (!statSync(dir).isDirectory()) throw new InputError(arg, '', 'a file, not a folder: give DATA_DIR/ID, the folder of one system');
  if (!existsSync(evidencePaths(dir).build) && !existsSync(evidencePaths(dir).recordsDir)) {
    // `validate out/data` meant `validate out/data/local`: name the system folders there.
    const systems = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(evidencePaths(join(dir, e.name)).build))
      .map((e) => join(arg, e.name));
    const hint = systems.length > 0 ? `; did you mean ${systems.slice(0, 3).join(' or ')}${systems.length > 3 ? ' or …' : ''}?` : '';
    throw new InputError(arg, '', `no evidence here (no build.json, no records/): give DATA_DIR/ID, the folder of one system${hint}`);
  }
  return dir;
}

/** Checks the host a run would time on: one line per check, and what to do (docs/runners.md). */
async function cmdDoctor(args: string[]): Promise<number> {
  const { values } = parseCommand('doctor', args, {
    cpu: { type: 'string' },
    out: { type: 'string', default: '.' },
    format: { type: 'string', default: 'text' },
    campaign: { type: 'string' },
    system: { type: 'string' },
  });
  if (values.format !== 'text' && values.format !== 'json') throw new InputError('command line', '--format', 'must be text or json');
  if (values.system !== undefined && values.campaign === undefined)
    throw new InputError('command line', '--system', 'only with --campaign CAMPAIGN_DIR');
  // With a campaign, the sandbox and the core its ngcc-perf.yml gives the system, as a run takes them.
  const settings = values.campaign !== undefined ? loadSettings(values.campaign) : undefined;
  const system = values.system !== undefined ? settings?.systems[values.system] : undefined;
  if (values.system !== undefined && system === undefined) {
    const known = Object.keys(settings?.systems ?? {});
    throw new InputError(
      'command line',
      '--system',
      `'${values.system}' is no system of ${join(values.campaign!, 'ngcc-perf.yml')}${known.length > 0 ? ` (systems: ${known.join(', ')})` : ' (it names none)'}`,
    );
  }
  const configured = system?.cpus?.[0] ?? system?.cpu;
  const cpu =
    values.cpu !== undefined
      ? checkCpuAllowed(parseCpu(values.cpu, cli('cpu'))!, cli('cpu'))
      : configured !== undefined
        ? checkCpuAllowed(configured, [join(values.campaign!, 'ngcc-perf.yml'), `systems.${values.system}`])
        : defaultTrialCpu();
  const findings = await doctor({
    cpu,
    outDir: values.out,
    // Coverage is counted for the measured build only: its compiler's runtime, where the ct check runs.
    ...(settings ? { sandbox: settings.sandbox, compilers: settings.ct.enabled ? [settings.compiler] : [] } : {}),
  });
  const exit = readinessExit(findings);
  if (values.format === 'json') console.log(JSON.stringify({ cpu, exit, findings }, null, 1));
  else {
    for (const line of readinessLines(findings)) console.log(line);
    console.log(
      exit === 0 ? 'ready' : exit === 1 ? 'ready, with warnings: the numbers may be less trustworthy' : 'not ready: a run would stop',
    );
  }
  return exit;
}

function cmdValidate(args: string[]): number {
  const { positionals } = parseCommand('validate', args, {}, { positionals: ['DATA_DIR/ID'] });
  const dir = evidenceFolder(positionals[0]!);
  const problems = validateDataset(dir);
  for (const p of problems) console.log(p);
  console.log(problems.length === 0 ? `${positionals[0]}: valid` : `${problems.length} problem(s)`);
  return problems.length === 0 ? 0 : 1;
}

function cmdCompare(args: string[]): number {
  const { values } = parseCommand(
    'compare',
    args,
    {
      base: { type: 'string' },
      head: { type: 'string' },
      system: { type: 'string' },
      format: { type: 'string', default: 'md' },
      campaign: { type: 'string' },
      threshold: { type: 'string' },
      alpha: { type: 'string' },
      history: { type: 'string' },
      'fail-on': { type: 'string', default: DEFAULT_FAIL_ON },
    },
    { required: { base: 'DATA_DIR', head: 'DATA_DIR', system: 'ID' } },
  );
  // Every option is checked before the comparison runs: a typo must not follow a whole report.
  if (values.format !== 'md' && values.format !== 'json')
    throw new InputError('command line', '--format', `expected md or json, got '${values.format}'`);
  const alpha = number('alpha', values.alpha);
  if (alpha !== undefined && alpha >= 1) throw new InputError('command line', '--alpha', 'expected a probability below 1');
  const thresholdPct = number('threshold', values.threshold, 'percent');
  const failOn = parseFailOn(values['fail-on']!, 'command line: --fail-on');
  const history = values.history?.split(',').filter(Boolean);
  for (const d of history ?? []) {
    if (!existsSync(d)) throw new InputError('command line', '--history', `'${d}': no such folder`);
    if (!existsSync(join(d, values.system)))
      throw new InputError(
        'command line',
        '--history',
        `'${d}' has no evidence for system ${values.system} (no ${join(d, values.system)})`,
      );
  }
  if (values.campaign !== undefined && !existsSync(values.campaign))
    throw new InputError('command line', '--campaign', `'${values.campaign}': no such folder`);
  const report = compareEvidence({
    baseDir: values.base,
    headDir: values.head,
    system: values.system,
    thresholdPct,
    alpha,
    history,
    campaignDir: values.campaign,
  });
  console.log(values.format === 'json' ? JSON.stringify(report, null, 1) : renderComparison(report));
  return compareFails(report, failOn) ? 1 : 0;
}

/** Renders every page of one system; with --check compares with the pages on disk instead. */
function cmdReport(args: string[]): number {
  const { values, positionals } = parseCommand(
    'report',
    args,
    { campaign: { type: 'string' }, out: { type: 'string' }, check: { type: 'boolean', default: false }, history: { type: 'string' } },
    { positionals: ['DATA_DIR/ID'], required: { out: 'PAGES_DIR' } },
  );
  const systemDir = evidenceFolder(positionals[0]!);
  if (!values.check) checkOutputFolder(values.out, cli('out'));
  const history = values.history?.split(',').filter(Boolean);
  for (const d of history ?? []) if (!existsSync(d)) throw new InputError('command line', '--history', `'${d}': no such folder`);
  // A night links to its folder as seen from the pages' root (the folders are wherever they were given).
  const nights = history?.map((d) => ({ dir: d, link: relative(resolve(values.out!), resolve(d)).split(sep).join('/') }));
  const model = loadReportModel(systemDir, values.campaign ? resolve(values.campaign) : undefined, nights ? { nights } : undefined);
  for (const s of model.trends?.skipped ?? []) console.log(`history: left out ${s.folder}: ${s.reason}`);
  if (model.trendsProblem) console.log(`history: no trends: ${model.trendsProblem}`);
  const pages = renderPages(model);
  // Pages are still rendered from what could be read, but they cannot show an unreadable file's
  // contents (its rows read "not recorded", its instances "not checked"): that is a problem to
  // report, never a success.
  for (const u of model.unreadable) console.log(`unreadable: ${join(positionals[0]!, u.path)}: ${u.problem}`);
  // Drawn all the same, with a warning on the pages: the figures may not be what was measured.
  for (const line of model.validation) console.log(`warning: ${join(positionals[0]!, line)}`);
  const unreadable = model.unreadable.length > 0 ? `; ${model.unreadable.length} evidence file(s) unreadable, shown as not recorded` : '';
  const invalid = model.validation.length > 0 ? `; warning: ${model.validation.length} validation problem(s), said on the pages` : '';
  if (values.check) {
    const differing = differingPages(values.out, pages);
    for (const p of differing) console.log(`differs: ${join(values.out, p)}`);
    console.log(
      `${differing.length === 0 ? `${pages.size} pages up to date` : `${differing.length} of ${pages.size} pages differ from the evidence`}${unreadable}${invalid}`,
    );
    return differing.length === 0 && !unreadable ? 0 : 1;
  }
  writePages(values.out, pages);
  console.log(`${pages.size} pages written to ${values.out}${unreadable}${invalid}`);
  return unreadable ? 1 : 0;
}

/**
 * The kat.sha256 line of a submitter's own KAT file (the strict digest is not sha256sum's: blank and
 * comment lines and trailing blanks are left out, docs/evidence-format.md#katsha256).
 */
function cmdKatDigest(args: string[]): number {
  const { values, positionals } = parseCommand(
    'kat-digest',
    args,
    { label: { type: 'string' }, mode: { type: 'string', default: 'strict' }, records: { type: 'string' } },
    { positionals: ['FILE...'] },
  );
  const { mode, records } = digestOptions(values);
  for (const file of positionals) {
    if (!existsSync(file) || !statSync(file).isFile()) throw new InputError(file, '', 'no such file');
    const text = readFileSync(file, 'utf8');
    const available = countRecords(text);
    if (available === 0) throw new InputError(file, '', 'no KAT record in it (no line starting "count =", "Count =" or "Msg_Len =")');
    if (records !== undefined && records > available)
      throw new InputError('command line', '--records', `${records} exceeds the ${available} record(s) in ${file}`);
    // The instance's label: given, or the folder the file is in, as a submission lays its files out.
    const label = values.label ?? basename(dirname(resolve(file)));
    console.log(formatManifestLine({ sha256: canonicalDigest(text, mode, records), mode, records, label, file: basename(file) }));
  }
  return 0;
}

/** Writes manifest lines for a candidate from the KAT files generated by a previous run. */
function cmdKatManifest(args: string[]): number {
  const { values, positionals } = parseCommand(
    'kat-manifest',
    args,
    {
      mode: { type: 'string', default: 'strict' },
      records: { type: 'string' },
      write: { type: 'string' },
      force: { type: 'boolean', default: false },
    },
    { positionals: ['DATA_DIR/ID', 'CANDIDATE_ID'] },
  );
  const [systemDir, id] = positionals as [string, string];
  const digest = digestOptions(values);
  if (values.force && !values.write) throw new InputError('command line', '--force', 'only with --write CAMPAIGN_DIR');
  const generated = generatedKatLines(systemDir, id, digest);
  markRecorded(generated);
  if (!values.write) {
    process.stdout.write(printedManifest(id, generated));
    return 0;
  }
  writeKatManifest({ systemDir, id, campaignDir: values.write, force: values.force }, generated);
  return 0;
}

/** How a KAT file is digested: --mode and --records. */
interface DigestOptions {
  mode: DigestMode;
  records: number | undefined;
}

function digestOptions(values: { mode?: string; records?: string }): DigestOptions {
  if (values.mode !== 'strict' && values.mode !== 'nolen') throw new InputError('command line', '--mode', 'must be strict or nolen');
  const mode = values.mode as DigestMode;
  const records = number('records', values.records);
  if (records !== undefined && !Number.isInteger(records))
    throw new InputError('command line', '--records', `expected a whole number of records, got '${values.records}'`);
  return { mode, records };
}

/** The lines of a candidate's generated KAT files, in build.json's order; none is an error naming why. */
function generatedKatLines(systemDir: string, id: string, digest: DigestOptions): GeneratedLine[] {
  const build = readBuildJson(evidencePaths(systemDir).build);
  const generated = Object.values(build.instances)
    .filter((x) => x.candidate === id)
    .flatMap((e) => instanceKatLines(systemDir, id, e, digest));
  if (generated.length === 0) {
    const known = [...new Set(Object.values(build.instances).map((x) => x.candidate))].sort();
    throw new InputError(
      evidencePaths(systemDir).build,
      id,
      known.includes(id)
        ? 'no generated KAT files for this candidate: run with --phases build,kat first'
        : `no candidate '${id}' in this evidence (it has ${known.length > 0 ? known.join(', ') : 'none'})`,
    );
  }
  return generated;
}

/** One instance's lines: a hash instance's per generator file, another's of its one KAT file (none without one). */
function instanceKatLines(systemDir: string, id: string, e: BuildEntry, { mode, records }: DigestOptions): GeneratedLine[] {
  const key = instanceKey(id, e.label);
  if (e.type === 'hash' && e.kat_file) return hashLines(systemDir, id, e, mode, records);
  if (!e.kat_file) {
    console.error(`${key}: no KAT file (status ${e.kat}); skipped`);
    return [];
  }
  const katPath = join(systemDir, e.kat_file);
  if (!existsSync(katPath))
    throw new InputError(katPath, '', `the KAT file of ${key} named in build.json is missing; run the kat phase again`);
  const text = readFileSync(katPath, 'utf8');
  const file = e.kat_file.split('/').pop()!;
  return [katFileLine(text, { mode, records, label: e.label, file }, `${join(systemDir, e.kat_file)} (${key})`)];
}

/** Where `kat-manifest --write` records its lines: the evidence they came from and the campaign to write to. */
interface ManifestTarget {
  systemDir: string;
  id: string;
  campaignDir: string;
  force: boolean;
}

/** Records the lines in the candidate's kat.sha256 of the campaign, saying what changed. */
function writeKatManifest(t: ManifestTarget, generated: GeneratedLine[]): void {
  const c = campaignCandidate(t.campaignDir, t.id);
  checkGeneratedLabels(generated, c, { file: evidencePaths(t.systemDir).build, field: (label) => instanceKey(t.id, label) });
  const target = join(c.folder, 'kat.sha256');
  const shown = relative(process.cwd(), target) || target;
  // In place: comments and other instances' lines stay; a differing line is refused unless --force.
  const before = existsSync(target) ? readFileSync(target, 'utf8') : '';
  const update = recordGenerated(before, shown, generated, { id: t.id, byFile: c.type === 'hash', force: t.force });
  for (const ch of update.changed)
    console.log(
      `${shown}: line ${ch.line} ${ch.after ? 'replaced' : 'removed'} (--force): ${ch.before}${ch.after ? ` -> ${ch.after}` : ''}`,
    );
  if (update.text !== before) writeFileAtomic(target, update.text);
  console.log(
    `${update.text !== before ? 'wrote' : 'unchanged:'} ${shown}: ${update.added.length} line(s) added, ${update.changed.length} changed, ${update.unchanged.length} instance(s) already right; other lines kept`,
  );
}

/** A candidate of the campaign, refused when the campaign does not have it or it is invalid. */
function campaignCandidate(campaignDir: string, id: string): Candidate {
  const campaign = loadCampaign(campaignDir);
  const c = campaign.candidates.find((x) => x.id === id);
  const broken = campaign.invalid.find((x) => x.id === id);
  if (broken) throw new InputError(campaignDir, id, `the candidate is invalid: ${broken.problem}`);
  if (!c) throw new InputError(campaignDir, id, 'no such candidate in the campaign');
  return c;
}

/** A hash instance's lines: one per generator file its KAT run wrote, in the generator's order. */
function hashLines(systemDir: string, id: string, e: BuildEntry, mode: DigestMode, records: number | undefined): GeneratedLine[] {
  const dir = evidencePaths(systemDir).katDir(id, e.label);
  const files = HASH_KAT_FILES.map((kind) => ({ kind, file: hashKatFileName(kind, e.label) }))
    .filter(({ file }) => existsSync(join(dir, file)))
    .map((f) => ({ ...f, text: readFileSync(join(dir, f.file), 'utf8') }));
  return hashManifestLines(e.label, files, { mode, records, loopIterations: e.kat_loop_iterations, where: dir });
}

/** Combines the evidence folders of a system's shards into one; conflicting files are errors. */
function cmdMerge(args: string[]): number {
  const { values, positionals } = parseCommand(
    'merge',
    args,
    { out: { type: 'string' } },
    { positionals: ['SHARD_DIR...'], required: { out: 'DATA_DIR/ID' } },
  );
  // Conflicts and unreadable evidence are input errors (exit 2); the output is changed only by a complete merge.
  const r = mergeShardFolders(positionals, values.out);
  for (const p of r.problems) console.log(p);
  if (!r.applied) {
    console.error(
      `error: ${values.out}: not merged, the result would have ${r.problems.length} new validation problem(s) (above); nothing was changed`,
    );
    return 1;
  }
  const counts = `${r.added.length} instance(s) added, ${r.replaced.length} replaced, ${r.kept.length} kept`;
  console.log(
    `merged ${positionals.length} shard(s) into ${values.out}: ${counts}${r.problems.length > 0 ? `; ${r.problems.length} validation problem(s) already in the shards or the output before the merge` : ''}`,
  );
  return r.problems.length > 0 ? 1 : 0;
}

/** The ICCS helper baseline (campaign/iccsBaseline.ts): built and timed into DATA_DIR/ID, once per system. */
async function cmdIccsBaseline(args: string[]): Promise<number> {
  const { values } = parseCommand(
    'iccs-baseline',
    args,
    {
      system: { type: 'string' },
      out: { type: 'string' },
      campaign: { type: 'string' },
      'trial-target': { type: 'string' },
      'op-budget': { type: 'string' },
      cpu: { type: 'string' },
      force: { type: 'boolean', default: false },
    },
    { required: { system: 'ID', out: 'DATA_DIR' } },
  );
  checkSystemId(values.system, cli('system'));
  checkOutputFolder(values.out, cli('out'));
  checkOutputFolder(join(values.out, values.system), cli('out'));
  if (values.campaign !== undefined && !existsSync(values.campaign))
    throw new InputError('command line', '--campaign', `'${values.campaign}': no such folder`);
  const summary = await runIccsBaseline({
    system: values.system,
    dataDir: values.out,
    ...(values.campaign !== undefined ? { settingsFrom: values.campaign } : {}),
    trialTarget: number('trial-target', values['trial-target'], 'seconds'),
    opBudget: number('op-budget', values['op-budget'], 'seconds'),
    cpu: parseCpu(values.cpu, cli('cpu')),
    force: values.force,
    progress: createProgress(),
    argumentNames: { cpu: cli('cpu') },
  });
  for (const i of summary.instances)
    console.log(
      `${i.key}  ${i.operations.map((o) => `${o.operation} ${o.mean_cycles !== undefined ? Math.round(o.mean_cycles) : o.status}`).join(', ')}`,
    );
  const { code, verdict } = baselineVerdict(summary);
  console.log(`evidence: ${relative(process.cwd(), summary.systemDir) || '.'}`);
  console.log(verdict);
  return code;
}

/** `npm start`: the bundled example campaign, into a git-ignored folder. */
async function cmdExample(args: string[]): Promise<number> {
  const { values } = parseCommand('example', args, { out: { type: 'string' } });
  const root = toolRoot();
  const out = resolve(values.out ?? join(root, 'out'));
  if (values.out !== undefined) checkOutputFolder(values.out, cli('out'));
  const campaignDir = join(root, 'examples', 'campaign');
  const pqclean = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');
  if (!existsSync(pqclean)) throw new InputError(relative(process.cwd(), pqclean), '', 'the pqclean package is missing: run npm ci first');
  const system = 'local';
  console.log(
    `example campaign: ${relative(process.cwd(), campaignDir)} (${readdirSync(campaignDir).filter((f) => existsSync(join(campaignDir, f, 'candidate.yml'))).length} candidates)`,
  );
  const summary = await runCampaign({
    campaignDir,
    system,
    dataDir: join(out, 'data'),
    phases: new Set(PHASES),
    progress: createProgress(),
  });
  const { code, verdict } = printSummary(summary);
  console.log(verdict);
  const problems = validateDataset(summary.systemDir);
  for (const p of problems) console.log(`validate: ${p}`);
  const pagesDir = join(out, 'pages');
  const pages = renderPages(loadReportModel(summary.systemDir, campaignDir));
  writePages(pagesDir, pages);
  console.log(`\nevidence: ${relative(process.cwd(), summary.systemDir)}`);
  console.log(
    `pages:    ${relative(process.cwd(), pagesDir)} (${pages.size} pages; start at ${relative(process.cwd(), join(pagesDir, 'index.md'))})`,
  );
  console.log(`validate: ${problems.length === 0 ? 'passed' : `${problems.length} problem(s)`}`);
  return problems.length > 0 ? 1 : code;
}

/**
 * The PQClean catalogue as a campaign folder (catalogs/pqclean.ts): every scheme of the pqclean
 * package (or of `--pqclean`), with the published digests of examples/pqclean/ (or `--digests`).
 */
function cmdPqcleanCampaign(args: string[]): number {
  const { values, positionals } = parseCommand(
    'pqclean-campaign',
    args,
    { pqclean: { type: 'string' }, digests: { type: 'string' }, only: { type: 'string' } },
    { positionals: ['OUT_DIR'] },
  );
  const root = toolRoot();
  const out = positionals[0]!;
  checkOutputFolder(out, ['command line', 'OUT_DIR']);
  if (existsSync(out) && readdirSync(out).length > 0)
    throw new InputError('command line', 'OUT_DIR', `'${out}' is not empty: name a new folder`);
  const pqclean = resolve(values.pqclean ?? join(root, 'node_modules', 'pqclean', 'deps', 'PQClean'));
  if (!existsSync(pqclean))
    throw new InputError(
      'command line',
      '--pqclean',
      `'${relative(process.cwd(), pqclean)}': no such folder (the pqclean package comes with npm ci)`,
    );
  const digestsFile = values.digests ?? join(root, 'examples', 'pqclean', 'published-kat.sha256');
  if (!existsSync(digestsFile)) throw new InputError('command line', '--digests', `'${digestsFile}': no such file`);
  const only = parseOnly(values.only, cli('only'));
  const schemes = pqcleanSchemes(pqclean).filter((s) => !only || only.test(s.scheme));
  if (schemes.length === 0)
    throw new InputError('command line', '--only', `'${values.only}' matches no scheme of ${relative(process.cwd(), pqclean) || '.'}`);
  const unlisted = writePqcleanCampaign(resolve(out), schemes, readPublishedDigests(digestsFile), pqclean);
  console.log(`wrote ${out}: ${schemes.length} scheme(s) in ${new Set(schemes.map((s) => s.katRng ?? s.kind)).size} candidate(s)`);
  if (unlisted.length > 0) console.log(`no published digest (their KAT is generated, NOKAT): ${unlisted.join(', ')}`);
  console.log(`build and KAT-check them all: ngcc-perf run ${out} --system ID --out DATA_DIR --phases build,kat`);
  return 0;
}

/**
 * `--trial-target -1` would make parseArgs take "-1" for an option and fail with "argument is
 * ambiguous"; joined as `--trial-target=-1` the value reaches our check, which says what is wrong.
 */
function joinNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (/^--[a-z][a-z-]*$/.test(a) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** "error: unknown command 'rnu'; did you mean run?", and where the commands are listed. */
function unknownCommand(command: string): string {
  const near = nearest(command, HELP_COMMANDS);
  return `error: unknown command '${command}'${near ? `; did you mean ${near}?` : ` (commands: ${HELP_COMMANDS.join(', ')})`}\n\`ngcc-perf --help\` lists every command with what it is for.`;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = joinNegativeValues(argv);
  // `ngcc-perf run --help` asks for that command's help, not an error about an unknown option.
  if (command !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    const help = commandHelp(command);
    if (help === undefined && !['help', '--help', '-h', 'version', '--version'].includes(command)) {
      console.error(unknownCommand(command));
      return 2;
    }
    console.log(help ?? USAGE);
    return 0;
  }
  if (command === '--version' || command === 'version') {
    console.log(`ngcc-perf ${toolVersion()} (native harness ${harnessVersion()})`);
    return 0;
  }
  // `ngcc-perf help run`
  if ((command === 'help' || command === '--help' || command === '-h') && rest[0] !== undefined) {
    const help = commandHelp(rest[0]);
    if (help) {
      console.log(help);
      return 0;
    }
    console.error(unknownCommand(rest[0]));
    return 2;
  }
  try {
    switch (command) {
      case 'run':
        return await stoppable(() => cmdRun(rest));
      case 'calibrate':
        return await cmdCalibrate(rest);
      case 'calibrate-nights':
        return cmdCalibrateNights(rest);
      case 'report':
        return cmdReport(rest);
      case 'compare':
        return cmdCompare(rest);
      case 'validate':
        return cmdValidate(rest);
      case 'doctor':
        return await cmdDoctor(rest);
      case 'kat-manifest':
        return cmdKatManifest(rest);
      case 'kat-digest':
        return cmdKatDigest(rest);
      case 'merge':
        return cmdMerge(rest);
      case 'iccs-baseline':
        return await stoppable(() => cmdIccsBaseline(rest));
      case 'example':
        return await stoppable(() => cmdExample(rest));
      case 'pqclean-campaign':
        return cmdPqcleanCampaign(rest);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        console.error(unknownCommand(command));
        return 2;
    }
  } catch (e) {
    const input = isInputError(e) ? e : diskFullError(e);
    if (input) {
      console.error(`error: ${input.message}`);
      return 2;
    }
    if (e instanceof TypeError && /parseArgs|Unknown option|ERR_PARSE_ARGS/.test(`${(e as { code?: string }).code ?? ''} ${e.message}`)) {
      console.error(`error: ${e.message}\n${USAGE}`);
      return 2;
    }
    console.error(`internal error: ${errorMessage(e)}`);
    return 3;
  }
}
