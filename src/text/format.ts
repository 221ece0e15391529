/**
 * The one number formatter of the Markdown report pages.
 *
 * The pages must reproduce the existing Python harness character for character, so every
 * rounding here is Python's: `format(x, '.Nf')` / `format(x, '.Ng')` round the EXACT binary
 * value of the double, half to even. JavaScript's `toFixed`/`toPrecision` round exact ties
 * (0.125, 2.5, 9999.5, …) half UP instead, so they are not used anywhere in this module: the
 * double is decomposed into an integer mantissa and a power-of-two exponent and rounded with
 * exact BigInt arithmetic.
 *
 * Two layers:
 *  - `pyFixed` / `pyGeneral` are exact clones of Python's `format()` (including `nan`, `inf`,
 *    `-inf` and the sign of negative zero), so they can be checked against `python3` directly.
 *  - the `format*` helpers are the report cells. A non-finite input (NaN, ±Infinity: a missing or
 *    undefined measurement) renders as an em dash '—' rather than Python's 'nan'/'inf', so that a
 *    table shows "no value" instead of a pseudo-number.
 */

/** What a report cell shows for a value that does not exist (NaN) or is not finite. */
export const MISSING = '—';

interface ExactDouble {
  negative: boolean;
  /** |x| = mant · 2^exp2, exactly. */
  mant: bigint;
  exp2: number;
}

/** The exact value of a finite double, read from its IEEE-754 bits (subnormals included). */
function decompose(x: number): ExactDouble {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xf_ffff_ffff_ffffn;
  return biased === 0 ? { negative, mant: fraction, exp2: -1074 } : { negative, mant: fraction | (1n << 52n), exp2: biased - 1075 };
}

/** |x| as the fraction num/den (den a power of two, or 1). */
function fraction(d: ExactDouble): { num: bigint; den: bigint } {
  return d.exp2 >= 0 ? { num: d.mant << BigInt(d.exp2), den: 1n } : { num: d.mant, den: 1n << BigInt(-d.exp2) };
}

/** The integer nearest to |x| · 10^n (n may be negative), exact ties to even — Python's rounding. */
function roundScaled(d: ExactDouble, n: number): bigint {
  let { num, den } = fraction(d);
  if (n >= 0) num *= 10n ** BigInt(n);
  else den *= 10n ** BigInt(-n);
  const q = num / den;
  const twiceRest = (num % den) * 2n;
  return twiceRest > den || (twiceRest === den && (q & 1n) === 1n) ? q + 1n : q;
}

/** floor(log10|x|) for x ≠ 0, exact: Math.log10 only gives the first guess, BigInt decides. */
function decimalExponent(x: number, d: ExactDouble): number {
  const { num, den } = fraction(d);
  // Is |x| >= 10^k ?
  const atLeast = (k: number): boolean => (k >= 0 ? num >= den * 10n ** BigInt(k) : num * 10n ** BigInt(-k) >= den);
  let k = Math.floor(Math.log10(Math.abs(x)));
  while (!atLeast(k)) k -= 1;
  while (atLeast(k + 1)) k += 1;
  return k;
}

/**
 * |x| rounded to `p` significant digits: the p-digit integer `digits` and the decimal exponent of
 * the ROUNDED value (999.5 → 1.00e3, exponent 3), which is what Python's `g` rule looks at.
 */
function roundSignificant(x: number, d: ExactDouble, p: number): { digits: string; exp: number } {
  let exp = decimalExponent(x, d);
  let n = roundScaled(d, p - 1 - exp);
  if (n === 10n ** BigInt(p)) {
    exp += 1;
    n = 10n ** BigInt(p - 1);
  }
  return { digits: n.toString(), exp };
}

/** Python's spelling of the non-finite values, or null for a finite x. */
function pyNonFinite(x: number): string | null {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  return null;
}

/** Place a decimal point so that `decimals` digits of the integer string follow it. */
function withPoint(intDigits: string, decimals: number): string {
  if (decimals === 0) return intDigits;
  const padded = intDigits.padStart(decimals + 1, '0');
  return `${padded.slice(0, -decimals)}.${padded.slice(-decimals)}`;
}

