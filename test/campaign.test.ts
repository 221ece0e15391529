import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { main } from '../src/cliMain.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { readManifest } from '../src/config/katManifest.js';
import { validateDataset } from '../src/evidence/validate.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { FIXTURES, fixtureCampaign, goodKemCampaign, ICCS, QUICK } from './helpers/campaigns.js';
import { runCli as cli } from './helpers/cli.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

const fixtures = FIXTURES;
const iccs = ICCS;

/** A campaign with the fixture toy signature only, and the given ngcc-perf.yml. */
const toySigCampaign = (settings: string) => fixtureCampaign(['sign-1'], settings);

describe('measurement policy', () => {
  it('re-runs a trial whose clock fell below the fixed clock, up to disturbed_retries', async () => {
    // A fixed clock no core reaches: every trial counts as disturbed.
    const root = toySigCampaign(`${QUICK}  disturbed_retries: 1\nsystems:\n  slow:\n    fixed_clock_hz: 1.0e15\n`);
    const data = tempDir();
    await runCampaign({ campaignDir: root, system: 'slow', dataDir: data, phases: new Set(['build', 'kat', 'measure']) });
    const r = JSON.parse(readFileSync(join(data, 'slow', 'records', 'sign-1', 'toy-sig__sign.json'), 'utf8')) as TimingRecord;
    expect(r.disturbed_retries).toBe(2);
    expect((r.processes as Array<{ disturbed_retries: number }>).map((p) => p.disturbed_retries)).toEqual([1, 1]);
    expect(r.input_bytes).toBe(64);
    expect((r.sizes as Record<string, number>).input_bytes).toBe(64);
  });

  it('without a fixed clock no trial is run again for its clock, and shards split the instances', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    const s1 = await runCampaign({
      campaignDir: root,
      system: 's',
      dataDir: data,
      phases: new Set(['build', 'kat']),
      shard: { index: 2, count: 2 },
    });
    expect(s1.instances).toEqual([]);
    await runCampaign({
      campaignDir: root,
      system: 's',
      dataDir: data,
      phases: new Set(['build', 'kat', 'measure']),
      shard: { index: 1, count: 2 },
    });
    const r = JSON.parse(readFileSync(join(data, 's', 'records', 'sign-1', 'toy-sig__verify.json'), 'utf8')) as TimingRecord;
    // Re-runs there may be, on a busy machine, but only for time lost off the CPU or to other
    // processes on the core (or once for a window the kernel charged more than its calls), never for the clock.
    for (const p of r.processes as Array<{ retried?: Array<{ disturbed: string }> }>)
      for (const x of p.retried ?? [])
        expect(x.disturbed).toMatch(/^off the CPU|^other processes held the core|^inconsistent trial: its cycles say/);
    expect(r.measurements).toBeGreaterThanOrEqual(10);
    // Every trial carries the kernel's view of it, read by the parent at the driver's marks: a
    // single-threaded loop uses at most the time that passed around it.
    for (const t of r.trials as Array<{ kernel_cpu_s?: number; window_s?: number }>) {
      expect(t.kernel_cpu_s).toBeGreaterThan(0);
      expect(t.kernel_cpu_s).toBeLessThanOrEqual(t.window_s! + 0.002);
    }
  });
});

describe('a library missing an API function', () => {
  it('is LOADFAIL, named in the detail', async () => {
    const root = tempDir();
    const dir = join(root, 'kem-5', 'src');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'KEM_AlgorithmInstance.c'),
      [
        '#include "drng.h"',
        'unsigned long long kem_get_pk_len_bytes(void);',
        'unsigned long long kem_get_pk_len_bytes(void) { return 1; }',
        'unsigned long long kem_get_sk_len_bytes(void);',
        'unsigned long long kem_get_sk_len_bytes(void) { return 1; }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'kem-5', 'candidate.yml'),
      `id: kem-5\ntype: kem\nalgorithm: Incomplete\ninstances:\n  - label: half\n    dir: src\n    extra_sources: [${iccs}/drng.c, ${iccs}/auxfunc.c]\n    include: [${iccs}]\n`,
    );
    const data = tempDir();
    const s = await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat', 'measure']) });
    expect(s.instances[0]!.kat).toBe('LOADFAIL');
    expect(s.instances[0]!.detail).toBe('missing symbol kem_get_ct_len_bytes');
    expect(s.instances[0]!.operations.every((o) => o.status === 'not measured')).toBe(true);
  });
});

