import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildJson, HashProfile, MemoryRecord, TimingRecord } from './types.js';

/** Everything under DATA_DIR/<system>/, ours or the ngcc-harness's (schema 2). */
export interface Dataset {
  systemDir: string;
  campaign?: Record<string, unknown>;
  build: BuildJson;
  records: Array<{ path: string; record: TimingRecord }>;
  profiles: Array<{ path: string; profile: HashProfile }>;
  memory: Array<{ path: string; memory: MemoryRecord }>;
  /** Files that exist but could not be parsed, with the reason. */
  unreadable: Array<{ path: string; problem: string }>;
}

function parseJson<T>(path: string, unreadable: Dataset['unreadable']): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (e) {
    unreadable.push({ path, problem: e instanceof SyntaxError ? `invalid JSON: ${e.message}` : 'cannot read' });
    return undefined;
  }
}

function jsonFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

export function loadDataset(systemDir: string): Dataset {
  const unreadable: Dataset['unreadable'] = [];
  const campaignPath = join(systemDir, 'campaign.json');
  const buildPath = join(systemDir, 'build.json');
  const campaign = existsSync(campaignPath) ? parseJson<Record<string, unknown>>(campaignPath, unreadable) : undefined;
  const build = (existsSync(buildPath) ? parseJson<BuildJson>(buildPath, unreadable) : undefined) ?? { instances: {} };
  const records = jsonFilesUnder(join(systemDir, 'records'))
    .map((path) => ({ path, record: parseJson<TimingRecord>(path, unreadable) }))
    .filter((r): r is { path: string; record: TimingRecord } => r.record !== undefined);
  const profiles = jsonFilesUnder(join(systemDir, 'profile'))
    .map((path) => ({ path, profile: parseJson<HashProfile>(path, unreadable) }))
    .filter((p): p is { path: string; profile: HashProfile } => p.profile !== undefined);
  const memory = jsonFilesUnder(join(systemDir, 'memory'))
    .map((path) => ({ path, memory: parseJson<MemoryRecord>(path, unreadable) }))
    .filter((m): m is { path: string; memory: MemoryRecord } => m.memory !== undefined);
  // Survey files are read by the report alone, but a corrupt one is as much a broken dataset.
  for (const path of jsonFilesUnder(join(systemDir, 'survey'))) parseJson(path, unreadable);
  return { systemDir, campaign, build, records, profiles, memory, unreadable };
}
