import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from '../../src/sandbox/runProcess.js';

const IDENTITY = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.org',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.org',
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
};

/** Runs git in cwd; returns trimmed stdout, throws with stderr on failure. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await runProcess(['git', ...args], { cwd, timeoutMs: 60_000, env: IDENTITY });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}): exit ${r.exitCode}\n${r.stderr}`);
  return r.stdout.trim();
}

export async function initBare(dir: string): Promise<string> {
  await git(dir, 'init', '-q', '--bare', 'remote.git');
  return join(dir, 'remote.git');
}

export async function clone(url: string, dir: string): Promise<string> {
  await git(dir, 'clone', '-q', url, 'clone');
  return join(dir, 'clone');
}

/** Paths of the files on a branch of a (bare) repository. */
export async function filesOn(repo: string, branch: string): Promise<string[]> {
  const out = await git(repo, 'ls-tree', '-r', '--name-only', branch);
  return out ? out.split('\n') : [];
}

/**
 * A pre-receive hook that holds every push until `count` pushes have arrived, so the first round of
 * publishers all push from the same base and all but one must be rejected. Later pushes pass at once.
 */
export function holdFirstPushes(bare: string, count: number, markerDir: string): void {
  const hook = join(bare, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh
cat >/dev/null
mkdir -p '${markerDir}' && : > '${markerDir}/'$$
i=0
while [ "$(ls '${markerDir}' | wc -l)" -lt ${count} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
exit 0
`,
  );
  chmodSync(hook, 0o755);
}
