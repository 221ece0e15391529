import type { BuildEntry, TimingRecord } from '../evidence/fileTypes.js';
import type { CatalogSize } from './catalogs.js';

/** Sizes in bytes as the API reports them, by field name (pk_bytes, ct_bytes, …). */
export type ApiSizes = Record<string, number>;

/** An instance as the audit sees it: who it is and the sizes its evidence states. */
export interface AuditedInstance {
  candidate: string;
  label: string;
  sizes?: ApiSizes;
}

export interface SizeFinding {
  id: string;
  instance: string;
  item: 'public key' | 'ciphertext' | 'signature';
  catalog: number;
  api?: number;
  basis: string;
  verdict: 'match' | 'mismatch' | 'approximate' | 'not measured';
}

/** The sizes an instance's evidence states: its timing records', else its build entry's. */
export function statedSizes(records: Iterable<TimingRecord | undefined>, build: BuildEntry | undefined): ApiSizes | undefined {
  for (const r of records) if (r?.sizes) return r.sizes as ApiSizes;
  return build?.sizes;
}

/** The catalog's items: the name a page shows, the catalog's field, the API's field. */
export const ITEMS = [
  ['public key', 'pk', 'pk_bytes'],
  ['ciphertext', 'ct', 'ct_bytes'],
  ['signature', 'sig', 'signature_bytes'],
] as const;

/**
 * The catalog (external_sizes.csv) against the sizes the API reports. A nominal-variable size is a
 * representative of varying signatures: shown as approximate (≈), never a mismatch.
 */
export function sizeAudit(instances: readonly AuditedInstance[], catalog: readonly CatalogSize[]): SizeFinding[] {
  const findings: SizeFinding[] = [];
  for (const entry of catalog) {
    const api = instances.find((i) => i.candidate === entry.id && i.label === entry.instance)?.sizes;
    for (const [item, catKey, apiKey] of ITEMS) {
      const size = entry[catKey];
      if (size === undefined) continue;
      const measured = api?.[apiKey];
      findings.push({
        id: entry.id,
        instance: entry.instance,
        item,
        catalog: size,
        api: measured,
        basis: entry.basis,
        verdict: sizeVerdict(item, size, measured, entry.basis),
      });
    }
  }
  return findings;
}

/** The one rule for a catalog size against the API's: a nominal size of variable signatures is only approximate. */
export function sizeVerdict(
  item: SizeFinding['item'],
  catalog: number,
  api: number | undefined,
  basis: CatalogSize['basis'],
): SizeFinding['verdict'] {
  if (api === undefined) return 'not measured';
  if (item === 'signature' && basis === 'nominal-variable') return 'approximate';
  return api === catalog ? 'match' : 'mismatch';
}
