import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readJson, writeFileAtomic } from './util/fsx.js';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PHASES, runCampaign, type CampaignSummary, type Phase } from './campaign.js';
import { loadCampaign } from './config/campaign.js';
import { errorMessage, InputError, isInputError } from './errors.js';
import { validateDataset } from './evidence/validate.js';
import { canonicalDigest, formatManifestLine, parseManifest, type DigestMode } from './kat/manifest.js';
import { createProgress } from './progress.js';
import { toolRoot } from './util/paths.js';
import { checkSystemId, parseCpu, parseOnly, parsePositive, parseShard } from './config/arguments.js';
import { loadReportModel } from './report/model.js';
import { compareEvidence } from './compare/compare.js';
import { compareFails, parseFailOn } from './compare/failOn.js';
import { renderJobSummary } from './github/comment.js';
import { mergeShardFolders } from './github/publish.js';
import { differingPages, renderPages, writePages } from './report/render.js';
import type { BuildJson } from './evidence/types.js';

const USAGE = `usage:
  ngcc-perf run CAMPAIGN_DIR --system ID --out DATA_DIR [--only REGEX] [--phases build,kat,measure,profile]
                [--trial-target S] [--op-budget S] [--cpu N] [--shard K/N] [--force]
  ngcc-perf report DATA_DIR/ID [--campaign CAMPAIGN_DIR] --out PAGES_DIR [--check]
  ngcc-perf validate DATA_DIR/ID
  ngcc-perf compare --base DATA_DIR --head DATA_DIR --system ID [--format md|json] [--campaign CAMPAIGN_DIR]
                    [--threshold PCT] [--alpha P] [--history DATA_DIR,...] [--fail-on regression,kat,size-audit]
  ngcc-perf kat-manifest DATA_DIR/ID CANDIDATE_ID [--mode strict|nolen] [--records N] [--write CAMPAIGN_DIR]
  ngcc-perf merge --out DATA_DIR/ID SHARD_DIR...
  ngcc-perf example [--out DIR]
exit codes: 0 success, 1 a check found problems, 2 usage or input error`;

const cli = (name: string) => ['command line', `--${name}`] as const;
const number = (name: string, v: string | undefined) => parsePositive(v, cli(name));

function parsePhases(v: string | undefined): Set<Phase> {
  if (v === undefined) return new Set(PHASES);
  const list = v.split(',').map((s) => s.trim());
  for (const p of list) if (!(PHASES as readonly string[]).includes(p)) throw new InputError('command line', '--phases', `unknown phase '${p}' (known: ${PHASES.join(', ')})`);
  return new Set(list as Phase[]);
}


function printSummary(s: CampaignSummary): number {
  const failed = s.instances.filter((i) => i.kat !== 'PASS');
  for (const i of s.instances) {
    const ops = i.operations.map((o) => `${o.operation} ${o.mean_cycles !== undefined ? Math.round(o.mean_cycles) : o.status}`).join(', ');
    console.log(`${i.kat.padEnd(10)} ${i.key}${i.detail ? ` — ${i.detail}` : ''}${ops ? `  [${ops}]` : ''}`);
  }
  return failed.length > 0 ? 1 : 0;
}

async function cmdRun(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      system: { type: 'string' },
      out: { type: 'string' },
      only: { type: 'string' },
      phases: { type: 'string' },
      'trial-target': { type: 'string' },
      'op-budget': { type: 'string' },
      cpu: { type: 'string' },
      shard: { type: 'string' },
      force: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1 || !values.system || !values.out) throw new InputError('command line', 'run', 'needs CAMPAIGN_DIR, --system ID and --out DATA_DIR');
  checkSystemId(values.system, cli('system'));
  const cpu = parseCpu(values.cpu, cli('cpu'));
  const summary = await runCampaign({
    campaignDir: positionals[0]!,
    system: values.system,
    dataDir: values.out,
    only: parseOnly(values.only, cli('only')),
    phases: parsePhases(values.phases),
    trialTarget: number('trial-target', values['trial-target']),
    opBudget: number('op-budget', values['op-budget']),
    cpu,
    shard: parseShard(values.shard, cli('shard')),
    force: values.force,
    progress: createProgress(),
  });
  const code = printSummary(summary);
  console.log(`evidence: ${relative(process.cwd(), summary.systemDir) || '.'}`);
  return code;
}

