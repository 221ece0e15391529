import type { ReportModel } from './model.js';
import { instanceSizes } from './pages/candidate.js';

export interface SizeFinding {
  id: string;
  instance: string;
  item: 'public key' | 'ciphertext' | 'signature';
  catalog: number;
  api?: number;
  basis: string;
  verdict: 'match' | 'mismatch' | 'approximate' | 'not measured';
}

const ITEMS = [
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
      const verdict =
        measured === undefined ? 'not measured' : item === 'signature' && entry.basis === 'nominal-variable' ? 'approximate' : measured === catalog ? 'match' : 'mismatch';
      findings.push({ id: entry.id, instance: entry.instance, item, catalog, api: measured, basis: entry.basis, verdict });
    }
  }
  return findings;
}
