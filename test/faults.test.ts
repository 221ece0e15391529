import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateDataset } from '../src/evidence/validate.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { runCli } from './helpers/cli.js';
import { writeSyntheticSystem } from './helpers/dataset.js';
import { bundledCli, sleep } from './helpers/hostile.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Faults a run or a reader meets on a real host: evidence of the wrong shape (a hand edit, a bad
 * merge), a full disk, a run killed outright, limits beyond reason. Each must end with its file named
 * and exit 1 or 2, never an internal error, and leave nothing behind.
 */

/** A valid evidence folder DATA_DIR/x of one toy instance with three operations. */
function evidence(): string {
  const data = tempDir();
  writeSyntheticSystem(
    data,
    'x',
    [{ id: 'kem-1', label: 'a' }],
    ['keygen', 'enc', 'dec'].map((op) => ({ id: 'kem-1', label: 'a', op, trials: [100_000, 100_400, 99_800] })),
  );
  return data;
}

describe('evidence of the wrong shape', () => {
  const record = join('records', 'kem-1', 'a__enc.json');
  const cases: Array<[string, string, string]> = [
    [record, 'null', 'not evidence of this kind: expected object, received null'],
    [record, '42', 'not evidence of this kind: expected object, received number'],
    [record, '[]', 'not evidence of this kind: expected object, received array'],
    [
      record,
      '{"candidate": "kem-1", "label": "a", "operation": "enc", "status": "complete", "trials": [1, 2]}',
      'not evidence of this kind: trials.0: expected object, received number',
    ],
    ['build.json', '{}', 'not evidence of this kind: instances: expected record, received undefined'],
    ['build.json', '{"instances": null}', 'not evidence of this kind: instances: expected record, received null'],
    [
      'build.json',
      '{"instances": {"kem-1/a": {"kat": 5}}}',
      'not evidence of this kind: instances.kem-1/a.kat: expected string, received number',
    ],
    ['campaign.json', 'null', 'not evidence of this kind: expected object, received null'],
    ['campaign.json', '[1, 2]', 'not evidence of this kind: expected object, received array'],
  ];

  it.each(cases)('%s holding %s is named by validate and report (exit 1) and compare (exit 2)', async (file, text, problem) => {
    const good = evidence();
    const data = tempDir();
    cpSync(good, data, { recursive: true });
    writeFileSync(join(data, 'x', file), text);
    const system = join(data, 'x');
    const named = new RegExp(`${file.replaceAll('.', '\\.')}: ${problem.replace(/[.[\]()]/g, '\\$&')}`);

    const validate = await runCli(['validate', system]);
    expect(validate.code).toBe(1);
    expect(validate.out.join('\n')).toMatch(named);

    const report = await runCli(['report', system, '--out', tempDir()]);
    expect(report.code, report.err.join('\n')).toBe(1);
    expect(report.out.join('\n')).toMatch(named);

    // compare judges nothing on evidence it cannot read: an input error (exit 2) naming the file.
    const compare = await runCli(['compare', '--base', good, '--head', data, '--system', 'x']);
    expect(compare.code).toBe(2);
    expect(compare.err).toEqual([
      `error: ${relative(process.cwd(), join(system, file))}: unreadable head evidence (${problem}); run ngcc-perf validate on it`,
    ]);
    for (const r of [validate, report, compare]) expect(r.err.join('\n')).not.toMatch(/internal error/);
  });
});

describe('a build.json of the wrong shape read alone', () => {
  it('stops run and kat-manifest with exit 2, naming the field, before anything is built', async () => {
    const data = tempDir();
    mkdirSync(join(data, 's'));
    writeFileSync(join(data, 's', 'build.json'), '{"instances": null}');
    const run = await runCli(['run', fixtureCampaign(['kem-1'], QUICK), '--system', 's', '--out', data, '--only', '^kem-1/good$']);
    expect(run.code).toBe(2);
    expect(run.err).toEqual([
      `error: ${join(data, 's', 'build.json')}: not evidence of this kind: instances: expected record, received null; restore it (e.g. from git) or delete it, after which every instance is rebuilt and KAT-checked again`,
    ]);
    expect(readdirSync(join(data, 's'))).toEqual(['build.json']);
    const manifest = await runCli(['kat-manifest', join(data, 's'), 'kem-1']);
    expect(manifest.code).toBe(2);
    expect(manifest.err).toEqual([
      `error: ${join(data, 's', 'build.json')}: not evidence of this kind: instances: expected record, received null`,
    ]);
  });
});

