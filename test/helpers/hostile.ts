import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { sha256File } from '../../src/util/fsx.js';
import { repoRoot, tempDir } from './tmp.js';

/**
 * Campaigns of hostile submissions (test/fixtures/hostile/) and what a test needs around them: the
 * CLI as a runner starts it, listeners an escaped process would reach, and looks at the host after.
 */

export const hostileFixtures = join(repoRoot, 'test', 'fixtures', 'hostile');
const kem1 = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
export const iccs = join(repoRoot, 'native', 'iccs');

/**
 * The escape fixtures (test/fixtures/hostile/escape-<attack>) in the order that gives their campaign
 * ids: escape-1, escape-2… (each candidate.yml carries its id).
 */
export const ESCAPES = [
  'read-parent-environ',
  'write-neighbour',
  'daemon',
  'network',
  'include-secret',
  'driver-cache',
  'kill-all',
  'fork-storm',
  'read-home',
  'ptrace-parent',
  'tiocsti',
  'scratch',
  'unix-socket',
  'include-neighbour',
  'link-out',
  'rlimit-raise',
  'zero-header',
  'cpu-move',
  'shared-futex',
] as const;
export type Escape = (typeof ESCAPES)[number];

/** The campaign id of an escape fixture. */
export const idOf = (attack: Escape): string => `escape-${ESCAPES.indexOf(attack) + 1}`;

/** The toy KEM's KAT digest line for one label (kem-1/good's, which every honest copy computes). */
const goodDigest = () =>
  readFileSync(join(kem1, 'kat.sha256'), 'utf8')
    .split('\n')
    .find((l) => l.endsWith(' good/KAT_KEM_good.txt'))!
    .split(' ')[0]!;

/**
 * A repository holding a campaign of hostile fixtures, laid out as test/fixtures is — `<root>/hostile/`
 * the campaign, `<root>/campaign/kem-1/common/` the toy KEM its sources include by relative paths —
 * so that the fixtures build unchanged; only the harness's ICCS folder is named by its absolute path.
 * `<root>/.git` makes `<root>` the campaign's repository, the most a build may read.
 */
export function hostileCampaign(
  root: string,
  opts: { escapes: readonly Escape[]; kem66?: boolean; honest: string[]; settings: string },
): string {
  mkdirSync(join(root, '.git'), { recursive: true });
  const campaign = join(root, 'hostile');
  cpSync(join(kem1, 'common'), join(root, 'campaign', 'kem-1', 'common'), { recursive: true });
  cpSync(join(hostileFixtures, 'common'), join(campaign, 'common'), { recursive: true });
  const candidateYml = (from: string, to: string) => {
    const text = readFileSync(join(from, 'candidate.yml'), 'utf8').replaceAll('../../../../../native/iccs', iccs);
    writeFileSync(join(to, 'candidate.yml'), text);
    return (parseYaml(text) as { id: string }).id;
  };
  const copy = (from: string, id: string) => {
    const to = join(campaign, id);
    cpSync(from, to, { recursive: true });
    const declared = candidateYml(from, to);
    if (declared !== id) throw new Error(`${from}/candidate.yml: id ${declared}, expected ${id}`);
  };
  if (opts.kem66) copy(join(hostileFixtures, 'kem-66'), 'kem-66');
  for (const attack of opts.escapes) copy(join(hostileFixtures, `escape-${attack}`), idOf(attack));
  for (const id of opts.honest) honestCandidate(campaign, id);
  writeFileSync(join(campaign, 'ngcc-perf.yml'), opts.settings);
  return campaign;
}

/** What the escape fixtures aim at: the test's listeners, secrets and home. */
export interface Targets {
  /** The TCP listener's port on 127.0.0.1. */
  port: number;
  /** A secret file of the runner's, outside the campaign's repository. */
  secretFile: string;
  /** The runner's home, holding secret.txt. */
  home: string;
  unixPath: string;
  abstractName: string;
  /** The text of the header planted in each honest neighbour's instance folder (neighbour_marker.h). */
  neighbourHeader: string;
}

/**
 * Points the escape fixtures of a campaign at the test's targets: rewrites the headers that name
 * them, makes link-out's links and plants neighbour_marker.h in the honest neighbours.
 */
export function aimEscapes(campaign: string, escapes: readonly Escape[], honest: string[], t: Targets): void {
  const file = (a: Escape, name: string) => join(campaign, idOf(a), 'attack', name);
  const headers: Partial<Record<Escape, Array<[string, string]>>> = {
    network: [['escape_port.h', `#define ESCAPE_PORT ${t.port}\n`]],
    'include-secret': [['escape_secret.h', `#include "${t.secretFile}"\n`]],
    'read-home': [['escape_home.h', `#define ESCAPE_HOME "${t.home}"\n`]],
    scratch: [['escape_home.h', `#define ESCAPE_HOME "${t.home}"\n`]],
    'unix-socket': [['escape_unix.h', `#define ESCAPE_UNIX_PATH "${t.unixPath}"\n#define ESCAPE_UNIX_ABSTRACT "${t.abstractName}"\n`]],
    'include-neighbour': [['escape_neighbour.h', `#include "${join(campaign, 'early-1', 'good', 'neighbour_marker.h')}"\n`]],
  };
  for (const a of escapes) for (const [name, text] of headers[a] ?? []) writeFileSync(file(a, name), text);
  if (escapes.includes('link-out')) {
    symlinkSync(join(t.home, 'secret.txt'), file('link-out', 'leak.h'));
    symlinkSync('../../early-1/good/neighbour_marker.h', file('link-out', 'neighbour.h'));
  }
  if (escapes.includes('zero-header')) symlinkSync('/dev/zero', file('zero-header', 'zero.h'));
  for (const id of honest) writeFileSync(join(campaign, id, 'good', 'neighbour_marker.h'), t.neighbourHeader);
}

