import { isAbsolute, join, relative } from 'node:path';

/** What the step knows about the action it runs: the runner's variables, the bundle's checkout. */
export interface ActionOrigin {
  /** GITHUB_ACTION_REPOSITORY: `owner/name` of a repository action (unset for `uses: ./…`). */
  repository?: string;
  /** GITHUB_ACTION_REF: the tag, branch or sha the workflow named. */
  ref?: string;
  /** GITHUB_SERVER_URL, default https://github.com. */
  serverUrl?: string;
  /** The checkout of ngcc-perf this step runs from (holds dist/cli.js). */
  toolRoot: string;
  /** The workspace: a tool inside it is named relative to the repository's root. */
  workspace: string;
}

export const actionOrigin = (toolRoot: string, workspace: string, env: NodeJS.ProcessEnv = process.env): ActionOrigin => ({
  repository: env.GITHUB_ACTION_REPOSITORY || undefined,
  ref: env.GITHUB_ACTION_REF || undefined,
  serverUrl: env.GITHUB_SERVER_URL || undefined,
  toolRoot,
  workspace,
});

/** A word the shell passes on unchanged: quoted when it holds anything but plain path characters. */
const shellWord = (s: string): string => (/^[\w@%+=:,./#-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/**
 * How a submitter starts the same ngcc-perf on their machine, to put before `run …` in the
 * comment. The package is private and its name unclaimed on npm, so `npx ngcc-perf` would fetch
 * whatever someone published under that name: the command names the action's own repository and
 * ref, which npm installs from git (the bundle in dist/ is committed). An action used from the
 * repository itself (`uses: ./…`) has no repository of its own: its CLI is a path in the checkout.
 */
export function reproduceCli(o: ActionOrigin): string {
  if (o.repository && o.ref) {
    const server = (o.serverUrl ?? 'https://github.com').replace(/\/+$/, '');
    const spec = server === 'https://github.com' ? `github:${o.repository}#${o.ref}` : `git+${server}/${o.repository}.git#${o.ref}`;
    return `npx --yes ${shellWord(spec)}`;
  }
  const inside = relative(o.workspace, o.toolRoot);
  const root = inside.startsWith('..') || isAbsolute(inside) ? o.toolRoot : inside;
  return `node ${shellWord(join(root, 'dist', 'cli.js'))}`;
}