describe('kat-manifest', () => {
  it('writes the manifest of a new submission, after which its KAT passes', async () => {
    const root = toySigCampaign(QUICK);
    writeFileSync(join(root, 'sign-1', 'kat.sha256'), '# none yet\n');
    const data = tempDir();
    const first = await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat']) });
    expect(first.instances[0]!.kat).toBe('NOKAT');
    const before = new Date().toISOString().slice(0, 10);
    expect(await main(['kat-manifest', join(data, 's'), 'sign-1', '--write', root])).toBe(0);
    const written = readManifest(join(root, 'sign-1', 'kat.sha256'));
    // The day of the command: the day before it or, across midnight UTC, the one after.
    const today = [before, new Date().toISOString().slice(0, 10)].find((d) => d === written[0]?.recorded) ?? before;
    // The same digest as the fixture's own manifest, which was made independently.
    expect(written.map((e) => [e.label, e.file, e.sha256])).toEqual(
      readManifest(join(fixtures, 'sign-1', 'kat.sha256')).map((e) => [e.label, e.file, e.sha256]),
    );
    // The line says it was recorded from the harness's own output, that day, and the page says so too.
    expect(written.map((e) => e.recorded)).toEqual([today]);
    expect(readFileSync(join(root, 'sign-1', 'kat.sha256'), 'utf8')).toMatch(
      new RegExp(`^[0-9a-f]{64} strict toy-sig/\\S+  # recorded by the harness on ${today}$`, 'm'),
    );
    const second = await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat']) });
    expect(second.instances[0]!.kat).toBe('PASS');
    const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson;
    expect(build.instances['sign-1/toy-sig']!.kat).toBe('PASS');
    expect(build.instances['sign-1/toy-sig']!.kat_recorded).toBe(today);
    const page = renderPages(loadReportModel(join(data, 's'), root)).get('sign-1/perf_s.md')!;
    expect(page).toContain(`were recorded by the harness on ${today} from its own output`);
    expect(page).not.toContain('submitted KAT vectors');
  });
});

