import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { mergeShardFolders } from '../src/evidence/merge.js';
import { publish } from '../src/github/publish.js';
import { canonicalDigest } from '../src/kat/manifest.js';
import { parseManifest, readManifest } from '../src/config/katManifest.js';
import { FIXTURES, fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { clone, filesOn, git, initBare } from './helpers/git.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const fixtures = FIXTURES;
const survey = join(repoRoot, 'test', 'fixtures', 'survey');

/** The CLI with what it printed as text. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCli(args);
  return { code: r.code, out: r.out.join('\n'), err: r.err.join('\n') };
}

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const json = (path: string, value: unknown) => write(path, `${JSON.stringify(value, null, 1)}\n`);
const readBuild = (dir: string) => JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8')) as BuildJson;

/** Every file under dir with its content: a folder's state, to show that a refused merge changed nothing. */
function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const p = join(e.parentPath, e.name);
        return [relative(dir, p), readFileSync(p, 'base64')];
      }),
  );
}

/** A NOKAT instance (valid without a KAT log) with one record file. */
function instance(dir: string, key: string, record = `{"note": "${key}"}\n`) {
  const [candidate, label] = key.split('/') as [string, string];
  write(join(dir, 'survey', candidate, `${label}.json`), record);
  return { candidate, label, instance: label, kat: 'NOKAT' };
}

function evidence(dir: string, keys: string[], campaign: Record<string, unknown>) {
  json(join(dir, 'build.json'), { instances: Object.fromEntries(keys.map((k) => [k, instance(dir, k)])) });
  json(join(dir, 'campaign.json'), { schema: 2, system_id: 'x86_1', ...campaign });
  return dir;
}

