import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { actionsBuildCache } from '../src/github/buildCache.js';
import { type FakeCache, startFakeCache } from './helpers/fakeCache.js';
import { tempDir } from './helpers/tmp.js';

// The build cache of the action (src/github/buildCache.ts) against a real HTTP server on loopback
// that speaks the cache service's protocol (test/helpers/fakeCache.ts), as the pool's workers use it:
// several builds saved and restored at once.

describe('the build cache', () => {
  let cache: FakeCache;
  const workspace = tempDir();
  const startCwd = process.cwd();
  beforeAll(async () => {
    // The runner starts an action in its workspace: @actions/cache takes paths below it only.
    process.chdir(workspace);
    cache = await startFakeCache();
    vi.stubEnv('ACTIONS_CACHE_URL', cache.url);
    vi.stubEnv('ACTIONS_RUNTIME_TOKEN', cache.token);
    vi.stubEnv('GITHUB_WORKSPACE', workspace);
    // Where @actions/cache keeps its archives (without it, a folder under /home).
    vi.stubEnv('RUNNER_TEMP', tempDir());
  });
  afterAll(async () => {
    process.chdir(startCwd);
    vi.unstubAllEnvs();
    await cache.stop();
  });

  it('keeps builds saved and restored side by side apart: each key gets its own files back', async () => {
    const store = actionsBuildCache({ workspace })!;
    expect(store).toBeDefined();
    const keys = ['ngcc-perf-build-a', 'ngcc-perf-build-b', 'ngcc-perf-build-c', 'ngcc-perf-build-d'];
    const built = keys.map((key) => {
      const dir = join(tempDir(), 'guide');
      mkdirSync(dir, { recursive: true });
      // Sizes apart, so that archiving takes different times and the saves would overlap.
      writeFileSync(join(dir, 'lib.so'), `${key}\n`.repeat(1000 * (keys.indexOf(key) + 1)));
      return { key, dir };
    });
    await Promise.all(built.map((b) => store.save(b.dir, b.key)));
    expect(cache.entries.map((e) => e.key).sort()).toEqual(keys);
    const back = keys.map((key) => ({ key, dir: join(tempDir(), 'restored') }));
    expect(await Promise.all(back.map((b) => store.restore(b.dir, b.key)))).toEqual([true, true, true, true]);
    for (const b of back) {
      const text = readFileSync(join(b.dir, 'lib.so'), 'utf8');
      expect(new Set(text.trim().split('\n')), b.key).toEqual(new Set([b.key]));
    }
  });
});