describe('a guide build that fails', () => {
  it('falls back to the harness defaults and says so, with the first error: the run, build.json, the pages and the comparison', async () => {
    const root = goodKemCampaign(['gnu'], QUICK);
    // The base: the same instance before the change, built with the guide's flags.
    const baseData = tempDir();
    expect((await cli(['run', root, '--system', 's', '--out', baseData, '--phases', 'build,kat'])).code).toBe(0);
    // `asm` is GNU C: no keyword under the guide's -std=c99, so only the harness defaults (gnu11) build it.
    writeFileSync(join(root, 'kem-1', 'gnu_only.c'), 'void gnu_only(void) { asm volatile("" ::: "memory"); }\n');
    const yml = join(root, 'kem-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace('extra_sources: [', 'extra_sources: [../gnu_only.c, '));
    const data = tempDir();
    const r = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat']);
    expect(r.code, r.out.join('\n')).toBe(0);
    expect(r.out.join('\n')).toMatch(
      /^PASS\s+kem-1\/gnu — measured with the harness defaults: the guide build failed \(.*gnu_only\.c:1:\d+: error: .asm. undeclared/m,
    );
    expect(r.out.at(-1)).toMatch(/; 1 instance\(s\) measured with the harness defaults, their guide build failed \(kem-1\/gnu: /);
    const entry = (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/gnu']!;
    expect([entry.flags, entry.guide_result]).toEqual(['harness-default', 'BUILDFAIL']);
    expect(entry.guide_error).toMatch(/gnu_only\.c:1:\d+: error/);
    const pages = renderPages(loadReportModel(join(data, 's'), root));
    expect(pages.get('kem-1/perf_s.md')).toMatch(
      /⚠ `gnu` was measured with the harness defaults, not the guide’s flags: its guide build failed \(.*gnu_only\.c/,
    );
    expect(pages.get('performance/summary_s.md')).toMatch(/⚠ kem-1 gnu: measured with the harness defaults, its guide build failed/);
    const compared = await cli(['compare', '--base', baseData, '--head', data, '--system', 's']);
    expect(compared.out.join('\n')).toMatch(/\*\*Measured with the harness defaults\*\*[\s\S]*- `kem-1\/gnu`: .*gnu_only\.c:1:\d+: error/);
    // Against a base that fell back the same way, it is no news: not listed.
    const again = await cli(['compare', '--base', data, '--head', data, '--system', 's']);
    expect(again.out.join('\n')).not.toContain('Measured with the harness defaults');
  });
});

describe('kat-digest', () => {
  it("prints the manifest line of a submitter's own KAT file, which is not its sha256sum", async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat']) });
    const entry = (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['sign-1/toy-sig']!;
    // The submitter's copy, in a folder named after the instance, with a comment and CRLF line ends added.
    const own = join(tempDir(), 'toy-sig');
    mkdirSync(own);
    const file = join(own, entry.kat_file!.split('/').pop()!);
    const text = readFileSync(join(data, 's', entry.kat_file!), 'utf8');
    writeFileSync(file, `# made by the submitter's generator\r\n${text.replace(/\n/g, '\r\n')}`);
    const r = await cli(['kat-digest', file]);
    expect(r.code, r.err.join('\n')).toBe(0);
    // The fixture's own manifest line, made independently.
    const line = readFileSync(join(fixtures, 'sign-1', 'kat.sha256'), 'utf8')
      .split('\n')
      .find((l) => l.endsWith(` toy-sig/${basename(file)}`));
    expect(r.out).toEqual([line]);
    expect(r.out[0]!.split(' ')[0]).not.toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
    const cut = await cli(['kat-digest', file, '--label', 'other', '--records', '1']);
    expect(cut.out).toEqual([expect.stringMatching(new RegExp(`^[0-9a-f]{64} strict:1 other/${basename(file)}$`))]);
    const none = await cli(['kat-digest', join(own, 'missing.rsp')]);
    expect([none.code, none.err]).toEqual([2, [`error: ${join(own, 'missing.rsp')}: no such file`]]);
  });
});

describe('CLI input errors', () => {
  it.each([
    [['run', fixtures, '--system', 'bad id', '--out', '/tmp/x'], /--system: 'bad id' must match/],
    [['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--phases', 'build,bake'], /--phases: unknown phase 'bake'/],
    [['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--shard', '3/2'], /--shard: expected K\/N/],
    [['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--only', '('], /--only: not a regular expression/],
    [['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--trial-target', 'abc'], /--trial-target: expected a positive number/],
    [['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--bogus'], /^error: command line: run: unknown option '--bogus'/],
    // parseArgs would take "-1" for an option of its own ("argument is ambiguous").
    [
      ['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--trial-target', '-1'],
      /^error: command line: --trial-target: expected a positive number of seconds, got '-1'$/,
    ],
    [
      ['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--trial-target=-1'],
      /^error: command line: --trial-target: expected a positive number of seconds, got '-1'$/,
    ],
    [
      ['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--op-budget', '-.5'],
      /^error: command line: --op-budget: expected a positive number of seconds, got '-\.5'$/,
    ],
    [
      ['run', fixtures, '--system', 'a', '--out', join(repoRoot, 'README.md')],
      /^error: command line: --out: '.*README\.md' is a file, not a folder$/,
    ],
    [
      ['run', fixtures, '--system', 'a', '--out', join(repoRoot, 'README.md', 'sub')],
      /^error: command line: --out: '.*README\.md\/sub' cannot be created: '.*README\.md' is a file, not a folder$/,
    ],
    [
      ['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--cpu', '99999'],
      /^error: command line: --cpu: CPU 99999 is not one this process may run on \(allowed: [0-9,-]+\)/,
    ],
    [
      ['run', fixtures, '--system', 'a', '--out', '/tmp/x', '--only', 'nomatch'],
      /^error: command line: --only: 'nomatch' matches no instance \(instances: kem-1\/good, kem-1\/buildfail, .*\(10 in all\)\)$/,
    ],
    [['validate', '/tmp'], /^error: \/tmp: no evidence here \(no build\.json, no records\/\)/],
    [['validate', join(repoRoot, 'README.md')], /^error: .*README\.md: a file, not a folder/],
    [['report', join(repoRoot, 'README.md'), '--out', '/tmp/x'], /^error: .*README\.md: a file, not a folder/],
  ])('%j exits 2 with a message naming the argument', async (args, message) => {
    const errors: string[] = [];
    const original = console.error;
    console.error = (m: string) => errors.push(m);
    try {
      expect(await main(args)).toBe(2);
    } finally {
      console.error = original;
    }
    expect(errors.join('\n')).toMatch(message);
  });

  it("a --cpu outside this process's CPUs stops the run before anything is written", async () => {
    const data = tempDir();
    const r = await cli(['run', fixtures, '--system', 'a', '--out', data, '--cpu', '99999']);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(existsSync(join(data, 'a'))).toBe(false);
  });

  it('the cpu of a system in ngcc-perf.yml is checked too, naming the file and field', async () => {
    const root = toySigCampaign(`${QUICK}systems:\n  s:\n    cpu: 99999\n`);
    const r = await cli(['run', root, '--system', 's', '--out', tempDir()]);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([
      expect.stringMatching(/^error: .*ngcc-perf\.yml: systems\.s\.cpu: CPU 99999 is not one this process may run on/),
    ]);
  });

  it('a candidate.yaml is named, not skipped', async () => {
    const root = toySigCampaign(QUICK);
    mkdirSync(join(root, 'kem-7'));
    writeFileSync(join(root, 'kem-7', 'candidate.yaml'), 'id: kem-7\n');
    const r = await cli(['run', root, '--system', 's', '--out', tempDir()]);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/^error: .*kem-7\/candidate\.yaml: .*rename it to candidate\.yml$/)]);
  });

  it('--only on an invalid candidate prints why it is invalid, not that the expression matches nothing', async () => {
    const root = toySigCampaign(QUICK);
    mkdirSync(join(root, 'kem-7', 'src'), { recursive: true });
    writeFileSync(join(root, 'kem-7', 'candidate.yml'), 'id: kem-7\ntype: kem\nalgorithm: X\ninstances:\n  - lable: a\n    dir: src\n');
    for (const only of ['^kem-7/', '^kem-7/a$', 'kem-7']) {
      const r = await cli(['run', root, '--system', 's', '--out', tempDir(), '--only', only, '--phases', 'build']);
      const said = [...r.out, ...r.err].join('\n');
      expect(said, only).toMatch(
        /INVALID\s+kem-7 — .*kem-7\/candidate\.yml: .*line 5: instances\[0\]\.lable: unknown key 'lable'; did you mean 'label'\?/,
      );
      expect(said, only).not.toMatch(/matches no instance/);
      expect(r.code, only).toBe(1);
    }
    // An expression that cannot have meant it still says what it matches nothing of, also one that
    // names a longer id (kem-71 is not kem-7).
    for (const only of ['^sig-9/', '^kem-71/']) {
      const other = await cli(['run', root, '--system', 's', '--out', tempDir(), '--only', only]);
      expect(other.code, only).toBe(2);
      expect(other.err.join('\n'), only).toMatch(/matches no instance/);
    }
  });

  it('a size catalog named in ngcc-perf.yml must exist; the default name may be absent', async () => {
    const root = toySigCampaign(`${QUICK}catalogs:\n  external_sizes: nope.csv\n`);
    const r = await cli(['run', root, '--system', 's', '--out', tempDir()]);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/^error: .*ngcc-perf\.yml: catalogs\.external_sizes: 'nope\.csv' does not exist/)]);
    const data = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), QUICK);
    expect((await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat'])).code).toBe(0);
    writeFileSync(join(root, 'ngcc-perf.yml'), `${QUICK}catalogs:\n  external_sizes: nope.csv\n`);
    const report = await cli(['report', join(data, 's'), '--campaign', root, '--out', tempDir()]);
    expect(report.code).toBe(2);
    expect(report.err).toEqual([expect.stringMatching(/ngcc-perf\.yml: catalogs\.external_sizes: 'nope\.csv' does not exist/)]);
  });
});

describe('a run whose measurements fail', () => {
  /**
   * A campaign of one correct toy KEM whose keygen misbehaves only once a process has made more than
   * 50 calls: the KAT (10 keygens) and the calibration (2) pass, timing trials (hundreds) reach it.
   * `misbehave` is C run at that point, in a function with `static unsigned long calls`.
   */
  function flakyCampaign(misbehave: string): string {
    const root = tempDir();
    const kem = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
    cpSync(join(kem, 'common'), join(root, 'kem-4', 'common'), { recursive: true });
    cpSync(join(kem, 'good', 'KEM_AlgorithmInstance.h'), join(root, 'kem-4', 'flaky', 'KEM_AlgorithmInstance.h'));
    writeFileSync(
      join(root, 'kem-4', 'flaky', 'KEM_AlgorithmInstance.c'),
      [
        '#include <stdio.h>',
        '#include <stdlib.h>',
        '#include "KEM_AlgorithmInstance.h"',
        '#define kem_keygen toy_kem_keygen',
        '#include "../common/toy_kem.inc"',
        '#undef kem_keygen',
        'int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {',
        '    static unsigned long calls;',
        `    if (++calls == 51) { ${misbehave} }`,
        '    return toy_kem_keygen(pk, pk_len, sk, sk_len);',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'kem-4', 'candidate.yml'),
      `id: kem-4\ntype: kem\nalgorithm: toy\ninstances:\n  - label: flaky\n    dir: flaky\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}]\n`,
    );
    // The good fixture's digest: the toy KEM's KAT does not depend on the label.
    const good = readManifest(join(kem, 'kat.sha256')).find((e) => e.label === 'good')!;
    writeFileSync(join(root, 'kem-4', 'kat.sha256'), `${good.sha256} strict flaky/KAT_KEM_flaky.txt\n`);
    writeFileSync(join(root, 'ngcc-perf.yml'), QUICK);
    return root;
  }

  async function runFlaky(root: string) {
    const data = tempDir();
    const run = () => cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
    const r = await run();
    const build = JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson;
    expect(build.instances['kem-4/flaky']!.kat).toBe('PASS');
    const status = (op: string) =>
      (JSON.parse(readFileSync(join(data, 's', 'records', 'kem-4', `flaky__${op}.json`), 'utf8')) as TimingRecord).status;
    return { ...r, statuses: [status('keygen'), status('enc'), status('dec')], again: run };
  }

  it('exits 1 and its last line says which measurement failed, though every KAT passed', async () => {
    const r = await runFlaky(flakyCampaign('abort();'));
    expect(r.statuses).toEqual(['failed', 'complete', 'complete']);
    expect(r.code).toBe(1);
    expect(r.out.at(-1)).toMatch(/^exit 1: 1 measurement\(s\) failed or partial \(first: kem-4\/flaky keygen failed: .+\)(;.*)?$/);
  });

  /**
   * The campaign of flakyCampaign where only the second process to make 51 keygen calls (a counter
   * file beside the sources tells) runs `then`; `every` runs on every later call of any process.
   * Such processes are keygen's timing trials: one trial of keygen is hit, the others are not.
   */
  function secondTrialCampaign(then: string, every = ''): string {
    const root = flakyCampaign('');
    const counter = join(root, 'heavy-processes');
    writeFileSync(counter, '0');
    // The counter file is state shared between timing processes, which the sandbox exists to
    // prevent: these runs opt out of it. A disturbed trial is kept, not run again: the process the
    // counter picks must be the one whose trial is kept, however busy the machine.
    appendFileSync(join(root, 'ngcc-perf.yml'), '  disturbed_retries: 0\nsandbox: none\n');
    const source = join(root, 'kem-4', 'flaky', 'KEM_AlgorithmInstance.c');
    const count = `FILE *f = fopen(${JSON.stringify(counter)}, "r+"); int n = 0; if (f) { if (fscanf(f, "%d", &n) != 1) n = 0; rewind(f); fprintf(f, "%d", n + 1); fclose(f); }`;
    writeFileSync(
      source,
      readFileSync(source, 'utf8').replace(
        'if (++calls == 51) {  }',
        `if (++calls == 51) { ${count} if (n == 1) { ${then} } }\n    ${every}`,
      ),
    );
    return root;
  }

  it('exits 1 when a measurement lost some of its trials', async () => {
    const root = secondTrialCampaign('abort();');
    const r = await runFlaky(root);
    expect(r.statuses).toEqual(['partial', 'complete', 'complete']);
    expect(r.code).toBe(1);
    expect(r.out.at(-1)).toMatch(/^exit 1: 1 measurement\(s\) failed or partial \(first: kem-4\/flaky keygen partial: .+\)(;.*)?$/);
  });

  it('says which measurements were noisy, without failing them', async () => {
    // That trial does about three keygens' work per call from then on, as if the core were shared.
    const root = secondTrialCampaign(
      'calls = 1000000;',
      // Work that draws no randomness, so the outputs stay those of the replay (src/measure/replay.ts).
      'if (calls > 999999) { unsigned char x[TOY_KEM_SS_BYTES]; for (int k = 0; k < 6; k++) toy_kem_shared_secret(pk, pk, x); }',
    );
    const r = await runFlaky(root);
    expect(r.statuses).toEqual(['complete', 'complete', 'complete']);
    expect(r.code).toBe(0);
    expect(r.progress).toMatch(/kem-4\/flaky keygen: complete \d+ cycles; noisy: trials spread \d+\.\d\d×/);
    // (enc and dec may be noisy too on a busy machine: only keygen's slow trial is certain.)
    expect(r.out.at(-1)).toMatch(/; \d measurement\(s\) noisy, trials spread ≥ 1\.25× \(kem-4\/flaky keygen[,)].*: was the core shared\?$/);
    // A later run keeps the records, and still says so: the spread is the record's own.
    const again = await r.again();
    expect(again.progress).toMatch(/kem-4\/flaky keygen: unchanged, kept; noisy: trials spread \d+\.\d\d×/);
    expect(again.out.at(-1)).toMatch(/noisy, trials spread ≥ 1\.25× \(kem-4\/flaky keygen[,)]/);
  });
});

describe('a run without the kat phase', () => {
  it('records a new library as not checked: no KAT status, not timed, not a failure', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    const r = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,measure']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^not checked +sign-1\/toy-sig — KAT not run for this library/);
    expect(r.out.at(-1)).toMatch(/1 instance\(s\) not KAT-checked \(run the kat phase\)$/);
    const entry = (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['sign-1/toy-sig']!;
    expect('kat' in entry).toBe(false);
    expect(entry.library_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(join(data, 's', 'records'))).toBe(false);
    expect(validateDataset(join(data, 's'))).toEqual([]);
    const pages = tempDir();
    expect((await cli(['report', join(data, 's'), '--out', pages])).code).toBe(0);
    expect(readFileSync(join(pages, 'performance', 'summary_s.md'), 'utf8')).toMatch(/\| `toy-sig` \| not checked ⚠ \|/);
    expect(readFileSync(join(pages, 'sign-1', 'perf_s.md'), 'utf8')).toMatch(/\| `toy-sig` \| guide \| not checked \|/);
    // The kat phase later checks the same library.
    const second = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat']);
    expect(second.code).toBe(0);
    expect((JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['sign-1/toy-sig']!.kat).toBe('PASS');
  });
});

describe('evidence of a previous library', () => {
  it('is removed when the instance now fails its KAT, so no page or comparison shows old numbers as its own', async () => {
    const root = fixtureCampaign(['kem-1'], QUICK);
    const data = tempDir();
    const only = ['--only', '^kem-1/good$'];
    expect((await cli(['run', root, '--system', 's', '--out', data, ...only])).code).toBe(0);
    const left = () =>
      ['records', 'profile', 'memory', 'survey'].flatMap((k) =>
        existsSync(join(data, 's', k, 'kem-1')) ? readdirSync(join(data, 's', k, 'kem-1')).map((f) => `${k}/${f}`) : [],
      );
    expect(left()).toHaveLength(10);
    // The same instance, now with the code of the cryptofail fixture.
    cpSync(join(root, 'kem-1', 'cryptofail', 'KEM_AlgorithmInstance.c'), join(root, 'kem-1', 'good', 'KEM_AlgorithmInstance.c'));
    const r = await cli(['run', root, '--system', 's', '--out', data, ...only]);
    expect(r.code).toBe(1);
    expect(r.progress).toMatch(/kem-1\/good CRYPTOFAIL \(.*\); removed 10 evidence file\(s\) of a previous library/);
    // Everything described the old library; the survey is made again for the new one (it is built).
    expect(left()).toEqual(['survey/good.json']);
    expect(validateDataset(join(data, 's'))).toEqual([]);
  });
});

describe('a corrupt record of an instance being measured', () => {
  it('stops a run without --force, suggesting it, and is replaced with --force', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    const first = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
    // (Its lines on failure: a loaded host once failed a measurement here, and said nothing of why.)
    expect(first.code, [...first.out, first.progress].join('\n')).toBe(0);
    const record = join(data, 's', 'records', 'sign-1', 'toy-sig__sign.json');
    writeFileSync(record, readFileSync(record, 'utf8').slice(0, 200));
    const refused = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure']);
    expect(refused.code).toBe(2);
    expect(refused.err).toEqual([
      expect.stringMatching(/toy-sig__sign\.json: not valid JSON .*; run again with --force to redo and replace it, or delete the file$/),
    ]);
    const forced = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat,measure', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.progress).toMatch(/sign-1\/toy-sig sign: complete \d+ cycles; replaced an unreadable record/);
    expect((JSON.parse(readFileSync(record, 'utf8')) as TimingRecord).status).toBe('complete');
    expect(validateDataset(join(data, 's'))).toEqual([]);
  });

  it('a broken build.json is never replaced, even with --force: the message says how to recover', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    expect((await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat'])).code).toBe(0);
    const build = join(data, 's', 'build.json');
    const broken = readFileSync(build, 'utf8').slice(0, 100);
    writeFileSync(build, broken);
    const refused = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat', '--force']);
    expect(refused.code).toBe(2);
    expect(refused.err).toEqual([
      expect.stringMatching(
        /build\.json: not valid JSON .*; restore it \(e\.g\. from git\) or delete it, after which every instance is rebuilt and KAT-checked again$/,
      ),
    ]);
    expect(readFileSync(build, 'utf8')).toBe(broken);
  });
});

describe('shards', () => {
  it('two shards of a campaign merge into one evidence folder that validates', async () => {
    const campaign = join(repoRoot, 'test', 'fixtures', 'survey');
    const [a, b, merged] = [tempDir(), tempDir(), tempDir()];
    const phases = new Set(['build', 'kat', 'measure'] as const);
    await runCampaign({ campaignDir: campaign, system: 's', dataDir: a, phases, shard: { index: 1, count: 2 } });
    await runCampaign({ campaignDir: campaign, system: 's', dataDir: b, phases, shard: { index: 2, count: 2 } });
    const out = join(merged, 's');
    expect(await main(['merge', '--out', out, join(a, 's'), join(b, 's')])).toBe(0);
    const build = JSON.parse(readFileSync(join(out, 'build.json'), 'utf8')) as BuildJson;
    expect(Object.keys(build.instances).sort()).toEqual(['kem-2/mixed', 'kem-2/unreachable']);
    expect(readFileSync(join(out, 'records', 'kem-2', 'unreachable__dec.json'), 'utf8')).toContain('"status": "complete"');
    // A file of an instance the shard did not run (no build.json entry there) is refused, never merged over the other shard's.
    const mixedShard = existsSync(join(a, 's', 'records', 'kem-2', 'mixed__keygen.json')) ? b : a;
    writeFileSync(join(mixedShard, 's', 'records', 'kem-2', 'mixed__keygen.json'), '{}');
    const errors: string[] = [];
    const original = console.error;
    console.error = (m: string) => errors.push(m);
    const again = join(tempDir(), 's');
    try {
      expect(await main(['merge', '--out', again, join(a, 's'), join(b, 's')])).toBe(2);
    } finally {
      console.error = original;
    }
    expect(errors.join('\n')).toMatch(
      /records\/kem-2\/mixed__keygen\.json: belongs to instance kem-2\/mixed, which has no entry in .*build\.json/,
    );
    expect(existsSync(again)).toBe(false);
  });
});

describe('the build cache', () => {
  it('a failing cache service never fails the run, and a restored build is not compiled again', async () => {
    const root = toySigCampaign(QUICK);
    const failing = {
      restore: () => Promise.reject(new Error('cache service down')),
      save: () => Promise.reject(new Error('cache service down')),
    };
    const first = await runCampaign({
      campaignDir: root,
      system: 's',
      dataDir: tempDir(),
      phases: new Set(['build', 'kat']),
      buildCache: failing,
    });
    expect(first.instances[0]!.kat).toBe('PASS');

    // A cache that keeps folders by key, as @actions/cache does between runs.
    const store = new Map<string, string>();
    const keeping = {
      restore: async (dir: string, key: string) => {
        const saved = store.get(key);
        if (!saved) return false;
        cpSync(saved, dir, { recursive: true });
        return true;
      },
      save: async (dir: string, key: string) => {
        const copy = tempDir();
        cpSync(dir, copy, { recursive: true });
        store.set(key, copy);
      },
    };
    const dataA = tempDir();
    await runCampaign({ campaignDir: root, system: 's', dataDir: dataA, phases: new Set(['build', 'kat']), buildCache: keeping });
    expect(store.size).toBe(1);
    // A fresh machine: empty data folder, same cache. The library comes back without gcc running.
    const dataB = tempDir();
    const log = join(dataB, 's', 'build', 'sign-1', 'toy-sig', 'guide', 'build.log');
    const second = await runCampaign({
      campaignDir: root,
      system: 's',
      dataDir: dataB,
      phases: new Set(['build', 'kat']),
      buildCache: keeping,
    });
    expect(second.instances[0]!.kat).toBe('PASS');
    const keyA = JSON.parse(readFileSync(join(dataA, 's', 'build.json'), 'utf8')) as BuildJson;
    const keyB = JSON.parse(readFileSync(join(dataB, 's', 'build.json'), 'utf8')) as BuildJson;
    expect(keyB.instances['sign-1/toy-sig']!.library_sha256).toBe(keyA.instances['sign-1/toy-sig']!.library_sha256);
    // The restored folder carries the log of the build that made it, from the first data folder.
    expect(readFileSync(log, 'utf8')).toContain(join(dataA, 's', 'build'));
  });
});

describe('campaign.json', () => {
  it('keeps the start of the first run and the end of the last', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat']) });
    const first = JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as { started_utc: string; ended_utc: string };
    await new Promise((r) => setTimeout(r, 20));
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat']) });
    const second = JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as {
      started_utc: string;
      ended_utc: string;
      host_checks: unknown[];
    };
    expect(second.started_utc).toBe(first.started_utc);
    expect(second.ended_utc > first.ended_utc).toBe(true);
    expect(first.ended_utc > first.started_utc).toBe(true);
    expect(second.host_checks).toHaveLength(2);
  });
});

describe('the guide minimum', () => {
  it('guide_100_measurements_met means 100 calls, whatever the campaign plans, and validates', async () => {
    const root = toySigCampaign(
      'planning:\n  trials: 2\n  trial_target_s: 0.00001\n  op_budget_s: 1\n  min_measurements: 10\n  warmups: 1\n',
    );
    const data = tempDir();
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat', 'measure']) });
    const r = JSON.parse(readFileSync(join(data, 's', 'records', 'sign-1', 'toy-sig__verify.json'), 'utf8')) as TimingRecord;
    expect(r.measurements!).toBeGreaterThanOrEqual(10);
    expect(r.measurements!).toBeLessThan(100);
    expect(r.guide_100_measurements_met).toBe(false);
    expect(validateDataset(join(data, 's'))).toEqual([]);
  });
});

describe('the build key', () => {
  it('covers every file the preprocessor reads, .inc files outside the include folders too', async () => {
    const root = tempDir();
    const kem = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1');
    cpSync(join(kem, 'good'), join(root, 'kem-3', 'src'), { recursive: true });
    cpSync(join(kem, 'common'), join(root, 'kem-3', 'common'), { recursive: true });
    writeFileSync(
      join(root, 'kem-3', 'candidate.yml'),
      `id: kem-3\ntype: kem\nalgorithm: toy\ninstances:\n  - label: good\n    dir: src\n    extra_sources: [${iccs}/auxfunc.c, ${iccs}/drng.c]\n    include: [${iccs}]\n`,
    );
    const data = tempDir();
    const phases = new Set(['build', 'kat'] as const);
    expect((await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases })).instances[0]!.kat).toBe('NOKAT');
    // toy_kem.inc is included as "../common/toy_kem.inc": not in any include folder.
    const inc = join(root, 'kem-3', 'common', 'toy_kem.inc');
    writeFileSync(inc, `${readFileSync(inc, 'utf8')}\n#error changed after the first build\n`);
    const second = await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases });
    expect(second.instances[0]!.kat).toBe('BUILDFAIL');
    expect(second.instances[0]!.detail).toMatch(/changed after the first build/);
  });
});

