import { resolveSandbox } from '../env/sandboxProbe.js';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadCampaign, type Candidate } from '../config/campaign.js';
import type { CampaignSettings } from '../config/schemas.js';
import { buildArgv, flagsFor, type BuildRequest, type FlagSet } from '../compile/compile.js';
import { harnessVersion } from '../compile/harnessTools.js';
import { errorMessage } from '../errors.js';
import { evidencePaths, instanceKey, parseInstanceKey } from '../evidence/layout.js';
import type { BuildEntry, BuildJson } from '../evidence/fileTypes.js';
import { readJsonIfExists, sha256File } from '../util/fsx.js';
import { changedFiles } from './gitTree.js';

/**
 * What a pull request must measure again: the candidates whose numbers may differ from the
 * baseline's. Decided from what goes into a number, not from where the changed files are: a
 * vendored source outside the campaign folder that a build reads is as much an input as a file in
 * the candidate's own folder, and a README beside the sources is none.
 */
export interface Touched {
  /** Candidate ids to measure again (and to drop from the head's copy of the baseline), sorted. */
  candidates: string[];
  /** Why, one line per instance (or candidate), for the log. */
  reasons: string[];
}

export interface TouchedQuery {
  repo: string;
  campaignDir: string;
  baseSha: string;
  headSha: string;
  /** The baseline's DATA_DIR/<system>; undefined when there is none (then everything is new). */
  baselineSystemDir?: string;
  /** A scratch folder: the key computation writes each instance's version script there. */
  scratch: string;
}

/**
 * An instance is touched when its build key at head differs from the key in the baseline's
 * build.json (every file the preprocessor reads, wherever it lies, the sources, flags, compiler
 * and harness), when its kat.sha256 differs from the one its KAT was judged against, or when it
 * is new or gone. A candidate is touched when one of its instances is, or its candidate.yml
 * changed; a change of ngcc-perf.yml (campaign-wide settings) touches every candidate.
 */
export async function touchedCandidates(q: TouchedQuery): Promise<Touched> {
  const prefix = relative(q.repo, q.campaignDir);
  const inCampaign = (path: string) => (prefix ? path.slice(prefix.length + 1) : path);
  const changed = (await changedFiles(q.repo, q.baseSha, q.headSha, prefix)).map(inCampaign);
  const campaign = loadCampaign(q.campaignDir, { candidatesRequired: false });
  const baseline = q.baselineSystemDir ? (readJsonIfExists<BuildJson>(evidencePaths(q.baselineSystemDir).build)?.instances ?? {}) : {};
  const touched = new Map<string, string[]>();
  const touch = (id: string, why: string) => touched.set(id, [...(touched.get(id) ?? []), why]);

  const everything = changed.includes('ngcc-perf.yml');
  const allIds = new Set([
    ...campaign.candidates.map((c) => c.id),
    ...campaign.invalid.map((c) => c.id),
    ...Object.entries(baseline).map(([key, e]) => e.candidate ?? parseInstanceKey(key).candidate),
  ]);
  if (everything) for (const id of allIds) touch(id, 'ngcc-perf.yml changed (campaign-wide settings)');
  for (const path of changed) {
    const [id, file, ...rest] = path.split('/');
    if (rest.length === 0 && file === 'candidate.yml' && id) touch(id, 'candidate.yml changed');
  }
  for (const c of campaign.invalid) if (changed.some((p) => p.startsWith(`${c.id}/`))) touch(c.id, `invalid: ${c.problem}`);

  const present = new Set<string>();
  const version = harnessVersion();
  for (const c of campaign.candidates) {
    for (const [index, instance] of c.instances.entries()) {
      const key = instanceKey(c.id, instance.label);
      present.add(key);
      const why = await instanceChange(c, index, baseline[key], campaign.settings, version, join(q.scratch, key));
      if (why) touch(c.id, `${key}: ${why}`);
    }
  }
  for (const [key, e] of Object.entries(baseline))
    if (!present.has(key)) touch(e.candidate ?? parseInstanceKey(key).candidate, `${key}: in the baseline, no longer in the campaign`);

  const candidates = [...touched.keys()].sort();
  return {
    candidates,
    reasons: candidates.flatMap((id) => touched.get(id)!.map((why) => (why.startsWith(`${id}/`) ? why : `${id}: ${why}`))),
  };
}

/** Why an instance's numbers may differ from its baseline entry's, or undefined when they cannot. */
async function instanceChange(
  c: Candidate,
  index: number,
  entry: BuildEntry | undefined,
  settings: CampaignSettings,
  version: string,
  scratch: string,
): Promise<string | undefined> {
  if (!entry) return 'new (not in the baseline)';
  if (!entry.build_key) return 'the baseline has no build key';
  const manifest = join(c.folder, 'kat.sha256');
  if (entry.kat !== 'BUILDFAIL' && entry.kat_manifest_sha256 !== (existsSync(manifest) ? sha256File(manifest) : 'none'))
    return 'kat.sha256 changed (or its KAT was not run)';
  // The key of the flag set the baseline's library was built with (after a fallback, the harness defaults).
  const flagSet: FlagSet = entry.flags === 'harness-default' ? 'harness-default' : 'guide';
  const req: BuildRequest = {
    candidate: c,
    instance: c.instances[index]!,
    index: c.labels.indexOf(c.instances[index]!.label),
    outDir: scratch,
    flagSet,
    variant: settings.flags.variant,
    extraFlags: settings.flags.extra,
    harnessVersion: version,
    timeoutMs: settings.planning.build_timeout_s * 1000,
    sandbox: resolveSandbox(settings.sandbox),
    compiler: settings.compiler,
  };
  try {
    const { key } = await buildArgv(req, flagsFor(req), join(scratch, flagSet, `lib${req.instance.label}.so`));
    return key === entry.build_key ? undefined : 'build inputs changed (a source or header it reads, flags, compiler or harness)';
  } catch (e) {
    return `its build inputs cannot be read (${errorMessage(e)})`;
  }
}
