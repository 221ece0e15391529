import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, isInputError } from '../errors.js';
import { readJson } from '../util/fsx.js';
import type { z } from 'zod';
import { evidencePaths } from './layout.js';
import { buildShape, objectShape, profileShape, recordShape, shapeProblem } from './shapes.js';
import type { BuildJson, HashProfile, MemoryRecord, TimingRecord } from './fileTypes.js';

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

/**
 * A file's content when it has the shape its readers rely on, or undefined with the reason in
 * `unreadable`: one broken file must not hide the rest.
 */
function parseJson<T>(path: string, shape: z.ZodType, unreadable: Dataset['unreadable']): T | undefined {
  let value: unknown;
  try {
    value = readJson<unknown>(path);
  } catch (e) {
    if (!isInputError(e)) throw e;
    unreadable.push({ path, problem: e.problem });
    return undefined;
  }
  const problem = shapeProblem(shape, value);
  if (problem === undefined) return value as T;
  unreadable.push({ path, problem: `not evidence of this kind: ${problem}` });
  return undefined;
}

function jsonFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Every readable file of one folder of the layout, with its path. */
function readAll<T>(dir: string, shape: z.ZodType, unreadable: Dataset['unreadable']): Array<{ path: string; value: T }> {
  return jsonFilesUnder(dir).flatMap((path) => {
    const value = parseJson<T>(path, shape, unreadable);
    return value === undefined ? [] : [{ path, value }];
  });
}

/** A build.json read alone (a run's start, kat-manifest): one of the wrong shape is an input error naming the field. */
export function readBuildJson(path: string, shown = path): BuildJson {
  const value = readJson<unknown>(path, shown);
  const problem = shapeProblem(buildShape, value);
  if (problem !== undefined) throw new InputError(shown, '', `not evidence of this kind: ${problem}`);
  return value as BuildJson;
}

export function loadDataset(systemDir: string): Dataset {
  const unreadable: Dataset['unreadable'] = [];
  const paths = evidencePaths(systemDir);
  const campaign = existsSync(paths.campaign) ? parseJson<Record<string, unknown>>(paths.campaign, objectShape, unreadable) : undefined;
  const build = (existsSync(paths.build) ? parseJson<BuildJson>(paths.build, buildShape, unreadable) : undefined) ?? { instances: {} };
  const records = readAll<TimingRecord>(paths.recordsDir, recordShape, unreadable).map(({ path, value }) => ({ path, record: value }));
  const profiles = readAll<HashProfile>(paths.profileDir, profileShape, unreadable).map(({ path, value }) => ({ path, profile: value }));
  const memory = readAll<MemoryRecord>(paths.memoryDir, profileShape, unreadable).map(({ path, value }) => ({ path, memory: value }));
  // Survey files are read by the report alone, but a corrupt one is as much a broken dataset.
  readAll(paths.surveyDir, objectShape, unreadable);
  return { systemDir, campaign, build, records, profiles, memory, unreadable };
}