function cmdValidate(args: string[]): number {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length !== 1) throw new InputError('command line', 'validate', 'needs DATA_DIR/ID');
  const dir = resolve(positionals[0]!);
  if (!existsSync(dir)) throw new InputError(positionals[0]!, '', 'no such folder');
  const problems = validateDataset(dir);
  for (const p of problems) console.log(p);
  console.log(problems.length === 0 ? `${positionals[0]}: valid` : `${problems.length} problem(s)`);
  return problems.length === 0 ? 0 : 1;
}

function cmdCompare(args: string[]): number {
  const { values } = parseArgs({
    args,
    options: {
      base: { type: 'string' },
      head: { type: 'string' },
      system: { type: 'string' },
      format: { type: 'string', default: 'md' },
      campaign: { type: 'string' },
      threshold: { type: 'string' },
      alpha: { type: 'string' },
      history: { type: 'string' },
      'fail-on': { type: 'string', default: 'regression,kat' },
    },
  });
  if (!values.base || !values.head || !values.system) throw new InputError('command line', 'compare', 'needs --base DATA_DIR, --head DATA_DIR and --system ID');
  if (values.format !== 'md' && values.format !== 'json') throw new InputError('command line', '--format', `expected md or json, got '${values.format}'`);
  const alpha = number('alpha', values.alpha);
  if (alpha !== undefined && alpha >= 1) throw new InputError('command line', '--alpha', 'expected a probability below 1');
  const report = compareEvidence({
    baseDir: values.base,
    headDir: values.head,
    system: values.system,
    thresholdPct: number('threshold', values.threshold),
    alpha,
    history: values.history?.split(',').filter(Boolean),
    campaignDir: values.campaign,
  });
  console.log(values.format === 'json' ? JSON.stringify(report, null, 1) : renderJobSummary(report, {}));
  return compareFails(report, parseFailOn(values['fail-on']!, '--fail-on')) ? 1 : 0;
}

/** Renders every page of one system; with --check compares with the pages on disk instead. */
function cmdReport(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { campaign: { type: 'string' }, out: { type: 'string' }, check: { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1 || !values.out) throw new InputError('command line', 'report', 'needs DATA_DIR/ID and --out PAGES_DIR');
  const systemDir = resolve(positionals[0]!);
  if (!existsSync(join(systemDir, 'build.json')) && !existsSync(join(systemDir, 'records')))
    throw new InputError(positionals[0]!, '', 'no evidence here (no build.json, no records/)');
  const pages = renderPages(loadReportModel(systemDir, values.campaign ? resolve(values.campaign) : undefined));
  if (values.check) {
    const differing = differingPages(values.out, pages);
    for (const p of differing) console.log(`differs: ${join(values.out, p)}`);
    console.log(differing.length === 0 ? `${pages.size} pages up to date` : `${differing.length} of ${pages.size} pages differ from the evidence`);
    return differing.length === 0 ? 0 : 1;
  }
  writePages(values.out, pages);
  console.log(`${pages.size} pages written to ${values.out}`);
  return 0;
}

/** Writes manifest lines for a candidate from the KAT files generated by a previous run. */
function cmdKatManifest(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { mode: { type: 'string', default: 'strict' }, records: { type: 'string' }, write: { type: 'string' } },
  });
  if (positionals.length !== 2) throw new InputError('command line', 'kat-manifest', 'needs DATA_DIR/ID and CANDIDATE_ID');
  const [systemDir, id] = positionals as [string, string];
  if (values.mode !== 'strict' && values.mode !== 'nolen') throw new InputError('command line', '--mode', 'must be strict or nolen');
  const records = number('records', values.records);
  if (records !== undefined && !Number.isInteger(records)) throw new InputError('command line', '--records', `expected a whole number of records, got '${values.records}'`);
  const build = readJson<BuildJson>(join(systemDir, 'build.json'));
  const lines: string[] = [];
  for (const e of Object.values(build.instances).filter((x) => x.candidate === id)) {
    if (!e.kat_file) {
      console.error(`${id}/${e.label}: no KAT file (status ${e.kat}); skipped`);
      continue;
    }
    const text = readFileSync(join(systemDir, e.kat_file), 'utf8');
    const file = e.kat_file.split('/').pop()!;
    lines.push(formatManifestLine({ sha256: canonicalDigest(text, values.mode as DigestMode, records), mode: values.mode as DigestMode, records, label: e.label, file }));
  }
  if (lines.length === 0) throw new InputError(join(systemDir, 'build.json'), id, 'no generated KAT files for this candidate: run with --phases build,kat first');
  const text = `# KAT manifest for ${id}: ${lines.length} instance(s); see CONTRACT §4\n${lines.join('\n')}\n`;
  if (values.write) {
    const campaign = loadCampaign(values.write);
    const c = campaign.candidates.find((x) => x.id === id);
    if (!c) throw new InputError(values.write, id, 'no such candidate in the campaign');
    const target = join(c.folder, 'kat.sha256');
    parseManifest(text, target);
    writeFileAtomic(target, text);
    console.log(`wrote ${relative(process.cwd(), target)}`);
  } else process.stdout.write(text);
  return 0;
}

