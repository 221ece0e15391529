import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { divisionSites, parseDivisions, withDivisions } from '../src/ct/division.js';
import type { CtFile } from '../src/ct/findings.js';
import { tempDir } from './helpers/tmp.js';

// KyberSlash's shape (Kyber's poly_tomsg before the fix): a coefficient that depends on the secret
// key divided by q. At -Os gcc emits `div` for the division by the constant; at -O2 a multiplication.
// `helper_div` divides by a variable but no entry point reaches it.
const SOURCE = `#include <stdint.h>
__attribute__((noinline)) static uint32_t compress(uint32_t x) {
  return ((((x << 1) + 3329 / 2) / 3329) & 1);
}
int kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
  for (int i = 0; i < 32; i++) ss[i] = (unsigned char)compress((uint32_t)(sk[2 * i] | sk[2 * i + 1] << 8) ^ ct[i]);
  return 0;
}
int kem_keygen(unsigned char *pk, unsigned char *sk) {
  for (int i = 0; i < 32; i++) pk[i] = (unsigned char)(sk[i] + 1);
  return 0;
}
unsigned helper_div(unsigned a, unsigned b) { return a / b; }
`;
/** The line of the division in SOURCE. */
const DIV_LINE = 3;

function build(dir: string, cc: string, opt: string): string {
  const src = join(dir, 'kem.c');
  writeFileSync(src, SOURCE);
  const lib = join(dir, `libkem${opt}.so`);
  execFileSync(cc, [opt, '-g', '-shared', '-fPIC', src, '-o', lib]);
  return lib;
}

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

describe('division sites reachable from the API', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir();
  });

  it('-Os: the division by q in the function kem_dec reaches, with its file and line; the unreachable one is left out', async () => {
    const sites = await divisionSites(build(dir, 'gcc', '-Os'), { sandbox: 'bwrap' });
    expect(sites).toEqual([
      { function: 'compress', instruction: 'div', address: expect.stringMatching(/^0x[0-9a-f]+$/), file: 'kem.c', line: DIV_LINE },
    ]);
  });

  it('-O2: the same code has no division instruction (gcc multiplies by the inverse)', async () => {
    expect(await divisionSites(build(dir, 'gcc', '-O2'), { sandbox: 'bwrap' })).toEqual([]);
  });

  it.skipIf(!has('aarch64-linux-gnu-gcc') || !has('aarch64-linux-gnu-objdump'))(
    'AArch64 -Os: udiv, found with the cross binutils',
    async () => {
      const lib = build(dir, 'aarch64-linux-gnu-gcc', '-Os');
      const sites = await divisionSites(lib, { sandbox: 'bwrap', objdump: 'aarch64-linux-gnu-objdump', nm: 'aarch64-linux-gnu-nm' });
      expect(sites.map(({ function: f, instruction, file, line }) => ({ f, instruction, file, line }))).toEqual([
        { f: 'compress', instruction: 'udiv', file: 'kem.c', line: DIV_LINE },
      ]);
    },
  );

  it('tells integer division from SSE division and names the instruction as objdump spells it', () => {
    const listing = [
      '0000000000001000 <f>:',
      '/src/a.c:7',
      '    1000:\tdivss  %xmm1,%xmm0',
      '    1004:\tvdivsd %xmm2,%xmm1,%xmm0',
      '    1008:\tidivq  %rcx',
      '/src/a.c:9 (discriminator 2)',
      '    100c:\tdivl   (%rsi)',
      '0000000000001010 <g>:',
      '    1010:\tsdiv\tx0, x1, x2',
    ].join('\n');
    expect(parseDivisions(listing)).toEqual([
      { function: 'f', instruction: 'idivq', address: '0x1008', file: 'a.c', line: 7 },
      { function: 'f', instruction: 'divl', address: '0x100c', file: 'a.c', line: 9 },
      { function: 'g', instruction: 'sdiv', address: '0x1010' },
    ]);
  });
});

describe('withDivisions: memcheck findings against the division sites', () => {
  const ct = (): CtFile => ({
    schema: 1,
    tool: 'valgrind-3.19.0 memcheck',
    library_sha256: 'ab'.repeat(32),
    operations: {
      keygen: { status: 'clean', calls: 3, findings: [] },
      dec: {
        status: 'flagged',
        calls: 3,
        findings: [{ kind: 'branch', function: 'compress', file: 'kem.c', line: 3, count: 96, suppressed: false, reason: '' }],
      },
      enc: {
        status: 'clean',
        calls: 3,
        findings: [{ kind: 'branch', function: 'compress', file: 'kem.c', line: 3, count: 4, suppressed: true, reason: 'public seed' }],
      },
    },
  });
  const site = { function: 'compress', instruction: 'div', address: '0x1107', file: 'kem.c', line: 3 };
  const other = { function: 'reduce', instruction: 'div', address: '0x1200', file: 'kem.c', line: 20 };

  it('a division in a function memcheck flagged is a division finding of that operation; the others are listed as not shown tainted', () => {
    const out = withDivisions(ct(), [site, other]);
    expect(out.operations.dec!.findings.filter((f) => f.kind === 'division')).toEqual([
      expect.objectContaining({ kind: 'division', function: 'compress', file: 'kem.c', line: 3, suppressed: false }),
    ]);
    expect(out.operations.dec!.status).toBe('flagged');
    // A suppressed finding (public data, by its reason) shows no secret in the operands.
    expect(out.operations.enc).toEqual(ct().operations.enc);
    expect(out.operations.keygen).toEqual(ct().operations.keygen);
    expect(out.divisions).toEqual([
      { ...site, tainted: true },
      { ...other, tainted: false },
    ]);
  });

  it('without division sites the file is unchanged but for an empty list', () => {
    expect(withDivisions(ct(), [])).toEqual({ ...ct(), divisions: [] });
  });
});
