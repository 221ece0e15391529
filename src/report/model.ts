import { loadTrends, TrendsUnavailable, type HistoryInput } from '../trend/history.js';
import { toolVersion } from '../util/paths.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { readKatIssues, readSizeCatalog, readSurvey } from '../catalogs/catalogs.js';
import { type Campaign, loadCampaign } from '../config/campaign.js';
import { declaredSecurity, settingsSchema } from '../config/schemas.js';
import { readCalibration } from '../evidence/calibration.js';
import { readCtEvidence } from '../evidence/ctEvidence.js';
import { type Dataset, loadDataset } from '../evidence/dataset.js';
import { validateDataset } from '../evidence/validate.js';
import {
  BUILD_FILE,
  type EvidencePaths,
  evidencePaths,
  instanceKey,
  instanceOfPath,
  parseInstanceKey,
  surveyRelPath,
} from '../evidence/layout.js';
import type { BuildJson, TimingRecord } from '../evidence/fileTypes.js';
import { ICCS_BASELINE_ID } from '../measure/iccsBaseline.js';
import { hashMessageBytes, hashOperation } from '../measure/hashOperations.js';
import { OPERATIONS, operationsOf } from '../measure/operation.js';
import { KEX_MAX_PASSES } from '../measure/kexOperations.js';
import { kexPassesOf } from './kexModel.js';
import type { InstanceSurvey } from '../profile/survey.js';
import { readJson } from '../util/fsx.js';
import { archName, measuredEnvironment } from './environment.js';
import type { CandidateView, InstanceView, ReportModel, SystemEntry, UnreadableFile } from './views.js';

function katLogHeader(systemDir: string, path: string | undefined): Record<string, string> {
  if (!path || !existsSync(join(systemDir, path))) return {};
  const header: Record<string, string> = {};
  for (const line of readFileSync(join(systemDir, path), 'utf8').split('\n').slice(0, 20)) {
    const m = /^(\w+)\s+= (.*)$/.exec(line);
    if (m) header[m[1]!] = m[2]!;
  }
  return header;
}

function inferType(id: string, ops: string[], logType?: string): 'kem' | 'sig' | 'kex' | 'hash' {
  if (logType === 'kem' || logType === 'sig' || logType === 'kex' || logType === 'hash') return logType;
  if (ops.some((o) => hashMessageBytes(o) !== undefined) || id.startsWith('hash-') || id === ICCS_BASELINE_ID) return 'hash';
  if (ops.includes('exchange') || id.startsWith('kex-')) return 'kex';
  if (ops.some((o) => o === 'sign' || o === 'verify') || id.startsWith('sign-')) return 'sig';
  return 'kem';
}

const EVERY_OPERATION = [...new Set([...Object.values(OPERATIONS).flat(), ...operationsOf('kex', KEX_MAX_PASSES)])];

/**
 * A record's operation key: the ngcc-harness writes every hash length as operation `hash` with its
 * `input_bytes` (in a file named `<label>__hash_<bytes>.json`); ours are `hash_<bytes>` already.
 */
function operationOf(record: TimingRecord): string {
  return record.operation === 'hash' && typeof record.input_bytes === 'number' ? hashOperation(record.input_bytes) : record.operation;
}

/** Which of an instance's files an unreadable path is, by the layout's own paths. */
function unreadableKind(paths: EvidencePaths, id: string, label: string, path: string): Pick<UnreadableFile, 'kind' | 'op'> | undefined {
  if (path === paths.survey(id, label)) return { kind: 'survey' };
  for (const op of EVERY_OPERATION) {
    if (path === paths.record(id, label, op)) return { kind: 'timing', op };
    if (path === paths.profile(id, label, op)) return { kind: 'hash profile', op };
    if (path === paths.memory(id, label, op)) return { kind: 'memory', op };
  }
  return undefined;
}

/** Automated survey results per candidate (survey/<id>/<label>.json), in file-name order. */
function readSurveys(systemDir: string): Map<string, InstanceSurvey[]> {
  const surveys = new Map<string, InstanceSurvey[]>();
  const surveyDir = evidencePaths(systemDir).surveyDir;
  if (!existsSync(surveyDir)) return surveys;
  for (const id of readdirSync(surveyDir).sort())
    surveys.set(
      id,
      readdirSync(join(surveyDir, id))
        .filter((f) => f.endsWith('.json'))
        .sort()
        .flatMap((f) => {
          try {
            return [readJson<InstanceSurvey & { failure?: string }>(join(surveyDir, id, f))];
          } catch {
            // Already in the dataset's unreadable list.
            return [];
          }
        })
        // A survey that could not run has no verdict to show.
        .filter((s) => s.verdict !== undefined),
    );
  return surveys;
}

/** The trends through the history, or why the current folder cannot be their last night. */
function trendsOf(
  systemDir: string,
  system: string,
  history: { nights: readonly HistoryInput[]; link?: string; thresholdPct?: number },
): Pick<ReportModel, 'trends' | 'trendsProblem'> {
  try {
    return { trends: loadTrends(systemDir, system, history.nights, { currentLink: history.link, thresholdPct: history.thresholdPct }) };
  } catch (e) {
    if (e instanceof TrendsUnavailable) return { trendsProblem: e.message };
    throw e;
  }
}

