import type { HashProfile } from '../evidence/fileTypes.js';
import { pyGeneral } from '../text/format.js';
import { DRNG_FNS } from '../measure/shares.js';

/** Shares of the operation's ticks: the recorded ones when present, else from the calls. */
export function hashShares(p: HashProfile): { hash: number; drng: number } {
  const total = p.total.ticks;
  const sum = (drng: boolean) => p.calls.filter((c) => DRNG_FNS.has(c.fn) === drng).reduce((a, c) => a + c.ticks, 0) / total;
  const recordedDrng = p.share
    ? Object.entries(p.share)
        .filter(([fn]) => DRNG_FNS.has(fn))
        .reduce((a, [, v]) => a + v, 0)
    : undefined;
  return { hash: p.hash_share ?? sum(false), drng: recordedDrng ?? sum(true) };
}

/** "drng 2, pseudoXOF 3, sm3hash 1": calls per operation by function, in byte order of the names. */
export function callsPerOperation(p: HashProfile): string {
  const perFn = new Map<string, number>();
  for (const c of p.calls) perFn.set(c.fn, (perFn.get(c.fn) ?? 0) + c.calls);
  return [...perFn.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([fn, n]) => {
      const per = n / p.total.operations;
      return `${fn} ${pyGeneral(per, 3)}`; // the harness's `.3g`: 3696 calls show as 3.7e+03
    })
    .join(', ');
}
