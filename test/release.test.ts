import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../src/sandbox/runProcess.js';
import { git } from './helpers/git.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/** Releases (docs/releasing.md): the version agrees everywhere it is written, and scripts/release.mjs keeps it so. */

const USES = /ngcc-dev\/ngcc-perf@v(\d+)\b/g;

/** Every `ngcc-dev/ngcc-perf@vN` of the README, the docs and the example workflows, as [file, N]. */
function usesOf(root: string): Array<[string, number]> {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs')).map((f) => join('docs', f)),
    ...readdirSync(join(root, 'workflows-example')).map((f) => join('workflows-example', f)),
  ];
  return files.flatMap((f) => [...readFileSync(join(root, f), 'utf8').matchAll(USES)].map((m): [string, number] => [f, Number(m[1])]));
}

const versionOf = (root: string) => (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

describe('the version', () => {
  it('agrees in package.json, package-lock.json, action.yml and every workflow the docs show', () => {
    const version = versionOf(repoRoot);
    const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'));
    expect([lock.version, lock.packages[''].version]).toEqual([version, version]);
    expect(readFileSync(join(repoRoot, 'action.yml'), 'utf8').split('\n')[0]).toBe(
      `# ngcc-perf ${version} (package.json's version; scripts/release.mjs keeps them together)`,
    );
    const uses = usesOf(repoRoot);
    expect(uses.length).toBeGreaterThan(3);
    const major = Number(version.split('.')[0]);
    expect(uses.filter(([, n]) => n !== major)).toEqual([]);
  });
});

describe('scripts/release.mjs', () => {
  /** A repository with the files a release touches, at version 1.2.0, released as v1.2.0. */
  async function repository(): Promise<string> {
    const dir = tempDir();
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'docs'));
    mkdirSync(join(dir, 'workflows-example'));
    copyFileSync(join(repoRoot, 'scripts', 'release.mjs'), join(dir, 'scripts', 'release.mjs'));
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'ngcc-perf', version: '1.2.0' }, null, 2)}\n`);
    writeFileSync(
      join(dir, 'package-lock.json'),
      `${JSON.stringify({ name: 'ngcc-perf', version: '1.2.0', lockfileVersion: 3, packages: { '': { name: 'ngcc-perf', version: '1.2.0' } } }, null, 2)}\n`,
    );
    writeFileSync(
      join(dir, 'action.yml'),
      "# ngcc-perf 1.2.0 (package.json's version; scripts/release.mjs keeps them together)\nname: ngcc-perf\n",
    );
    writeFileSync(join(dir, 'README.md'), '      - uses: ngcc-dev/ngcc-perf@v1\n');
    writeFileSync(join(dir, 'docs', 'action.md'), 'uses: ngcc-dev/ngcc-perf@v1 and other-org/ngcc-perf@v7\n');
    writeFileSync(join(dir, 'workflows-example', 'pr.yml'), 'steps:\n  - uses: ngcc-dev/ngcc-perf@v1\n');
    writeFileSync(join(dir, '.gitignore'), 'out/\n');
    await git(dir, 'init', '-q', '-b', 'main');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-q', '-m', 'first');
    await git(dir, 'tag', '-a', 'v1.2.0', '-m', 'v1.2.0');
    await git(dir, 'tag', 'v1');
    return dir;
  }

  const release = (dir: string, ...args: string[]) =>
    runProcess(['node', 'scripts/release.mjs', ...args], {
      cwd: dir,
      timeoutMs: 60_000,
      // The developer's own git settings (signing, hooks) play no part.
      env: {
        GIT_AUTHOR_NAME: 'T',
        GIT_AUTHOR_EMAIL: 't@example.org',
        GIT_COMMITTER_NAME: 'T',
        GIT_COMMITTER_EMAIL: 't@example.org',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
      },
    });

  it('bumps every place, commits, tags with the commits since the last release as notes, and moves the major tag', async () => {
    const dir = await repository();
    writeFileSync(join(dir, 'docs', 'new.md'), 'a page\n');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-q', '-m', 'A new page');
    const r = await release(dir, '1.3.0', '--no-build');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^released v1\.3\.0 at [0-9a-f]+; v1 moved to it/);
    expect(r.stdout).toContain('publish: git push origin HEAD v1.3.0 && git push -f origin v1');
    expect(versionOf(dir)).toBe('1.3.0');
    expect(JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')).packages[''].version).toBe('1.3.0');
    expect(readFileSync(join(dir, 'action.yml'), 'utf8')).toMatch(/^# ngcc-perf 1\.3\.0 /);
    expect(await git(dir, 'log', '-1', '--format=%s')).toBe('Release v1.3.0');
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    const notes = await git(dir, 'tag', '-l', '--format=%(contents)', 'v1.3.0');
    expect(notes).toMatch(/^ngcc-perf v1\.3\.0\n\nChanges since v1\.2\.0:\n\n- A new page \([0-9a-f]+\)$/);
    expect(await git(dir, 'rev-parse', 'v1^{commit}')).toBe(await git(dir, 'rev-parse', 'HEAD'));
  });

  it('a new major renames the action in the docs and workflows, and leaves the old major tag where it was', async () => {
    const dir = await repository();
    const before = await git(dir, 'rev-parse', 'v1^{commit}');
    const r = await release(dir, '2.0.0', '--no-build');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(usesOf(dir).map(([, n]) => n)).toEqual([2, 2, 2]);
    expect(readFileSync(join(dir, 'docs', 'action.md'), 'utf8')).toContain('other-org/ngcc-perf@v7');
    expect(await git(dir, 'rev-parse', 'v2^{commit}')).toBe(await git(dir, 'rev-parse', 'HEAD'));
    expect(await git(dir, 'rev-parse', 'v1^{commit}')).toBe(before);
  });

  it('refuses an older version, a tag that exists, a tree with changes and a version that is not one', async () => {
    const dir = await repository();
    const refused = async (args: string[], message: RegExp) => {
      const r = await release(dir, ...args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    };
    await refused(['1.1.9', '--no-build'], /^error: release: 1\.1\.9 is older than package\.json's 1\.2\.0/);
    await refused(['1.2.0', '--no-build'], /^error: release: v1\.2\.0 exists already/);
    await refused(['1.3', '--no-build'], /^error: release: expected a version X\.Y\.Z, got '1\.3'/);
    await refused(['1.3.0', '--push'], /^error: release: unknown option --push/);
    await git(dir, 'checkout', '-q', '--detach');
    await refused(['1.3.0', '--no-build'], /HEAD is detached/);
    await git(dir, 'checkout', '-q', 'main');
    writeFileSync(join(dir, 'README.md'), 'changed\n');
    await refused(['1.3.0', '--no-build'], /the working tree has changes/);
    expect(versionOf(dir)).toBe('1.2.0');
    expect(await git(dir, 'tag', '-l', 'v1.3.0')).toBe('');
  });

  it('--dry-run says what it would do and changes nothing', async () => {
    const dir = await repository();
    const head = await git(dir, 'rev-parse', 'HEAD');
    const r = await release(dir, '1.2.1', '--dry-run');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^would release v1\.2\.1 \(package\.json 1\.2\.0 -> 1\.2\.1\), move v1 to it/);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(versionOf(dir)).toBe('1.2.0');
  });
});