describe('evidence that reads but does not validate', () => {
  it('a hand-edited mean is drawn with a warning, on the page and in the comparison, where validate refuses it', async () => {
    const good = evidence();
    const data = tempDir();
    cpSync(good, data, { recursive: true });
    const system = join(data, 'x');
    const path = join(system, 'records', 'kem-1', 'a__enc.json');
    const r = JSON.parse(readFileSync(path, 'utf8')) as { mean_cycles: number };
    writeFileSync(path, JSON.stringify({ ...r, mean_cycles: r.mean_cycles / 2 }));
    const problem = /^records\/kem-1\/a__enc\.json: mean_cycles \S+ != \S+ recomputed from trials$/;
    expect(validateDataset(system)).toEqual([expect.stringMatching(problem)]);

    const pages = tempDir();
    const report = await runCli(['report', system, '--out', pages]);
    expect(report.code).toBe(0);
    expect(report.out).toContainEqual(expect.stringMatching(/^warning: .*records\/kem-1\/a__enc\.json: mean_cycles /));
    expect(report.out.at(-1)).toMatch(/; warning: 1 validation problem\(s\), said on the pages$/);
    for (const page of [join('performance', 'summary_x.md'), join('kem-1', 'perf_x.md')])
      expect(readFileSync(join(pages, page), 'utf8'), page).toMatch(
        /⚠ \*\*This evidence does not validate\*\*: 1 problem, so the figures below may not be what was measured\. The first: `records\/kem-1\/a__enc\.json: mean_cycles /,
      );

    const compare = await runCli(['compare', '--base', good, '--head', data, '--system', 'x']);
    expect(compare.code).toBe(0);
    expect(compare.out.join('\n')).toMatch(
      /⚠ The head evidence does not validate \(1 problem; the first: `records\/kem-1\/a__enc\.json: mean_cycles /,
    );
    const json = await runCli(['compare', '--base', good, '--head', data, '--system', 'x', '--format', 'json']);
    expect((JSON.parse(json.out.join('\n')) as { evidence_problems: unknown }).evidence_problems).toEqual({
      head: [expect.stringMatching(problem)],
    });
  });
});

