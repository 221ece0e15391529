/**
 * The operations of a key exchange (type kex). `exchange` is one full honest exchange timed as a
 * whole; every other operation is one step, timed inside full exchanges (a step depends on the
 * state the earlier ones left), so each of its calls costs a whole exchange while only the step is
 * counted (native/core/kex_ops.c). The passes come from the library (`kex_get_passes_num()`).
 */
export const KEX_MAX_PASSES = 5;
export const KEX_PROFILED = ['exchange'] as const;

/** exchange, init_a, init_b, pass1 … passN, derive_a, derive_b; without a known N, two passes' names are not guessed: exchange and the fixed steps. */
export function kexOperations(passes: number | undefined): string[] {
  const n = passes !== undefined && Number.isInteger(passes) && passes >= 1 && passes <= KEX_MAX_PASSES ? passes : 0;
  return ['exchange', 'init_a', 'init_b', ...Array.from({ length: n }, (_, i) => `pass${i + 1}`), 'derive_a', 'derive_b'];
}

/** The steps whose times add up to an exchange (every operation but `exchange`). */
export const kexSteps = (operations: readonly string[]): string[] => operations.filter((op) => op !== 'exchange');
