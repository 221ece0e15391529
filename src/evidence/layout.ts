import { join } from 'node:path';
import { ATOMIC_TEMP } from '../util/fsx.js';

/**
 * The evidence layout under DATA_DIR/<system>/ (docs/evidence-format.md): the only module that
 * spells its file names, folder names and instance keys.
 */

export const CAMPAIGN_FILE = 'campaign.json';
export const BUILD_FILE = 'build.json';
/** The pull-request check calibrated on this system (`calibrate`, evidence/calibration.ts). */
export const CALIBRATION_FILE = 'calibration.json';
/** Held by the one process writing a system folder (evidence/lock.ts). */
export const LOCK_FILE = '.ngcc-perf.lock';

/** Folders whose files are named `<label>__<operation>.json`. */
const OPERATION_DIRS: ReadonlySet<string> = new Set(['records', 'profile', 'memory']);
/** Folders whose files belong to one instance: `<dir>/<candidate>/<label>…`. */
export const INSTANCE_DIRS: ReadonlySet<string> = new Set([...OPERATION_DIRS, 'survey', 'kat', 'build', 'ct', 'paired']);

/** An instance's key in build.json, comparisons and progress lines: `<candidate>/<label>`. */
export const instanceKey = (candidate: string, label: string): string => `${candidate}/${label}`;

/** The candidate and label of an instance key (labels never hold '/', candidate ids neither). */
export function parseInstanceKey(key: string): { candidate: string; label: string } {
  const cut = key.indexOf('/');
  return cut < 0 ? { candidate: key, label: '' } : { candidate: key.slice(0, cut), label: key.slice(cut + 1) };
}

const operationFile = (label: string, op: string) => `${label}__${op}.json`;

/** Where each piece of evidence lives under a system folder. */
export const evidencePaths = (systemDir: string) => ({
  campaign: join(systemDir, CAMPAIGN_FILE),
  build: join(systemDir, BUILD_FILE),
  calibration: join(systemDir, CALIBRATION_FILE),
  lock: join(systemDir, LOCK_FILE),
  recordsDir: join(systemDir, 'records'),
  profileDir: join(systemDir, 'profile'),
  memoryDir: join(systemDir, 'memory'),
  surveyDir: join(systemDir, 'survey'),
  ctDir: join(systemDir, 'ct'),
  record: (id: string, label: string, op: string) => join(systemDir, 'records', id, operationFile(label, op)),
  profile: (id: string, label: string, op: string) => join(systemDir, 'profile', id, operationFile(label, op)),
  survey: (id: string, label: string) => join(systemDir, 'survey', id, `${label}.json`),
  /** The constant-time check of an instance, all its operations in one file (src/ct/findingKinds.ts). */
  ct: (id: string, label: string) => join(systemDir, 'ct', id, `${label}.json`),
  memory: (id: string, label: string, op: string) => join(systemDir, 'memory', id, operationFile(label, op)),
  /** A rebuilt instance measured beside last night's library, and the pull-request rule's verdicts (evidence/pairedNight.ts). */
  pairedNight: (id: string, label: string) => join(systemDir, 'paired', id, `${label}.json`),
  katLog: (id: string, label: string) => join(systemDir, 'kat', id, `${label}.log`),
  katDir: (id: string, label: string) => join(systemDir, 'kat', id, label),
  buildDir: (id: string, label: string) => join(systemDir, 'build', id, label),
  /** The ICCS helper baseline's generated campaign (campaign/iccsBaseline.ts): beside the builds, never published. */
  iccsBaselineCampaign: join(systemDir, 'build', '.iccs-baseline'),
});

export type EvidencePaths = ReturnType<typeof evidencePaths>;

/** A survey file's path relative to the system folder, as the report links it. */
export const surveyRelPath = (id: string, label: string): string => `survey/${id}/${label}.json`;

/** A constant-time check's path relative to the system folder, as the pages link it. */
export const ctRelPath = (id: string, label: string): string => `ct/${id}/${label}.json`;

/** Paths as written into evidence: relative to the system folder, '/'-separated. */
export function relativeTo(systemDir: string, path: string): string {
  return path.startsWith(`${systemDir}/`) ? path.slice(systemDir.length + 1) : path;
}

/**
 * The instance a file of a system folder belongs to, from its path relative to that folder
 * ('/'-separated); undefined for the files every instance shares (build.json, campaign.json) and
 * anything outside the layout.
 */
export function instanceOfPath(rel: string): string | undefined {
  const parts = rel.split('/');
  if (parts.length < 3 || !INSTANCE_DIRS.has(parts[0]!)) return undefined;
  const [top, id, name] = parts as [string, string, string];
  if (parts.length > 3) return instanceKey(id, name);
  const stem = name.replace(/\.(json|log)$/, '');
  if (stem === name) return undefined;
  const cut = OPERATION_DIRS.has(top) ? stem.lastIndexOf('__') : -1;
  return instanceKey(id, cut > 0 ? stem.slice(0, cut) : stem);
}

/** The evidence lock, temporary files of an atomic write: never evidence. */
export function isTransient(rel: string): boolean {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return name === LOCK_FILE || ATOMIC_TEMP.test(name);
}