describe('limits on the work asked for', () => {
  it('refuses warm-ups, trials, measurements and memory beyond their bounds before anything runs, naming the field', async () => {
    for (const [setting, field] of [
      ['warmups: 1e12', 'planning.warmups'],
      ['trials: 1001', 'planning.trials'],
      ['min_measurements: 2000000', 'planning.min_measurements'],
      ['memory_limit_mb: 1', 'planning.memory_limit_mb'],
    ] as const) {
      const out = join(tempDir(), 'data');
      const r = await runCli([
        'run',
        fixtureCampaign(['kem-1'], `planning:\n  ${setting}\n`),
        '--system',
        's',
        '--out',
        out,
        '--only',
        '^kem-1/good$',
      ]);
      expect(r.code, setting).toBe(2);
      expect(r.err.join('\n'), setting).toMatch(new RegExp(`ngcc-perf\\.yml: line 2: ${field.replace('.', '\\.')}: Too (big|small)`));
      expect(existsSync(out), setting).toBe(false);
    }
  });

  it('makes a candidate of 257 instances, or of a 2 MiB candidate.yml, INVALID, and stops a campaign of 4097', async () => {
    const campaign = tempDir();
    const candidate = (id: string, instances: number, padding = '') => {
      mkdirSync(join(campaign, id, 'src'), { recursive: true });
      writeFileSync(join(campaign, id, 'src', 'x.c'), 'int x;\n');
      const rows = Array.from({ length: instances }, (_, i) => `  - label: i${i}\n    dir: src\n`).join('');
      writeFileSync(join(campaign, id, 'candidate.yml'), `${padding}id: ${id}\ntype: kem\nalgorithm: x\ninstances:\n${rows}`);
    };
    candidate('kem-1', 257);
    candidate('kem-2', 1, `# ${'x'.repeat(2 << 20)}\n`);
    const r = await runCli(['run', campaign, '--system', 's', '--out', join(tempDir(), 'data'), '--phases', 'build']);
    expect(r.code).toBe(1);
    const said = [...r.out, ...r.err, r.progress].join('\n');
    expect(said).toMatch(/kem-1\/candidate\.yml: line \d+: instances: Too big: expected array to have <=256 items/);
    expect(said).toMatch(
      /kem-2\/candidate\.yml: 2097\d{3} bytes: a manifest holds at most 1048576 \(docs\/campaign\.md#limits\); nothing was read/,
    );

    const big = tempDir();
    for (let c = 1; c <= 17; c++) {
      mkdirSync(join(big, `kem-${c}`, 'src'), { recursive: true });
      writeFileSync(join(big, `kem-${c}`, 'src', 'x.c'), 'int x;\n');
      const rows = Array.from({ length: 241 }, (_, i) => `  - label: i${i}\n    dir: src\n`).join('');
      writeFileSync(join(big, `kem-${c}`, 'candidate.yml'), `id: kem-${c}\ntype: kem\nalgorithm: x\ninstances:\n${rows}`);
    }
    const out = join(tempDir(), 'data');
    const all = await runCli(['run', big, '--system', 's', '--out', out, '--phases', 'build']);
    expect(all.code).toBe(2);
    expect(all.err).toEqual([
      expect.stringMatching(
        /: 4097 instances: a campaign holds at most 4096 \(docs\/campaign\.md#limits\); split it into several campaigns$/,
      ),
    ]);
    expect(existsSync(out)).toBe(false);
  });
});

/** A folder of a tmpfs of `size` mounted in a user and mount namespace of its own, as `unshare -rm` makes one. */
const tmpfsWorks =
  spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=64k none ${tempDir()}`], { stdio: 'ignore' }).status === 0;
if (!tmpfsWorks)
  console.warn('test/faults.test.ts: the full-disk test is skipped: unshare -rm cannot mount a tmpfs here (user namespaces off?)');

describe('a full disk', () => {
  let cli: string;
  beforeAll(() => {
    cli = bundledCli();
  });

  it.skipIf(!tmpfsWorks)(
    'stops the run with exit 2 naming the file and the space it needed, leaves no temporary file, and the run resumes once there is room',
    () => {
      const campaign = fixtureCampaign(['kem-1'], QUICK);
      // Early (the build's log) and late (campaign.json, after the measurements): two sizes of disk.
      for (const size of ['40k', '150k']) {
        const out = tempDir();
        const run = `node ${cli} run ${campaign} --system s --out ${out} --only '^kem-1/good$' >run.out 2>&1; echo $? >run.code`;
        const script = [
          `mount -t tmpfs -o size=${size} none ${out}`,
          `cd ${tempDir()}`,
          run,
          `cat run.code; grep -v '^20' run.out | tail -1`,
          `find ${out} -name '*.tmp-*'`,
          `mount -o remount,size=64m ${out}`,
          run,
          'echo "again $(cat run.code)"',
          // Why a resumed run failed, on the test's stderr, not among the lines compared.
          `[ "$(cat run.code)" = 0 ] || grep -v '^20' run.out | tail -4 >&2`,
          `node ${cli} validate ${out}/s`,
        ].join('\n');
        const lines = execFileSync('unshare', ['-rm', 'bash', '-c', script], { encoding: 'utf8' }).trim().split('\n');
        expect(lines[0], `${size}: ${lines.join('\n')}`).toBe('2');
        expect(lines[1], size).toMatch(
          new RegExp(
            `^error: \\S*${out}/s/\\S+: no space left on its device \\(ENOSPC\\): writing it needs \\d+ bytes, \\d+ bytes are free there; free some space and run again \\(a run resumes where it stopped\\)$`,
          ),
        );
        // No temporary file was found, the resumed run passed, and what it left validates.
        expect(lines.slice(2), size).toEqual(['again 0', expect.stringMatching(/: valid$/)]);
      }
    },
  );
});

describe('what a run leaves when it is killed', () => {
  let cli: string;
  beforeAll(() => {
    cli = bundledCli();
  });

  it('a temporary file of an unfinished write is reported by validate and removed by the next run', async () => {
    const campaign = fixtureCampaign(['kem-1'], QUICK);
    const data = tempDir();
    expect((await runCli(['run', campaign, '--system', 's', '--out', data, '--only', '^kem-1/good$', '--phases', 'build,kat'])).code).toBe(
      0,
    );
    const dead = deadPid();
    const stray = join('kat', 'kem-1', `good.log.tmp-${dead}-3`);
    writeFileSync(join(data, 's', stray), 'RESULT kem-1 go');
    expect(validateDataset(join(data, 's'))).toEqual([
      `${stray}: the temporary file of a write that never finished (a run killed, or a full disk); the next run removes it`,
    ]);
    const again = await runCli(['run', campaign, '--system', 's', '--out', data, '--only', '^kem-1/good$', '--phases', 'build,kat']);
    expect(again.code).toBe(0);
    expect(again.progress).toContain(`removed 1 unfinished write(s) of an earlier run: ${stray}`);
    expect(existsSync(join(data, 's', stray))).toBe(false);
    expect(validateDataset(join(data, 's'))).toEqual([]);
  });

  it("removes its scratch folders (dec's keys) when stopped, and the next run sweeps those of one killed outright", async () => {
    // A dec slow enough that its trial is under way when the signal comes: the inputs' folder exists then.
    const campaign = fixtureCampaign(['kem-1'], 'planning:\n  trials: 2\n  trial_target_s: 1\n  op_budget_s: 10\n  warmups: 1\n');
    const yml = join(campaign, 'kem-1', 'candidate.yml');
    writeFileSync(
      yml,
      readFileSync(yml, 'utf8').replace(
        '  - label: good\n    dir: good\n',
        '  - label: good\n    dir: good\n    defines: {TOY_KEM_SLOWDOWN: 3000000}\n',
      ),
    );
    const tmp = tempDir();
    const scratchOf = (pid: number) => readdirSync(tmp).filter((n) => n.startsWith('ngcc-') && n.includes(`-${pid}-`));
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const child = spawn(
        'node',
        [cli, 'run', campaign, '--system', 's', '--out', tempDir(), '--only', '^kem-1/good$', '--phases', 'build,kat,measure'],
        {
          env: { ...process.env, TMPDIR: tmp },
          stdio: 'ignore',
        },
      );
      const exited = new Promise((res) => child.on('exit', res));
      for (let i = 0; i < 600 && !scratchOf(child.pid!).some((n) => n.startsWith('ngcc-inputs-')); i++) await sleep(100);
      expect(scratchOf(child.pid!), signal).toContainEqual(expect.stringMatching(/^ngcc-inputs-\d+-\w{6}$/));
      child.kill(signal);
      await exited;
      if (signal === 'SIGTERM') expect(scratchOf(child.pid!)).toEqual([]);
      else {
        const left = scratchOf(child.pid!);
        expect(left.length).toBeGreaterThan(0);
        const next = spawnSync(
          'node',
          [cli, 'run', campaign, '--system', 's', '--out', tempDir(), '--only', '^kem-1/good$', '--phases', 'build'],
          {
            env: { ...process.env, TMPDIR: tmp },
            encoding: 'utf8',
          },
        );
        expect(next.status, next.stderr).toBe(0);
        expect(next.stderr).toContain(`removed ${left.length} scratch folder(s) of ended runs: ${left.join(', ')}`);
        expect(scratchOf(child.pid!)).toEqual([]);
      }
    }
  });
});

/** The pid of a process that has ended (a pid is reused only after the kernel wraps around). */
function deadPid(): number {
  const child = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}
