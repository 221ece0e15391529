import * as cache from '@actions/cache';
import * as core from '@actions/core';
import type { BuildCache } from '../compile/compile.js';
import { errorMessage } from '../errors.js';

/**
 * Build folders in the GitHub Actions cache. The cache is an optimisation: when the service is
 * absent (self-hosted without it, local runs) or fails, builds happen as if it were empty.
 */
export function actionsBuildCache(): BuildCache | undefined {
  if (!cache.isFeatureAvailable()) return undefined;
  return {
    async restore(dir, key) {
      try {
        return (await cache.restoreCache([dir], key)) !== undefined;
      } catch (e) {
        core.warning(`build cache restore failed (${key}): ${errorMessage(e)}; building instead`);
        return false;
      }
    },
    async save(dir, key) {
      try {
        await cache.saveCache([dir], key);
      } catch (e) {
        core.info(`build cache save skipped (${key}): ${errorMessage(e)}`);
      }
    },
  };
}