/** Where the scratch fixture leaves ngcc-escape-scratch on a host it is not kept from. */
export const scratchDirs = (home: string): string[] => ['/tmp', '/var/tmp', '/dev/shm', '/run/lock', tmpdir(), home];

/** Removes what the scratch fixture may have left (from a run without the sandbox, or a broken one). */
export function removeScratch(home: string): void {
  for (const d of scratchDirs(home)) rmSync(join(d, 'ngcc-escape-scratch'), { force: true });
}

/** An honest toy-KEM candidate (kem-1/good) under another id. */
function honestCandidate(campaign: string, id: string): void {
  cpSync(join(kem1, 'good'), join(campaign, id, 'good'), { recursive: true });
  cpSync(join(kem1, 'common'), join(campaign, id, 'common'), { recursive: true });
  writeFileSync(
    join(campaign, id, 'candidate.yml'),
    `id: ${id}\ntype: kem\nalgorithm: toy\ninstances:\n  - label: good\n    dir: good\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}, ../common]\n`,
  );
  writeFileSync(join(campaign, id, 'kat.sha256'), `${goodDigest()} strict good/KAT_KEM_good.txt\n`);
}

/** The CLI bundled from the current src/ (as test/interrupt.test.ts does): a package root with the repository's native/. */
export function bundledCli(): string {
  const root = tempDir();
  execFileSync('node', [join(repoRoot, 'scripts', 'bundle.mjs'), join(root, 'dist')], { cwd: repoRoot });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ngcc-perf', type: 'module' }));
  symlinkSync(join(repoRoot, 'native'), join(root, 'native'));
  return join(root, 'dist', 'cli.js');
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  stdout: string;
}

/** Runs the CLI as a child with `env` added to this process's environment. */
export function cliChild(cli: string, args: string[], env: Record<string, string>): Promise<ChildResult> {
  return childOf('node', [cli, ...args], env);
}

function childOf(command: string, args: string[], env: Record<string, string>): Promise<ChildResult> {
  return new Promise((res) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code, signal) => res({ code, signal, out, stdout }));
  });
}

/** A process left behind: "pid<TAB>comm<TAB>cmdline", as test/helpers/subreaper.c reports it. */
export type Survivor = string;

let subreaper: string | undefined;

/**
 * `command` run under test/helpers/subreaper.c, which is the subreaper of everything it starts: the
 * processes of its tree still alive `graceMs` after it exited, found by their parentage whatever they
 * call themselves (then killed).
 */
export async function withSurvivors(
  command: string,
  args: string[],
  env: Record<string, string>,
  graceMs = 1000,
): Promise<ChildResult & { survivors: Survivor[] }> {
  if (subreaper === undefined) {
    subreaper = join(tempDir(), 'subreaper');
    execFileSync('gcc', ['-O2', '-o', subreaper, join(repoRoot, 'test', 'helpers', 'subreaper.c')]);
  }
  const report = join(tempDir(), 'survivors.txt');
  const r = await childOf(subreaper, [report, String(graceMs), command, ...args], env);
  const survivors = existsSync(report) ? readFileSync(report, 'utf8').split('\n').filter(Boolean) : [`no report: ${r.out}`];
  return { ...r, survivors };
}

export interface Listener {
  server: Server;
  got: { connections: number; data: string };
}

/** A stream listener (TCP on 127.0.0.1 when `path` is undefined, else a UNIX socket) recording every connection and byte. */
export async function listener(path?: string): Promise<Listener & { port: number }> {
  const got = { connections: 0, data: '' };
  const server = createServer((s) => {
    got.connections++;
    s.on('data', (c: Buffer) => (got.data += c.toString()));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => (path === undefined ? server.listen(0, '127.0.0.1', r) : server.listen(path, r)));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0, got };
}

/** Every file under `dir` (none when it does not exist), links not followed. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => lstatSync(f, { throwIfNoEntry: false })?.isFile())
    .sort();
}

export const hashes = (dirs: string[]): Record<string, string> =>
  Object.fromEntries(dirs.flatMap(filesUnder).map((f) => [f, sha256File(f)]));

/** The files among `files` whose bytes contain `needle`. */
export const holding = (files: string[], needle: string): string[] => files.filter((f) => readFileSync(f).includes(needle));

/** The files under `dirs` whose bytes contain `needle`. */
export const containing = (dirs: string[], needle: string): string[] => holding(dirs.flatMap(filesUnder), needle);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
