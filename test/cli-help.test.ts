import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP_COMMANDS } from '../src/cliHelp.js';
import { runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/tmp.js';

/** Each command's own help (src/cliHelp.ts), held to the usage block's options, and --version. */
describe('help', () => {
  it("gives every command of the usage block its own help, naming each of that command's options with a default or a purpose", async () => {
    const usage = (await runCli(['--help'])).out.join('\n');
    // The usage block: a command's line and its continuation lines, up to the next command.
    const blocks = usage.split(/\n(?= {2}ngcc-perf )/).filter((b) => b.startsWith('  ngcc-perf '));
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    for (const block of blocks) {
      const command = /^ {2}ngcc-perf (\S+)/.exec(block)![1]!;
      // Its lines only: the usage block ends with notes of its own, unindented.
      const lines = block
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .join('\n');
      const options = [...new Set([...lines.matchAll(/--[a-z-]+/g)].map((m) => m[0]))];
      for (const ask of [
        [command, '--help'],
        ['help', command],
      ]) {
        const r = await runCli(ask);
        expect(r.code, ask.join(' ')).toBe(0);
        const text = r.out.join('\n');
        expect(text, ask.join(' ')).toMatch(new RegExp(`^usage: ngcc-perf ${command} `));
        expect(text, ask.join(' ')).toMatch(/\nexample:\n {2}ngcc-perf /);
        for (const o of options) expect(text, `${command}: ${o}`).toMatch(new RegExp(`\\n {2}${o}\\b[^\\n]* {2}\\S`));
      }
    }
  });

  it('lists every command with what it is for, a line each, and every synopsis', async () => {
    const usage = (await runCli(['--help'])).out.join('\n');
    const list = usage.split('\n\n').find((b) => b.startsWith('commands:'))!;
    const listed = list
      .split('\n')
      .slice(1)
      .map((l) => /^ {2}(\S+) {2,}(\S.*)$/.exec(l)!);
    expect(listed.map((m) => m[1])).toEqual(HELP_COMMANDS);
    for (const m of listed) expect(m[2]!.length, m[1]).toBeGreaterThan(10);
    const synopses = [...usage.matchAll(/^ {2}ngcc-perf (\S+)/gm)].map((m) => m[1]);
    expect([...new Set(synopses)].sort()).toEqual([...HELP_COMMANDS].sort());
  });

  it('names the nearest command when asked for one that does not exist, as an error', async () => {
    for (const ask of [['rnu'], ['rnu', '--help'], ['help', 'runn'], ['calibrate-night', 'x']]) {
      const r = await runCli(ask);
      expect(r.code, ask.join(' ')).toBe(2);
      expect(r.err.join('\n'), ask.join(' ')).toMatch(
        /^error: unknown command '(rnu|runn|calibrate-night)'; did you mean (run|calibrate-nights)\?\n/,
      );
    }
    const far = await runCli(['zzzzzz']);
    expect(far.err.join('\n')).toMatch(/^error: unknown command 'zzzzzz' \(commands: run, report, /);
  });

  it('--version says the package version and the native harness', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(r.out).toEqual([
      expect.stringMatching(new RegExp(`^ngcc-perf ${version.replace(/\./g, '\\.')} \\(native harness [0-9a-f]{16}\\)$`)),
    ]);
  });
});
