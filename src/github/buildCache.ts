import * as cache from '@actions/cache';
import * as core from '@actions/core';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { BuildCache } from '../compile/compile.js';
import { errorMessage } from '../errors.js';

/**
 * Where a build folder passes through on its way to and from the cache, relative to the workspace.
 * @actions/cache hashes the path strings it is given into the entry's `version` and stores the
 * files relative to the workspace: the build folders themselves live under temporary folders (a
 * pull request's head evidence) whose names change with every run, so their paths could never
 * match. This one is the same on every run and every runner.
 */
const CACHE_STAGING = '.ngcc-perf-build-cache';

export interface BuildCacheOptions {
  /** The workspace (GITHUB_WORKSPACE): @actions/cache archives and extracts relative to it. */
  workspace: string;
  /** The working directory @actions/cache resolves the path against (the runner starts actions in the workspace). */
  cwd?: string;
}

/** The path string handed to @actions/cache: it alone decides the entry's `version`. */
function cachePath(o: BuildCacheOptions): string {
  return relative(o.cwd ?? process.cwd(), join(resolve(o.workspace), CACHE_STAGING)) || '.';
}

/**
 * Build folders in the GitHub Actions cache. The cache is an optimisation: when the service is
 * absent (self-hosted without it, local runs) or fails, builds happen as if it were empty.
 */
export function actionsBuildCache(o: BuildCacheOptions): BuildCache | undefined {
  if (!cache.isFeatureAvailable()) return undefined;
  const staging = join(resolve(o.workspace), CACHE_STAGING);
  const path = cachePath(o);
  const clear = () => rmSync(staging, { recursive: true, force: true });
  // One staging folder for every entry (its path is the entry's version): the pool's workers build
  // side by side, so their restores and saves take turns, or one would archive another's files.
  let last: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const mine = last.then(work, work);
    last = mine.catch(() => undefined);
    return mine;
  };
  return {
    restore: (dir, key) => inTurn(() => restoreOne(dir, key)),
    save: (dir, key) => inTurn(() => saveOne(dir, key)),
  };

  async function restoreOne(dir: string, key: string): Promise<boolean> {
    clear();
    try {
      if ((await cache.restoreCache([path], key)) === undefined || !existsSync(staging)) return false;
      mkdirSync(dir, { recursive: true });
      cpSync(staging, dir, { recursive: true });
      return true;
    } catch (e) {
      core.warning(`build cache restore failed (${key}): ${errorMessage(e)}; building instead`);
      return false;
    } finally {
      clear();
    }
  }

  async function saveOne(dir: string, key: string): Promise<void> {
    clear();
    try {
      cpSync(dir, staging, { recursive: true });
      await cache.saveCache([path], key);
    } catch (e) {
      core.info(`build cache save skipped (${key}): ${errorMessage(e)}`);
    } finally {
      clear();
    }
  }
}
