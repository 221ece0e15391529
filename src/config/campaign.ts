import { type Dirent, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { InputError, isInputError } from '../errors.js';
import { MAX_CAMPAIGN_INSTANCES } from './defaults.js';
import { checkManifestLabels, readManifest } from './katManifest.js';
import { lineOfField, loadYaml } from './yamlFile.js';
import { readableRoots, resolveSources, underAny } from './sources.js';
import { toolRoot } from '../util/paths.js';
import { candidateSchema, ICCS_BASELINE_ID, settingsSchema, type CampaignSettings, type CandidateSpec } from './schemas.js';

export interface Candidate extends CandidateSpec {
  /** Absolute folder of the candidate (holds candidate.yml and kat.sha256). */
  folder: string;
  /** The RNG the KAT uses: explicit, else the API's default. */
  katRng: KatRng;
  /** Every label in file order (instances may be filtered; errors still name the right index). */
  labels: string[];
}

/** The KAT generators: the ICCS DRNG, NIST's AES-256-CTR DRBG, HQC's SHAKE-256 generator. */
export type KatRng = NonNullable<CandidateSpec['kat_rng']>;

/** Whether a generator replays NIST's PQCgenKAT (.rsp files) rather than the ICCS KAT_*.c. */
export const isNistKatRng = (rng: KatRng): boolean => rng !== 'iccs-drng';

/** A candidate whose candidate.yml or kat.sha256 is wrong: recorded as INVALID, the others still run. */
export interface InvalidCandidate {
  /** The candidate's folder name (its id when candidate.yml is readable). */
  id: string;
  /** The error, naming the file and the line or field. */
  problem: string;
}

export interface Campaign {
  root: string;
  settings: CampaignSettings;
  candidates: Candidate[];
  /** Candidates that could not be read, in id order; every one is named, not only the first. */
  invalid: InvalidCandidate[];
}

export function loadSettings(root: string): CampaignSettings {
  const file = join(root, 'ngcc-perf.yml');
  if (!existsSync(file)) return settingsSchema.parse({});
  return loadYaml(file, settingsSchema, shown(file));
}

export function loadCandidate(folder: string, display: string): Candidate {
  const spec = loadYaml(join(folder, 'candidate.yml'), candidateSchema, display);
  if (spec.id !== basename(folder)) throw new InputError(display, 'id', `'${spec.id}' must equal the folder name '${basename(folder)}'`);
  return {
    ...spec,
    folder,
    katRng: spec.kat_rng ?? (spec.api === 'nist' ? 'nist-ctr-drbg' : 'iccs-drng'),
    labels: spec.instances.map((i) => i.label),
  };
}

/** Runs a check of a parsed candidate.yml; its InputError about a field gets the field's line, as a parse error has. */
function withLine<T>(file: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (!isInputError(e) || !/^instances\[\d+\]/.test(e.where)) throw e;
    const line = lineOfField(file, e.where);
    throw line === undefined ? e : new InputError(e.file, `line ${line}: ${e.where}`, e.problem);
  }
}

/** A path as the user can find it: relative to the working folder when below it. */
const shown = (path: string) => relative(process.cwd(), path) || '.';

/** The folders under `root` holding `<id>/candidate.yml`: the candidates, in id order. */
const candidateNames = (root: string) =>
  readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'candidate.yml')))
    .sort();

/**
 * Reads every `<id>/candidate.yml` under the campaign root, in id order, each with its kat.sha256
 * checked against its labels; a candidate that fails either check is listed in `invalid` with
 * its error; with `checkSources` (a run), so does a candidate whose sources, include folders or
 * folder are missing or lie outside the campaign's repository and the harness (readableRoots).
 * `iccsBaseline` allows the id the ICCS helper baseline reserves (its own generated campaign).
 * ngcc-perf.yml errors stay fatal: they concern every candidate. A folder without
 * candidates is an error: measuring nothing and
 * reporting success would hide a wrong path. Pages may take only the catalogs of a campaign folder
 * (`candidatesRequired: false`).
 */
