import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { loadCampaign } from '../src/config/campaign.js';
import { ACTION_INPUT_DEFAULTS, DEFAULT_FAIL_ON, DEFAULT_THRESHOLD_PCT } from '../src/config/defaults.js';
import { readInputs } from '../src/github/inputs.js';
import { runActionCaptured } from './helpers/action.js';
import { FIXTURES, fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/** The CLI's exit code and its one error line (input errors print exactly one). */
async function cliError(args: string[]): Promise<{ code: number; error: string }> {
  const r = await runCli(args);
  expect(r.err, `${args.join(' ')} printed`).toHaveLength(1);
  return { code: r.code, error: r.err[0]! };
}

/** Where a run would have written its evidence: an input error must leave it absent. */
const unwritten = () => join(tempDir(), 'data');

const shown = (path: string) => relative(process.cwd(), path) || '.';

function candidateFolder(root: string, id: string, yaml: string | Buffer): string {
  const dir = join(root, id);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'candidate.yml'), yaml);
  return dir;
}

const candidateYml = (id: string, algorithm = 'Example') =>
  `id: ${id}\ntype: kem\nalgorithm: ${algorithm}\ninstances:\n  - label: ex-1\n    dir: src\n`;

describe('a campaign folder without candidates', () => {
  it('is an error naming the folder, pointing at the campaign inside it (run examples)', async () => {
    const out = unwritten();
    const examples = join(repoRoot, 'examples');
    const { code, error } = await cliError(['run', examples, '--system', 's', '--out', out]);
    expect(code).toBe(2);
    expect(error).toBe(
      `error: ${shown(examples)}: no candidates (no <id>/candidate.yml in this folder); did you mean ${shown(join(examples, 'campaign'))}?`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('without a campaign below it gives no hint', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), QUICK);
    mkdirSync(join(root, 'notes'));
    const { code, error } = await cliError(['run', root, '--system', 's', '--out', unwritten()]);
    expect(code).toBe(2);
    expect(error).toBe(`error: ${shown(root)}: no candidates (no <id>/candidate.yml in this folder)`);
  });

  it('that is a candidate folder says so, and names its parent as the campaign', async () => {
    const kem80 = join(repoRoot, 'examples', 'campaign', 'kem-80');
    const { code, error } = await cliError(['run', kem80, '--system', 's', '--out', unwritten()]);
    expect(code).toBe(2);
    expect(error).toBe(
      `error: ${shown(kem80)}: a candidate folder, not a campaign: its parent ${shown(join(repoRoot, 'examples', 'campaign'))} is the campaign (run it with --only '^kem-80/')`,
    );
  });
});

describe('mistakes a first hour makes', () => {
  it('validate of the data folder names the system folder in it', async () => {
    const data = tempDir();
    mkdirSync(join(data, 'local'));
    writeFileSync(join(data, 'local', 'build.json'), '{"instances":{}}');
    const { code, error } = await cliError(['validate', data]);
    expect(code).toBe(2);
    expect(error).toMatch(/no evidence here .*; did you mean .*local\?$/);
  });

  it('kat-manifest of a candidate the evidence does not have says so', async () => {
    const data = tempDir();
    mkdirSync(join(data, 'local'));
    writeFileSync(
      join(data, 'local', 'build.json'),
      JSON.stringify({ instances: { 'kem-1/good': { candidate: 'kem-1', label: 'good', kat: 'PASS' } } }),
    );
    const { code, error } = await cliError(['kat-manifest', join(data, 'local'), 'kem-99']);
    expect(code).toBe(2);
    expect(error).toMatch(/kem-99: no candidate 'kem-99' in this evidence \(it has kem-1\)$/);
  });

  it('a dir that does not exist is named with its line', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), QUICK);
    candidateFolder(root, 'kem-7', candidateYml('kem-7').replace('dir: src', 'dir: scr'));
    const r = await runCli(['run', root, '--system', 's', '--out', unwritten(), '--phases', 'build']);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `INVALID     kem-7 — ${join(shown(root), 'kem-7', 'candidate.yml')}: line 6: instances[0].dir: folder 'scr' not found`,
    );
  });
});