describe('merge', () => {
  it('merges a re-run of one instance into existing evidence: that instance replaced, the others kept, library paths in the output', async () => {
    const phases = new Set(['build', 'kat', 'measure'] as const);
    const [a, b, rerun, data] = [tempDir(), tempDir(), tempDir(), tempDir()];
    await runCampaign({ campaignDir: survey, system: 's', dataDir: a, phases, shard: { index: 1, count: 2 } });
    await runCampaign({ campaignDir: survey, system: 's', dataDir: b, phases, shard: { index: 2, count: 2 } });
    const out = join(data, 's');
    expect((await cli(['merge', '--out', out, join(a, 's'), join(b, 's')])).code).toBe(0);
    const first = readBuild(out);
    const keys = Object.keys(first.instances);
    expect(keys.sort()).toEqual(['kem-2/mixed', 'kem-2/unreachable']);
    // Libraries: relative to the campaign, as in a run, and pointing at the merged copy.
    for (const e of Object.values(first.instances)) {
      const lib = resolve(survey, e.library!);
      expect(lib.startsWith(`${out}/build/`)).toBe(true);
      expect(existsSync(lib)).toBe(true);
    }

    await runCampaign({ campaignDir: survey, system: 's', dataDir: rerun, phases, only: /^kem-2\/mixed$/ });
    expect(Object.keys(readBuild(join(rerun, 's')).instances)).toEqual(['kem-2/mixed']);
    const unreachableBefore = snapshot(join(out, 'records', 'kem-2'));
    const r = await cli(['merge', '--out', out, join(rerun, 's')]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/0 instance\(s\) added, 1 replaced, 1 kept/);
    const merged = readBuild(out);
    expect(Object.keys(merged.instances)).toEqual(Object.keys(first.instances));
    expect(merged.instances['kem-2/unreachable']).toEqual(first.instances['kem-2/unreachable']);
    const rerunEntry = readBuild(join(rerun, 's')).instances['kem-2/mixed']!;
    expect({ ...merged.instances['kem-2/mixed'], library: undefined }).toEqual({ ...rerunEntry, library: undefined });
    for (const f of readdirSync(join(rerun, 's', 'records', 'kem-2')))
      expect(readFileSync(join(out, 'records', 'kem-2', f), 'utf8')).toBe(readFileSync(join(rerun, 's', 'records', 'kem-2', f), 'utf8'));
    const unreachableAfter = snapshot(join(out, 'records', 'kem-2'));
    const kept = Object.keys(unreachableBefore).filter((f) => f.startsWith('unreachable__'));
    expect(kept.length).toBeGreaterThan(0);
    for (const f of kept) expect(unreachableAfter[f]).toBe(unreachableBefore[f]);
    expect(validateDataset(out)).toEqual([]);
    // The lock is released and no temporary folder is left beside the output.
    expect(existsSync(join(out, '.ngcc-perf.lock'))).toBe(false);
    expect(readdirSync(data)).toEqual(['s']);
  });

  it('two shards with one instance, differently: an error naming both, and the existing output untouched', async () => {
    const dir = tempDir();
    const out = evidence(join(dir, 'out', 'x86_1'), ['kem-1/a'], {
      started_utc: '2024-01-01T00:00:00Z',
      ended_utc: '2024-01-01T01:00:00Z',
    });
    const s1 = evidence(join(dir, 's1', 'x86_1'), ['kem-1/a', 'kem-1/b'], {});
    const s2 = evidence(join(dir, 's2', 'x86_1'), ['kem-1/b'], {});
    write(join(s2, 'survey', 'kem-1', 'b.json'), '{"note": "other"}\n');
    const before = snapshot(out);
    const r = await cli(['merge', '--out', out, s1, s2]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `error: ${s2}: instance kem-1/b: also in ${s1}, which has a different survey/kem-1/b.json: merge one of them (a re-run into its own folder is merged alone, after the others)`,
    );
    expect(snapshot(out)).toEqual(before);
    // The same instance with the same evidence in two shards is no conflict.
    write(join(s2, 'survey', 'kem-1', 'b.json'), '{"note": "kem-1/b"}\n');
    expect((await cli(['merge', '--out', out, s1, s2])).code).toBe(0);
  });

  it('campaign.json spans the shards: earliest start, latest end, null while one has not ended', () => {
    const dir = tempDir();
    const s1 = evidence(join(dir, 's1', 'x86_1'), ['kem-1/a'], {
      started_utc: '2024-05-02T10:00:00.000Z',
      ended_utc: '2024-05-02T12:00:00.000Z',
      environment_at_start: 'late',
      environment_latest: 'early-end',
      host_checks: [{ shard: '1/2' }],
    });
    const s2 = evidence(join(dir, 's2', 'x86_1'), ['kem-1/b'], {
      started_utc: '2024-05-02T09:00:00.000Z',
      ended_utc: '2024-05-02T13:00:00.000Z',
      environment_at_start: 'early',
      environment_latest: 'late-end',
      host_checks: [{ shard: '2/2' }],
    });
    const out = join(dir, 'out', 'x86_1');
    expect(mergeShardFolders([s1, s2], out)).toMatchObject({ applied: true, added: ['kem-1/a', 'kem-1/b'], problems: [] });
    const c = JSON.parse(readFileSync(join(out, 'campaign.json'), 'utf8')) as Record<string, unknown>;
    expect(c).toMatchObject({
      started_utc: '2024-05-02T09:00:00.000Z',
      ended_utc: '2024-05-02T13:00:00.000Z',
      environment_at_start: 'early',
      environment_latest: 'late-end',
    });
    expect(c.host_checks).toEqual([{ shard: '1/2' }, { shard: '2/2' }]);

    const s3 = evidence(join(dir, 's3', 'x86_1'), ['kem-1/c'], { started_utc: '2024-05-02T08:00:00.000Z', ended_utc: null });
    const out2 = join(dir, 'out2', 'x86_1');
    mergeShardFolders([s1, s3], out2);
    expect(JSON.parse(readFileSync(join(out2, 'campaign.json'), 'utf8'))).toMatchObject({
      started_utc: '2024-05-02T08:00:00.000Z',
      ended_utc: null,
    });
  });

  it('takes the evidence lock of the output: refused while another process writes it', async () => {
    const dir = tempDir();
    const out = evidence(join(dir, 'out', 'x86_1'), ['kem-1/a'], {});
    const shard = evidence(join(dir, 's1', 'x86_1'), ['kem-1/a'], {});
    write(join(shard, 'survey', 'kem-1', 'a.json'), '{"note": "new"}\n');
    // The parent of this test process is alive: its pid in the lock is a run in progress.
    write(join(out, '.ngcc-perf.lock'), String(process.ppid));
    const before = snapshot(out);
    const r = await cli(['merge', '--out', out, shard]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`another run \\(pid ${process.ppid}\\) is writing this evidence`));
    expect(snapshot(out)).toEqual(before);
    // Nor is a shard merged while a run still writes it.
    write(join(out, '.ngcc-perf.lock'), '4194305');
    write(join(shard, '.ngcc-perf.lock'), String(process.ppid));
    const r2 = await cli(['merge', '--out', out, shard]);
    expect(r2.code).toBe(2);
    expect(r2.err).toBe(`error: ${shard}: a run (pid ${process.ppid}) is still writing this shard; merge it when the run has ended`);
  });

  it('a merge that would add validation problems changes nothing', async () => {
    const dir = tempDir();
    const out = evidence(join(dir, 'out', 'x86_1'), ['kem-1/a', 'kem-2/b'], {});
    // kem-1/a's KAT log is a file the incoming kem-2/b no longer brings: merged, its entry would point nowhere.
    const log = write(join(out, 'kat', 'kem-2', 'b', 'shared.log'), 'RESULT kem-1 a NOKAT\n');
    const build = readBuild(out);
    build.instances['kem-1/a']!.kat_log = relative(out, log);
    json(join(out, 'build.json'), build);
    const shard = evidence(join(dir, 's', 'x86_1'), ['kem-2/b'], {});
    const before = snapshot(out);
    const problemsBefore = validateDataset(out);
    const r = await cli(['merge', '--out', out, shard]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('build.json: instances["kem-1/a"].kat_log: kat/kem-2/b/shared.log does not exist');
    expect(r.err).toMatch(/not merged, .*nothing was changed/);
    expect(snapshot(out)).toEqual(before);
    expect(validateDataset(out)).toEqual(problemsBefore);
  });

  it('refuses an output inside a shard, and evidence of another system', async () => {
    const dir = tempDir();
    const s1 = evidence(join(dir, 's1', 'x86_1'), ['kem-1/a'], {});
    expect((await cli(['merge', '--out', join(s1, 'merged'), s1])).err).toMatch(/--out: .* overlap/);
    const arm = evidence(join(dir, 'arm', 'arm_1'), ['kem-1/b'], {});
    json(join(arm, 'campaign.json'), { system_id: 'arm_1' });
    const r = await cli(['merge', '--out', join(dir, 'out', 'x86_1'), s1, arm]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/arm_1\/campaign\.json: system_id: 'arm_1', but .*says 'x86_1'/);
    expect(existsSync(join(dir, 'out', 'x86_1'))).toBe(false);
  });
});

