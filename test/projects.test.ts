import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PURE, UNTIMED } from '../vitest.config.js';
import { factsOf, misplaced, timedPhases } from './helpers/projects.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

// The vitest projects (vitest.config.ts) against what each listed file does: a pure file starts no
// process, an untimed one times nothing (the rule: test/helpers/projects.ts).

/** A fake test file in a temporary folder, importing from the repository by absolute path; its name says nothing of what it does. */
function fixture(name: string, source: string): string {
  const file = join(tempDir(), name);
  writeFileSync(file, source.replaceAll('@/', `${repoRoot}/`));
  return file;
}

describe('the vitest projects', () => {
  it('list only pure files as pure, and only untimed files as untimed', () => {
    expect(misplaced({ pure: PURE, untimed: UNTIMED })).toEqual([]);
  });

  it('take the timed phases from the runner’s steps: those that launch a timing job', () => {
    expect(timedPhases()).toEqual(['measure', 'profile']);
  });
});

describe('the check', () => {
  const prelude = "import { describe, expect, it } from 'vitest';\n";

  it('fails a "pure" file that runs a campaign through the CLI helper, whatever its name', () => {
    const file = fixture(
      'units.test.ts',
      `${prelude}import { runCli } from '@/test/helpers/cli.js';

describe('a quick check', () => {
  it('runs', async () => {
    expect((await runCli(['run', 'campaign', '--system', 's', '--out', 'out'])).code).toBe(0);
  });
});
`,
    );
    const problems = misplaced({ pure: [file], untimed: [file] });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /units\.test\.ts is listed as pure but starts a process: src\/campaign\/runCampaign\.ts runCampaign → .* → node:child_process/,
    );
    expect(problems[1]).toMatch(/units\.test\.ts is listed as untimed but times: .*a campaign run with a timed phase/);
  });

  it('fails a "pure" file that starts a process itself, or through a test helper (git)', () => {
    const direct = fixture(
      'format-more.test.ts',
      `${prelude}import { spawnSync } from 'node:child_process';

it('agrees with python', () => {
  expect(spawnSync('python3', ['-c', 'print(1)']).status).toBe(0);
});
`,
    );
    const throughHelper = fixture(
      'pages-more.test.ts',
      `${prelude}import { git } from '@/test/helpers/git.js';

it('reads a history', async () => {
  expect(await git('/tmp', 'log')).toBeDefined();
});
`,
    );
    expect(factsOf(direct).startsProcess).toEqual(['node:child_process spawnSync']);
    expect(factsOf(throughHelper).startsProcess?.slice(0, 2)).toEqual(['test/helpers/git.ts git', 'src/sandbox/runProcess.ts runProcess']);
    expect(misplaced({ pure: [direct, throughHelper], untimed: [] })).toHaveLength(2);
  });

  it('fails an "untimed" file that times: the driver’s timing job, or the runner with its default phases', () => {
    const job = fixture(
      'kat-more.test.ts',
      `${prelude}import { runDriver } from '@/src/sandbox/runProcess.js';

it('completes', async () => {
  expect((await runDriver(['driver', 'lib.so'], ['time', 'kem', 'keygen', '100', '1'], { timeoutMs: 1000 })).output.status).toBe('complete');
});
`,
    );
    const defaults = fixture(
      'ct-more.test.ts',
      `${prelude}import { runCampaign } from '@/src/campaign/runCampaign.js';

it('checks', async () => {
  await runCampaign({ campaignDir: 'c', system: 's', dataDir: 'd' });
});
`,
    );
    expect(misplaced({ pure: [], untimed: [job, defaults] })).toEqual([
      expect.stringMatching(/kat-more\.test\.ts is listed as untimed but times: .*a driver timing job/),
      expect.stringMatching(
        /ct-more\.test\.ts is listed as untimed but times: src\/campaign\/runCampaign\.ts runCampaign with a timed phase/,
      ),
    ]);
  });

  it('passes what the files do, not what they are called: a KAT-only run is untimed, pages and --help are pure', () => {
    const katOnly = fixture(
      'measure-everything.test.ts',
      `${prelude}import { runCampaign } from '@/src/campaign/runCampaign.js';

const phases = new Set(['build', 'kat', 'ct']);
it('builds', async () => {
  await runCampaign({ campaignDir: 'c', system: 's', dataDir: 'd', phases });
});
`,
    );
    const pages = fixture(
      'compile-and-time.test.ts',
      `${prelude}import { runCli } from '@/test/helpers/cli.js';
import { renderPages } from '@/src/report/pages/render.js';

it('renders', async () => {
  expect((await runCli(['run', '--help'])).code).toBe(0);
  expect((await runCli(['compare', '--base', 'a', '--head', 'b', '--system', 's'])).code).toBe(2);
  expect(renderPages).toBeDefined();
});
`,
    );
    expect(factsOf(katOnly)).toEqual({ startsProcess: expect.any(Array) });
    expect(misplaced({ pure: [pages], untimed: [katOnly, pages] })).toEqual([]);
  });
});