describe('candidate.yml and ngcc-perf.yml must be UTF-8', () => {
  it('names the file and the line of the first byte that is not UTF-8', async () => {
    const root = tempDir();
    // 'Café' saved as Latin-1: the é is the single byte 0xE9, which UTF-8 never has alone.
    candidateFolder(root, 'kem-7', Buffer.from(candidateYml('kem-7', 'Café'), 'latin1'));
    // A candidate's own file makes that candidate INVALID (the others would still run): exit 1.
    const r = await runCli(['run', root, '--system', 's', '--out', unwritten()]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `INVALID     kem-7 — ${join(shown(root), 'kem-7', 'candidate.yml')}: line 3: not UTF-8 text (save the file as UTF-8)`,
    );

    writeFileSync(join(root, 'kem-7', 'candidate.yml'), candidateYml('kem-7', 'Café'));
    writeFileSync(
      join(root, 'ngcc-perf.yml'),
      Buffer.concat([Buffer.from('planning:\n  trials: 3\nflags:\n  extra: ["-DX='), Buffer.from([0xc3, 0x28]), Buffer.from('"]\n')]),
    );
    const settings = await cliError(['run', root, '--system', 's', '--out', unwritten()]);
    expect(settings.code).toBe(2);
    expect(settings.error).toBe(`error: ${shown(join(root, 'ngcc-perf.yml'))}: line 4: not UTF-8 text (save the file as UTF-8)`);
  });

  it('reads UTF-8 text as written', () => {
    const root = tempDir();
    candidateFolder(root, 'kem-7', candidateYml('kem-7', 'Café ✓'));
    expect(loadCampaign(root).candidates[0]!.algorithm).toBe('Café ✓');
  });
});

describe('a YAML alias bomb', () => {
  it('is an input error naming the file, not an internal error', async () => {
    const root = tempDir();
    candidateFolder(root, 'kem-7', candidateYml('kem-7'));
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [prev, name] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'e'],
      ['e', 'f'],
      ['f', 'g'],
    ] as const)
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    writeFileSync(join(root, 'ngcc-perf.yml'), `${levels.join('\n')}\n`);
    const { code, error } = await cliError(['run', root, '--system', 's', '--out', unwritten()]);
    expect(code).toBe(2);
    expect(
      error.startsWith(
        `error: ${shown(join(root, 'ngcc-perf.yml'))}: its aliases (*name) expand past the limit of 100, refused as a resource exhaustion attack`,
      ),
      error,
    ).toBe(true);
  });
});

