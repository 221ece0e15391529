import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CANDIDATE_ID } from '../config/schemas.js';
import { runProcess } from '../sandbox/run.js';

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

export interface Touched {
  /** Candidate ids to measure again (and to drop from the head's copy of the baseline). */
  candidates: string[];
  /** Changed files of the campaign that belong to no candidate folder: they touch every candidate. */
  shared: string[];
}

/** Candidate folders (holding candidate.yml) directly under `prefix` at `commit`. */
async function candidateFolders(repo: string, commit: string, prefix: string): Promise<string[]> {
  const r = await git(repo, ['ls-tree', '-r', '--name-only', commit, '--', prefix || '.']);
  if (!r.ok) throw new Error(`git ls-tree ${commit} -- ${prefix || '.'} failed: ${r.err.split('\n')[0]}`);
  return r.out
    .split('\n')
    .map((p) => (prefix ? p.slice(prefix.length + 1) : p).split('/'))
    .filter((parts) => parts.length === 2 && parts[1] === 'candidate.yml' && CANDIDATE_ID.test(parts[0]!))
    .map((parts) => parts[0]!);
}

/**
 * What the pull request changes in the campaign (base...head, merge-base semantics). A candidate
 * folder is one with a candidate.yml on either side, so a deleted candidate is touched too. Any
 * other changed file (ngcc-perf.yml, the catalogs, shared sources such as `common/`) can change
 * every candidate's build or numbers, so then every candidate of either side is touched. `ignore`
 * lists repository paths that are output, not input (the evidence and pages folders, .github/),
 * which a campaign at the repository root would otherwise count as shared.
 */
export async function touchedCandidates(
  repo: string,
  campaignDir: string,
  baseSha: string,
  headSha: string,
  ignore: string[] = [],
): Promise<Touched> {
  const prefix = relative(repo, campaignDir);
  const r = await git(repo, ['diff', '--name-only', '--no-renames', `${baseSha}...${headSha}`, '--', prefix || '.']);
  if (!r.ok)
    throw new Error(`git diff ${baseSha}...${headSha} failed: ${r.err.split('\n')[0]} (is the checkout deep enough? use fetch-depth: 0)`);
  const folders = new Set([...(await candidateFolders(repo, baseSha, prefix)), ...(await candidateFolders(repo, headSha, prefix))]);
  const skip = ignore.filter(Boolean).map((p) => `${p.replace(/\/+$/, '')}/`);
  const changed = r.out.split('\n').filter((p) => p && !skip.some((s) => p.startsWith(s)));
  const ids = new Set<string>();
  const shared: string[] = [];
  for (const path of changed) {
    const parts = (prefix ? path.slice(prefix.length + 1) : path).split('/');
    if (parts.length > 1 && folders.has(parts[0]!)) ids.add(parts[0]!);
    else shared.push(path);
  }
  return { candidates: [...(shared.length > 0 ? folders : ids)].sort(), shared };
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
  const log = await git(repo, ['log', '--format=%H', `-n${count}`, ref, '--', path]);
  if (!log.ok) return [];
  const commits = log.out.split('\n').filter(Boolean);
  const dirs: string[] = [];
  for (const [i, commit] of commits.entries()) {
    const dir = join(into, `h${i}`);
    if (await extractAt(repo, commit, path, dir)) dirs.push(dir);
  }
  return dirs;
}
