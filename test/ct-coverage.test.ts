import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CT_COVERAGE_BUILD } from '../src/ct/build.js';
import { coverageOf, ownFiles, parseGcovJson, pathsTaken, takenBeyond } from '../src/ct/coverage.js';
import { tempDir } from './helpers/tmp.js';

/**
 * A rejection loop as the schemes have them: `sample` retries while a draw is out of range, and the
 * calls here never draw out of range, so the retry's lines never run although the function does;
 * `unused` is never entered; `helper` is an external function an optimising build inlines into
 * `sample` (as a scheme's own functions in one file are), keeping a copy nobody calls; `checked`
 * returns early on one line, and that return never runs.
 */
const SOURCE = `int helper(int x) {
  return x * 3 + 1;
}
int sample(const unsigned char *in, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    int v = in[i];
    while (v >= 200) {
      v = (v * 7) & 0xff;
      s += 1;
    }
    s += helper(v);
  }
  return s;
}
int unused(int x) {
  return x - 1;
}
int checked(int n) {
  if (n < 0) return -1;
  return n + 1;
}
int main(void) {
  unsigned char in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  return sample(in, 8) == checked(3);
}
`;

/** gcc and gcov over `source` with these flags, run with `args`; gcov's report of it. */
function gcovReport(flags: string[], source = SOURCE, args: string[] = []) {
  const dir = tempDir();
  writeFileSync(join(dir, 'rej.c'), source);
  execFileSync('gcc', [...flags, 'rej.c', '-o', 'rej'], { cwd: dir });
  execFileSync(join(dir, 'rej'), args, { cwd: dir, stdio: 'ignore' });
  const counters = readdirSync(dir).filter((f) => f.endsWith('.gcda'));
  const json = execFileSync('gcov', ['--json-format', '--stdout', ...counters], { cwd: dir, encoding: 'utf8' });
  return ownFiles(parseGcovJson(json), join(dir, 'no-harness'));
}

/** The coverage gcov counts over SOURCE built with these flags, as the ct file records it. */
const counted = (flags: string[]) => coverageOf(gcovReport(flags));

/** SOURCE's sampler over the first N draws (N the argument): its retry runs first at the sixth. */
const DRAWS = SOURCE.replace(
  /int main\(void\) \{[\s\S]*$/,
  `int main(int argc, char **argv) {
  unsigned char in[8] = {1, 2, 3, 4, 5, 250, 7, 8};
  return sample(in, argc > 1 ? argv[1][0] - '0' : 8) == checked(3);
}
`,
);

describe("the ct phase's coverage: what the checked calls did not run", () => {
  it('names the untaken retry of a loop inside a function that ran, and the function never entered', () => {
    const c = counted(['--coverage', '-O2', ...CT_COVERAGE_BUILD.extra.filter((f) => f !== '--coverage')]);
    expect(c.never_run).toEqual(['rej.c:unused']);
    // Lines 9 and 10, the retry's body, in sample, which ran; line 20, whose early return never ran
    // though its test did; not unused's line, which is never_run's.
    expect(c.untaken).toEqual(['rej.c:sample:9-10', 'rej.c:checked:20']);
    expect(c.untaken_lines).toBe(3);
    expect(c.functions_run).toBe(c.functions - 1);
  });

  it('counts in the -O0 build because an optimising one loses what it inlined', () => {
    // At -O2 (the instance's flags, without the coverage build's -O0) gcov counts the inlined
    // helper as never entered, its uncalled copy, though every call of sample ran its code.
    const optimised = counted(['--coverage', '-O2']);
    expect(optimised.never_run).toContain('rej.c:helper');
    const o0 = counted(['--coverage', '-O2', '-O0']);
    expect(o0.never_run).not.toContain('rej.c:helper');
  });

  it('names the lines a run of more draws took that a run of fewer did not: the retry, first run at the sixth', () => {
    const flags = ['--coverage', '-O0'];
    const fewer = gcovReport(flags, DRAWS, ['5']);
    const more = gcovReport(flags, DRAWS, ['8']);
    expect(takenBeyond(more, pathsTaken(fewer))).toEqual({ ranges: ['rej.c:sample:9-10'], lines: 2 });
    expect(takenBeyond(more, pathsTaken(gcovReport(flags, DRAWS, ['6'])))).toEqual({ ranges: [], lines: 0 });
    // The while line ran in every run; only from the sixth draw did its loop's body run: a path of its own.
    expect([...pathsTaken(more)].filter((k) => !pathsTaken(fewer).has(k)).length).toBeGreaterThanOrEqual(2);
  });
});
