import { Octokit, RequestError } from 'octokit';
import { COMMENT_MARKER } from './comment.js';

/** What the GitHub REST API calls of the action need. */
export type GithubClient = Octokit;

/** A GitHub API call that failed, with what was asked, the HTTP status and what to do about it. */
export class GithubApiError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number | undefined,
    detail: string,
  ) {
    super(`GitHub API: ${operation} failed${status !== undefined ? ` (HTTP ${status})` : ''}: ${detail}`);
    this.name = 'GithubApiError';
  }
}

/** No single API call may hang a job: give up after this long. */
const REQUEST_TIMEOUT_MS = 30_000;

const HINTS: Record<number, string> = {
  401: 'the token was refused: it is missing, expired or not a GitHub token (action input `token`)',
  403: 'the token may not do this: the job needs `permissions: pull-requests: write` (a fork pull request only gets a read-only token: post the comment from a workflow_run workflow)',
  404: 'not found, or not visible to this token: check the repository, the pull request number and the token',
  422: 'GitHub rejected the request body (a comment longer than 65,536 characters, for instance)',
};

function describe(operation: string, e: unknown): GithubApiError {
  if (e instanceof GithubApiError) return e;
  if (e instanceof RequestError) {
    const data = e.response?.data as { message?: unknown } | undefined;
    const said = typeof data?.message === 'string' ? data.message : e.message;
    const hint = HINTS[e.status];
    // Octokit reports network failures (refused, reset, timeout) as status 500 without a response.
    if (e.response === undefined) return new GithubApiError(operation, undefined, `no answer from ${e.request.url}: ${e.message}`);
    return new GithubApiError(operation, e.status, hint ? `${said} — ${hint}` : said);
  }
  return new GithubApiError(operation, undefined, e instanceof Error ? e.message : String(e));
}

/**
 * An Octokit for `token` against `baseUrl` (default: GITHUB_API_URL, so GitHub Enterprise works,
 * else https://api.github.com). No throttling queue: the action makes a handful of calls.
 * `retries` (default 3) bounds the retries of 5xx answers and network failures.
 */
export function makeOctokit(token: string, baseUrl?: string, opts: { retries?: number } = {}): GithubClient {
  if (!token) throw new GithubApiError('authentication', undefined, 'no token given (action input `token`, default github.token)');
  const url = (baseUrl ?? process.env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, '');
  const timedFetch: typeof fetch = (input, init) => {
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    return fetch(input, { ...init, signal });
  };
  return new Octokit({
    auth: token,
    baseUrl: url,
    userAgent: 'ngcc-perf',
    throttle: { enabled: false },
    // Server errors and dropped connections are retried (1 s, 4 s, 9 s apart); 4xx never are.
    // Creating a comment opts out per request (upsertStickyComment): a POST answered 5xx may
    // have been applied, and retrying it would post a second comment.
    retry: { enabled: (opts.retries ?? 3) > 0, retries: opts.retries ?? 3 },
    request: { fetch: timedFetch },
  });
}

export interface StickyComment {
  owner: string;
  repo: string;
  /** Pull request (or issue) number. */
  issueNumber: number;
  /** System id: one sticky comment per system, found by COMMENT_MARKER(system). */
  system: string;
  /** The comment text; the marker is put on its first line if it is not there. */
  body: string;
  /** false: only update a comment that exists (`comment: on-change` with nothing to report). */
  create?: boolean;
}

export interface UpsertResult {
  /** Undefined when there was no comment and none was to be created. */
  id?: number;
  action: 'created' | 'updated' | 'unchanged' | 'not-created';
}

type IssueComment = { id: number; body?: string | null; created_at: string; user?: { type?: string } | null };

/** GitHub keeps bodies as sent, but compare them the way a reader sees them. */
const normalize = (s: string): string => s.replace(/\r\n/g, '\n').trimEnd();

/**
 * The newest comment holding the marker and written by a bot (the token's identity in Actions is
 * github-actions[bot] or an App): anyone can paste the marker into a comment of their own, and
 * that comment must not be overwritten.
 */
function newestOurs(comments: IssueComment[], marker: string): IssueComment | undefined {
  const ours = comments.filter((c) => c.user?.type === 'Bot' && typeof c.body === 'string' && c.body.includes(marker));
  return ours.reduce<IssueComment | undefined>((best, c) => {
    if (best === undefined) return c;
    const t = Date.parse(c.created_at) - Date.parse(best.created_at);
    return t > 0 || (t === 0 && c.id > best.id) ? c : best;
  }, undefined);
}

/** A failure after which the server may still have applied the request. */
const maybeApplied = (e: unknown): boolean => e instanceof RequestError && (e.response === undefined || e.status >= 500);

/**
 * Creates the system's sticky comment or updates it in place. Every comment of the issue is read
 * (all pages); bot comments containing the marker are ours. With several, the newest is updated
 * and the others are left as they are.
 */
export async function upsertStickyComment(octokit: GithubClient, args: StickyComment): Promise<UpsertResult> {
  const { owner, repo, issueNumber, system } = args;
  if (!Number.isSafeInteger(issueNumber) || issueNumber < 1) {
    throw new GithubApiError('sticky comment', undefined, `issue number must be a positive integer, got ${String(issueNumber)}`);
  }
  const marker = COMMENT_MARKER(system);
  const body = args.body.includes(marker) ? args.body : `${marker}\n${args.body}`;
  const where = `${owner}/${repo}#${issueNumber}`;

  const list = async (): Promise<IssueComment[]> => {
    try {
      return await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issueNumber, per_page: 100 });
    } catch (e) {
      throw describe(`listing the comments of ${where}`, e);
    }
  };
  const newest = newestOurs(await list(), marker);

  if (newest === undefined) {
    if (args.create === false) return { action: 'not-created' };
    try {
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body, request: { retries: 0 } });
      return { id: data.id, action: 'created' };
    } catch (e) {
      // Look again instead of posting again: the comment may exist although the answer was lost.
      if (maybeApplied(e)) {
        const landed = newestOurs(await list().catch(() => []), marker);
        if (landed && normalize(landed.body ?? '') === normalize(body)) return { id: landed.id, action: 'created' };
      }
      throw describe(`creating the ${system} comment on ${where}`, e);
    }
  }
  if (normalize(newest.body ?? '') === normalize(body)) return { id: newest.id, action: 'unchanged' };
  try {
    const { data } = await octokit.rest.issues.updateComment({ owner, repo, comment_id: newest.id, body });
    return { id: data.id, action: 'updated' };
  } catch (e) {
    throw describe(`updating comment ${newest.id} on ${where}`, e);
  }
}
