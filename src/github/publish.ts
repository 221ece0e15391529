import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { makeScratch, removeScratch } from '../util/scratch.js';
import { dirname, join, posix } from 'node:path';
import { runProcess, type RunResult } from '../sandbox/runProcess.js';
import { filesUnder, writeJsonAtomic } from '../util/fsx.js';
import { BUILD_FILE, CAMPAIGN_FILE, instanceOfPath } from '../evidence/layout.js';
import { mergeCampaignJson, mergeInstances } from '../evidence/merge.js';

export interface PublishOptions {
  /** A git work tree (the checkout the action runs in, or a clone). */
  repoDir: string;
  /** E.g. 'origin'. */
  remote: string;
  /** E.g. 'ngcc-perf-data'. */
  branch: string;
  /** Files to publish: source path on disk -> destination path inside the repository (relative). */
  files: Array<{ from: string; to: string }>;
  /**
   * Destination folders this publisher owns: files under them that are not in `files` are deleted
   * (so a re-run replaces stale pages). Shards pass disjoint folders/files. An evidence folder (one
   * whose build.json is published) is owned per instance: only stale files of the instances in the
   * published build.json are deleted, and the branch's build.json entries of other instances are
   * kept (evidence of a shard that failed tonight stays) — unless `prune` is set.
   */
  owns?: string[];
  /** Own evidence folders whole: delete every instance the published build.json lacks. */
  prune?: boolean;
  /**
   * The instances ("id/label") the campaign still has. Branch evidence of any other instance — a
   * withdrawn candidate, a renamed instance — is deleted with its build.json entry; evidence of a
   * campaign instance that this publish lacks (its shard failed) is kept.
   */
  campaignInstances?: ReadonlySet<string>;
  /**
   * Merge each published campaign.json with the branch's copy as `ngcc-perf merge` does (the
   * earliest start, the latest end, every host check): a shard carries only its own run's span.
   */
  mergeCampaign?: boolean;
  /**
   * Files rendered from the branch as it is once this publish's files are in (e.g. the index of
   * every system on the data branch), rendered again on each attempt. `render` gets the work tree.
   */
  derived?: Array<{ to: string; render: (worktree: string) => string }>;
  message: string;
  author: { name: string; email: string };
  /** Default 8. */
  maxAttempts?: number;
  /** Sent only as an http.extraheader to the commands that talk to the remote; never written to any config, never in argv. */
  token?: string;
}

export interface PublishResult {
  commit: string | null;
  attempts: number;
  changed: boolean;
}

const TIMEOUT_MS = 300_000;
/** Hooks and signing are the user's business, not ours: a publish commit must not run or need them. */
const BASE_ARGS = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false', '--literal-pathspecs'];

interface Ctx {
  opts: PublishOptions;
  worktree: string;
  pathspecFile: string;
  env: Record<string, string>;
  /** env plus the auth header, for ls-remote/fetch/push only. */
  remoteEnv: Record<string, string>;
  secrets: string[];
}

export async function publish(opts: PublishOptions): Promise<PublishResult> {
  const destinations = [...opts.files.map((f) => f.to), ...(opts.derived ?? []).map((d) => d.to)].map(safeRelative);
  const owns = (opts.owns ?? []).map(safeRelative);
  const tmp = makeScratch('publish');
  try {
    const ctx = await context(opts, tmp);
    const root = await emptyRoot(ctx);
    await git(ctx, opts.repoDir, ['worktree', 'add', '--detach', ctx.worktree, root], 'worktree add');
    try {
      return await publishFromWorktree(ctx, root, destinations, owns);
    } finally {
      await runGit(ctx, opts.repoDir, ['worktree', 'remove', '--force', ctx.worktree]);
      rmSync(ctx.worktree, { recursive: true, force: true });
      await runGit(ctx, opts.repoDir, ['worktree', 'prune']);
    }
  } finally {
    removeScratch(tmp);
  }
}