describe('options and arguments', () => {
  it('an unknown option is named, with the option it probably meant', async () => {
    const typo = await cliError(['run', FIXTURES, '--system', 'a', '--outt', '/tmp/x']);
    expect(typo).toEqual({ code: 2, error: "error: command line: run: unknown option '--outt'; did you mean --out?" });
    const far = await cliError(['validate', 'd', '--frobnicate']);
    expect(far).toEqual({ code: 2, error: "error: command line: validate: unknown option '--frobnicate'" });
  });

  it.each([
    [['run', FIXTURES, '--system', 'a', '--system', 'b', '--out', '/tmp/x'], 'system', "'a', then 'b'"],
    [['run', FIXTURES, '--system', 'a', '--out', '/tmp/x', '--only', 'kem', '--only=sign', '--only', 'x'], 'only', "'kem', then 'sign'"],
    [['report', 'd', '--out', 'p', '--out', 'q'], 'out', "'p', then 'q'"],
    [['report', 'd', '--out', 'p', '--campaign', 'a', '--campaign', 'a'], 'campaign', "'a', then 'a'"],
    [['compare', '--base', 'b', '--head', 'h', '--system', 's', '--format', 'md', '--format', 'json'], 'format', "'md', then 'json'"],
    [['compare', '--base', 'b', '--head', 'h', '--system', 's', '--history', 'x', '--history', 'y'], 'history', "'x', then 'y'"],
    [['kat-manifest', 'd', 'kem-1', '--mode', 'strict', '--mode', 'nolen'], 'mode', "'strict', then 'nolen'"],
    [['merge', '--out', 'a', 'shard', '--out', 'b'], 'out', "'a', then 'b'"],
    [['example', '--out', 'a', '--out', 'b'], 'out', "'a', then 'b'"],
  ])('%j: a repeated option is an error naming it', async (args, option, values) => {
    const { code, error } = await cliError(args);
    expect(code).toBe(2);
    expect(error).toBe(`error: command line: --${option}: given more than once (${values}): give it once`);
  });

  it('a repeated flag is no error, and --history stays one comma list', async () => {
    const history = await cliError([
      'compare',
      '--base',
      'b',
      '--head',
      'h',
      '--system',
      's',
      '--history',
      '/nonexistent-1,/nonexistent-2',
    ]);
    expect(history.error).toBe("error: command line: --history: '/nonexistent-1': no such folder");
    const flag = await cliError(['kat-manifest', 'd', 'kem-1', '--force', '--force']);
    expect(flag.error).toBe('error: command line: --force: only with --write CAMPAIGN_DIR');
  });

  it.each([
    [['compare', '--head', 'h', '--system', 's'], 'compare: missing --base DATA_DIR'],
    [['compare'], 'compare: missing --base DATA_DIR, --head DATA_DIR and --system ID'],
    [['run', FIXTURES, '--out', '/tmp/x'], 'run: missing --system ID'],
    [['run', '--system', 's', '--out', '/tmp/x'], 'run: missing CAMPAIGN_DIR'],
    [['run'], 'run: missing CAMPAIGN_DIR, --system ID and --out DATA_DIR'],
    [['report', 'd'], 'report: missing --out PAGES_DIR'],
    [['report', '--out', 'p'], 'report: missing DATA_DIR/ID'],
    [['validate'], 'validate: missing DATA_DIR/ID'],
    [['kat-manifest', 'd'], 'kat-manifest: missing CANDIDATE_ID'],
    [['kat-manifest'], 'kat-manifest: missing DATA_DIR/ID and CANDIDATE_ID'],
    [['merge', 'shard'], 'merge: missing --out DATA_DIR/ID'],
    [['merge', '--out', 'd'], 'merge: missing SHARD_DIR'],
    [['run', FIXTURES, '--system', '', '--out', '/tmp/x'], 'run: missing --system ID'],
  ])('%j names what is missing', async (args, message) => {
    const { code, error } = await cliError(args);
    expect(code).toBe(2);
    expect(error).toBe(`error: command line: ${message}`);
  });

  it.each([
    [['run', FIXTURES, 'x', '--system', 's', '--out', '/tmp/x'], 'run'],
    [['report', 'd', 'x', '--out', 'p'], 'report'],
    [['validate', 'd', 'x'], 'validate'],
    [['compare', 'x', '--base', 'b', '--head', 'h', '--system', 's'], 'compare'],
    [['kat-manifest', 'd', 'kem-1', 'x'], 'kat-manifest'],
    [['example', 'x'], 'example'],
  ])('%j: an extra argument is named', async (args, command) => {
    const { code, error } = await cliError(args);
    expect(code).toBe(2);
    expect(error).toBe(`error: command line: ${command}: unexpected argument 'x'`);
  });
});

