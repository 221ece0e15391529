#!/usr/bin/env node
// Makes a release (docs/releasing.md): `node scripts/release.mjs X.Y.Z [--dry-run] [--no-build]`.
// It bumps the version everywhere it is written (package.json, package-lock.json, action.yml's first
// line and, for a new major, every `ngcc-dev/ngcc-perf@vN` of the README, the docs and the example
// workflows), rebuilds dist/, commits, tags vX.Y.Z with release notes from the commits since the last
// release, and moves vMAJOR to it. It pushes nothing: it prints the commands that publish the release.
// test/release.test.ts runs it in a repository of its own.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chdir } from 'node:process';

const USES = /ngcc-dev\/ngcc-perf@v(\d+)\b/g;
const ACTION_LINE = /^# ngcc-perf \d+\.\d+\.\d+\b.*$/m;

function fail(message) {
  console.error(`error: release: ${message}`);
  process.exit(2);
}

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();
const gitOk = (...args) => {
  try {
    git(...args);
    return true;
  } catch {
    return false;
  }
};

const parse = (v) =>
  /^(\d+)\.(\d+)\.(\d+)$/
    .exec(v ?? '')
    ?.slice(1)
    .map(Number);
const compare = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** The files that name the action as `ngcc-dev/ngcc-perf@vN`: the README, docs/*.md and the example workflows. */
function usesFiles() {
  const under = (dir, ext) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith(ext))
          .map((f) => join(dir, f))
      : [];
  return ['README.md', ...under('docs', '.md'), ...under('workflows-example', '.yml')].filter((f) => existsSync(f));
}

function setVersion(version, major) {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  pkg.version = version;
  writeFileSync('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  if (existsSync('package-lock.json')) {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
    lock.version = version;
    if (lock.packages?.['']) lock.packages[''].version = version;
    writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
  }
  const action = readFileSync('action.yml', 'utf8');
  const line = `# ngcc-perf ${version} (package.json's version; scripts/release.mjs keeps them together)`;
  writeFileSync('action.yml', ACTION_LINE.test(action) ? action.replace(ACTION_LINE, line) : `${line}\n${action}`);
  for (const f of usesFiles()) {
    const text = readFileSync(f, 'utf8');
    const next = text.replace(USES, `ngcc-dev/ngcc-perf@v${major}`);
    if (next !== text) writeFileSync(f, next);
  }
}

/** "- subject (abc1234)" for each commit since the last release tag, oldest first. */
function releaseNotes(version) {
  const last = gitOk('describe', '--tags', '--abbrev=0', '--match', 'v[0-9]*.[0-9]*.[0-9]*')
    ? git('describe', '--tags', '--abbrev=0', '--match', 'v[0-9]*.[0-9]*.[0-9]*')
    : undefined;
  const range = last ? [`${last}..HEAD`] : ['HEAD'];
  const log = git('log', '--reverse', '--format=- %s (%h)', ...range);
  return `ngcc-perf v${version}\n\n${last ? `Changes since ${last}:` : 'Changes:'}\n\n${log || '- (no commits)'}\n`;
}

// From anywhere in the checkout: every path below is the repository's.
if (!gitOk('rev-parse', '--show-toplevel')) fail('not inside a git checkout');
chdir(git('rev-parse', '--show-toplevel'));

const args = process.argv.slice(2);
const version = args.find((a) => !a.startsWith('--'));
const dryRun = args.includes('--dry-run');
const build = !args.includes('--no-build');
const unknown = args.filter((a) => a.startsWith('--') && a !== '--dry-run' && a !== '--no-build');
if (unknown.length > 0) fail(`unknown option ${unknown[0]} (options: --dry-run, --no-build)`);
if (!version || !parse(version)) fail(`expected a version X.Y.Z, got ${version === undefined ? 'nothing' : `'${version}'`}`);
const current = JSON.parse(readFileSync('package.json', 'utf8')).version;
if (!parse(current)) fail(`package.json's version '${current}' is not X.Y.Z: set it by hand first`);
const order = compare(parse(version), parse(current));
const tag = `v${version}`;
if (gitOk('rev-parse', '--verify', '--quiet', `refs/tags/${tag}`)) fail(`${tag} exists already`);
if (order < 0) fail(`${version} is older than package.json's ${current}`);
if (git('status', '--porcelain') !== '') fail('the working tree has changes: commit or stash them first');
if (!gitOk('symbolic-ref', '-q', 'HEAD')) fail('HEAD is detached: check out the branch to release from');
const major = parse(version)[0];
const notes = releaseNotes(version);
if (dryRun) {
  console.log(`would release ${tag} (package.json ${current} -> ${version}), move v${major} to it, with these notes:\n\n${notes}`);
  process.exit(0);
}
setVersion(version, major);
if (build) execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
git('add', '-A');
if (git('status', '--porcelain') !== '') git('commit', '-q', '-m', `Release ${tag}`);
mkdirSync('out', { recursive: true });
const notesFile = join('out', `release-notes-${tag}.md`);
writeFileSync(notesFile, notes);
git('tag', '-a', tag, '-F', notesFile);
git('tag', '-f', `v${major}`, `${tag}^{commit}`);
console.log(`released ${tag} at ${git('rev-parse', '--short', 'HEAD')}; v${major} moved to it; notes in ${notesFile}`);
console.log(`publish: git push origin HEAD ${tag} && git push -f origin v${major} && gh release create ${tag} --notes-file ${notesFile}`);
