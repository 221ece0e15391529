/**
 * The hash operations (docs/method.md#hash-functions): CryptHash of the guide's §3.4 inputs S1–S8,
 * one operation per message length, `hash_<bytes>`; message byte i is (i*131 + bytes) mod 256
 * (native/core/hash_ops.c writes it).
 */
export const HASH_MESSAGE_BYTES = [32, 128, 512, 1024, 4096, 8192, 16384, 65536] as const;

export const hashOperation = (bytes: number): string => `hash_${bytes}`;

export const HASH_OPERATIONS = HASH_MESSAGE_BYTES.map(hashOperation);

/** The message length of a hash operation, or undefined for another operation. */
export function hashMessageBytes(operation: string): number | undefined {
  const m = /^hash_([0-9]+)$/.exec(operation);
  return m ? Number(m[1]) : undefined;
}

/** The driver's TYPE field for a hash instance: the digest length rides with it (native/core/harness.c). */
export const hashDriverType = (digestBits: number): string => `hash:${digestBits}`;