/**
 * Every system with evidence in DATA_DIR (read from its campaign.json and build.json), in name
 * order: the index page's rows, also when it is rendered from the data branch at publish time.
 */
export function systemsIn(dataDir: string): SystemEntry[] {
  const found: SystemEntry[] = [];
  for (const name of existsSync(dataDir) ? readdirSync(dataDir).sort() : []) {
    const paths = evidencePaths(join(dataDir, name));
    if (!existsSync(paths.campaign)) continue;
    try {
      const campaign = readJson<Record<string, unknown>>(paths.campaign);
      const build = existsSync(paths.build) ? readJson<BuildJson>(paths.build) : { instances: {} };
      const ids = new Set(Object.keys(build.instances).map((k) => parseInstanceKey(k).candidate));
      found.push({ id: name, arch: archName(measuredEnvironment(campaign)).display, candidates: ids.size });
    } catch {
      /* an unreadable system is left out of the index; validate reports it */
    }
  }
  return found;
}

/** The other systems beside this one in DATA_DIR, and this one, for the index page. */
function systemsOf(systemDir: string, self: SystemEntry): SystemEntry[] {
  const others = systemsIn(dirname(systemDir.replace(/\/$/, ''))).filter((s) => s.id !== self.id);
  return [...others, self].sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * What validate finds wrong beyond the unreadable files the pages already name. With build.json
 * unreadable every record's check fails with it: the unreadable file says enough.
 */
function validationBeyond(systemDir: string, ds: Dataset, unreadable: ReadonlyArray<{ path: string }>): string[] {
  if (unreadable.some((u) => u.path === BUILD_FILE)) return [];
  return validateDataset(systemDir, ds).filter((line) => !unreadable.some((u) => line.startsWith(`${u.path}: `)));
}

/** The campaign a report names its candidates by; without a campaign folder, none and the default settings. */
type ReportCampaign = Pick<Campaign, 'candidates' | 'settings'>;

/** The instance views of one evidence folder, in the order they were first met. */
interface Views {
  systemDir: string;
  paths: EvidencePaths;
  byKey: Map<string, InstanceView>;
  order: string[];
  /** The view of an instance, made on first use. */
  view(id: string, label: string): InstanceView;
  /** An evidence file's path as the pages show it: relative to the system folder. */
  rel(p: string): string;
}

function newViews(systemDir: string): Views {
  const paths = evidencePaths(systemDir);
  const byKey = new Map<string, InstanceView>();
  const order: string[] = [];
  const view = (id: string, label: string) => {
    const key = instanceKey(id, label);
    let v = byKey.get(key);
    if (!v) {
      v = { label, records: {}, profiles: {}, memory: {}, recordFiles: [], profileFiles: [], memoryFiles: [], unreadable: [] };
      if (existsSync(paths.survey(id, label))) v.surveyFile = surveyRelPath(id, label);
      byKey.set(key, v);
      order.push(key);
    }
    return v;
  };
  return { systemDir, paths, byKey, order, view, rel: (p) => relative(systemDir, p) };
}

/** Each instance's claimed security and build.json entry, with its KAT log when that is there. */
function addBuilds(views: Views, campaign: ReportCampaign, ds: Dataset): void {
  const { view } = views;
  // candidate.yml's claim as it stands (none, if it was taken out); build.json's only for instances the campaign does not list.
  const claimed = new Set<string>();
  for (const c of campaign.candidates)
    for (const i of c.instances) {
      view(c.id, i.label).security = declaredSecurity(i);
      claimed.add(instanceKey(c.id, i.label));
    }
  for (const [key, e] of Object.entries(ds.build.instances)) {
    const fromKey = parseInstanceKey(key);
    const v = view(e.candidate ?? fromKey.candidate, e.label ?? fromKey.label);
    v.build = e;
    if (!claimed.has(key)) v.security = e.security;
    if (e.kat_log && existsSync(join(views.systemDir, e.kat_log))) v.katLog = { path: e.kat_log, sha256: e.kat_log_sha256 ?? '' };
  }
}

/** Each instance's timing, memory and hash-profile records, and the files they are in. */
function addMeasurements(views: Views, ds: Dataset): void {
  const { view, rel } = views;
  // A FORGED instance publishes no figure: what its library said of itself is not evidence. Its files
  // stay listed in the evidence index.
  const figuresOf = (v: InstanceView) => !v.build?.forged;
  for (const { path, record } of ds.records) {
    const v = view(record.candidate, record.label);
    const op = operationOf(record);
    if (figuresOf(v)) v.records[op] = record;
    v.recordFiles.push({ op, path: rel(path) });
  }
  for (const { path, memory } of ds.memory) {
    const v = view(memory.candidate, memory.label);
    if (figuresOf(v)) v.memory[memory.operation] = memory;
    v.memoryFiles.push({ op: memory.operation, path: rel(path) });
  }
  for (const { path, profile } of ds.profiles) {
    const v = view(profile.candidate, profile.label);
    if (figuresOf(v)) v.profiles[profile.operation] = profile;
    v.profileFiles.push({ op: profile.operation, path: rel(path) });
  }
}

/** Each instance's constant-time check, and the unreadable files of each. */
function addCtAndUnreadable(views: Views, ds: Dataset, ct: ReturnType<typeof readCtEvidence>): void {
  const { view, rel, paths } = views;
  for (const f of ct.files) Object.assign(view(f.candidate, f.label), { ct: f.ct, ctFile: f.path });
  // A file that cannot be parsed still belongs to its instance: its rows say "not recorded" instead of vanishing.
  for (const u of ds.unreadable) {
    const key = instanceOfPath(rel(u.path));
    if (!key) continue;
    const { candidate, label } = parseInstanceKey(key);
    const kind = unreadableKind(paths, candidate, label, u.path);
    if (kind) view(candidate, label).unreadable.push({ ...kind, path: rel(u.path), problem: u.problem });
  }
  for (const u of ct.unreadable) {
    const { candidate, label } = parseInstanceKey(instanceOfPath(rel(u.path))!);
    view(candidate, label).unreadable.push({ kind: 'constant-time check', path: rel(u.path), problem: u.problem });
  }
}

/** A view per candidate, in id order: named by the campaign, else by its KAT log and operations. */
function candidateViews(views: Views, campaign: ReportCampaign): CandidateView[] {
  const { order, byKey } = views;
  const ids = [...new Set(order.map((k) => parseInstanceKey(k).candidate))].sort();
  return ids.map((id): CandidateView => {
    const spec = campaign.candidates.find((c) => c.id === id);
    const instances = order.filter((k) => parseInstanceKey(k).candidate === id).map((k) => byKey.get(k)!);
    const header = katLogHeader(views.systemDir, instances.find((i) => i.katLog)?.katLog?.path);
    const ops = instances.flatMap((i) => [...Object.keys(i.records), ...i.unreadable.flatMap((u) => (u.op ? [u.op] : []))]);
    const type = spec?.type ?? inferType(id, ops, header.type);
    const api = spec?.api ?? (instances.find((i) => i.build?.api)?.build?.api === 'nist' ? 'nist' : 'iccs');
    return {
      id,
      algorithm: spec?.algorithm ?? header.algorithm ?? id,
      type,
      api,
      page: spec?.page,
      instances,
      operations: operationsOf(type, type === 'kex' ? kexPassesOf(instances) : undefined),
    };
  });
}

/**
 * Everything a page shows, from an evidence folder (ours or the ngcc-harness's) and, when given,
 * the campaign folder (names, links and the curated catalogs beside the candidates). All reading
 * happens here: rendering the model is pure.
 */
export function loadReportModel(
  systemDir: string,
  campaignDir?: string,
  history?: { nights: readonly HistoryInput[]; link?: string; thresholdPct?: number },
): ReportModel {
  const ds = loadDataset(systemDir);
  const campaign: ReportCampaign = campaignDir
    ? loadCampaign(campaignDir, { candidatesRequired: false })
    : { candidates: [], settings: settingsSchema.parse({}) };
  const system = (ds.campaign?.system_id as string | undefined) ?? basename(systemDir);
  const views = newViews(systemDir);
  addBuilds(views, campaign, ds);
  addMeasurements(views, ds);
  const ct = readCtEvidence(systemDir);
  addCtAndUnreadable(views, ds, ct);
  const all = candidateViews(views, campaign);

  const candidates = all.filter((c) => c.id !== ICCS_BASELINE_ID);
  const iccsBaseline = all.find((c) => c.id === ICCS_BASELINE_ID);
  const environment = measuredEnvironment(ds.campaign, ds.records[0]?.record.environment);
  const root = campaignDir ?? '';
  const calibration = readCalibration(systemDir);
  const unreadable = [
    ...[...ds.unreadable, ...ct.unreadable].map((u) => ({ path: views.rel(u.path), problem: u.problem })),
    ...(calibration.problem ? [{ path: views.rel(evidencePaths(systemDir).calibration), problem: calibration.problem }] : []),
  ];
  return {
    toolVersion: toolVersion(),
    system,
    systemDir,
    campaign: ds.campaign ?? {},
    environment,
    candidates,
    ...(iccsBaseline ? { iccsBaseline } : {}),
    katIssues: campaignDir ? readKatIssues(join(root, 'kat_issues.csv')) : [],
    survey: campaignDir ? readSurvey(join(root, 'symmetric_survey.csv')) : [],
    surveys: readSurveys(systemDir),
    sizes: campaignDir ? readSizeCatalog({ root, settings: campaign.settings }) : [],
    systems: systemsOf(systemDir, { id: system, arch: archName(environment).display, candidates: candidates.length }),
    unreadable,
    validation: validationBeyond(systemDir, ds, unreadable),
    ...(calibration.calibration ? { calibration: calibration.calibration } : {}),
    ...(history ? trendsOf(systemDir, system, history) : {}),
  };
}
