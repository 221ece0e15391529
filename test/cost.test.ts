import { describe, expect, it } from 'vitest';
import { katTimeoutS, processSeconds, SCALED_TIMEOUT_CAP_S, scaledTimeoutS, setupSeconds } from '../src/measure/cost.js';

/**
 * What a process costs (src/measure/cost.ts), from the KAT's seconds per call: the figures are
 * McEliece-348864-like (a slow keygen, fast enc and dec) and SPHINCS+-like (a slow sign).
 */
const MCELIECE = { keygen: 120, enc: 0.0001, dec: 0.0003 };
const SPHINCS = { keygen: 0.01, sign: 0.5, verify: 0.001 };

describe('the cost of a process', () => {
  it('counts the inputs each operation needs besides its calls', () => {
    expect(setupSeconds('kem', 'keygen', MCELIECE, 10)).toBe(0);
    expect(setupSeconds('kem', 'enc', MCELIECE, 10)).toBe(120);
    expect(setupSeconds('kem', 'dec', MCELIECE, 10)).toBeCloseTo(120.001, 9);
    // verify: a key pair and its pool of signed messages (16, or one per call for the audit).
    expect(setupSeconds('sig', 'verify', SPHINCS, 1000)).toBeCloseTo(0.01 + 16 * 0.5, 9);
    expect(setupSeconds('sig', 'verify', SPHINCS, 100, 100)).toBeCloseTo(0.01 + 100 * 0.5, 9);
    expect(processSeconds('kem', 'dec', MCELIECE, 10, 1)).toBeCloseTo(120 + 11 * 0.0001 + 11 * 0.0003, 9);
    expect(processSeconds('hash:256', 'hash_32', MCELIECE, 10)).toBeUndefined();
  });

  it('gives the floor, or three times the expected seconds, never more than 8 hours', () => {
    expect(scaledTimeoutS(300, undefined)).toBe(300);
    expect(scaledTimeoutS(300, 10)).toBe(300);
    // McEliece enc's trial: its key pair alone outlasts the 300-s floor.
    expect(scaledTimeoutS(300, processSeconds('kem', 'enc', MCELIECE, 1, 1))).toBeCloseTo(3 * (120 + 2 * 0.0001), 6);
    expect(scaledTimeoutS(300, 1e6)).toBe(SCALED_TIMEOUT_CAP_S);
    // A KAT whose first record took 130 s: 10 records and 3 more, three times over.
    expect(katTimeoutS(600, 130, 10)).toBe(3 * 130 * 13);
    expect(katTimeoutS(600, 1, 10)).toBe(600);
  });
});
