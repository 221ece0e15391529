import type { TrendModel } from '../trend/history.js';
import type { CatalogSize, KatIssue, SurveyVerdict } from '../catalogs/catalogs.js';
import type { DeclaredSecurity } from '../config/schemas.js';
import type { BuildEntry, HashProfile, MemoryRecord, TimingRecord } from '../evidence/fileTypes.js';
import type { CtFile } from '../ct/findings.js';
import type { Calibration } from '../evidence/calibration.js';
import type { InstanceSurvey } from '../profile/survey.js';

/** What the pages show, as plain data: model.ts reads it from disk, the pages render it. */

/** An evidence file of an instance that exists but could not be parsed. */
export interface UnreadableFile {
  kind: 'timing' | 'hash profile' | 'memory' | 'survey' | 'constant-time check';
  /** The operation, for the per-operation files. */
  op?: string;
  /** Relative to the system folder. */
  path: string;
  problem: string;
}

export interface InstanceView {
  label: string;
  build?: BuildEntry;
  /** The security candidate.yml claims for it (else build.json's copy): the rankings' group. */
  security?: DeclaredSecurity;
  records: Partial<Record<string, TimingRecord>>;
  profiles: Partial<Record<string, HashProfile>>;
  memory: Partial<Record<string, MemoryRecord>>;
  /** Evidence files that exist, relative to the system folder. */
  katLog?: { path: string; sha256: string };
  recordFiles: Array<{ op: string; path: string }>;
  profileFiles: Array<{ op: string; path: string }>;
  memoryFiles: Array<{ op: string; path: string }>;
  surveyFile?: string;
  /** Its constant-time check (ct/<id>/<label>.json), and that file relative to the system folder. */
  ct?: CtFile;
  ctFile?: string;
  /** Its files that could not be read: each shows as "not recorded" where its numbers would be. */
  unreadable: UnreadableFile[];
}

export interface CandidateView {
  id: string;
  algorithm: string;
  type: 'kem' | 'sig' | 'kex' | 'hash';
  api: 'iccs' | 'nist';
  page?: string;
  instances: InstanceView[];
  operations: readonly string[];
}

/** One row of the index page: a system of the same DATA_DIR. */
export interface SystemEntry {
  id: string;
  arch: string;
  candidates: number;
}

export interface ReportModel {
  /** The version of ngcc-perf that renders the pages: every page's last line names it. */
  toolVersion?: string;
  system: string;
  systemDir: string;
  campaign: Record<string, unknown>;
  /** The environment the numbers were measured in: the campaign's end state, else a record's. */
  environment: Record<string, unknown>;
  candidates: CandidateView[];
  /**
   * The ICCS helper baseline (candidate id `iccs`: sm3hash, pseudohash, pseudoXOF timed as hashes),
   * when the evidence has it: the summary's own table and the hash rows' denominators, not a candidate.
   */
  iccsBaseline?: CandidateView;
  katIssues: KatIssue[];
  survey: SurveyVerdict[];
  /** Automated survey results per candidate (survey/<id>/<label>.json). */
  surveys: Map<string, InstanceSurvey[]>;
  sizes: CatalogSize[];
  /** Every system of the evidence folder's DATA_DIR, this one included, in id order. */
  systems: SystemEntry[];
  /**
   * Evidence files that exist but could not be parsed (relative to the system folder): the pages
   * show what was readable, so whoever renders them must say what was left out.
   */
  unreadable: Array<{ path: string; problem: string }>;
  /**
   * What `validate` finds wrong beyond unreadable files (a mean that is not its trials', a record of
   * another library): the pages say so, since their figures may not be what was measured.
   */
  validation: string[];
  /** The pull-request check calibrated on this system (calibration.json), when it was. */
  calibration?: Calibration;
  /** The nights before this evidence and the trends through them, when a history was given (report --history). */
  trends?: TrendModel;
  /** With a history given: why there are no trends (the current folder cannot be their last night). */
  trendsProblem?: string;
}
