import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  MISSING,
  formatCount,
  formatCycles,
  formatGHz,
  formatKiB,
  formatMiB,
  formatN,
  formatOpsPerSecond,
  formatSeconds,
  formatShare,
  pyFixed,
  pyGeneral,
} from '../src/text/format.js';

describe('pyFixed: Python format(x, ".Nf")', () => {
  it('rounds exact binary ties half to even, where toFixed rounds half up', () => {
    // 0.125, 0.375, 2.5, 3.5, 10000.5 … are exact doubles, hence true ties.
    expect(pyFixed(0.125, 2)).toBe('0.12');
    expect((0.125).toFixed(2)).toBe('0.13'); // the JavaScript behaviour this module avoids
    expect(pyFixed(0.375, 2)).toBe('0.38');
    expect(pyFixed(2.5, 0)).toBe('2');
    expect((2.5).toFixed(0)).toBe('3');
    expect(pyFixed(3.5, 0)).toBe('4');
    expect(pyFixed(0.5, 0)).toBe('0');
    expect(pyFixed(1.5, 0)).toBe('2');
    expect(pyFixed(-2.5, 0)).toBe('-2');
    expect(pyFixed(10000.5, 0)).toBe('10000');
    expect(pyFixed(20001.5, 0)).toBe('20002');
    expect(pyFixed(9999.5, 0)).toBe('10000');
  });

  it('rounds non-ties by the exact binary value', () => {
    // 1.005 = 1.00499999999999989…, 2.675 = 2.67499999999999982…: both below the tie.
    expect(pyFixed(1.005, 2)).toBe('1.00');
    expect(pyFixed(2.675, 2)).toBe('2.67');
    // 999.95 = 999.950000000000045…: above the tie.
    expect(pyFixed(999.95, 1)).toBe('1000.0');
    expect(pyFixed(0.1, 20)).toBe('0.10000000000000000555');
  });

  it('keeps Python spellings of signs and specials', () => {
    expect(pyFixed(0, 0)).toBe('0');
    expect(pyFixed(0, 3)).toBe('0.000');
    expect(pyFixed(-0, 2)).toBe('-0.00');
    expect(pyFixed(-0.001, 2)).toBe('-0.00');
    expect(pyFixed(NaN, 2)).toBe('nan');
    expect(pyFixed(Infinity, 2)).toBe('inf');
    expect(pyFixed(-Infinity, 2)).toBe('-inf');
    expect(pyFixed(1e22, 0)).toBe('10000000000000000000000');
    expect(pyFixed(5e-324, 3)).toBe('0.000');
    expect(() => pyFixed(1, -1)).toThrow(RangeError);
    expect(() => pyFixed(1, 1.5)).toThrow(RangeError);
  });
});

describe('pyGeneral: Python format(x, ".Ng")', () => {
  it('matches the examples of the published pages', () => {
    expect(pyGeneral(1300.4, 3)).toBe('1.3e+03');
    expect(pyGeneral(11700, 3)).toBe('1.17e+04');
    expect(pyGeneral(0.03874, 3)).toBe('0.0387');
    expect(pyGeneral(335.2, 3)).toBe('335');
    expect(pyGeneral(1e-5, 3)).toBe('1e-05');
    expect(pyGeneral(0.0001234, 3)).toBe('0.000123');
    expect(pyGeneral(123456, 3)).toBe('1.23e+05');
    expect(pyGeneral(100, 3)).toBe('100');
    expect(pyGeneral(0, 3)).toBe('0');
  });

  it('takes the exponent after rounding (999.5 is an exact tie, half-even → 1000)', () => {
    expect(pyGeneral(999.5, 3)).toBe('1e+03');
    expect(pyGeneral(998.5, 3)).toBe('998');
    expect(pyGeneral(9.9996, 4)).toBe('10');
    expect(pyGeneral(0.000099996, 3)).toBe('0.0001');
  });

  it('handles signs, specials, precision 0 and extreme exponents', () => {
    expect(pyGeneral(-0, 3)).toBe('-0');
    expect(pyGeneral(-1234.5, 3)).toBe('-1.23e+03');
    expect(pyGeneral(NaN, 3)).toBe('nan');
    expect(pyGeneral(-Infinity, 3)).toBe('-inf');
    expect(pyGeneral(2.5, 0)).toBe('2');
    expect(pyGeneral(1e100, 3)).toBe('1e+100');
    expect(pyGeneral(5e-324, 3)).toBe('4.94e-324');
    expect(pyGeneral(Number.MAX_VALUE, 17)).toBe('1.7976931348623157e+308');
  });
});

