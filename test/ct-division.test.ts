import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { divisionSites, parseDivisions, withDivisions } from '../src/ct/division.js';
import { parseDivisionTrace, registerOf, siteReading } from '../src/ct/divisionCheck.js';
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
      {
        function: 'compress',
        instruction: 'div',
        operand: expect.stringMatching(/^%\w+$/),
        address: expect.stringMatching(/^0x[0-9a-f]+$/),
        file: 'kem.c',
        line: DIV_LINE,
      },
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
      { function: 'f', instruction: 'idivq', operand: '%rcx', address: '0x1008', file: 'a.c', line: 7 },
      { function: 'f', instruction: 'divl', operand: '(%rsi)', address: '0x100c', file: 'a.c', line: 9 },
      { function: 'g', instruction: 'sdiv', operand: 'x0, x1, x2', address: '0x1010' },
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

describe('the division check: what it reads at a site, and what its trace says', () => {
  it('reads a register divisor at its width, a memory one by its address, and leaves a RIP-relative one unread', () => {
    expect(registerOf('%r9d')).toEqual({ name: 'r9', bits: 32, shift: 0 });
    expect(registerOf('%ah')).toEqual({ name: 'rax', bits: 8, shift: 8 });
    expect(registerOf('%sil')).toEqual({ name: 'rsi', bits: 8, shift: 0 });
    expect(siteReading({ instruction: 'div', operand: '%r9d' })).toEqual({
      dividend: '(($raxs1 & 0xffffffff) | ($rdxs1 & 0xffffffff))',
      divisor: { shadow: '(($r9s1 >> 0) & 0xffffffff)' },
    });
    expect(siteReading({ instruction: 'idivq', operand: '-0x8(%rbp,%rcx,4)' })?.divisor).toEqual({
      address: '(long)((-0x8) + $rbp + $rcx*4)',
      bytes: 8,
    });
    expect(siteReading({ instruction: 'divl', operand: '0x10(%rip)' })?.divisor).toBeUndefined();
    // AArch64's udiv is not read (the ct phase runs on the host).
    expect(siteReading({ instruction: 'udiv', operand: 'w0, w1, w2' })).toBeUndefined();
  });

  const sites = [
    { function: 'f', instruction: 'div', operand: '%ecx', address: '0x10' },
    { function: 'g', instruction: 'divl', operand: '(%rsi)', address: '0x20' },
  ];

  it('a site is secret by any hit that showed a shadow bit; a trace without gdb’s end line is a failure', () => {
    const trace = [
      'NGCCDIV 0 0 ff',
      'NGCCMEM 1 0',
      '00000000',
      'NGCCMEM 1 0',
      '00ff0000',
      'NGCCEXIT 0',
      'NGCCHITS 0 1',
      'NGCCHITS 1 2',
      'NGCCEND',
    ];
    expect(parseDivisionTrace(trace.join('\n'), sites)).toEqual({
      sites: [
        { address: '0x10', hits: 1, secret: ['divisor'] },
        { address: '0x20', hits: 2, secret: ['divisor'] },
      ],
    });
    expect(parseDivisionTrace(trace.slice(0, -1).join('\n'), sites)).toEqual({ failure: 'gdb did not finish the division check' });
    // A line for a site that does not exist, or an unaddressable read, changes nothing.
    const noise = ['NGCCDIV 7 ff ff', 'NGCCMEM 1 0', 'Address 0x0 len 4 has 4 bytes unaddressable', 'NGCCEND'];
    expect(parseDivisionTrace(noise.join('\n'), sites)).toEqual({
      sites: [
        { address: '0x10', hits: 0, secret: [] },
        { address: '0x20', hits: 0, secret: [] },
      ],
    });
  });
});

describe('the division check without gdb', () => {
  it('says which tools are missing and runs nothing (the sites are then judged by memcheck’s findings)', async () => {
    const { runDivisionCheck } = await import('../src/ct/divisionCheck.js');
    const path = process.env.PATH;
    process.env.PATH = tempDir();
    try {
      const r = await runDivisionCheck({
        driver: '/nonexistent/ngcc_ct',
        library: '/nonexistent/lib.so',
        type: 'kem',
        operation: 'dec',
        calls: 1,
        rng: 'auto',
        sites: [{ function: 'f', instruction: 'div', operand: '%ecx', address: '0x10' }],
        timeoutMs: 1000,
        sandbox: 'bwrap',
      });
      expect(r).toEqual({ failure: 'gdb and vgdb not installed (the Debian packages gdb and valgrind)' });
    } finally {
      process.env.PATH = path;
    }
  });
});