/** Commit on the remote head, push; when another publisher got there first, rebase onto theirs and go again. */
async function publishFromWorktree(ctx: Ctx, root: string, destinations: string[], owns: string[]): Promise<PublishResult> {
  const maxAttempts = ctx.opts.maxAttempts ?? 8;
  const unchanged = (attempts: number): PublishResult => ({ commit: null, attempts, changed: false });
  let base = (await fetchRemoteHead(ctx)) ?? root;
  await git(ctx, ctx.worktree, ['reset', '-q', '--hard', base], 'reset');
  if (!(await applyAndCommit(ctx, destinations, owns))) return unchanged(1);
  for (let attempt = 1; ; attempt++) {
    if (await push(ctx)) return { commit: await head(ctx), attempts: attempt, changed: true };
    if (attempt >= maxAttempts)
      throw new Error(`publish: push to ${ctx.opts.remote}/${ctx.opts.branch} still rejected after ${attempt} attempts`);
    await sleep(50 + Math.random() * 150 * attempt);
    const fresh = (await fetchRemoteHead(ctx)) ?? root;
    // What is merged with or rendered from the branch must be redone on the new head, not replayed.
    const fromBranch = ctx.opts.mergeCampaign || (ctx.opts.derived ?? []).length > 0;
    const rebased = !fromBranch && (await rebase(ctx, fresh, base));
    base = fresh;
    if (!rebased) {
      await git(ctx, ctx.worktree, ['reset', '-q', '--hard', fresh], 'reset');
      if (!(await applyAndCommit(ctx, destinations, owns))) return unchanged(attempt + 1);
    } else if ((await head(ctx)) === fresh) {
      // The rebase dropped our commit: the remote already holds exactly this content.
      return unchanged(attempt + 1);
    }
  }
}

async function context(opts: PublishOptions, tmp: string): Promise<Ctx> {
  const env = {
    GIT_AUTHOR_NAME: opts.author.name,
    GIT_AUTHOR_EMAIL: opts.author.email,
    GIT_COMMITTER_NAME: opts.author.name,
    GIT_COMMITTER_EMAIL: opts.author.email,
    GIT_TERMINAL_PROMPT: '0',
    // Parsed output (push --porcelain reasons) must not be translated.
    LC_ALL: 'C',
  };
  const ctx: Ctx = { opts, worktree: join(tmp, 'tree'), pathspecFile: join(tmp, 'pathspecs'), env, remoteEnv: env, secrets: [] };
  if (opts.token) {
    const basic = Buffer.from(`x-access-token:${opts.token}`).toString('base64');
    const url = await git(ctx, opts.repoDir, ['ls-remote', '--get-url', opts.remote], 'ls-remote --get-url');
    ctx.remoteEnv = { ...env, ...authConfig(basic, url) };
    ctx.secrets = [opts.token, basic];
  }
  return ctx;
}

/**
 * Config through GIT_CONFIG_* rather than `-c`: argv is world-readable in /proc, the environment is
 * not. Each key is first emptied, which drops any header a checkout persisted (GitHub rejects two
 * Authorization headers); the URL-scoped key matters because actions/checkout stores its header
 * under `http.https://github.com/`, and a URL-scoped key outranks the plain one.
 */
function authConfig(basic: string, url: string): Record<string, string> {
  const keys = ['http.extraheader'];
  if (/^https?:\/\//.test(url)) keys.push(`http.${new URL(url).origin}/.extraheader`);
  const pairs = keys.flatMap((key) => [
    [key, ''],
    [key, `AUTHORIZATION: basic ${basic}`],
  ]);
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key!;
    env[`GIT_CONFIG_VALUE_${i}`] = value!;
  });
  return env;
}

/** A parentless commit of the empty tree: the base when the remote has no such branch yet. */
async function emptyRoot(ctx: Ctx): Promise<string> {
  const tree = await git(ctx, ctx.opts.repoDir, ['hash-object', '-w', '-t', 'tree', '/dev/null'], 'hash-object');
  return git(ctx, ctx.opts.repoDir, ['commit-tree', tree, '-m', `ngcc-perf: start ${ctx.opts.branch}`], 'commit-tree');
}

/** The remote branch's head, fetched into this worktree's own FETCH_HEAD; null if the branch does not exist. */
async function fetchRemoteHead(ctx: Ctx): Promise<string | null> {
  const ref = `refs/heads/${ctx.opts.branch}`;
  const listed = await runGit(ctx, ctx.worktree, ['ls-remote', '--exit-code', ctx.opts.remote, ref], ctx.remoteEnv);
  if (listed.exitCode === 2) return null;
  check(ctx, listed, 'ls-remote');
  // --refmap= keeps the user's remote-tracking refs untouched (and free of lock races between publishers).
  await git(ctx, ctx.worktree, ['fetch', '-q', '--no-tags', '--refmap=', ctx.opts.remote, ref], 'fetch', ctx.remoteEnv);
  return git(ctx, ctx.worktree, ['rev-parse', 'FETCH_HEAD'], 'rev-parse FETCH_HEAD');
}