describe('publish of merged evidence', () => {
  it('keeps the branch evidence of instances the merge lacks (a failed shard); prune removes them', async () => {
    const dir = tempDir();
    const bare = await initBare(dir);
    mkdirSync(join(dir, 'c'));
    const repoDir = await clone(bare, join(dir, 'c'));
    const opts = (from: string, extra = {}) => ({
      repoDir,
      remote: 'origin',
      branch: 'data',
      files: readdirSync(from, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => ({ from: join(e.parentPath, e.name), to: join('data', 'x86_1', relative(from, join(e.parentPath, e.name))) })),
      owns: ['data/x86_1'],
      message: 'evidence',
      author: { name: 't', email: 't@example.org' },
      ...extra,
    });
    const all = evidence(join(dir, 'night1'), ['kem-1/a', 'kem-2/b'], {});
    write(join(all, 'records', 'kem-2', 'b__keygen.json'), '{}\n');
    write(join(all, 'records', 'kem-1', 'a__keygen.json'), '{}\n');
    await publish(opts(all));
    // Night 2: the shard with kem-2/b failed; kem-1/a no longer has a keygen record.
    const partial = evidence(join(dir, 'night2'), ['kem-1/a'], {});
    await publish(opts(partial));
    expect((await filesOn(bare, 'data')).sort()).toEqual([
      'data/x86_1/build.json',
      'data/x86_1/campaign.json',
      'data/x86_1/records/kem-2/b__keygen.json',
      'data/x86_1/survey/kem-1/a.json',
      'data/x86_1/survey/kem-2/b.json',
    ]);
    const onBranch = JSON.parse(await git(bare, 'show', 'data:data/x86_1/build.json')) as BuildJson;
    expect(Object.keys(onBranch.instances)).toEqual(['kem-1/a', 'kem-2/b']);

    // Night 3: kem-2/b is still failing, but is still in the campaign: kept.
    await publish(opts(partial, { campaignInstances: new Set(['kem-1/a', 'kem-2/b']) }));
    expect(await filesOn(bare, 'data')).toContain('data/x86_1/records/kem-2/b__keygen.json');
    // Night 4: kem-2 was withdrawn from the campaign: its evidence and its build.json entry leave.
    await publish(opts(partial, { campaignInstances: new Set(['kem-1/a']) }));
    expect((await filesOn(bare, 'data')).sort()).toEqual([
      'data/x86_1/build.json',
      'data/x86_1/campaign.json',
      'data/x86_1/survey/kem-1/a.json',
    ]);
    const after = JSON.parse(await git(bare, 'show', 'data:data/x86_1/build.json')) as BuildJson;
    expect(Object.keys(after.instances)).toEqual(['kem-1/a']);

    await publish(opts(all));
    await publish(opts(partial, { prune: true }));
    expect((await filesOn(bare, 'data')).sort()).toEqual([
      'data/x86_1/build.json',
      'data/x86_1/campaign.json',
      'data/x86_1/survey/kem-1/a.json',
    ]);
  });
});

