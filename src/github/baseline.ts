import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Baseline } from '../compare/compareReport.js';
import type { BuildJson } from '../evidence/fileTypes.js';
import { evidencePaths, INSTANCE_DIRS, parseInstanceKey } from '../evidence/layout.js';
import { readJson, writeJsonAtomic } from '../util/fsx.js';
import { extractAt, lastChangeOf } from './gitTree.js';
import type { UnseenTruth } from '../kat/unseen.js';

export interface BaselineSearch {
  baseSha: string;
  baseRef: string;
  publishBranch: string;
  /** `<data-dir>/<system>` relative to the repository. */
  evidencePath: string;
  /** Receives the evidence as `<into>/<evidencePath>`. */
  into: string;
}

/**
 * The base commit's own evidence when it has some; else the newest on the data branch, because
 * the nightly workflow publishes there and the base branch then holds none. Undefined when
 * neither has evidence for the system: the caller must say that nothing was compared.
 */
export async function findBaseline(repo: string, s: BaselineSearch): Promise<Baseline | undefined> {
  if (await extractAt(repo, s.baseSha, s.evidencePath, s.into)) return { source: 'base commit', ref: s.baseRef, sha: s.baseSha };
  const sha = await lastChangeOf(repo, `origin/${s.publishBranch}`, s.evidencePath);
  if (sha && (await extractAt(repo, sha, s.evidencePath, s.into))) return { source: 'data branch', ref: s.publishBranch, sha };
  return undefined;
}

/** 'base commit main@1a2b3c4', 'data branch ngcc-perf-data@1a2b3c4'. */
export const baselineName = (b: Baseline): string => `${b.source} ${b.ref}@${b.sha.slice(0, 7)}`;

/**
 * The head's evidence before measuring: the baseline without anything of `candidates`. Their
 * old numbers would otherwise survive a build that now fails, or an instance the pull request
 * renamed or deleted, and compare as unchanged against themselves.
 */
export function headFromBaseline(baseSystemDir: string, headSystemDir: string, candidates: readonly string[]): void {
  mkdirSync(headSystemDir, { recursive: true });
  if (existsSync(baseSystemDir)) cpSync(baseSystemDir, headSystemDir, { recursive: true });
  for (const id of candidates) for (const kind of INSTANCE_DIRS) rmSync(join(headSystemDir, kind, id), { recursive: true, force: true });
  const buildPath = evidencePaths(headSystemDir).build;
  if (!existsSync(buildPath)) return;
  const build = readJson<BuildJson>(buildPath);
  const gone = new Set(candidates);
  const kept = Object.entries(build.instances ?? {}).filter(([key, e]) => !gone.has(e.candidate ?? parseInstanceKey(key).candidate));
  writeJsonAtomic(buildPath, { ...build, instances: Object.fromEntries(kept) });
}

/**
 * The base evidence a paired run compares with: the timing records the run measured on the base
 * side (alongside head's) replace the baseline's records of the same operations. Returns how many.
 */
export function overlayPairedRecords(pairedSystemDir: string, baseSystemDir: string): number {
  const from = evidencePaths(pairedSystemDir).recordsDir;
  if (!existsSync(from)) return 0;
  const files = readdirSync(from, { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && f.name.endsWith('.json'));
  cpSync(from, evidencePaths(baseSystemDir).recordsDir, { recursive: true, force: true });
  return files.length;
}

/**
 * The answers to the secret unseen seed that the data branch's newest evidence keeps, by instance key
 * (campaign/unseen.ts holds each changed library to them); undefined when the branch holds no evidence
 * for the system (not fetched, or a first night).
 */
export async function publishedUnseenTruth(
  repo: string,
  publishBranch: string,
  evidencePath: string,
  into: string,
): Promise<UnseenTruth | undefined> {
  const sha = await lastChangeOf(repo, `origin/${publishBranch}`, evidencePath);
  if (!sha || !(await extractAt(repo, sha, join(evidencePath, 'build.json'), into))) return undefined;
  const build = readJson<BuildJson>(join(into, evidencePath, 'build.json'));
  const truth: UnseenTruth = {};
  for (const [key, e] of Object.entries(build.instances ?? {}))
    if (e.unseen) truth[key] = { unseen: e.unseen, ...(e.held_to ? { held_to: e.held_to } : {}) };
  return truth;
}