/** Copies the files in, prunes the owned folders, stages; false when the tree did not change. */
async function applyAndCommit(ctx: Ctx, destinations: string[], owns: string[]): Promise<boolean> {
  const wanted = new Set(destinations);
  // Only paths git already knows or that will exist may be named, else `git add` fails.
  const pathspecs = [...destinations, ...owns.filter((o) => existsSync(join(ctx.worktree, o)))];
  const evidence = ctx.opts.prune ? [] : evidenceFolders(ctx, destinations);
  const campaigns = ctx.opts.mergeCampaign ? branchCampaigns(ctx, destinations) : [];
  for (const owned of owns)
    for (const rel of filesUnder(ctx.worktree, owned))
      if (!wanted.has(rel) && !keptEvidence(ctx, evidence, rel)) unlinkSync(join(ctx.worktree, rel));
  ctx.opts.files.forEach((f, i) => {
    const target = join(ctx.worktree, destinations[i]!);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(f.from, target);
  });
  for (const e of evidence) {
    const kept = stillInCampaign(ctx, e.branch);
    if (Object.keys(kept).some((key) => !(key in e.incoming.instances)))
      writeJsonAtomic(join(ctx.worktree, e.dir, BUILD_FILE), { ...e.incoming, instances: mergeInstances(kept, e.incoming.instances) });
  }
  for (const c of campaigns) {
    const merged = mergeCampaignJson([c.branch, JSON.parse(readFileSync(join(ctx.worktree, c.to), 'utf8')) as Record<string, unknown>]);
    writeJsonAtomic(join(ctx.worktree, c.to), merged);
  }
  for (const d of ctx.opts.derived ?? []) {
    const target = join(ctx.worktree, safeRelative(d.to));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, d.render(ctx.worktree));
  }
  if (pathspecs.length === 0) return false;
  writeFileSync(ctx.pathspecFile, pathspecs.join('\0'));
  await git(ctx, ctx.worktree, ['add', '-A', `--pathspec-from-file=${ctx.pathspecFile}`, '--pathspec-file-nul'], 'add');
  const diff = await runGit(ctx, ctx.worktree, ['diff', '--cached', '--quiet']);
  if (diff.exitCode === 0) return false;
  if (diff.exitCode !== 1) check(ctx, diff, 'diff --cached');
  await git(ctx, ctx.worktree, ['commit', '-q', '--no-verify', '-m', ctx.opts.message], 'commit');
  return true;
}

interface EvidenceFolder {
  /** Destination folder, '' for the repository root. */
  dir: string;
  incoming: { instances: Record<string, unknown> };
  /** The branch's build.json instances before this publish. */
  branch: Record<string, unknown>;
}

/** Every published build.json marks an evidence folder: what it brings and what the branch has. */
function evidenceFolders(ctx: Ctx, destinations: string[]): EvidenceFolder[] {
  return destinations.flatMap((to, i) => {
    // Derived files (after the copied ones) are rendered, never evidence.
    if (i >= ctx.opts.files.length || (to !== BUILD_FILE && !to.endsWith(`/${BUILD_FILE}`))) return [];
    const dir = posix.dirname(to) === '.' ? '' : posix.dirname(to);
    const from = ctx.opts.files[i]!.from;
    const incoming = instancesOf(readFileSync(from, 'utf8'));
    // Not an ngcc-perf build.json: a plain file, owned as any other.
    if (!incoming) return [];
    const onBranch = join(ctx.worktree, to);
    // A branch file that is not a build.json holds no instance to keep.
    const branch = existsSync(onBranch) ? (instancesOf(readFileSync(onBranch, 'utf8'))?.instances ?? {}) : {};
    return [{ dir, incoming, branch }];
  });
}

/**
 * The branch's campaign.json beside each published build.json that also brings a campaign.json,
 * read before this publish overwrites it (an unreadable one is replaced, not merged).
 */
function branchCampaigns(ctx: Ctx, destinations: string[]): Array<{ to: string; branch: Record<string, unknown> }> {
  const wanted = new Set(destinations);
  return evidenceFolders(ctx, destinations).flatMap((e) => {
    const to = e.dir === '' ? CAMPAIGN_FILE : `${e.dir}/${CAMPAIGN_FILE}`;
    const onBranch = join(ctx.worktree, to);
    if (!wanted.has(to) || !existsSync(onBranch)) return [];
    try {
      const branch = JSON.parse(readFileSync(onBranch, 'utf8')) as unknown;
      return branch && typeof branch === 'object' && !Array.isArray(branch) ? [{ to, branch: branch as Record<string, unknown> }] : [];
    } catch {
      return [];
    }
  });
}

