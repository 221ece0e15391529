import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from '../sandbox/runProcess.js';

const GIT_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };

async function git(repo: string, args: string[]): Promise<{ ok: boolean; out: string; err: string }> {
  const r = await runProcess(['git', '-c', 'safe.directory=*', ...args], {
    cwd: repo,
    timeoutMs: 300_000,
    env: GIT_ENV,
    maxOutputBytes: 64 << 20,
  });
  return { ok: r.exitCode === 0, out: r.stdout, err: r.stderr };
}

/**
 * Files under `prefix` that differ between the merge base of base and head, and head (what the
 * pull request changes there, as `git diff base...head` shows it), relative to the repository.
 */
export async function changedFiles(repo: string, baseSha: string, headSha: string, prefix: string): Promise<string[]> {
  const r = await git(repo, ['diff', '--name-only', '--no-renames', `${baseSha}...${headSha}`, '--', prefix || '.']);
  if (!r.ok)
    throw new Error(`git diff ${baseSha}...${headSha} failed: ${r.err.split('\n')[0]} (is the checkout deep enough? use fetch-depth: 0)`);
  return r.out.split('\n').filter(Boolean);
}

/** The commit that last changed `path` on `ref`, or undefined when `ref` or the path is absent. */
export async function lastChangeOf(repo: string, ref: string, path: string): Promise<string | undefined> {
  const r = await git(repo, ['log', '-1', '--format=%H', ref, '--', path]);
  return r.ok && r.out.trim() ? r.out.trim() : undefined;
}

/**
 * Extracts `path` as it is at `commit` into `into` (the evidence on the pull request's base).
 * Returns false when the path does not exist at that commit.
 */
export async function extractAt(repo: string, commit: string, path: string, into: string): Promise<boolean> {
  mkdirSync(into, { recursive: true });
  const tar = join(into, '.extract.tar');
  const r = await git(repo, ['archive', '--format=tar', '-o', tar, commit, '--', path]);
  if (!r.ok) {
    rmSync(tar, { force: true });
    if (/did not match any files|pathspec/.test(r.err)) return false;
    throw new Error(`git archive ${commit} -- ${path} failed: ${r.err.split('\n')[0]}`);
  }
  const x = await runProcess(['tar', '-xf', tar, '-C', into], { timeoutMs: 300_000 });
  rmSync(tar, { force: true });
  if (x.exitCode !== 0) throw new Error(`unpacking the base evidence failed: ${x.stderr.split('\n')[0]}`);
  return existsSync(join(into, path));
}

/**
 * The last `count` versions of `path` on `ref` (newest first), each extracted into its own folder
 * under `into`: the nightly history of a system's evidence on the data branch.
 */
export async function historyOf(repo: string, ref: string, path: string, count: number, into: string): Promise<string[]> {
  return (await historyVersions(repo, ref, path, count, into)).map((v) => v.root);
}

/**
 * The same versions with their commits, newest first: `root` holds the extracted tree (`path`
 * under it), `dir` the version of `path` itself.
 */
export async function historyVersions(
  repo: string,
  ref: string,
  path: string,
  count: number,
  into: string,
): Promise<Array<{ commit: string; root: string; dir: string }>> {
  const log = await git(repo, ['log', '--format=%H', `-n${count}`, ref, '--', path]);
  if (!log.ok) return [];
  const commits = log.out.split('\n').filter(Boolean);
  const versions: Array<{ commit: string; root: string; dir: string }> = [];
  for (const [i, commit] of commits.entries()) {
    const root = join(into, `h${i}`);
    if (await extractAt(repo, commit, path, root)) versions.push({ commit, root, dir: join(root, path) });
  }
  return versions;
}

/** The commit the checkout's HEAD names, or undefined. */
export async function headCommit(repo: string): Promise<string | undefined> {
  const r = await git(repo, ['rev-parse', 'HEAD']);
  return r.ok && r.out.trim() ? r.out.trim() : undefined;
}

/** The commit where head branched off base (what `base...head` diffs against), or base itself when git cannot tell. */
export async function mergeBase(repo: string, baseSha: string, headSha: string): Promise<string> {
  const r = await git(repo, ['merge-base', baseSha, headSha]);
  return r.ok && r.out.trim() ? r.out.trim() : baseSha;
}

/**
 * A checkout of `commit` in its own folder (a detached git worktree, so that the campaign's
 * repository is found above it as in the real checkout), with a way to remove it; or why it
 * could not be made.
 */
export async function checkoutAt(
  repo: string,
  commit: string,
  into: string,
): Promise<{ dir: string; remove(): Promise<void> } | { error: string }> {
  const r = await git(repo, ['worktree', 'add', '--detach', '--force', into, commit]);
  if (!r.ok) return { error: `git worktree add ${commit.slice(0, 7)} failed: ${r.err.split('\n')[0]}` };
  return {
    dir: into,
    async remove() {
      await git(repo, ['worktree', 'remove', '--force', into]);
      rmSync(into, { recursive: true, force: true });
      await git(repo, ['worktree', 'prune']);
    },
  };
}