describe('report cells', () => {
  it('formats cycles and moves to the next unit when rounding reaches it', () => {
    expect(formatCycles(9999)).toBe('9999');
    expect(formatCycles(9999.4)).toBe('9999');
    expect(formatCycles(9999.5)).toBe('10.0 k'); // '10000' would belong to the k unit
    expect(formatCycles(243445.7869090909)).toBe('243.4 k');
    expect(formatCycles(820_000)).toBe('820.0 k');
    expect(formatCycles(999_949)).toBe('999.9 k');
    // 999950/1e3 is the double 999.950000000000045…, above the tie: '1000.0 k' → bumped.
    expect(formatCycles(999_950)).toBe('1.00 M');
    expect(formatCycles(999_960)).toBe('1.00 M');
    expect(formatCycles(1_610_000)).toBe('1.61 M');
    expect(formatCycles(3_257_000)).toBe('3.26 M');
    expect(formatCycles(999_994_999)).toBe('999.99 M');
    expect(formatCycles(999_995_000)).toBe('1.00 G');
    expect(formatCycles(53_851_234_567)).toBe('53.85 G');
    expect(formatCycles(0)).toBe('0');
    expect(formatCycles(-5e6)).toBe('-5000000'); // harness rule on the raw value: below 1e4
    expect(formatCycles(NaN)).toBe(MISSING);
    expect(MISSING).toBe('—');
  });

  it('formats seconds with three significant figures, as Python .3g', () => {
    expect(formatSeconds(0.00077)).toBe('770 µs');
    expect(formatSeconds(0.00298)).toBe('2.98 ms');
    expect(formatSeconds(25.9)).toBe('25.9 s');
    expect(formatSeconds(9.033598819834711e-5)).toBe('90.3 µs');
    expect(formatSeconds(1.184e-4)).toBe('118 µs');
    expect(formatSeconds(0.00121)).toBe('1.21 ms');
    expect(formatSeconds(0.00135)).toBe('1.35 ms');
    expect(formatSeconds(1e-4)).toBe('100 µs');
    expect(formatSeconds(0.001)).toBe('1 ms');
    expect(formatSeconds(0.0009999)).toBe('1 ms');
    // As the published x86_1 pages print them (kem-32): '.3g' drops trailing zeros.
    expect(formatSeconds(14.0)).toBe('14 s');
    expect(formatSeconds(0.099)).toBe('99 ms');
    expect(formatSeconds(0.00099949)).toBe('999 µs');
    expect(formatSeconds(4.2e-8)).toBe('42 ns');
    expect(formatSeconds(1.5e-12)).toBe('0.0015 ns');
    expect(formatSeconds(12345)).toBe('1.23e+04 s');
    expect(formatSeconds(-0.00077)).toBe('-770 µs');
    expect(formatSeconds(0)).toBe('0 s');
    expect(formatSeconds(-0)).toBe('0 s');
    expect(formatSeconds(NaN)).toBe('—');
    expect(formatSeconds(Infinity)).toBe('—');
  });

  it('formats operations per second as Python .3g', () => {
    const cases: Array<[number, string]> = [
      [1300.4, '1.3e+03'],
      [11700, '1.17e+04'],
      [0.03874, '0.0387'],
      [335.2, '335'],
      [8450, '8.45e+03'],
      [3600, '3.6e+03'],
      [827, '827'],
      [11069.785363994028, '1.11e+04'],
    ];
    for (const [x, want] of cases) expect(formatOpsPerSecond(x)).toBe(want);
    expect(formatOpsPerSecond(NaN)).toBe('—');
  });

  it('formats shares, deciding the branch on the percentage itself', () => {
    expect(formatShare(0.7)).toBe('70%');
    expect(formatShare(0.046)).toBe('4.6%');
    expect(formatShare(0)).toBe('0.0%');
    expect(formatShare(0.0949)).toBe('9.5%');
    expect(formatShare(0.095)).toBe('10%'); // 100·0.095 = 9.5 exactly: whole percent, half-even → 10
    expect(formatShare(1)).toBe('100%');
    expect(formatShare(NaN)).toBe('—');
  });

  it('formats sizes, frequencies and counts', () => {
    expect(formatKiB(1454080)).toBe('1420 KiB');
    expect(formatKiB(1536)).toBe('2 KiB'); // 1.5 KiB, half-even
    expect(formatKiB(2560)).toBe('2 KiB'); // 2.5 KiB, half-even
    expect(formatMiB(31295756)).toBe('30562 MiB');
    expect(formatGHz(2_712_000_000)).toBe('2.71 GHz');
    expect(formatGHz(2.1e9)).toBe('2.10 GHz');
    expect(formatCount(5, 1253)).toBe('6265 (5 × 1253)');
    expect(formatN(5)).toBe('(n=5)');
    expect(formatKiB(NaN)).toBe('—');
  });
});