/** Combines the evidence folders of a system's shards into one; conflicting files are errors. */
function cmdMerge(args: string[]): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { out: { type: 'string' } } });
  if (!values.out || positionals.length === 0) throw new InputError('command line', 'merge', 'needs --out DATA_DIR/ID and at least one shard folder');
  for (const p of positionals) if (!existsSync(p)) throw new InputError(p, '', 'no such shard folder');
  try {
    mergeShardFolders(positionals, values.out);
  } catch (e) {
    console.error(`error: ${errorMessage(e)}`);
    return 1;
  }
  const problems = validateDataset(resolve(values.out));
  for (const p of problems) console.log(p);
  console.log(`merged ${positionals.length} shard(s) into ${values.out}${problems.length > 0 ? `; ${problems.length} validation problem(s)` : ''}`);
  return problems.length > 0 ? 1 : 0;
}

/** `npm start`: the bundled example campaign, into a git-ignored folder. */
async function cmdExample(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' } } });
  const root = toolRoot();
  const out = resolve(values.out ?? join(root, 'out'));
  const campaignDir = join(root, 'examples', 'campaign');
  const pqclean = join(root, 'node_modules', 'pqclean', 'deps', 'PQClean');
  if (!existsSync(pqclean)) throw new InputError(relative(process.cwd(), pqclean), '', 'the pqclean package is missing: run npm ci first');
  const system = 'local';
  console.log(`example campaign: ${relative(process.cwd(), campaignDir)} (${readdirSync(campaignDir).filter((f) => existsSync(join(campaignDir, f, 'candidate.yml'))).length} candidates)`);
  const summary = await runCampaign({ campaignDir, system, dataDir: join(out, 'data'), phases: new Set(PHASES), progress: createProgress() });
  const code = printSummary(summary);
  const problems = validateDataset(summary.systemDir);
  for (const p of problems) console.log(`validate: ${p}`);
  const pagesDir = join(out, 'pages');
  const pages = renderPages(loadReportModel(summary.systemDir, campaignDir));
  writePages(pagesDir, pages);
  console.log(`\nevidence: ${relative(process.cwd(), summary.systemDir)}`);
  console.log(`pages:    ${relative(process.cwd(), pagesDir)} (${pages.size} pages; start at ${relative(process.cwd(), join(pagesDir, 'index.md'))})`);
  console.log(`validate: ${problems.length === 0 ? 'passed' : `${problems.length} problem(s)`}`);
  return problems.length > 0 ? 1 : code;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `ngcc-perf run --help` asks for the usage, not an error about an unknown option.
  if (command !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    console.log(USAGE);
    return 0;
  }
  try {
    switch (command) {
      case 'run':
        return await cmdRun(rest);
      case 'report':
        return cmdReport(rest);
      case 'compare':
        return cmdCompare(rest);
      case 'validate':
        return cmdValidate(rest);
      case 'kat-manifest':
        return cmdKatManifest(rest);
      case 'merge':
        return cmdMerge(rest);
      case 'example':
        return await cmdExample(rest);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        console.error(`unknown command '${command}'\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (isInputError(e)) {
      console.error(`error: ${e.message}`);
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
