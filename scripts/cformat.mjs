#!/usr/bin/env node
// The C format check: every C source and header under native/ (or under FOLDER) formatted as the
// repository's .clang-format says, checked with `clang-format --dry-run --Werror`.
//   node scripts/cformat.mjs [FOLDER]
// Prints each file that is not formatted and exits 1 when there is one; exits 0 when all are. Without
// clang-format on the PATH (or the one CLANG_FORMAT names) it says in one line that the check is
// skipped, and exits 0. Fix the files with `clang-format -i FILE…`.
//
// The style is the repository's .clang-format whatever folder is checked (--style=file:, clang-format
// 14 or later), so a folder outside the repository is held to it too. test/fixtures is not checked:
// its C is written as submissions write theirs. Nothing under native/ is left out: native/iccs and
// native/linked/nist are the harness's own implementations of the ICCS helpers and of NIST's KAT
// generator, written here rather than copied from an official source. Code copied unchanged from
// elsewhere would be listed in VENDORED, so that it stays as published.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const style = join(root, '.clang-format');
const tool = process.env.CLANG_FORMAT || 'clang-format';
/** Folders under native/ holding code copied unchanged from elsewhere, left unformatted (none today). */
const VENDORED = [];

/** The .c and .h files under `dir`, sorted, without the vendored folders. */
function cFiles(dir) {
  const skip = new Set(VENDORED.map((v) => join(root, 'native', v)));
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (!skip.has(p)) walk(p);
      } else if (/\.[ch]$/.test(e.name)) found.push(p);
    }
  };
  walk(dir);
  return found;
}

function main() {
  const version = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  if (version.error) {
    console.log(`C format check skipped: ${tool} is missing (install clang-format 14 or later to run it)`);
    return 0;
  }
  const folder = resolve(process.argv[2] ?? join(root, 'native'));
  const files = cFiles(folder);
  const unformatted = [];
  for (const file of files) {
    const r = spawnSync(tool, ['--dry-run', '--Werror', `--style=file:${style}`, file], { encoding: 'utf8' });
    if (r.status === 0) continue;
    // --Werror's own complaint names the file; anything else (a style clang-format cannot read) is said as it is.
    if (!/-Wclang-format-violations/.test(r.stderr)) {
      console.error(`${tool} failed on ${file}:\n${r.stderr.trim()}`);
      return 2;
    }
    unformatted.push(file);
  }
  for (const file of unformatted) console.log(relative(process.cwd(), file) || file);
  if (unformatted.length > 0) {
    console.log(
      `${unformatted.length} of ${files.length} C files not formatted as .clang-format says (${version.stdout.trim()}): clang-format -i FILE…`,
    );
    return 1;
  }
  return 0;
}

process.exitCode = main();