// ---------------------------------------------------------------------------------------------
// Cross-check against python3 itself: one process, every value on stdin as JSON.

/** Deterministic 64-bit generator (splitmix64) so a failure can be replayed. */
function splitmix64(seed: bigint): () => bigint {
  let state = seed;
  const mask = (1n << 64n) - 1n;
  return () => {
    state = (state + 0x9e3779b97f4a7c15n) & mask;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    return z ^ (z >> 31n);
  };
}

/** The value as text that Python's float() reads back to the same double (-0 keeps its sign). */
const toPy = (x: number): string => (Object.is(x, -0) ? '-0' : String(x));

function buildCases(): { values: number[]; fixed: Array<[number, number]>; general: Array<[number, number]> } {
  const next = splitmix64(0x6e676363n);
  const int = (n: number): number => Number(next() % BigInt(n));
  const unit = (): number => Number(next() >> 11n) / 2 ** 53;
  const view = new DataView(new ArrayBuffer(8));
  const values: number[] = [
    0,
    -0,
    NaN,
    Infinity,
    -Infinity,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    Number.MAX_VALUE,
    0.5,
    1.5,
    2.5,
    0.125,
    0.375,
    1.005,
    2.675,
    999.5,
    9999.5,
    99.95,
    999.95,
    0.05,
    0.0005,
    1e-5,
    9.995e-5,
    1e22,
    1e23,
    2 ** 53 - 1,
    2 ** 53 + 2,
    1e4 + 0.5,
    3e4 + 0.5,
    999_950,
    999_949,
    999_995_000,
    9.5,
    0.095,
    0.0949,
    0.00077,
    0.0009999,
    0.00099949,
  ];
  // Random bit patterns: every exponent, subnormals, both signs.
  for (let i = 0; i < 400; i++) {
    view.setBigUint64(0, next());
    const x = view.getFloat64(0);
    if (Number.isFinite(x)) values.push(x);
  }
  // Decimal-looking values (k / 10^j): rarely exact in binary, often just either side of a tie.
  for (let i = 0; i < 500; i++) values.push(int(10_000_000) / 10 ** int(8));
  // Exact binary ties: odd k / 2^j has j decimals; rounding it to fewer decimals meets ties.
  for (let i = 0; i < 400; i++) values.push((2 * int(1_000_000) + 1) / 2 ** (1 + int(12)));
  // Report-sized magnitudes, log-uniform over 1e-10 … 1e11.
  for (let i = 0; i < 500; i++) values.push(10 ** (unit() * 21 - 10));
  // Integers and half-integers around the unit boundaries of the cycle and time cells.
  for (const b of [1e4, 1e6, 1e9, 1e3, 1e-3, 1e-6])
    for (let k = -20; k <= 20; k++) values.push(b + k * (b / 1e5), b - 0.5 + k, b * (1 - 5e-5) + k * 1e-9 * b);
  const fixed: Array<[number, number]> = [];
  const general: Array<[number, number]> = [];
  for (const x of values) {
    fixed.push([x, int(8)], [x, int(21)]);
    general.push([x, int(6)], [x, 1 + int(17)]);
  }
  for (const x of [0.125, 0.375, 2.5, 999.5, 1.005, 2.675]) for (let d = 0; d <= 4; d++) fixed.push([x, d]);
  return { values, fixed, general };
}

