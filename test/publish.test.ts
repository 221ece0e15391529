import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mergeCampaignJson, mergeShardFolders } from '../src/evidence/merge.js';
import { publish, type PublishOptions } from '../src/github/publish.js';
import { clone, filesOn, git, holdFirstPushes, initBare } from './helpers/git.js';

const BRANCH = 'ngcc-perf-data';
const author = { name: 'ngcc-perf', email: 'ngcc-perf@example.org' };

/** A temporary folder removed when the current test ends. */
function tempDir(prefix = 'ngcc-publish-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A bare remote in a fresh folder, and a way to get a clone of it per publisher. */
async function setup() {
  const dir = tempDir();
  const bare = await initBare(dir);
  let n = 0;
  const newClone = async () => {
    const home = join(dir, `c${n++}`);
    mkdirSync(home);
    return clone(bare, home);
  };
  return { dir, bare, newClone };
}

function options(repoDir: string, files: PublishOptions['files'], extra: Partial<PublishOptions> = {}): PublishOptions {
  return { repoDir, remote: 'origin', branch: BRANCH, files, message: 'ngcc-perf: publish', author, ...extra };
}

describe('publish', () => {
  it('loses nothing and keeps history linear when six publishers push at once', async () => {
    const { dir, bare, newClone } = await setup();
    const N = 6;
    holdFirstPushes(bare, N, join(dir, 'arrived'));
    const publishers = await Promise.all(
      Array.from({ length: N }, async (_, k) => {
        const repoDir = await newClone();
        const files = ['keygen', 'encaps'].map((op) => {
          const to = `data/x86_1/records/kem-${k}/a__${op}.json`;
          return { from: write(join(dir, `src${k}`, to), `{"k": ${k}, "op": "${op}"}\n`), to };
        });
        return { repoDir, files };
      }),
    );

    const results = await Promise.all(publishers.map((p) => publish(options(p.repoDir, p.files))));

    expect(results.every((r) => r.changed && r.commit)).toBe(true);
    const onRemote = await filesOn(bare, BRANCH);
    for (const p of publishers) for (const f of p.files) expect(onRemote).toContain(f.to);
    expect(onRemote).toHaveLength(2 * N);
    expect(await git(bare, 'rev-list', '--merges', BRANCH)).toBe('');
    expect(await git(bare, 'rev-list', '--max-parents=0', BRANCH)).not.toContain('\n');
    expect((await git(bare, 'rev-list', BRANCH)).split('\n')).toHaveLength(N + 1);
    const attempts = results.map((r) => r.attempts).sort();
    console.log(`concurrency test: attempts per publisher ${attempts.join(', ')}`);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
    // The user's checkouts are untouched: no leftover worktree, nothing changed in the work tree.
    for (const p of publishers) {
      expect((await git(p.repoDir, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
      expect(await git(p.repoDir, 'status', '--porcelain')).toBe('');
    }
  });

  it('re-applies its files when a rebase conflicts (two publishers, one path)', async () => {
    const { dir, bare, newClone } = await setup();
    holdFirstPushes(bare, 2, join(dir, 'arrived'));
    const to = 'data/x86_1/build.json';
    const runs = await Promise.all(
      ['first', 'second'].map(async (who) => {
        const repoDir = await newClone();
        return { who, result: await publish(options(repoDir, [{ from: write(join(dir, who, 'build.json'), `${who}\n`), to }])) };
      }),
    );
    const loser = runs.find((r) => r.result.attempts === 2)!;
    expect(runs.map((r) => r.result.attempts).sort()).toEqual([1, 2]);
    expect(await git(bare, 'show', `${BRANCH}:${to}`)).toBe(loser.who);
    expect(await git(bare, 'rev-list', '--merges', BRANCH)).toBe('');
    expect((await git(bare, 'rev-list', BRANCH)).split('\n')).toHaveLength(3);
  });

  it('does not commit when the content is already there', async () => {
    const { dir, bare, newClone } = await setup();
    const repoDir = await newClone();
    const files = [{ from: write(join(dir, 'a.json'), '{}\n'), to: 'data/x86_1/a.json' }];
    const first = await publish(options(repoDir, files));
    expect(first).toMatchObject({ changed: true, attempts: 1 });
    const head = await git(bare, 'rev-parse', BRANCH);
    expect(first.commit).toBe(head);

    const again = await publish(options(repoDir, files));
    expect(again).toEqual({ commit: null, attempts: 1, changed: false });
    expect(await git(bare, 'rev-parse', BRANCH)).toBe(head);
  });

  it('deletes stale files under the folders it owns, and nothing else', async () => {
    const { dir, bare, newClone } = await setup();
    const repoDir = await newClone();
    const page = (name: string) => ({ from: write(join(dir, 'pages', name), `# ${name}\n`), to: `pages/x86_1/${name}` });
    const other = { from: write(join(dir, 'other.md'), 'another shard\n'), to: 'pages/arm_1/index.md' };
    await publish(options(repoDir, [other], { owns: ['pages/arm_1'] }));
    await publish(options(repoDir, [page('index.md'), page('kem-1.md')], { owns: ['pages/x86_1'] }));
    expect(await filesOn(bare, BRANCH)).toEqual(['pages/arm_1/index.md', 'pages/x86_1/index.md', 'pages/x86_1/kem-1.md']);

    const r = await publish(options(repoDir, [page('index.md')], { owns: ['pages/x86_1'] }));
    expect(r.changed).toBe(true);
    expect(await filesOn(bare, BRANCH)).toEqual(['pages/arm_1/index.md', 'pages/x86_1/index.md']);
  });

  it('keeps the token out of the repository config and out of errors', async () => {
    const { dir, bare, newClone } = await setup();
    const token = 'ghs_FAKEtoken0123456789abcdef';
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    const repoDir = await newClone();
    await git(repoDir, 'remote', 'set-url', 'origin', `file://${bare}`);
    const files = [{ from: write(join(dir, 'a.json'), '{}\n'), to: 'data/a.json' }];

    expect((await publish(options(repoDir, files, { token }))).changed).toBe(true);
    const config = readFileSync(join(repoDir, '.git', 'config'), 'utf8');
    expect(config).not.toContain(token);
    expect(config).not.toContain(basic);
    expect(config).not.toMatch(/extraheader/i);

    await git(repoDir, 'remote', 'add', 'gone', `file://${join(dir, 'missing.git')}`);
    const error = await publish(options(repoDir, files, { token, remote: 'gone' })).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^publish: git ls-remote failed/);
    expect(error?.message).not.toContain(token);
    expect(error?.message).not.toContain(basic);
  });

  it('renders derived files from the branch as it is after the push, also when two publishers race', async () => {
    const { dir, bare, newClone } = await setup();
    holdFirstPushes(bare, 2, join(dir, 'arrived'));
    // An index of every system folder under data/ on the branch, as the index page is.
    const index = (tree: string) => `${readdirSync(join(tree, 'data')).sort().join('\n')}\n`;
    const runs = await Promise.all(
      ['x86_1', 'arm_1'].map(async (system) => {
        const repoDir = await newClone();
        const to = `data/${system}/campaign.json`;
        const files = [{ from: write(join(dir, system, 'campaign.json'), `{"system_id": "${system}"}\n`), to }];
        return publish(options(repoDir, files, { derived: [{ to: 'pages/index.md', render: index }] }));
      }),
    );
    // The loser's first commit listed only its own system; its retry rendered the index again.
    expect(runs.map((r) => r.attempts).sort()).toEqual([1, 2]);
    expect(await git(bare, 'show', `${BRANCH}:pages/index.md`)).toBe('arm_1\nx86_1');
    expect(await git(bare, 'rev-list', '--merges', BRANCH)).toBe('');
  });

  it("merges a shard's campaign.json with the branch's as `merge` does, beside its build.json", async () => {
    const { dir, bare, newClone } = await setup();
    const shard = (k: number, started: string, ended: string) => {
      const campaign = {
        schema: 2,
        system_id: 'x86_1',
        started_utc: started,
        ended_utc: ended,
        host_checks: [{ phase: 'build,kat,measure', shard: `${k}/2` }],
      };
      const base = join(dir, `shard${k}`);
      return {
        campaign,
        files: [
          { from: write(join(base, 'campaign.json'), JSON.stringify(campaign)), to: 'data/x86_1/campaign.json' },
          {
            from: write(join(base, 'build.json'), JSON.stringify({ instances: { [`kem-${k}/a`]: { candidate: `kem-${k}`, label: 'a' } } })),
            to: 'data/x86_1/build.json',
          },
        ],
      };
    };
    const one = shard(1, '2025-01-01T01:00:00Z', '2025-01-01T02:00:00Z');
    const two = shard(2, '2025-01-01T01:30:00Z', '2025-01-01T03:00:00Z');
    for (const s of [one, two]) {
      const repoDir = await newClone();
      await publish(options(repoDir, s.files, { owns: s.files.map((f) => f.to), mergeCampaign: true }));
    }
    const published = JSON.parse(await git(bare, 'show', `${BRANCH}:data/x86_1/campaign.json`)) as Record<string, unknown>;
    expect(published).toEqual(mergeCampaignJson([one.campaign, two.campaign]));
    expect(published).toMatchObject({ started_utc: '2025-01-01T01:00:00Z', ended_utc: '2025-01-01T03:00:00Z' });
    const build = JSON.parse(await git(bare, 'show', `${BRANCH}:data/x86_1/build.json`)) as { instances: object };
    expect(Object.keys(build.instances)).toEqual(['kem-1/a', 'kem-2/a']);

    // Without the option a published campaign.json replaces the branch's (a whole system's evidence).
    const repoDir = await newClone();
    await publish(options(repoDir, one.files, { owns: one.files.map((f) => f.to) }));
    expect(JSON.parse(await git(bare, 'show', `${BRANCH}:data/x86_1/campaign.json`))).toEqual(one.campaign);
  });

  it('rejects destinations outside the repository', async () => {
    const { dir, newClone } = await setup();
    const repoDir = await newClone();
    const from = write(join(dir, 'a.json'), '{}\n');
    await expect(publish(options(repoDir, [{ from, to: '../escape.json' }]))).rejects.toThrow(/must be a relative path inside/);
    await expect(publish(options(repoDir, [{ from, to: '.git/hooks/post-commit' }]))).rejects.toThrow(/must be a relative path inside/);
  });
});

describe('mergeShardFolders', () => {
  const json = (path: string, value: unknown) => write(path, `${JSON.stringify(value, null, 1)}\n`);
  const entry = (candidate: string, label: string) => ({ candidate, label, kat: 'PASS' });

  function shards(dir: string) {
    const a = join(dir, 'shard1', 'x86_1');
    const b = join(dir, 'shard2', 'x86_1');
    json(join(a, 'build.json'), { instances: { 'kem-2/x': entry('kem-2', 'x'), 'kem-1/y': entry('kem-1', 'y') } });
    json(join(b, 'build.json'), { instances: { 'kem-3/z': entry('kem-3', 'z'), 'kem-1/y': entry('kem-1', 'y') } });
    json(join(a, 'campaign.json'), { schema: 2, system_id: 'x86_1', host_checks: [{ phase: 'build', shard: '1/2' }] });
    json(join(b, 'campaign.json'), { schema: 2, system_id: 'x86_1', host_checks: [{ phase: 'build', shard: '2/2' }] });
    write(join(a, 'records', 'kem-2', 'x__keygen.json'), 'a\n');
    write(join(b, 'records', 'kem-3', 'z__keygen.json'), 'b\n');
    write(join(a, 'kat', 'shared.txt'), 'same\n');
    write(join(b, 'kat', 'shared.txt'), 'same\n');
    return { a, b };
  }

  it('merges disjoint shards, build.json instances and campaign host checks', () => {
    const dir = tempDir();
    const { a, b } = shards(dir);
    const into = join(dir, 'merged');
    mergeShardFolders([a, b], into);

    expect(readFileSync(join(into, 'records', 'kem-2', 'x__keygen.json'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(into, 'records', 'kem-3', 'z__keygen.json'), 'utf8')).toBe('b\n');
    expect(existsSync(join(into, 'kat', 'shared.txt'))).toBe(true);
    const build = JSON.parse(readFileSync(join(into, 'build.json'), 'utf8')) as { instances: object };
    expect(Object.keys(build.instances)).toEqual(['kem-2/x', 'kem-1/y', 'kem-3/z']);
    const campaign = JSON.parse(readFileSync(join(into, 'campaign.json'), 'utf8')) as { system_id: string; host_checks: unknown[] };
    expect(campaign.system_id).toBe('x86_1');
    expect(campaign.host_checks).toEqual([
      { phase: 'build', shard: '1/2' },
      { phase: 'build', shard: '2/2' },
    ]);
  });

  it('names both files when two shards wrote different contents', () => {
    const dir = tempDir();
    const { a, b } = shards(dir);
    write(join(b, 'kat', 'shared.txt'), 'different\n');
    expect(() => mergeShardFolders([a, b], join(dir, 'merged'))).toThrow(
      `${join(b, 'kat', 'shared.txt')}: differs from ${join(a, 'kat', 'shared.txt')} (both folders hold kat/shared.txt)`,
    );
    expect(existsSync(join(dir, 'merged'))).toBe(false);
  });

  it('names both build.json files when an instance differs', () => {
    const dir = tempDir();
    const { a, b } = shards(dir);
    json(join(b, 'build.json'), { instances: { 'kem-3/z': entry('kem-3', 'z'), 'kem-1/y': { ...entry('kem-1', 'y'), kat: 'FAIL' } } });
    expect(() => mergeShardFolders([a, b], join(dir, 'merged'))).toThrow(
      `${b}: instance kem-1/y: also in ${a}, which has a different build.json entry`,
    );
    expect(existsSync(join(dir, 'merged'))).toBe(false);
  });
});
