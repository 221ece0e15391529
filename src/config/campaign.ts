import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { InputError } from '../errors.js';
import { loadYaml } from './yamlFile.js';
import { candidateSchema, settingsSchema, type CampaignSettings, type CandidateSpec } from './schemas.js';

export interface Candidate extends CandidateSpec {
  /** Absolute folder of the candidate (holds candidate.yml and kat.sha256). */
  folder: string;
  /** The RNG the KAT uses: explicit, else the API's default. */
  katRng: 'iccs-drng' | 'nist-ctr-drbg';
  /** Every label in file order (instances may be filtered; errors still name the right index). */
  labels: string[];
}

export interface Campaign {
  root: string;
  settings: CampaignSettings;
  candidates: Candidate[];
}

export function loadSettings(root: string): CampaignSettings {
  const file = join(root, 'ngcc-perf.yml');
  if (!existsSync(file)) return settingsSchema.parse({});
  return loadYaml(file, settingsSchema, relative(process.cwd(), file) || file);
}

export function loadCandidate(folder: string, display: string): Candidate {
  const spec = loadYaml(join(folder, 'candidate.yml'), candidateSchema, display);
  if (spec.id !== basename(folder))
    throw new InputError(display, 'id', `'${spec.id}' must equal the folder name '${basename(folder)}'`);
  return {
    ...spec,
    folder,
    katRng: spec.kat_rng ?? (spec.api === 'nist' ? 'nist-ctr-drbg' : 'iccs-drng'),
    labels: spec.instances.map((i) => i.label),
  };
}

/** Reads every `<id>/candidate.yml` under the campaign root, in id order. */
export function loadCampaign(root: string, only?: RegExp): Campaign {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new InputError(relative(process.cwd(), root) || root, '', 'campaign folder not found');
  checkCandidateFileNames(root);
  const settings = loadSettings(root);
  const candidates = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'candidate.yml')))
    .sort()
    .map((name) => loadCandidate(join(root, name), join(relative(process.cwd(), root) || '.', name, 'candidate.yml')))
    .filter((c) => !only || c.instances.some((i) => only.test(`${c.id}/${i.label}`)) || only.test(c.id))
    .map((c) => (only && !only.test(c.id) ? { ...c, instances: c.instances.filter((i) => only.test(`${c.id}/${i.label}`)) } : c));
  return { root, settings, candidates };
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
      throw new InputError(relative(process.cwd(), join(folder, wrong)) || join(folder, wrong), '', 'the candidate manifest must be named candidate.yml: rename it to candidate.yml');
  }
}