describe('kat.sha256 lines', () => {
  it('for a label the candidate does not have make it INVALID, naming the line and the known labels; the others run', async () => {
    const root = fixtureCampaign(['kem-1', 'sign-1'], QUICK);
    const manifest = join(root, 'sign-1', 'kat.sha256');
    writeFileSync(manifest, `${readFileSync(manifest, 'utf8')}# renamed since:\n${'0'.repeat(64)} strict toysig/KAT_SIG_toysig.txt\n`);
    // A second broken candidate: every error is reported, not only the first.
    mkdirSync(join(root, 'kem-8'));
    writeFileSync(join(root, 'kem-8', 'candidate.yml'), 'id: kem-8\ntype: kem\n');
    const out = unwritten();
    const problem = `${join(shown(root), 'sign-1', 'kat.sha256')}: line 4: no instance is labelled 'toysig' in candidate.yml (labels: toy-sig)`;
    const r = await runCli(['run', root, '--system', 's', '--out', out, '--only', '^kem-1/good$', '--phases', 'build,kat']);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`INVALID     sign-1 — ${problem}`);
    expect(r.out.find((l) => l.startsWith('INVALID     kem-8 — '))).toMatch(/kem-8\/candidate\.yml: .*algorithm/);
    expect(r.out.at(-1)).toMatch(/^exit 1: 2 candidate\(s\) invalid, not built \(kem-8, sign-1\)/);
    // Both said before anything is built: ahead of the plan, which the run prints before its first build.
    const progress = r.progress.split('\n');
    const plan = progress.findIndex((l) => / plan: /.test(l));
    expect(plan).toBeGreaterThan(0);
    for (const id of ['kem-8', 'sign-1']) {
      const said = progress.findIndex((l) => l.includes(` ${id} INVALID (not built): `));
      expect(said, id).toBeGreaterThanOrEqual(0);
      expect(said, id).toBeLessThan(plan);
    }
    // The honest neighbour was built and checked; the invalid ones are recorded for the pages.
    const build = JSON.parse(readFileSync(join(out, 's', 'build.json'), 'utf8')) as BuildJson;
    expect(Object.entries(build.instances).map(([k, e]) => [k, e.kat])).toEqual([['kem-1/good', 'PASS']]);
    const campaign = JSON.parse(readFileSync(join(out, 's', 'campaign.json'), 'utf8')) as { invalid_candidates: unknown[] };
    expect(campaign.invalid_candidates).toEqual([expect.objectContaining({ id: 'kem-8' }), { id: 'sign-1', problem }]);
    const pages = tempDir();
    expect((await runCli(['report', join(out, 's'), '--out', pages])).code).toBe(0);
    const summary = readFileSync(join(pages, 'performance', 'summary_s.md'), 'utf8');
    expect(summary).toContain('## Invalid candidates');
    expect(summary).toMatch(/\| `sign-1` \| INVALID ⚠ \| .*no instance is labelled 'toysig'/);
  });

  it('are not written by kat-manifest --write for an instance candidate.yml no longer has', async () => {
    const root = fixtureCampaign(['sign-1'], QUICK);
    const manifest = join(root, 'sign-1', 'kat.sha256');
    const before = readFileSync(manifest, 'utf8');
    // Evidence of an earlier run, when the instance was still called 'old-sig'.
    const data = tempDir();
    mkdirSync(join(data, 'kat', 'sign-1', 'old-sig'), { recursive: true });
    writeFileSync(join(data, 'kat', 'sign-1', 'old-sig', 'KAT_SIG_old-sig.txt'), 'count = 0\nseed = 00\n');
    const entry = {
      candidate: 'sign-1',
      label: 'old-sig',
      instance: 'old-sig',
      variant: 'reference',
      flags: 'guide',
      kat: 'NOKAT',
      kat_file: 'kat/sign-1/old-sig/KAT_SIG_old-sig.txt',
    };
    writeFileSync(join(data, 'build.json'), JSON.stringify({ instances: { 'sign-1/old-sig': entry } }));
    const { code, error } = await cliError(['kat-manifest', data, 'sign-1', '--write', root]);
    expect(code).toBe(2);
    expect(error).toBe(
      `error: ${join(data, 'build.json')}: sign-1/old-sig: no instance is labelled 'old-sig' in sign-1/candidate.yml any more (labels: toy-sig); its kat.sha256 line would name none`,
    );
    expect(readFileSync(manifest, 'utf8')).toBe(before);
  });

  it('of the shipped campaigns all name real instances', () => {
    for (const root of [FIXTURES, join(repoRoot, 'examples', 'campaign'), join(repoRoot, 'test', 'fixtures', 'golden-campaign')])
      expect(loadCampaign(root).candidates.length).toBeGreaterThan(0);
  });
});

