import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './tmp.js';

/** Libraries for the timing checks' tests: the toy KEM or toy signature of the fixtures with one function replaced, and a toy hash. */

const iccs = join(repoRoot, 'native', 'iccs');
const kemCommon = join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1', 'common');
const toySig = join(repoRoot, 'test', 'fixtures', 'campaign', 'sign-1', 'toy-sig');

/**
 * The toy KEM or toy signature with one operation replaced by `body`, which may call the honest one
 * as `honest_<op>` (e.g. honest_kem_keygen).
 */
export function variant(dir: string, name: string, type: 'kem' | 'sig', op: string, signature: string, body: string): string {
  return variants(dir, name, type, [[op, signature, body]]);
}

/** The same with several operations replaced (each [op, signature, body]), after `prelude` (shared state). */
export function variants(dir: string, name: string, type: 'kem' | 'sig', replaced: Array<[string, string, string]>, prelude = ''): string {
  const src = join(dir, `${name}.c`);
  const include = type === 'kem' ? `"${join(kemCommon, 'toy_kem.inc')}"` : `"${join(toySig, 'SIG_AlgorithmInstance.c')}"`;
  const ops = replaced.map(([op]) => op);
  writeFileSync(
    src,
    [
      '#define _GNU_SOURCE',
      '#include <string.h>',
      ...ops.map((op) => `#define ${op} honest_${op}`),
      `#include ${include}`,
      ...ops.map((op) => `#undef ${op}`),
      prelude,
      ...replaced.map(([op, signature, body]) => `int ${op}(${signature}) {\n${body}\n}`),
      '',
    ].join('\n'),
  );
  const lib = join(dir, `lib${name}.so`);
  const headers = type === 'kem' ? join(repoRoot, 'test', 'fixtures', 'campaign', 'kem-1', 'good') : toySig;
  execFileSync('gcc', [
    '-std=gnu11',
    '-O2',
    '-fPIC',
    '-shared',
    `-I${iccs}`,
    `-I${kemCommon}`,
    `-I${headers}`,
    '-o',
    lib,
    src,
    join(iccs, 'auxfunc.c'),
    join(iccs, 'drng.c'),
  ]);
  return lib;
}

/**
 * A toy 256-bit hash (FNV over the message, then a mixer), honest, or with one fault: `blind` never
 * reads the message; `counting` mixes in how many times it was called.
 */
export function toyHash(dir: string, name: string, fault: '' | 'blind' | 'counting'): string {
  const src = join(dir, `${name}.c`);
  writeFileSync(
    src,
    `static unsigned long long calls;
int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest) {
  unsigned long long h = 1469598103934665603ull ^ msg_len_bits;
  for (unsigned long long i = 0; i < (msg_len_bits + 7) / 8; i++) { ${fault === 'blind' ? '(void)msg; break;' : 'h ^= msg[i]; h *= 1099511628211ull;'} }
  ${fault === 'counting' ? 'h ^= ++calls;' : '(void)calls;'}
  for (int i = 0; i < digest_len_bits / 8; i++) { h ^= h >> 29; h *= 0xbf58476d1ce4e5b9ull; digest[i] = (unsigned char)(h >> 56); }
  return 0;
}
`,
  );
  const lib = join(dir, `lib${name}.so`);
  execFileSync('gcc', ['-std=gnu11', '-O2', '-fPIC', '-shared', '-o', lib, src]);
  return lib;
}

export const KEYGEN = 'unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len';
export const ENC =
  'unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len, unsigned char *ct, unsigned long long *ct_len';
export const DEC =
  'unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len, unsigned char *ss, unsigned long long *ss_len';
export const SIGN =
  'unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len, unsigned char *sn, unsigned long long *sn_len';
export const VERIFY =
  'unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len, unsigned char *m, unsigned long long m_len';
