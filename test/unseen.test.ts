import { describe, expect, it } from 'vitest';
import {
  firstRecordDifference,
  heldToShown,
  instanceSeed,
  parseSecretSeed,
  secretSeedOf,
  seedId,
  UNSEEN_CHECK,
} from '../src/kat/unseen.js';
import { isInputError } from '../src/errors.js';

/** The unseen-seed check's pure parts (src/kat/unseen.ts); the runs themselves are in test/truth.test.ts. */

const RECORD = (count: number, pk: string) => `Count = ${count}\nSeed_Len = 64\nSeed = AA\nPK_Len = 2\nPK = ${pk}\nSS = 00\n`;

describe('unseen seeds: texts, seeds and what the pages say', () => {
  it('names the first record and field where two KAT texts differ, and nothing when they agree', () => {
    const a = [RECORD(0, '0102'), RECORD(1, '0304'), RECORD(2, '0506')].join('\n');
    const b = [RECORD(0, '0102'), RECORD(1, '0305'), RECORD(2, '0000')].join('\n');
    expect(firstRecordDifference(a, a)).toBeUndefined();
    expect(firstRecordDifference(a, b)).toBe('record 1, PK');
    // NIST's lower-case keys, and a text cut short.
    expect(firstRecordDifference('count = 0\nseed = 01\npk = 02\n\ncount = 1\npk = 03\n', 'count = 0\nseed = 01\npk = 02\n')).toBe(
      'record 1, count',
    );
  });

  it('takes a secret seed of at least 32 bytes of hex, and names the variable of a bad one', () => {
    expect(parseSecretSeed('ab'.repeat(32))).toEqual(Buffer.alloc(32, 0xab));
    expect(parseSecretSeed('ab'.repeat(31))).toBe('has 31 bytes, fewer than 32');
    expect(parseSecretSeed('xyz')).toBe('is not hex digits (two per byte)');
    expect(secretSeedOf(undefined, 'environment', 'NGCC_UNSEEN_SEED')).toBeUndefined();
    expect(secretSeedOf('', 'environment', 'NGCC_UNSEEN_SEED')).toBeUndefined();
    let thrown: unknown;
    try {
      secretSeedOf('12', 'environment', 'NGCC_UNSEEN_SEED');
    } catch (e) {
      thrown = e;
    }
    expect(isInputError(thrown) && thrown.message).toBe(
      'environment: NGCC_UNSEEN_SEED: the unseen seed has 1 bytes, fewer than 32 (give at least 32 bytes as hex)',
    );
  });

  it('gives each instance a seed of its own, the same every night, and an id that is not the seed', () => {
    const secret = Buffer.alloc(32, 7);
    expect(instanceSeed(secret, 'a/x')).toEqual(instanceSeed(secret, 'a/x'));
    expect(instanceSeed(secret, 'a/x')).not.toEqual(instanceSeed(secret, 'a/y'));
    expect(instanceSeed(secret, 'a/x')).toHaveLength(64);
    expect(seedId(secret)).toMatch(/^[0-9a-f]{16}$/);
    expect(secret.toString('hex')).not.toContain(seedId(secret));
    expect(seedId(secret)).not.toBe(seedId(Buffer.alloc(32, 8)));
  });

  it('says what an instance was held to, and FORGED where the check found it', () => {
    expect(heldToShown({})).toBe('its published KAT only');
    expect(heldToShown({ held_to: { against: 'published-kat', why: 'new-manifest' } })).toMatch(
      /^its published KAT only \(a new KAT manifest/,
    );
    expect(heldToShown({ held_to: { against: 'night', night_utc: '2026-12-05T01:00:00Z', seed_id: '0123456789abcdef' } })).toMatch(
      /as of the night of 2026-12-05$/,
    );
    expect(heldToShown({ held_to: { against: 'base', base_library_sha256: 'x' }, forged: { operation: UNSEEN_CHECK } })).toMatch(
      /^the pull request's base library: .* — FORGED there$/,
    );
  });
});
