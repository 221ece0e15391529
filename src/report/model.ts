import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { candidateVerdict, type InstanceSurvey } from '../profile/survey.js';
import { measuredEnvironment } from './environment.js';
import { join, relative } from 'node:path';
import { loadCampaign } from '../config/campaign.js';
import { settingsSchema } from '../config/schemas.js';
import { loadDataset } from '../evidence/dataset.js';
import type { BuildEntry, HashProfile, MemoryRecord, TimingRecord } from '../evidence/types.js';
import { OPERATIONS } from '../measure/operation.js';
import { externalSizesPath, readExternalSizes, readKatIssues, readSurvey, type CatalogSize, type KatIssue, type SurveyVerdict } from './catalogs.js';

export interface InstanceView {
  label: string;
  build?: BuildEntry;
  records: Partial<Record<string, TimingRecord>>;
  profiles: Partial<Record<string, HashProfile>>;
  memory: Partial<Record<string, MemoryRecord>>;
  /** Evidence files that exist, relative to the system folder. */
  katLog?: { path: string; sha256: string };
  recordFiles: Array<{ op: string; path: string }>;
  profileFiles: Array<{ op: string; path: string }>;
  memoryFiles: Array<{ op: string; path: string }>;
  surveyFile?: string;
}

export interface CandidateView {
  id: string;
  algorithm: string;
  type: 'kem' | 'sig';
  api: 'iccs' | 'nist';
  page?: string;
  instances: InstanceView[];
  operations: readonly string[];
}

export interface ReportModel {
  system: string;
  systemDir: string;
  campaign: Record<string, unknown>;
  /** The environment the numbers were measured in: the campaign's end state, else a record's. */
  environment: Record<string, unknown>;
  candidates: CandidateView[];
  katIssues: KatIssue[];
  survey: SurveyVerdict[];
  /** Automated survey results per candidate (survey/<id>/<label>.json). */
  surveys: Map<string, InstanceSurvey[]>;
  sizes: CatalogSize[];
  /**
   * Evidence files that exist but could not be parsed (relative to the system folder): the pages
   * show what was readable, so whoever renders them must say what was left out.
   */
  unreadable: Array<{ path: string; problem: string }>;
}

export interface SurveyShown {
  verdict: string;
  notes?: string;
  curated: boolean;
  instances: InstanceSurvey[];
}

/** The curated verdict wins over the automated one; the page says which it shows. */
export function surveyFor(model: ReportModel, id: string): SurveyShown | undefined {
  const curated = model.survey.find((s) => s.id === id);
  const automated = model.surveys.get(id) ?? [];
  if (curated) {
    // Keep the automated verdict in view when the curation overrides it with a different one.
    const differs = automated.length > 0 && candidateVerdict(automated) !== curated.verdict;
    const notes = [curated.notes, differs ? `automated verdict: ${candidateVerdict(automated)}` : ''].filter(Boolean).join('; ');
    return { verdict: curated.verdict, notes: notes || undefined, curated: true, instances: automated };
  }
  if (automated.length > 0) return { verdict: candidateVerdict(automated), curated: false, instances: automated };
  return undefined;
}

function katLogHeader(systemDir: string, path: string | undefined): Record<string, string> {
  if (!path || !existsSync(join(systemDir, path))) return {};
  const header: Record<string, string> = {};
  for (const line of readFileSync(join(systemDir, path), 'utf8').split('\n').slice(0, 20)) {
    const m = /^(\w+)\s+= (.*)$/.exec(line);
    if (m) header[m[1]!] = m[2]!;
  }
  return header;
}

function inferType(id: string, ops: string[], logType?: string): 'kem' | 'sig' {
  if (logType === 'kem' || logType === 'sig') return logType;
  if (ops.some((o) => o === 'sign' || o === 'verify') || id.startsWith('sign-')) return 'sig';
  return 'kem';
}

/**
 * Everything a page shows, from an evidence folder (ours or the ngcc-harness's) and, when given,
 * the campaign folder (names, links and the curated catalogs beside the candidates).
 */