describe('kat.sha256 duplicates', () => {
  const d = (c: string) => c.repeat(64);
  it('two different digests for one file, mode and record count: an error naming both lines', () => {
    const text = `# c\n${d('a')} strict x/K.txt\n${d('b')} nolen x/K.txt\n${d('c')} strict x/K.txt\n`;
    expect(() => parseManifest(text, 'kem-1/kat.sha256')).toThrow(
      'kem-1/kat.sha256: line 4: conflicts with line 2: two different strict digests for x/K.txt',
    );
    // An exact repeat, or another record count, is no conflict.
    expect(parseManifest(`${d('a')} strict x/K.txt\n${d('a')} strict x/K.txt\n${d('b')} strict:5 x/K.txt\n`, 'k')).toHaveLength(3);
    // :N is bounded: the driver writes every record asked for.
    expect(parseManifest(`${d('a')} strict:1000 x/K.txt\n`, 'k')).toHaveLength(1);
    expect(() => parseManifest(`# c\n${d('a')} strict:1001 x/K.txt\n`, 'k')).toThrow('k: line 2: :1001 asks for more than 1000 records');
  });
});

/**
 * A campaign with the fixture toy signature only, with the given kat.sha256. The candidate also
 * declares the instances other-a and other-b (never run) that the curated manifest has lines for:
 * a line for a label the candidate lacks is refused when the campaign loads.
 */
function toySig(manifest: string): string {
  const root = fixtureCampaign(['sign-1'], QUICK);
  const yml = join(root, 'sign-1', 'candidate.yml');
  writeFileSync(yml, `${readFileSync(yml, 'utf8')}  - label: other-a\n    dir: toy-sig\n  - label: other-b\n    dir: toy-sig\n`);
  writeFileSync(join(root, 'sign-1', 'kat.sha256'), manifest);
  return root;
}

const GOOD = readManifest(join(fixtures, 'sign-1', 'kat.sha256'))[0]!.sha256;
const WRONG = 'f'.repeat(64);
/** A curated manifest: comments, other instances' lines, and the toy-sig line at line 4. */
const curated = (toyLine: string) =>
  [
    '# curated by hand: do not lose me',
    `${'1'.repeat(64)} strict other-a/KAT_SIG_other-a.txt`,
    '# the toy instance:',
    toyLine,
    `${'2'.repeat(64)} nolen:5 other-b/KAT_SIG_other-b.txt`,
    '',
  ].join('\n');

async function katRun(root: string) {
  const data = tempDir();
  const s = await runCampaign({
    campaignDir: root,
    system: 's',
    dataDir: data,
    phases: new Set(['build', 'kat']),
    only: /^sign-1\/toy-sig$/,
  });
  return { data: join(data, 's'), kat: s.instances[0]!.kat };
}

