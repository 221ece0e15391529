import type { CatalogSize } from './catalogs.js';
import type { InstanceView, ReportModel } from './model.js';

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
export function instanceSizes(inst: InstanceView): Record<string, number> | undefined {
  const fromRecord = Object.values(inst.records).find((r) => r?.sizes)?.sizes as Record<string, number> | undefined;
  return fromRecord ?? inst.build?.sizes;
}

export const ITEMS = [
  ['public key', 'pk', 'pk_bytes'],
  ['ciphertext', 'ct', 'ct_bytes'],
  ['signature', 'sig', 'signature_bytes'],
] as const;

/**
 * The catalog (external_sizes.csv) against the sizes the API reports. A nominal-variable size is a
 * representative of varying signatures: shown as approximate (≈), never a mismatch.
 */
export function sizeAudit(model: ReportModel): SizeFinding[] {
  const findings: SizeFinding[] = [];
  for (const entry of model.sizes) {
    const inst = model.candidates.find((c) => c.id === entry.id)?.instances.find((i) => i.label === entry.instance);
    const api = inst ? instanceSizes(inst) : undefined;
    for (const [item, catKey, apiKey] of ITEMS) {
      const catalog = entry[catKey];
      if (catalog === undefined) continue;
      const measured = api?.[apiKey];
      findings.push({ id: entry.id, instance: entry.instance, item, catalog, api: measured, basis: entry.basis, verdict: sizeVerdict(item, catalog, measured, entry.basis) });
    }
  }
  return findings;
}

/** The one rule for a catalog size against the API's: a nominal size of variable signatures is only approximate. */
export function sizeVerdict(item: SizeFinding['item'], catalog: number, api: number | undefined, basis: CatalogSize['basis']): SizeFinding['verdict'] {
  if (api === undefined) return 'not measured';
  if (item === 'signature' && basis === 'nominal-variable') return 'approximate';
  return api === catalog ? 'match' : 'mismatch';
}