export function loadReportModel(systemDir: string, campaignDir?: string): ReportModel {
  const ds = loadDataset(systemDir);
  const campaign = campaignDir ? loadCampaign(campaignDir, undefined, { candidatesRequired: false }) : { candidates: [], settings: settingsSchema.parse({}) };
  const system = (ds.campaign?.system_id as string | undefined) ?? systemDir.split('/').filter(Boolean).pop()!;
  const byKey = new Map<string, InstanceView>();
  const order: string[] = [];
  const view = (id: string, label: string) => {
    const key = `${id}/${label}`;
    let v = byKey.get(key);
    if (!v) {
      v = { label, records: {}, profiles: {}, memory: {}, recordFiles: [], profileFiles: [], memoryFiles: [] };
      const survey = join('survey', id, `${label}.json`);
      if (existsSync(join(systemDir, survey))) v.surveyFile = survey;
      byKey.set(key, v);
      order.push(key);
    }
    return v;
  };
  for (const c of campaign.candidates) for (const i of c.instances) view(c.id, i.label);
  for (const [key, e] of Object.entries(ds.build.instances)) {
    const v = view(e.candidate ?? key.split('/')[0]!, e.label ?? key.split('/')[1]!);
    v.build = e;
    if (e.kat_log && existsSync(join(systemDir, e.kat_log))) v.katLog = { path: e.kat_log, sha256: e.kat_log_sha256 ?? '' };
  }
  const rel = (p: string) => relative(systemDir, p);
  for (const { path, record } of ds.records) {
    const v = view(record.candidate, record.label);
    v.records[record.operation] = record;
    v.recordFiles.push({ op: record.operation, path: rel(path) });
  }
  for (const { path, memory } of ds.memory) {
    const v = view(memory.candidate, memory.label);
    v.memory[memory.operation] = memory;
    v.memoryFiles.push({ op: memory.operation, path: rel(path) });
  }
  for (const { path, profile } of ds.profiles) {
    const v = view(profile.candidate, profile.label);
    v.profiles[profile.operation] = profile;
    v.profileFiles.push({ op: profile.operation, path: rel(path) });
  }

  const ids = [...new Set(order.map((k) => k.split('/')[0]!))].sort();
  const candidates = ids.map((id): CandidateView => {
    const spec = campaign.candidates.find((c) => c.id === id);
    const instances = order.filter((k) => k.startsWith(`${id}/`)).map((k) => byKey.get(k)!);
    const header = katLogHeader(systemDir, instances.find((i) => i.katLog)?.katLog?.path);
    const ops = instances.flatMap((i) => Object.keys(i.records));
    const type = spec?.type ?? inferType(id, ops, header.type);
    const api = spec?.api ?? (instances.find((i) => i.build?.api)?.build?.api === 'nist' ? 'nist' : 'iccs');
    return { id, algorithm: spec?.algorithm ?? header.algorithm ?? id, type, api, page: spec?.page, instances, operations: OPERATIONS[type] };
  });

  const env = measuredEnvironment(ds.campaign, ds.records[0]?.record.environment);
  const root = campaignDir ?? '';
  const surveys = new Map<string, InstanceSurvey[]>();
  const surveyDir = join(systemDir, 'survey');
  if (existsSync(surveyDir))
    for (const id of readdirSync(surveyDir).sort())
      surveys.set(
        id,
        readdirSync(join(surveyDir, id))
          .filter((f) => f.endsWith('.json'))
          .sort()
          .flatMap((f) => {
            const path = join(surveyDir, id, f);
            try {
              return [JSON.parse(readFileSync(path, 'utf8')) as InstanceSurvey & { failure?: string }];
            } catch {
              // Already in the dataset's unreadable list.
              return [];
            }
          })
          // A survey that could not run has no verdict to show.
          .filter((s) => s.verdict !== undefined),
      );
  return {
    system,
    systemDir,
    campaign: ds.campaign ?? {},
    environment: env as Record<string, unknown>,
    candidates,
    katIssues: campaignDir ? readKatIssues(join(root, 'kat_issues.csv')) : [],
    survey: campaignDir ? readSurvey(join(root, 'symmetric_survey.csv')) : [],
    surveys,
    sizes: campaignDir ? readExternalSizes(externalSizesPath(root, campaign.settings.catalogs.external_sizes)) : [],
    unreadable: ds.unreadable.map((u) => ({ path: rel(u.path), problem: u.problem })),
  };
}