describe('one writer per evidence folder', () => {
  it('a second run into the same system folder is refused while the first runs, and allowed after', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    const phases = new Set(['build', 'kat'] as const);
    const first = runCampaign({ campaignDir: root, system: 's', dataDir: data, phases });
    await expect(runCampaign({ campaignDir: root, system: 's', dataDir: data, phases })).rejects.toThrow(/already writing this evidence/);
    expect((await first).instances[0]!.kat).toBe('PASS');
    expect((await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases })).instances[0]!.kat).toBe('PASS');
  });

  it('a lock left by a process that is gone is taken over', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    mkdirSync(join(data, 's'), { recursive: true });
    // PID 2^22+1 is above Linux's pid_max default of 4194304: no such process.
    writeFileSync(join(data, 's', '.ngcc-perf.lock'), String(4194305));
    expect(
      (await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases: new Set(['build', 'kat']) })).instances[0]!.kat,
    ).toBe('PASS');
  });

  it('a lock whose pid now names another live process (a reused pid) is taken over; the live holder itself is not', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    const lock = join(data, 's', '.ngcc-perf.lock');
    mkdirSync(join(data, 's'), { recursive: true });
    // The parent process lives, but it started at another time than the lock says: not the holder.
    const parentStart = readFileSync(`/proc/${process.ppid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;
    writeFileSync(lock, `${process.ppid} ${Number(parentStart) + 1}`);
    const phases = new Set(['build', 'kat'] as const);
    expect((await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases })).instances[0]!.kat).toBe('PASS');
    // The same live process with its real start time holds the lock.
    writeFileSync(lock, `${process.ppid} ${parentStart}`);
    await expect(runCampaign({ campaignDir: root, system: 's', dataDir: data, phases })).rejects.toThrow(
      new RegExp(`another run \\(pid ${process.ppid}\\) is writing this evidence`),
    );
  });
});

describe('a KAT verdict', () => {
  it('is given again by a new harness (its KAT driver may check more), and kept by the same one', async () => {
    const root = toySigCampaign(QUICK);
    const data = tempDir();
    const phases = new Set(['build', 'kat'] as const);
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases });
    const buildPath = join(data, 's', 'build.json');
    const entry = () => (JSON.parse(readFileSync(buildPath, 'utf8')) as BuildJson).instances['sign-1/toy-sig']!;
    const version = entry().kat_harness_version;
    expect(version).toMatch(/\S/);
    // The same harness keeps the verdict: the entry is not rewritten.
    const kept = readFileSync(buildPath, 'utf8');
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases });
    expect(readFileSync(buildPath, 'utf8')).toBe(kept);
    // A verdict of another harness version is given again, by this one.
    const json = JSON.parse(kept) as BuildJson;
    json.instances['sign-1/toy-sig']!.kat_harness_version = 'an older harness';
    writeFileSync(buildPath, `${JSON.stringify(json, null, 1)}\n`);
    await runCampaign({ campaignDir: root, system: 's', dataDir: data, phases });
    expect(entry().kat_harness_version).toBe(version);
    expect(entry().kat).toBe('PASS');
  });
});

describe('run --remeasure', () => {
  it('noisy: measures again a kept record whose trials spread 1.25× or more, and keeps the others', async () => {
    const root = goodKemCampaign(['good'], QUICK);
    const data = tempDir();
    const phases = ['--phases', 'build,kat,measure'];
    expect((await cli(['run', root, '--system', 's', '--out', data, ...phases])).code).toBe(0);
    const path = (op: string) => join(data, 's', 'records', 'kem-1', `good__${op}.json`);
    // keygen's record as a run on a shared core leaves it: its second trial twice as slow per call.
    const keygen = JSON.parse(readFileSync(path('keygen'), 'utf8')) as TimingRecord & {
      trials: Array<{ seconds: number; cycles: number }>;
    };
    keygen.trials[1]!.seconds *= 2;
    keygen.trials[1]!.cycles *= 2;
    writeFileSync(path('keygen'), JSON.stringify(keygen));
    const ops = ['keygen', 'enc', 'dec'];
    const before = Object.fromEntries(ops.map((op) => [op, readFileSync(path(op), 'utf8')]));
    // Which records are noisy by the rule (slowest over fastest trial per call): keygen now, and any
    // other a busy host made so.
    const noisy = ops.filter((op) => {
      const t = (JSON.parse(before[op]!) as { trials: Array<{ seconds: number; measurements: number }> }).trials.map(
        (x) => x.seconds / x.measurements,
      );
      return Math.max(...t) / Math.min(...t) >= 1.25;
    });
    expect(noisy).toContain('keygen');
    const kept = await cli(['run', root, '--system', 's', '--out', data, ...phases]);
    expect(kept.progress).toMatch(/kem-1\/good keygen: unchanged, kept; noisy: trials spread \d+\.\d\d×/);
    for (const op of ops) expect(readFileSync(path(op), 'utf8'), op).toBe(before[op]);
    const again = await cli(['run', root, '--system', 's', '--out', data, ...phases, '--remeasure', 'noisy']);
    expect(again.code).toBe(0);
    for (const op of ops) {
      const now = readFileSync(path(op), 'utf8');
      if (noisy.includes(op)) expect(now, op).not.toBe(before[op]);
      else expect(now, op).toBe(before[op]);
    }
    const bad = await cli(['run', root, '--system', 's', '--out', data, '--remeasure', 'noisy,slow']);
    expect([bad.code, bad.err]).toEqual([2, ["error: command line: --remeasure: unknown 'slow' (known: noisy, failed)"]]);
  });

  it('failed: runs again a KAT that ended TIMEOUT, which a plain re-run keeps', async () => {
    const root = fixtureCampaign(['kem-1'], `${QUICK}  kat_timeout_s: 1\n`);
    const data = tempDir();
    const args = ['run', root, '--system', 's', '--out', data, '--phases', 'build,kat', '--only', '^kem-1/timeout$'];
    expect((await cli(args)).code).toBe(1);
    const log = join(data, 's', 'kat', 'kem-1', 'timeout.log');
    const first = statSync(log).mtimeMs;
    await cli(args);
    expect(statSync(log).mtimeMs).toBe(first);
    const again = await cli([...args, '--remeasure', 'failed']);
    expect(again.code).toBe(1);
    expect(statSync(log).mtimeMs).toBeGreaterThan(first);
    expect((JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/timeout']!.kat).toBe('TIMEOUT');
  });
});