describe('system ids', () => {
  it('--system _x stops the run before anything is written, naming the option', async () => {
    const out = unwritten();
    const { code, error } = await cliError(['run', FIXTURES, '--system', '_x', '--out', out]);
    expect(code).toBe(2);
    expect(error).toBe(
      "error: command line: --system: '_x' must match the system id rule: a letter or digit, then letters, digits, _ or -",
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a systems: key of ngcc-perf.yml follows the same rule', async () => {
    const root = fixtureCampaign(['sign-1'], `${QUICK}systems:\n  _x:\n    cpu: 0\n`);
    const { code, error } = await cliError(['run', root, '--system', 's', '--out', unwritten()]);
    expect(code).toBe(2);
    expect(error).toMatch(
      /ngcc-perf\.yml: line 8: systems\._x: a system id must match the rule: a letter or digit, then letters, digits, _ or -/,
    );
  });
});

describe('the action inputs', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    process.exitCode = undefined;
  });

  /** Only these inputs set, as a workflow without `with:` defaults would (a local run, a test). */
  function inputs(values: Record<string, string>): void {
    process.env = { ...Object.fromEntries(Object.entries(saved).filter(([k]) => !k.startsWith('INPUT_'))) };
    for (const [k, v] of Object.entries(values)) process.env[`INPUT_${k.toUpperCase()}`] = v;
  }

  it('system: _x fails the action naming the input before anything runs', async () => {
    const workspace = tempDir();
    inputs({ system: '_x', mode: 'nightly', campaign: '.', 'data-dir': 'data' });
    process.env.GITHUB_WORKSPACE = workspace;
    const { log, failed } = await runActionCaptured();
    expect(failed).toBe(true);
    expect(log).toContain("::error::input 'system': '_x' must match the system id rule: a letter or digit, then letters, digits, _ or -");
    expect(existsSync(join(workspace, 'data'))).toBe(false);
  });

  it('an input not given takes the default written in config/defaults.ts', () => {
    inputs({ system: 'x86_1' });
    const read = readInputs();
    expect(read).toMatchObject({
      mode: ACTION_INPUT_DEFAULTS.mode,
      campaign: ACTION_INPUT_DEFAULTS.campaign,
      dataDir: ACTION_INPUT_DEFAULTS['data-dir'],
      pagesDir: ACTION_INPUT_DEFAULTS['pages-dir'],
      regressionThreshold: DEFAULT_THRESHOLD_PCT,
      comment: ACTION_INPUT_DEFAULTS.comment,
      publish: ACTION_INPUT_DEFAULTS.publish,
      publishBranch: ACTION_INPUT_DEFAULTS['publish-branch'],
      buildCache: true,
      allowForks: false,
    });
    expect([...read.failOn].join(',')).toBe(DEFAULT_FAIL_ON);
  });

  it("ACTION_INPUT_DEFAULTS says what action.yml's default: fields say", () => {
    const action = parse(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> };
    for (const [name, value] of Object.entries(ACTION_INPUT_DEFAULTS)) expect(action.inputs[name]?.default, name).toBe(value);
    const documented = Object.entries(action.inputs)
      .filter(([, i]) => i.default !== undefined && i.default !== '')
      .map(([name]) => name);
    expect(documented.sort()).toEqual(Object.keys(ACTION_INPUT_DEFAULTS).sort());
  });
});

describe('what a candidate may make a build read', () => {
  const sign1 = () => fixtureCampaign(['sign-1'], QUICK);
  const invalidLine = async (root: string) => {
    const r = await runCli(['run', root, '--system', 's', '--out', unwritten(), '--phases', 'build']);
    expect(r.code).toBe(1);
    return r.out.find((l) => l.startsWith('INVALID '));
  };

  it('is only inside the campaign repository and the harness: include: [/] is INVALID, naming the field', async () => {
    const root = sign1();
    const yml = join(root, 'sign-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/include: \[([^\]]*)\]/, 'include: [$1, /]'));
    expect(await invalidLine(root)).toMatch(
      /^INVALID {5}sign-1 — .*sign-1\/candidate\.yml: line \d+: instances\[0\]\.include\[1\]: '\/' is outside the campaign's repository and the harness; a build may read only those$/,
    );
  });

  it('follows no link out: a source folder linking outside, or a linked candidate folder, is INVALID', async () => {
    const root = sign1();
    const yml = join(root, 'sign-1', 'candidate.yml');
    symlinkSync('/etc', join(root, 'sign-1', 'elsewhere'));
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/dir: \S+/, 'dir: elsewhere'));
    expect(await invalidLine(root)).toMatch(/instances\[0\]\.dir: 'elsewhere' \(\/etc\) is outside the campaign's repository/);

    const other = sign1();
    const outside = tempDir();
    cpSync(join(other, 'sign-1'), join(outside, 'sign-1'), { recursive: true });
    rmSync(join(other, 'sign-1'), { recursive: true });
    symlinkSync(join(outside, 'sign-1'), join(other, 'sign-1'));
    expect(await invalidLine(other)).toMatch(
      /^INVALID {5}sign-1 — .*sign-1: the candidate folder links to .*, outside the campaign's repository$/,
    );
  });

  it('reads no manifest through a link: a kat.sha256 linking to a host file is INVALID and its content is not shown', async () => {
    const root = sign1();
    const secret = join(tempDir(), 'secret.txt');
    writeFileSync(secret, 'TOP-SECRET-HOST-FILE\n');
    rmSync(join(root, 'sign-1', 'kat.sha256'));
    symlinkSync(secret, join(root, 'sign-1', 'kat.sha256'));
    const line = await invalidLine(root);
    expect(line).toMatch(/sign-1\/kat\.sha256: is a symbolic link; it must be a regular file$/);
    expect(line).not.toContain('TOP-SECRET');
  });
});