function instancesOf(text: string): { instances: Record<string, unknown> } | undefined {
  try {
    const json = JSON.parse(text) as { instances?: unknown };
    const ok = json && typeof json === 'object' && json.instances && typeof json.instances === 'object' && !Array.isArray(json.instances);
    return ok ? (json as { instances: Record<string, unknown> }) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A stale file of an evidence folder stays unless it belongs to an instance being published, or to
 * one the campaign no longer has.
 */
function keptEvidence(ctx: Ctx, evidence: EvidenceFolder[], rel: string): boolean {
  const e = evidence.find((x) => x.dir === '' || rel.startsWith(`${x.dir}/`));
  if (!e) return false;
  const key = instanceOfPath(e.dir === '' ? rel : rel.slice(e.dir.length + 1));
  if (key === undefined) return true;
  const current = ctx.opts.campaignInstances;
  return !(key in e.incoming.instances) && (current === undefined || current.has(key));
}

/** The branch's build.json entries without instances the campaign no longer has. */
function stillInCampaign(ctx: Ctx, entries: Record<string, unknown>): Record<string, unknown> {
  const current = ctx.opts.campaignInstances;
  return current === undefined ? entries : Object.fromEntries(Object.entries(entries).filter(([key]) => current.has(key)));
}

/** True when pushed; false when the remote moved under us (worth a fetch, a rebase and another go). */
async function push(ctx: Ctx): Promise<boolean> {
  const r = await runGit(ctx, ctx.worktree, ['push', '--porcelain', ctx.opts.remote, `HEAD:refs/heads/${ctx.opts.branch}`], ctx.remoteEnv);
  if (r.exitCode === 0) return true;
  const rejected = r.stdout.split('\n').filter((l) => l.startsWith('!'));
  // Concurrent pushes lose either client-side (non-fast-forward) or server-side (the ref moved while locked).
  const raced = /non-fast-forward|fetch first|stale info|cannot lock ref|failed to update ref|already exists|incorrect old value/;
  if (rejected.length > 0 && rejected.every((l) => raced.test(l))) return false;
  throw new Error(failure(ctx, 'push', { ...r, stderr: `${rejected.join('\n')}\n${r.stderr}` }));
}

/** Replays our one commit (base..HEAD) onto the fresh head; false when it conflicted (and was aborted). */
async function rebase(ctx: Ctx, onto: string, base: string): Promise<boolean> {
  const r = await runGit(ctx, ctx.worktree, ['rebase', '-q', '--onto', onto, base]);
  if (r.exitCode === 0) return true;
  await runGit(ctx, ctx.worktree, ['rebase', '--abort']);
  return false;
}

const head = (ctx: Ctx) => git(ctx, ctx.worktree, ['rev-parse', 'HEAD'], 'rev-parse HEAD');

function runGit(ctx: Ctx, cwd: string, args: string[], env = ctx.env): Promise<RunResult> {
  return runProcess(['git', ...BASE_ARGS, ...args], { cwd, timeoutMs: TIMEOUT_MS, env });
}

/** Runs git and returns its trimmed stdout, or throws naming the step. */
async function git(ctx: Ctx, cwd: string, args: string[], step: string, env = ctx.env): Promise<string> {
  return check(ctx, await runGit(ctx, cwd, args, env), step).stdout.trim();
}

function check(ctx: Ctx, r: RunResult, step: string): RunResult {
  if (r.exitCode !== 0) throw new Error(failure(ctx, step, r));
  return r;
}

/** The message names the step and git's first lines, never the command line (nor the token). */
function failure(ctx: Ctx, step: string, r: RunResult): string {
  const why = r.timedOut ? `timed out after ${TIMEOUT_MS / 1000} s` : `exit ${r.exitCode ?? r.signal}`;
  const lines = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(0, 6).join('\n');
  const text = `publish: git ${step} failed (${why}) in ${ctx.opts.remote}/${ctx.opts.branch}${lines ? `:\n${lines}` : ''}`;
  return ctx.secrets.reduce((t, s) => t.split(s).join('***'), text);
}

/** A '/'-separated path that stays inside the repository (and out of .git). */
function safeRelative(path: string): string {
  const p = posix.normalize(path.replace(/\\/g, '/')).replace(/\/+$/, '');
  if (p.startsWith('/') || p === '.' || p === '..' || p.startsWith('../') || p.split('/').includes('.git'))
    throw new Error(`publish: destination '${path}' must be a relative path inside the repository`);
  return p;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
