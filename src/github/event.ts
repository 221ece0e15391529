import { existsSync } from 'node:fs';
import { readJson } from '../util/fsx.js';
import { InputError } from '../errors.js';

export interface PullRequestEvent {
  number: number;
  baseSha: string;
  /** The base branch's name, to say where a baseline came from. */
  baseRef: string;
  headSha: string;
  baseRepo: string;
  headRepo: string;
  /** The head lives in another repository: its code is a stranger's. */
  fromFork: boolean;
}

/** The pull request of GITHUB_EVENT_PATH (pull_request or pull_request_target payloads). */
export function readPullRequestEvent(path = process.env.GITHUB_EVENT_PATH): PullRequestEvent {
  if (!path || !existsSync(path))
    throw new InputError('GITHUB_EVENT_PATH', '', 'no event payload: pull-request mode runs on pull_request events');
  const payload = readJson<{
    pull_request?: {
      number: number;
      base: { sha: string; ref?: string; repo: { full_name: string } };
      head: { sha: string; repo: { full_name: string } | null };
    };
  }>(path);
  const pr = payload.pull_request;
  if (!pr) throw new InputError(path, 'pull_request', 'the event is not a pull request');
  const headRepo = pr.head.repo?.full_name ?? '(deleted fork)';
  return {
    number: pr.number,
    baseSha: pr.base.sha,
    baseRef: pr.base.ref ?? 'base',
    headSha: pr.head.sha,
    baseRepo: pr.base.repo.full_name,
    headRepo,
    fromFork: headRepo !== pr.base.repo.full_name,
  };
}