/** Python's `g` trims trailing zeros of the fraction, then a bare point. */
function trimFraction(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

function checkPrecision(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

/** Exactly Python's `format(x, f'.{digits}f')` (negative results keep their '-', even '-0.00'). */
export function pyFixed(x: number, digits: number): string {
  checkPrecision('digits', digits);
  const special = pyNonFinite(x);
  if (special !== null) return special;
  const d = decompose(x);
  return (d.negative ? '-' : '') + withPoint(roundScaled(d, digits).toString(), digits);
}

/** Exactly Python's `format(x, f'.{precision}g')` (precision 0 means 1, as in Python). */
export function pyGeneral(x: number, precision: number): string {
  checkPrecision('precision', precision);
  const special = pyNonFinite(x);
  if (special !== null) return special;
  const d = decompose(x);
  const sign = d.negative ? '-' : '';
  if (x === 0) return `${sign}0`;
  const p = Math.max(1, precision);
  const { digits, exp } = roundSignificant(x, d, p);
  if (exp >= -4 && exp < p) return sign + trimFraction(withPoint(digits, p - 1 - exp));
  const mantissa = trimFraction(withPoint(digits, p - 1));
  const expText = String(Math.abs(exp)).padStart(2, '0');
  return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${expText}`;
}

const CYCLE_UNITS = [
  // `limit`: the rendered number at which the next unit takes over.
  { scale: 1, decimals: 0, suffix: '', limit: 1e4 },
  { scale: 1e3, decimals: 1, suffix: ' k', limit: 1e3 },
  { scale: 1e6, decimals: 2, suffix: ' M', limit: 1e3 },
  { scale: 1e9, decimals: 2, suffix: ' G', limit: Infinity },
] as const;

/**
 * Cycle counts: '9999', '243.4 k', '1.61 M', '53.85 G'.
 *
 * The harness picks the unit on the raw value (c < 1e4 plain, < 1e6 k, < 1e9 M, else G) and
 * formats c/scale. Where rounding carries the number up to the next unit's threshold the unit
 * moves on instead of printing an impossible cell: 999_950 → '1.00 M' (not '1000.0 k'),
 * 9999.5 → '10.0 k' (not '10000'), 999_995_000 → '1.00 G' (not '1000.00 M').
 * A negative value is below 1e4, so it is a plain integer, as in the harness.
 */
export function formatCycles(c: number): string {
  if (!Number.isFinite(c)) return MISSING;
  let i = c < 1e4 ? 0 : c < 1e6 ? 1 : c < 1e9 ? 2 : 3;
  for (;;) {
    const unit = CYCLE_UNITS[i]!;
    const text = pyFixed(c / unit.scale, unit.decimals);
    // The text is an exact decimal, so comparing its value with the integer limit is exact.
    if (Number(text) >= unit.limit && i < CYCLE_UNITS.length - 1) {
      i += 1;
      continue;
    }
    return text + unit.suffix;
  }
}

/** A hash's cycles per message byte, one decimal ('13.6'). */
export const formatCyclesPerByte = (x: number): string => pyFixed(x, 1);

const TIME_UNITS = [
  { scale: 1, suffix: 's' },
  { scale: 1e-3, suffix: 'ms' },
  { scale: 1e-6, suffix: 'µs' },
  { scale: 1e-9, suffix: 'ns' },
] as const;

/**
 * Durations with three significant figures, never in exponent notation: '770 µs', '2.98 ms',
 * '25.9 s', '1.00 ms'. The unit follows the magnitude (>= 1 s, >= 1 ms, >= 1 µs, else ns) and the
 * value is s / scale; when three-figure rounding reaches 1000 of a unit, the next larger unit is
 * used (999.96 µs → '1.00 ms'). Seconds have no larger unit ('1000 s', '12345 s').
 * A negative duration is its magnitude with a '-'; zero is '0 s' (no unit is meaningful for it).
 */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return MISSING;
  if (s === 0) return '0 s';
  const a = Math.abs(s);
  let i = a >= 1 ? 0 : a >= 1e-3 ? 1 : a >= 1e-6 ? 2 : 3;
  // Python '.3g' on the scaled value ('14 s', '99 ms', '2.98 ms'), as the published pages show.
  let text = pyGeneral(a / TIME_UNITS[i]!.scale, 3);
  while (i > 0 && Number(text) >= 1000) {
    i -= 1;
    text = pyGeneral(a / TIME_UNITS[i]!.scale, 3);
  }
  return `${s < 0 ? '-' : ''}${text} ${TIME_UNITS[i]!.suffix}`;
}

/** Operations per second: Python `format(x, '.3g')` — '1.3e+03', '1.17e+04', '0.0387', '827'. */
export function formatOpsPerSecond(x: number): string {
  return Number.isFinite(x) ? pyGeneral(x, 3) : MISSING;
}

/**
 * A share as a percentage: whole percent from 9.5 % up ('70%'), one decimal below ('4.6%',
 * '0.0%'). The branch is decided on p = 100·fraction itself, so 0.0949 → '9.5%', 0.095 → '10%'.
 */
export function formatShare(fraction: number): string {
  if (!Number.isFinite(fraction)) return MISSING;
  const p = 100 * fraction;
  return `${pyFixed(p, p >= 9.5 ? 0 : 1)}%`;
}

/** Bytes in whole KiB: 1454080 → '1420 KiB'. */
export function formatKiB(bytes: number): string {
  return Number.isFinite(bytes) ? `${pyFixed(bytes / 1024, 0)} KiB` : MISSING;
}

/** KiB in whole MiB: 31295756 → '30562 MiB'. */
export function formatMiB(kib: number): string {
  return Number.isFinite(kib) ? `${pyFixed(kib / 1024, 0)} MiB` : MISSING;
}

/** Hz as GHz with two decimals: '2.71 GHz'. */
export function formatGHz(hz: number): string {
  return Number.isFinite(hz) ? `${pyFixed(hz / 1e9, 2)} GHz` : MISSING;
}

/** A counter's rate in MHz with one decimal, precise enough to turn cycles into time: '2097.7 MHz'. */
export function formatMHz(hz: number): string {
  return Number.isFinite(hz) ? `${pyFixed(hz / 1e6, 1)} MHz` : MISSING;
}

/** A ratio of the slowest to the fastest, two decimals: '1.02×'. */
export function formatSpread(ratio: number): string {
  return Number.isFinite(ratio) ? `${pyFixed(ratio, 2)}×` : MISSING;
}

/** The half-width of a 95 % interval relative to its mean, as formatShare: '±0.4%', '±12%'. */
export function formatPrecision(relative: number): string {
  return Number.isFinite(relative) ? `±${formatShare(relative)}` : MISSING;
}

/** The smallest change a comparison could call, in percent, one decimal: '±5.7%'. */
export function formatDetectable(pct: number): string {
  return Number.isFinite(pct) ? `±${pyFixed(pct, 1)}%` : MISSING;
}

/** Calls per operation, an average: '569', '1759', '2.5', '0.001'. */
export function formatCallsPerOperation(x: number): string {
  if (!Number.isFinite(x)) return MISSING;
  return x >= 100 ? String(Math.round(x)) : pyGeneral(x, 3);
}

/** Measurement count with its trials × iterations: '6265 (5 × 1253)'. */
export function formatCount(trials: number, iters: number): string {
  if (!Number.isFinite(trials) || !Number.isFinite(iters)) return MISSING;
  return `${trials * iters} (${trials} × ${iters})`;
}

/** A sample size: '(n=5)'. */
export function formatN(n: number): string {
  return `(n=${n})`;
}

/** A count with its noun: '1 trial', '3 trials'. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** A signed percentage with one decimal: '+3.2%', '-12.0%', '—'. */
export function signedPct(pct: number | undefined): string {
  if (pct === undefined || !Number.isFinite(pct)) return MISSING;
  return `${pct > 0 ? '+' : ''}${pyFixed(pct, 1)}%`;
}
