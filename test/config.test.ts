import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCampaign, loadCandidate, loadSettings } from '../src/config/campaign.js';
import { InputError } from '../src/errors.js';
import { checkOutputFolder } from '../src/config/arguments.js';
import { allowedCpus, checkCpuAllowed, formatCpuList, parseCpuList } from '../src/env/cpus.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

function candidate(root: string, id: string, yaml: string): string {
  const dir = join(root, id);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'candidate.yml'), yaml);
  return dir;
}

const good = `id: kem-7
type: kem
algorithm: Example
instances:
  - label: ex-1
    dir: src
`;

describe('candidate.yml', () => {
  const root = tempDir();

  it('loads a valid manifest with the API defaults', () => {
    const c = loadCandidate(candidate(root, 'kem-7', good), 'kem-7/candidate.yml');
    expect(c.api).toBe('iccs');
    expect(c.katRng).toBe('iccs-drng');
    expect(c.instances[0]!.extra_sources).toEqual([]);
  });

  it('names the file, line and key of an unknown key', () => {
    const dir = candidate(root, 'kem-8', good.replace('kem-7', 'kem-8').replace('    dir: src', '    dir: src\n    lable: oops'));
    expect(() => loadCandidate(dir, 'kem-8/candidate.yml')).toThrow(
      /kem-8\/candidate\.yml: line 7: instances\[0\]\.lable: unknown key 'lable'; did you mean 'label'\?$/,
    );
    // At the top level too, and nothing suggested where nothing is near.
    const top = candidate(root, 'kem-12', good.replace('kem-7', 'kem-12').replace('type: kem', 'type: kem\nalgoritm: X'));
    expect(() => loadCandidate(top, 'kem-12/candidate.yml')).toThrow(
      /line \d+: algoritm: unknown key 'algoritm'; did you mean 'algorithm'\?$/,
    );
    // An instance's key misplaced at the top level is not near any top-level one: nothing suggested.
    const far = candidate(root, 'kem-13', good.replace('kem-7', 'kem-13').replace('type: kem', 'type: kem\nnist_prefx: X'));
    expect(() => loadCandidate(far, 'kem-13/candidate.yml')).toThrow(/nist_prefx: unknown key 'nist_prefx'$/);
  });

  it('names the field of a wrong value', () => {
    const dir = candidate(root, 'kem-9', good.replace('kem-7', 'kem-9').replace('type: kem', 'type: kex2'));
    const err = (() => {
      try {
        loadCandidate(dir, 'kem-9/candidate.yml');
      } catch (e) {
        return e as InputError;
      }
      throw new Error('no error');
    })();
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toMatch(/kem-9\/candidate\.yml: line 2: type:/);
  });

  it('rejects an id that differs from the folder and bad labels', () => {
    const dir = candidate(root, 'kem-10', good);
    expect(() => loadCandidate(dir, 'kem-10/candidate.yml')).toThrow(/id: 'kem-7' must equal the folder name 'kem-10'/);
    const dir2 = candidate(root, 'kem-11', good.replace('kem-7', 'kem-11').replace('ex-1', 'bad label'));
    expect(() => loadCandidate(dir2, 'kem-11/candidate.yml')).toThrow(/instances\[0\]\.label: must match/);
  });

  it('reports YAML syntax errors with a line', () => {
    const dir = candidate(root, 'kem-12', 'id: kem-12\ntype: [kem\n');
    expect(() => loadCandidate(dir, 'kem-12/candidate.yml')).toThrow(/kem-12\/candidate\.yml: line \d+/);
  });

  it('rejects nist_prefix outside api: nist and duplicate labels', () => {
    const dir = candidate(
      root,
      'kem-13',
      good.replace('kem-7', 'kem-13').replace('    dir: src', '    dir: src\n    nist_prefix: X_\n  - label: ex-1\n    dir: src'),
    );
    expect(() => loadCandidate(dir, 'kem-13/candidate.yml')).toThrow(
      /nist_prefix: only allowed with api: nist.*duplicate label 'ex-1'|duplicate label 'ex-1'.*nist_prefix/,
    );
  });
});

