import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalDigest } from '../src/kat/manifest.js';
import { parseManifest } from '../src/config/katManifest.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('kat.sha256 manifests', () => {
  it('parses modes, record counts and comments', () => {
    const text = `# comment\n${'a'.repeat(64)} strict x/KAT_KEM_x.txt\n\n${'B'.repeat(64)} nolen:3 y-1/PQCkemKAT_1.rsp\n`;
    expect(parseManifest(text, 'kat.sha256')).toEqual([
      { sha256: 'a'.repeat(64), mode: 'strict', records: undefined, label: 'x', file: 'KAT_KEM_x.txt', line: 2 },
      { sha256: 'b'.repeat(64), mode: 'nolen', records: 3, label: 'y-1', file: 'PQCkemKAT_1.rsp', line: 4 },
    ]);
  });

  it('names the line of a malformed entry', () => {
    expect(() => parseManifest(`# ok\n${'a'.repeat(63)} strict x/f.txt\n`, 'kem-1/kat.sha256')).toThrow(
      /kem-1\/kat\.sha256: line 2: expected/,
    );
    expect(() => parseManifest(`${'a'.repeat(64)} fuzzy x/f.txt\n`, 'k')).toThrow(/line 1/);
  });
});

describe('canonical digest', () => {
  const kat = '# ML-KEM-512\r\n\ncount = 0 \nseed = AB\t\nPK_Len = 2\npk = 0102\n\ncount = 1\nseed = CD\n';

  it('strips trailing blanks, drops empty and comment lines', () => {
    expect(canonicalDigest(kat, 'strict')).toBe(sha('count = 0\nseed = AB\nPK_Len = 2\npk = 0102\ncount = 1\nseed = CD\n'));
  });

  it('nolen drops *_Len lines', () => {
    expect(canonicalDigest(kat, 'nolen')).toBe(sha('count = 0\nseed = AB\npk = 0102\ncount = 1\nseed = CD\n'));
  });

  it(':N keeps only the first N records', () => {
    expect(canonicalDigest(kat, 'strict', 1)).toBe(sha('count = 0\nseed = AB\nPK_Len = 2\npk = 0102\n'));
    expect(canonicalDigest(kat.replace(/count/g, 'Count'), 'strict', 2)).toBe(canonicalDigest(kat.replace(/count/g, 'Count'), 'strict'));
  });
});
