// The tool at an earlier commit, beside the working tree's, for benchmarks that compare the two
// (bench/proof-of-work.mjs, bench/truth-cost.mjs).
import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';

/** Runs a command; its failure throws with the end of its stderr, unless `mayFail`. */
export function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  if (r.status !== 0 && !opts.mayFail) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stderr.slice(-4000)}`);
  return r;
}

/**
 * Checks commit `rev` out into `work/before` (a worktree sharing the repository's node_modules) and
 * returns the path of its committed dist/cli.js, and how to remove the worktree again.
 */
export function beforeTool(root, work, rev) {
  const before = join(work, 'before');
  sh('git', ['-C', root, 'worktree', 'add', '--detach', before, rev]);
  symlinkSync(join(root, 'node_modules'), join(before, 'node_modules'));
  return {
    cli: join(before, 'dist', 'cli.js'),
    remove: () => sh('git', ['-C', root, 'worktree', 'remove', '--force', before], { mayFail: true }),
  };
}

/** The median of some numbers. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
