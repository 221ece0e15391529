import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilerMade, sourceLine } from '../src/ct/sourceHint.js';
import { PQCLEAN } from './helpers/pqclean.js';
import { tempDir } from './helpers/tmp.js';

/** A line of a PQClean source, read from the package (the lines memcheck's findings point at). */
const pqcleanLine = (path: string, marker: string): string => {
  const line = readFileSync(join(PQCLEAN, path), 'utf8')
    .split('\n')
    .find((l) => l.includes(marker));
  if (line === undefined) throw new Error(`no line with '${marker}' in ${path}`);
  return line;
};

describe('a branch finding the source does not make (docs/method.md#constant-time-check)', () => {
  it("names HQC's constant-time selects, loops over a fixed count, as the compiler's", () => {
    // gf2x.c base_mul and vector.c single_bit_mask: gcc turns these branch-free loops into a test of the secret index.
    expect(compilerMade(pqcleanLine('crypto_kem/hqc-128/clean/gf2x.c', 'for (size_t i = 0; i < 16; ++i)'))).toBe('loop-bound');
    expect(compilerMade(pqcleanLine('crypto_kem/hqc-128/clean/vector.c', 'for (size_t i = 0; i < 64; ++i)'))).toBe('loop-bound');
    expect(compilerMade('    for (i = 0; i < CT_KEM_SEED_BYTES / 2; i++) {')).toBe('loop-bound');
    expect(compilerMade('for (j = 0; j < sizeof(uint64_t) * 8; j++) /* bits */')).toBe('loop-bound');
  });

  it('leaves alone a branch the source makes: a test, a loop bound that is a variable, a condition in a loop', () => {
    expect(compilerMade(pqcleanLine('crypto_kem/ml-kem-512/clean/indcpa.c', 'if (val0 < KYBER_Q)'))).toBeUndefined();
    expect(compilerMade(pqcleanLine('crypto_kem/ml-kem-512/clean/indcpa.c', 'while (ctr < len'))).toBeUndefined();
    expect(compilerMade('        if (sk[i] == 0x42) { /* PLANT: branch */')).toBeUndefined();
    expect(compilerMade('for (i = 0; i < n; i++) {')).toBeUndefined();
    expect(compilerMade('for (i = 0; i < len && buf[i]; i++)')).toBeUndefined();
    expect(compilerMade('for (i = 0; i < LEN; i++) if (a[i]) break;')).toBe('loop-bound');
    expect(compilerMade('x = secret ? a : b;')).toBeUndefined();
    expect(compilerMade('return a || b;')).toBeUndefined();
    expect(compilerMade('')).toBeUndefined();
  });

  it('names a line with no branch at all: KyberSlash’s division, a shift', () => {
    expect(compilerMade('        t = (((t << 1) + KYBER_Q/2)/KYBER_Q) & 1;')).toBe('no-branch');
    expect(compilerMade('  r = a >> 63; // if negative')).toBe('no-branch');
    expect(compilerMade('  s = "if (x)";')).toBe('no-branch');
  });
});

describe('the source line of a finding is read only from what the build read', () => {
  const root = tempDir();
  const src = join(root, 'kem-1', 'src');
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'a.c'), 'int a;\nfor (i = 0; i < 4; i++) {\n');
  const outside = join(tempDir(), 'secret.txt');
  writeFileSync(outside, 'host secret\n');
  symlinkSync(outside, join(src, 'link.c'));

  it('reads a line of a file under a root, or of a root that is the file', () => {
    expect(sourceLine([join(root, 'kem-1')], src, 'a.c', 2)).toBe('for (i = 0; i < 4; i++) {');
    expect(sourceLine([join(src, 'a.c')], undefined, join(src, 'a.c'), 1)).toBe('int a;');
    expect(sourceLine([join(root, 'kem-1')], src, 'a.c', 9)).toBeUndefined();
  });

  it('never reads a file outside the roots, by path, by "..", or through a link', () => {
    expect(sourceLine([join(root, 'kem-1')], undefined, outside, 1)).toBeUndefined();
    expect(sourceLine([join(root, 'kem-1')], src, '../../../../../../../../etc/passwd', 1)).toBeUndefined();
    expect(sourceLine([join(root, 'kem-1')], src, 'link.c', 1)).toBeUndefined();
    expect(sourceLine([join(root, 'kem-1')], src, 'missing.c', 1)).toBeUndefined();
    expect(sourceLine([join(root, 'kem-1')], src, '', 1)).toBeUndefined();
  });
});