export function loadCampaign(root: string, { candidatesRequired = true, checkSources = false, iccsBaseline = false } = {}): Campaign {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new InputError(shown(root), '', 'campaign folder not found');
  checkCandidateFileNames(root);
  const settings = loadSettings(root);
  const names = candidateNames(root);
  if (names.length === 0 && candidatesRequired) throw noCandidates(root);
  const candidates: Candidate[] = [];
  const invalid: InvalidCandidate[] = [];
  const roots = readableRoots(root, toolRoot());
  for (const name of names) {
    try {
      const folder = join(root, name);
      const display = join(shown(root), name, 'candidate.yml');
      confinedFolder(folder, roots, shown(folder));
      const c = loadCandidate(folder, display);
      // Only the baseline's own generated campaign may use its id (`iccsBaseline`).
      if (c.id === ICCS_BASELINE_ID && !iccsBaseline)
        throw new InputError(
          display,
          'id',
          `'${ICCS_BASELINE_ID}' is the ICCS helper baseline's id (ngcc-perf iccs-baseline): give the candidate an id like hash-7`,
        );
      checkManifest(c, join(shown(root), c.id, 'kat.sha256'));
      // Every path it names, checked now: a wrong one is this candidate's error, found before any build.
      if (checkSources)
        for (const [i, inst] of c.instances.entries())
          withLine(join(folder, 'candidate.yml'), () => resolveSources(folder, inst, i, display, roots));
      candidates.push(c);
    } catch (e) {
      // A competitor's broken manifest must not stop the others' measurements.
      if (!isInputError(e)) throw e;
      invalid.push({ id: name, problem: e.message });
    }
  }
  checkCampaignSize(root, candidates);
  return { root, settings, candidates, invalid };
}

/** A campaign of more instances than MAX_CAMPAIGN_INSTANCES is refused whole, before anything runs. */
function checkCampaignSize(root: string, candidates: readonly Candidate[]): void {
  const instances = candidates.reduce((n, c) => n + c.instances.length, 0);
  if (instances > MAX_CAMPAIGN_INSTANCES)
    throw new InputError(
      shown(root),
      '',
      `${instances} instances: a campaign holds at most ${MAX_CAMPAIGN_INSTANCES} (docs/campaign.md#limits); split it into several campaigns`,
    );
}

/** A candidate folder that is a link to somewhere else would show the build what it points to. */
function confinedFolder(folder: string, roots: readonly string[], display: string): void {
  const real = realpathSync(folder);
  if (!underAny(real, roots)) throw new InputError(display, '', `the candidate folder links to ${real}, outside the campaign's repository`);
}

/** Every kat.sha256 line names one of the candidate's instances (all of them, whatever --only). */
function checkManifest(c: Candidate, display: string): Candidate {
  checkManifestLabels(readManifest(join(c.folder, 'kat.sha256'), display), c.labels, display);
  return c;
}

/** Names the campaigns one or two folders down, for `run examples` meant as `run examples/campaign`. */
function noCandidates(root: string): InputError {
  // `run examples/campaign/kem-80`: a candidate folder, whose parent is the campaign.
  if (existsSync(join(root, 'candidate.yml')))
    return new InputError(
      shown(root),
      '',
      `a candidate folder, not a campaign: its parent ${shown(dirname(resolve(root)))} is the campaign (run it with --only '^${basename(resolve(root))}/')`,
    );
  const campaigns = campaignsBelow(root, 2).map(shown);
  const hint = campaigns.length === 0 ? '' : `; did you mean ${campaigns.slice(0, 3).join(' or ')}${campaigns.length > 3 ? ' or …' : ''}?`;
  return new InputError(shown(root), '', `no candidates (no <id>/candidate.yml in this folder)${hint}`);
}

function campaignsBelow(dir: string, depth: number): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // an unreadable folder only costs a hint
  }
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
    .map((e) => join(dir, e.name))
    .sort()
    .flatMap((sub) => (candidateNames(sub).length > 0 ? [sub] : depth > 1 ? campaignsBelow(sub, depth - 1) : []));
}

/**
 * A candidate folder whose manifest has another spelling (candidate.yaml) would be skipped as
 * "not a candidate": name it instead.
 */
function checkCandidateFileNames(root: string): void {
  for (const name of readdirSync(root).sort()) {
    const folder = join(root, name);
    if (!statSync(folder).isDirectory() || existsSync(join(folder, 'candidate.yml'))) continue;
    const wrong = readdirSync(folder).find((f) => /^candidate\.ya?ml$/i.test(f));
    if (wrong)
      throw new InputError(
        shown(join(folder, wrong)),
        '',
        'the candidate manifest must be named candidate.yml: rename it to candidate.yml',
      );
  }
}
