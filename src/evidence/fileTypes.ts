import type { DeclaredSecurity } from '../config/schemas.js';
import type { HeldTo, UnseenRecord } from '../kat/unseen.js';
import type { Forgery, KatStatus } from '../kat/status.js';
import type { RepeatAudit } from '../measure/repeatAudit.js';
import type { ReplayResult } from '../measure/replay.js';
import type { Trial } from '../measure/stats.js';

/** One build.json entry (ngcc-harness field names, plus ours). */
export interface BuildEntry {
  candidate: string;
  label: string;
  instance: string | null;
  variant: string;
  flags: 'guide' | 'harness-default';
  kat: KatStatus;
  kat_detail?: string;
  /** Set by the measure step when a replay disagreed with a trial: the instance is FORGED (kat/status.ts). */
  forged?: Forgery;
  guide_result?: string;
  /**
   * Why the guide build is not the one measured, when it fell back: the guide build's first error
   * line, or `KAT <status>: <detail>` of its KAT. The run's line, the pages and the comment say it.
   */
  guide_error?: string;
  /** After a KAT-triggered fallback: the guide build that failed, so a re-run can tell it is unchanged. */
  guide_library_sha256?: string;
  library?: string;
  library_sha256?: string;
  elf_load_bytes?: number;
  elf_sections?: { text: number; data: number; bss: number };
  kat_log?: string;
  kat_log_sha256?: string;
  kat_file?: string;
  kat_manifest_sha256?: string;
  /**
   * The latest day a kat.sha256 line of the instance says it was recorded from this harness's own
   * output (`kat-manifest`), not from submitted vectors: the pages say so.
   */
  kat_recorded?: string;
  /** The harness version whose KAT driver gave `kat`: a newer driver judges the library again. */
  kat_harness_version?: string;
  build_flags?: string;
  build_key?: string;
  build_error?: string;
  api?: string;
  type?: string;
  /** What candidate.yml claims for the instance, as of the last run (kept entries are brought up to date). */
  security?: DeclaredSecurity;
  sizes?: Record<string, number>;
  /** The fewest generator draws a KAT call of keygen, enc or sign made (kat/runKat.ts): what a timed call must reach. */
  kat_draws?: Record<string, number>;
  /** The longest a KAT call of each operation took, in seconds (kat/runKat.ts): what the timeouts follow (measure/cost.ts). */
  call_seconds?: Record<string, number>;
  /** The answer to the secret unseen seed that later libraries of this instance are held to (campaign/unseen.ts). */
  unseen?: UnseenRecord;
  /** What this library's outputs were held to beyond its own run of the published KAT (campaign/unseen.ts). */
  held_to?: HeldTo;
  /** Type hash: the KAT_Loop iterations when a kat.sha256 `:N` cut them below the generator's 10^6. */
  kat_loop_iterations?: number;
  /**
   * Seconds each step of the run took for this instance, the last time it did its work (a step that
   * kept its evidence leaves its figure): what the next run's plan and ETA start from.
   */
  step_seconds?: Record<string, number>;
}

export interface BuildJson {
  instances: Record<string, BuildEntry>;
}

/** A timing record; only the fields this tool reads are typed, the rest pass through. */
export interface TimingRecord {
  schema: number;
  status: string;
  candidate: string;
  label: string;
  operation: string;
  kat?: string;
  /** The failure of a trial whose replay gave other outputs (measure/replay.ts). */
  forged?: string;
  library_sha256?: string;
  kat_log_sha256?: string;
  trials: Trial[];
  measurements?: number;
  mean_seconds?: number;
  median_trial_seconds?: number;
  min_trial_seconds?: number;
  max_trial_seconds?: number;
  mean_cycles?: number;
  median_trial_cycles?: number;
  operations_per_second?: number;
  guide_100_measurements_met?: boolean;
  per_call_cycles?: { q1: number; median: number; q3: number } | null;
  /** The trials made again from their seed after the operation (measure/replay.ts). */
  replays?: ReplayResult[];
  /** verify: the repeated-input audit (measure/repeatAudit.ts). */
  repeat_audit?: RepeatAudit;
  /** Trials per round when a pull request's extra paired rounds were appended (evidence/record.ts appendTrials). */
  trial_rounds?: number[];
  [key: string]: unknown;
}

/** The profile phase's files (defined beside the code that writes them). */
export type { HashProfile, MemoryRecord } from '../profile/profileRecords.js';