/** The mark kat-manifest ends a line it writes with: recorded from the harness's output, today (UTC). */
const recorded = () => `# recorded by the harness on ${new Date().toISOString().slice(0, 10)}`;
/** The manifest's text with a line's mark of any day made today's: a run across midnight UTC marks the day it ran. */
const markedToday = (text: string) => text.replace(/# recorded by the harness on \d{4}-\d\d-\d\d/g, recorded());

describe('kat-manifest --write', () => {
  it('keeps a curated manifest that already says the same: comments and other lines untouched', async () => {
    const text = curated(`${GOOD} strict toy-sig/KAT_SIG_toy-sig.txt`);
    const root = toySig(text);
    const { data, kat } = await katRun(root);
    expect(kat).toBe('PASS');
    const r = await cli(['kat-manifest', data, 'sign-1', '--write', root]);
    expect(r.code).toBe(0);
    expect(markedToday(readFileSync(join(root, 'sign-1', 'kat.sha256'), 'utf8'))).toBe(text);
  });

  it('never turns a MISMATCH into a PASS: the differing line is refused, naming it; --force replaces only that line', async () => {
    const text = curated(`${WRONG} strict toy-sig/KAT_SIG_toy-sig.txt`);
    const root = toySig(text);
    const manifest = join(root, 'sign-1', 'kat.sha256');
    const { data, kat } = await katRun(root);
    expect(kat).toBe('MISMATCH');
    const refused = await cli(['kat-manifest', data, 'sign-1', '--write', root]);
    expect(refused.code).toBe(2);
    expect(refused.err.split('\n')).toHaveLength(1);
    expect(refused.err).toMatch(
      /kat\.sha256: line 4: says f{64} strict toy-sig\/KAT_SIG_toy-sig\.txt, the generated KAT gives 354e581bcf81[0-9a-f]{52} strict .*--force replaces the line/,
    );
    expect(readFileSync(manifest, 'utf8')).toBe(text);

    const forced = await cli(['kat-manifest', data, 'sign-1', '--write', root, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.out).toMatch(/line 4 replaced \(--force\): f{64} strict toy-sig\/KAT_SIG_toy-sig\.txt -> 354e581b/);
    expect(markedToday(readFileSync(manifest, 'utf8'))).toBe(curated(`${GOOD} strict toy-sig/KAT_SIG_toy-sig.txt  ${recorded()}`));
    expect((await katRun(root)).kat).toBe('PASS');
  });

  it('adds a line for an instance that had none (NOKAT), keeping the rest', async () => {
    const text = curated('# (no toy-sig line yet)');
    const root = toySig(text);
    const { data, kat } = await katRun(root);
    expect(kat).toBe('NOKAT');
    expect((await cli(['kat-manifest', data, 'sign-1', '--write', root])).code).toBe(0);
    expect(readFileSync(join(root, 'sign-1', 'kat.sha256'), 'utf8')).toBe(
      `${text}${GOOD} strict toy-sig/KAT_SIG_toy-sig.txt  ${recorded()}\n`,
    );
    expect((await katRun(root)).kat).toBe('PASS');
  });

  it('--records beyond the records of the KAT file is refused; within them it is the digest of the first N', async () => {
    const root = toySig('# none yet\n');
    const { data } = await katRun(root);
    const r = await cli(['kat-manifest', data, 'sign-1', '--records', '50']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^error: command line: --records: 50 exceeds the 10 record\(s\) in .*KAT_SIG_toy-sig\.txt \(sign-1\/toy-sig\); use --records 10 or fewer$/,
    );
    const ok = await cli(['kat-manifest', data, 'sign-1', '--records', '3', '--write', root]);
    expect(ok.code).toBe(0);
    const kat = readFileSync(join(data, 'kat', 'sign-1', 'toy-sig', 'KAT_SIG_toy-sig.txt'), 'utf8');
    expect(readManifest(join(root, 'sign-1', 'kat.sha256'))).toMatchObject([{ records: 3, sha256: canonicalDigest(kat, 'strict', 3) }]);
  });
});