describe('ngcc-perf.yml', () => {
  it('names unknown planning keys', () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), 'planning:\n  trials: 3\n  trial_targt_s: 1\n');
    expect(() => loadCampaign(root)).toThrow(
      /ngcc-perf\.yml: line 3: planning\.trial_targt_s: unknown key 'trial_targt_s'; did you mean 'trial_target_s'\?/,
    );
  });

  it('planning.adaptive: off by default, on for nightly runs, and each bad value named with its line', () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), 'planning:\n  trials: 3\n');
    expect(loadSettings(root).planning.adaptive).toEqual({
      enabled: false,
      nightly: true,
      ci_target: 0.01,
      min_trials: 5,
      max_trials: 30,
      trial_target_s: 0.1,
    });
    for (const [yml, message] of [
      ['  adaptive:\n    ci_target: 0\n', /line 3: planning\.adaptive\.ci_target: .*>0/],
      ['  adaptive:\n    min_trials: 1\n', /line 3: planning\.adaptive\.min_trials: .*>=2/],
      ['  adaptive:\n    max_trials: 2.5\n', /line 3: planning\.adaptive\.max_trials: .*expected int/],
      ['  adaptive:\n    min_trials: 10\n    max_trials: 5\n', /line 4: planning\.adaptive\.max_trials: must be at least min_trials/],
      ['  adaptive:\n    enable: true\n', /line 3: planning\.adaptive\.enable: unknown key/],
    ] as const) {
      writeFileSync(join(root, 'ngcc-perf.yml'), `planning:\n${yml}`);
      expect(() => loadSettings(root), yml).toThrow(message);
    }
  });

  it('applies defaults', () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), 'planning:\n  trials: 3\n');
    const settings = loadSettings(root);
    expect(settings.planning).toMatchObject({ trials: 3, trial_target_s: 1, min_measurements: 100 });
    expect(settings.profile).toMatchObject({ target_s: 0.2, rounds: 5 });
    // Settings alone are no campaign: measuring nothing would pass for a success.
    expect(() => loadCampaign(root)).toThrow(/: no candidates \(no <id>\/candidate\.yml in this folder\)$/);
    candidate(root, 'kem-7', good);
    expect(loadCampaign(root).settings).toEqual(settings);
  });

  it('names a profile round count that is not a whole number of at least 1', () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), 'profile:\n  rounds: 0\n');
    expect(() => loadCampaign(root)).toThrow(/ngcc-perf\.yml: line 2: profile\.rounds/);
    writeFileSync(join(root, 'ngcc-perf.yml'), 'profile:\n  target_s: 0.5\n  rounds: 2.5\n');
    expect(() => loadCampaign(root)).toThrow(/ngcc-perf\.yml: line 3: profile\.rounds/);
  });
});

describe('CPU lists', () => {
  it('reads and writes the kernel notation', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(formatCpuList([0, 1, 2, 3, 8, 10, 11])).toBe('0-3,8,10-11');
  });

  it("takes the allowed CPUs from this process's affinity, not from the online ones", () => {
    const line = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;
    expect(allowedCpus()).toEqual(parseCpuList(line));
    expect(checkCpuAllowed(2, ['command line', '--cpu'], [0, 2])).toBe(2);
    expect(() => checkCpuAllowed(1, ['command line', '--cpu'], [0, 2, 3])).toThrow(
      'command line: --cpu: CPU 1 is not one this process may run on (allowed: 0,2-3)',
    );
  });
});

describe('output folders', () => {
  it('must be folders or creatable as folders', () => {
    const root = tempDir();
    writeFileSync(join(root, 'file'), '');
    expect(checkOutputFolder(join(root, 'new', 'deeper'), ['command line', '--out'])).toBe(join(root, 'new', 'deeper'));
    expect(() => checkOutputFolder(join(root, 'file'), ['command line', '--out'])).toThrow(/--out: '.*file' is a file, not a folder/);
    expect(() => checkOutputFolder(join(root, 'file', 'x'), ['command line', '--out'])).toThrow(/cannot be created: '.*file' is a file/);
  });
});

describe('the command line', () => {
  it("prints the command's own help for --help after it, and exits 0 (test/cli-help.test.ts has the rest)", async () => {
    const runs = [await runCli(['run', '--help']), await runCli(['compare', '-h'])];
    expect(runs.map((r) => r.code)).toEqual([0, 0]);
    const out = runs.flatMap((r) => r.out);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^usage: ngcc-perf run CAMPAIGN_DIR/);
    expect(out[1]).toMatch(/^usage: ngcc-perf compare --base DATA_DIR/);
  });
});
