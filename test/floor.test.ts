import { describe, expect, it } from 'vitest';
import { belowFloor, bytesMoved, floorSeconds } from '../src/measure/floor.js';

/**
 * The physical floor (src/measure/floor.ts): a call cannot take less time than moving the bytes it
 * must write. The sizes are FIPS 203's and FIPS 204's (ML-KEM-768, ML-DSA-65), as the driver's META
 * lines report them.
 */
const MLKEM768 = { pk_bytes: '1184', sk_bytes: '2400', ct_bytes: '1088', ss_bytes: '32' };
const MLDSA65 = { pk_bytes: '1952', sk_bytes: '4032', signature_bytes: '3309' };

describe('the physical floor', () => {
  it('counts what each operation must write, and a hash also what it reads', () => {
    expect(bytesMoved('kem', 'keygen', MLKEM768)).toBe(3584);
    expect(bytesMoved('kem', 'enc', MLKEM768)).toBe(1120);
    expect(bytesMoved('kem', 'dec', MLKEM768)).toBe(32);
    expect(bytesMoved('sig', 'sign', MLDSA65)).toBe(1654);
    expect(bytesMoved('sig', 'verify', MLDSA65)).toBeUndefined();
    expect(bytesMoved('hash:256', 'hash_1024', { input_bytes: '1024', digest_bytes: '32' })).toBe(1056);
  });

  it('passes an honest figure and flags one that could not have written its outputs', () => {
    // Honest ML-KEM-768 keygen on this class of machine: about 20 µs a call.
    expect(belowFloor('kem', 'keygen', MLKEM768, { seconds: 0.02, measurements: 1000 })).toBeUndefined();
    // 1000 calls claimed in 2 µs: 2 ns a call, where 3584 bytes take at least 4.3 ns.
    expect(floorSeconds(3584) * 1e9).toBeCloseTo(4.31, 2);
    expect(belowFloor('kem', 'keygen', MLKEM768, { seconds: 2e-6, measurements: 1000 })).toBe(
      'below the physical floor: 2.00 ns per keygen call, where moving its 3584 bytes takes at least 4.31 ns (128 bytes a cycle at 6.5 GHz)',
    );
    // Nothing known to write: no floor.
    expect(belowFloor('sig', 'verify', MLDSA65, { seconds: 1e-9, measurements: 1000 })).toBeUndefined();
  });
});