describe('a campaign whose every candidate is INVALID', () => {
  it('still leaves evidence that validate accepts and report shows', async () => {
    const root = fixtureCampaign(['sign-1'], QUICK);
    writeFileSync(join(root, 'sign-1', 'kat.sha256'), 'not a manifest line\n');
    const out = unwritten();
    expect((await runCli(['run', root, '--system', 's', '--out', out])).code).toBe(1);
    expect((await runCli(['validate', join(out, 's')])).code).toBe(0);
    const pages = tempDir();
    expect((await runCli(['report', join(out, 's'), '--out', pages])).code).toBe(0);
    expect(readFileSync(join(pages, 'performance', 'summary_s.md'), 'utf8')).toMatch(/\| `sign-1` \| INVALID ⚠ \| .*kat\.sha256: line 1/);
  });
});

describe('the driver cache root', () => {
  afterEach(() => {
    delete process.env.NGCC_CACHE_DIR;
  });

  /** A one-instance run with NGCC_CACHE_DIR set to `root`: its exit, its one error line, and whether the evidence folder was made. */
  async function runWithCacheRoot(root: string) {
    process.env.NGCC_CACHE_DIR = root;
    const out = unwritten();
    const r = await cliError(['run', fixtureCampaign(['kem-1'], QUICK), '--system', 's', '--out', out, '--only', '^kem-1/good$']);
    return { ...r, wrote: existsSync(out) };
  }

  const refusal = (root: string, why: string) =>
    `error: ${root}: the driver cache must be a folder of this user that only it may write, but ${why}: remove it, or set NGCC_CACHE_DIR to such a folder`;

  it('that others may write, or that is a link, stops the run as an input error (exit 2) naming it', async () => {
    const open = join(tempDir(), 'open');
    mkdirSync(open, { mode: 0o777 });
    // mkdir's mode passes through the umask.
    chmodSync(open, 0o777);
    const linked = join(tempDir(), 'linked');
    symlinkSync(tempDir(), linked);
    for (const [root, why] of [
      [open, 'others may write it (mode 777)'],
      [linked, 'not a folder (a link or a file)'],
    ] as const)
      expect(await runWithCacheRoot(root), root).toEqual({ code: 2, error: refusal(root, why), wrote: false });
  });

  it('that belongs to another user stops the run the same way', async () => {
    const uid = process.getuid!();
    // As root, a folder given to nobody; otherwise the filesystem's root, which is root's.
    let root = '/';
    if (uid === 0) {
      root = join(tempDir(), 'foreign');
      mkdirSync(root, { mode: 0o700 });
      chownSync(root, 65534, 65534);
    }
    const owner = lstatSync(root).uid;
    expect(owner).not.toBe(uid);
    expect(await runWithCacheRoot(root)).toEqual({
      code: 2,
      error: refusal(root, `owned by uid ${owner}, not this user (${uid})`),
      wrote: false,
    });
  });
});
