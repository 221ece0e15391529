import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testData } from './tmp.js';

/** pq-crystals Kyber ref/ as published (test/data/pq-crystals-kyber, the code after the 2024 fix). */
export const KYBER_REF = join(testData, 'pq-crystals-kyber', 'ref');

/**
 * A copy of Kyber's ref/ in `dir` as it was before the KyberSlash fix: the fix left the old lines in
 * poly.c and polyvec.c as comments above the multiplications that replaced them; here each comment
 * becomes the code again and the replacement goes. Throws when a site is not where the published
 * code has it, so the fixture cannot silently stop holding the divisions.
 */
export function preFixKyber(dir: string): string {
  cpSync(KYBER_REF, dir, { recursive: true });
  const restore = (file: string, expected: number) => {
    const path = join(dir, file);
    let text = readFileSync(path, 'utf8');
    let n = 0;
    // poly_compress, polyvec_compress: `/* t[j] = (...)/KYBER_Q) & 15; */` then d0 = …; d0 …; t[j] = d0 & 0xf;
    text = text.replace(
      /\/\*\s*(t\[[jk]\]\s*=\s*\(.*?\/\s*KYBER_Q\).*?;)\s*\*\/\n(?:[ \t]*d0.*\n)+([ \t]*)t\[[jk]\]\s*=\s*d0 & 0x[0-9a-f]+;/g,
      (_m, old: string, indent: string) => {
        n++;
        return `${indent}${old}`;
      },
    );
    // poly_tomsg: two commented lines, then t <<= 1; t += …; t *= …; t >>= …; t &= 1;
    text = text.replace(
      /\/\/\s*(t \+= \(\(int16_t\)t >> 15\) & KYBER_Q;)\n([ \t]*)\/\/\s*(t\s*=\s*\(\(\(t << 1\) \+ KYBER_Q\/2\)\/KYBER_Q\) & 1;)\n(?:[ \t]*t (?:<<=|\+=|\*=|>>=|&=).*\n)+/g,
      (_m, first: string, indent: string, second: string) => {
        n++;
        return `${first}\n${indent}${second}\n`;
      },
    );
    if (n !== expected) throw new Error(`${file}: ${n} pre-fix division(s) restored, expected ${expected}`);
    writeFileSync(path, text);
  };
  // poly.c: poly_compress's two parameter branches and poly_tomsg; polyvec.c: polyvec_compress's two.
  restore('poly.c', 3);
  restore('polyvec.c', 2);
  return dir;
}

/** The 1-based line of `file` in `dir` that holds `text`, read from the source. */
export function lineOf(dir: string, file: string, text: string): number {
  const i = readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`${file}: no line with '${text}'`);
  return i + 1;
}

/** A kem candidate.yml for Kyber-512 from `dir` (relative to the candidate's folder) at each flag set. */
export function kyberCandidate(folder: string, dir: string, builds: Array<{ label: string; cflags: string }>): void {
  const ns = 'pqcrystals_kyber512';
  const instance = (b: { label: string; cflags: string }) =>
    [
      `  - label: ${b.label}`,
      `    dir: ${dir}`,
      `    cflags: [${b.cflags}]`,
      '    defines: {KYBER_K: 2}',
      '    nist_names:',
      `      keypair: ${ns}_ref_keypair`,
      `      enc: ${ns}_ref_enc`,
      `      dec: ${ns}_ref_dec`,
      `      pk_bytes: ${ns}_PUBLICKEYBYTES`,
      `      sk_bytes: ${ns}_SECRETKEYBYTES`,
      `      ct_bytes: ${ns}_CIPHERTEXTBYTES`,
      `      ss_bytes: ${ns}_BYTES`,
    ].join('\n');
  writeFileSync(
    join(folder, 'candidate.yml'),
    `id: kem-1\ntype: kem\nalgorithm: Kyber (pq-crystals ref)\napi: nist\ninstances:\n${builds.map(instance).join('\n')}\n`,
  );
  // No digest: the ct phase is what these instances test (their KAT status is NOKAT).
  writeFileSync(join(folder, 'kat.sha256'), '');
}