// The harness rules written in Python, with the unit moves described in src/text/format.ts.
const PYTHON = String.raw`
import json, sys
d = json.load(sys.stdin)
def cycles(c):
    if c != c or c in (float('inf'), float('-inf')): return '\u2014'
    units = [(1, 0, '', 1e4), (1e3, 1, ' k', 1e3), (1e6, 2, ' M', 1e3), (1e9, 2, ' G', None)]
    i = 0 if c < 1e4 else 1 if c < 1e6 else 2 if c < 1e9 else 3
    while True:
        scale, dec, suffix, limit = units[i]
        t = format(c / scale, '.%df' % dec)
        if limit is not None and float(t) >= limit:
            i += 1
            continue
        return t + suffix
def seconds(s):
    if s != s or s in (float('inf'), float('-inf')): return '\u2014'
    if s == 0: return '0 s'
    units = [(1, 's'), (1e-3, 'ms'), (1e-6, '\u00b5s'), (1e-9, 'ns')]
    a = abs(s)
    i = 0 if a >= 1 else 1 if a >= 1e-3 else 2 if a >= 1e-6 else 3
    t = format(a / units[i][0], '.3g')
    while i > 0 and float(t) >= 1000:
        i -= 1
        t = format(a / units[i][0], '.3g')
    return ('-' if s < 0 else '') + t + ' ' + units[i][1]
def share(f):
    if f != f or f in (float('inf'), float('-inf')): return '\u2014'
    p = 100 * f
    return format(p, '.0f' if p >= 9.5 else '.1f') + '%'
json.dump({
    'fixed': [format(float(x), '.%df' % n) for x, n in d['fixed']],
    'general': [format(float(x), '.%dg' % n) for x, n in d['general']],
    'cycles': [cycles(float(x)) for x in d['values']],
    'seconds': [seconds(float(x)) for x in d['values']],
    'share': [share(float(x)) for x in d['values']],
}, sys.stdout)
`;

describe('equivalence with python3', () => {
  it('agrees with python3 on thousands of random, tie and edge values', () => {
    const { values, fixed, general } = buildCases();
    expect(fixed.length).toBeGreaterThanOrEqual(2000);
    expect(general.length).toBeGreaterThanOrEqual(2000);
    const payload = JSON.stringify({
      fixed: fixed.map(([x, n]) => [toPy(x), n]),
      general: general.map(([x, n]) => [toPy(x), n]),
      values: values.map(toPy),
    });
    const py = spawnSync('python3', ['-c', PYTHON], { input: payload, encoding: 'utf8', maxBuffer: 1 << 28 });
    if (py.error || py.status !== 0) throw new Error(`python3 is required for this test: ${py.error ?? py.stderr}`);
    const want = JSON.parse(py.stdout) as Record<'fixed' | 'general' | 'cycles' | 'seconds' | 'share', string[]>;

    const mismatches: string[] = [];
    const check = (what: string, got: string, expected: string | undefined): void => {
      if (got !== expected) mismatches.push(`${what}: got ${got}, python ${expected}`);
    };
    fixed.forEach(([x, n], i) => void check(`pyFixed(${toPy(x)}, ${n})`, pyFixed(x, n), want.fixed[i]));
    general.forEach(([x, n], i) => void check(`pyGeneral(${toPy(x)}, ${n})`, pyGeneral(x, n), want.general[i]));
    values.forEach((x, i) => {
      check(`formatCycles(${toPy(x)})`, formatCycles(x), want.cycles[i]);
      check(`formatSeconds(${toPy(x)})`, formatSeconds(x), want.seconds[i]);
      check(`formatShare(${toPy(x)})`, formatShare(x), want.share[i]);
    });
    expect(mismatches.slice(0, 20)).toEqual([]);
  });
});
