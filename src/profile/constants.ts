/**
 * Fingerprints of symmetric primitives: constants an implementation of its own must carry, as
 * immediates in code or as tables in data. Values are written as the bytes they occupy in a
 * little-endian image (tables) and as the integers that appear as immediates.
 */
export interface Fingerprint {
  primitive: string;
  /** Integers that show up as instruction immediates (any 3 distinct ones identify it). */
  immediates: bigint[];
  /** Byte strings of tables in data (any one identifies it). */
  tables: Uint8Array[];
}

const le32 = (xs: number[]) => Uint8Array.from(xs.flatMap((x) => [x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, (x >>> 24) & 0xff]));
const le64 = (xs: bigint[]) =>
  Uint8Array.from(xs.flatMap((x) => Array.from({ length: 8 }, (_, i) => Number((x >> BigInt(8 * i)) & 0xffn))));
const bytes = (hex: string) => Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));

const KECCAK_RC = [
  0x0000000000000001n,
  0x0000000000008082n,
  0x800000000000808an,
  0x8000000080008000n,
  0x000000000000808bn,
  0x0000000080000001n,
  0x8000000080008081n,
  0x8000000000008009n,
  0x000000000000008an,
  0x0000000000000088n,
  0x0000000080008009n,
  0x000000008000000an,
];
const SHA256_K = [0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5];
const SHA512_K = [0x428a2f98d728ae22n, 0x7137449123ef65cdn, 0xb5c0fbcfec4d3b2fn, 0xe9b5dba58189dbbcn];
const SM3_IV = [0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600, 0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e];

export const FINGERPRINTS: Fingerprint[] = [
  { primitive: 'Keccak (SHA-3/SHAKE)', immediates: KECCAK_RC.slice(2), tables: [le64(KECCAK_RC.slice(0, 4))] },
  { primitive: 'SHA-256', immediates: SHA256_K.map(BigInt), tables: [le32(SHA256_K.slice(0, 4))] },
  { primitive: 'SHA-512', immediates: SHA512_K, tables: [le64(SHA512_K.slice(0, 2))] },
  { primitive: 'SM3', immediates: [...SM3_IV.map(BigInt), 0x79cc4519n, 0x7a879d8an], tables: [le32(SM3_IV.slice(0, 4))] },
  { primitive: 'AES', immediates: [], tables: [bytes('637c777bf26b6fc53001672bfed7ab76')] },
  {
    primitive: 'SM4',
    immediates: [0xa3b1bac6n, 0x56aa3350n, 0x677d9197n, 0xb27022dcn],
    tables: [bytes('d690e9fecce13db716b614c228fb2c05')],
  },
  {
    primitive: 'ChaCha/Salsa',
    immediates: [0x61707865n, 0x3320646en, 0x79622d32n, 0x6b206574n],
    tables: [new TextEncoder().encode('expand 32-byte k')],
  },
];

/** Functions that are the ICCS helpers: reaching them is routing through ICCS, not bypassing it. */
export const ICCS_HASH = ['sm3hash', 'pseudohash', 'pseudoXOF'];
export const ICCS_DRNG = ['get_random_number', 'init_random_number'];

/** Randomness sources other than the ICCS DRNG, by the symbol that reaches them. */
export const OTHER_RANDOMNESS: Record<string, string> = {
  RAND_bytes: 'OpenSSL RAND',
  RAND_priv_bytes: 'OpenSSL RAND',
  getrandom: 'getrandom',
  getentropy: 'getrandom',
  rand: 'libc rand',
  random: 'libc rand',
};

/**
 * NIST-API randomness entry points: code of the submission's (or the harness's DRBG), so they are
 * followed like any function; they count as a DRBG of their own unless they reach the ICCS DRNG.
 */
export const RANDOMBYTES = ['randombytes', 'PQCLEAN_randombytes'];
