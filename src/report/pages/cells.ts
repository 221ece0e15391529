import type { CatalogSize } from '../../catalogs/catalogs.js';
import { ITEMS, sizeVerdict, statedSizes, type ApiSizes, type AuditedInstance } from '../../catalogs/sizeAudit.js';
import { measurable } from '../../kat/status.js';
import { candidateVerdict, type InstanceSurvey } from '../../profile/survey.js';
import type { Provenance } from '../environment.js';
import type { CandidateView, InstanceView, ReportModel, UnreadableFile } from '../views.js';

/** What several pages show the same way: one rule each, so the pages never disagree. */

/** A candidate's page, linked from a page of performance/ (its siblings share the depth). */
export const candidatePageLink = (id: string, system: string): string => `../${id}/perf_${system}.md`;

/** Why an instance has no numbers, for the row that replaces them. */
export function notMeasuredReason(inst: InstanceView): string {
  if (inst.build?.forged) return 'not published (FORGED)';
  const kat = inst.build?.kat;
  if (kat === 'BUILDFAIL') return 'build failed (BUILDFAIL)';
  if (kat && !measurable(kat)) return `not measured (KAT ${kat})`;
  return 'not measured';
}

/** The records and builds of some instances: what a page's environment facts are read from. */
export function provenanceOf(instances: readonly InstanceView[]): Provenance {
  return {
    records: instances.flatMap((i) => Object.values(i.records).filter((r) => r !== undefined)),
    builds: instances.flatMap((i) => (i.build ? [i.build] : [])),
  };
}

export const allInstances = (model: ReportModel): InstanceView[] => model.candidates.flatMap((c) => c.instances);

/** The file of this kind (and operation) that exists but could not be parsed, if any. */
export const unreadableFile = (inst: InstanceView, kind: UnreadableFile['kind'], op?: string): UnreadableFile | undefined =>
  inst.unreadable.find((u) => u.kind === kind && u.op === op);

/** What a cell shows where an unreadable file's numbers would be; the evidence index names the file and the problem. */
export const unreadableCell = (kind: UnreadableFile['kind']): string => `not recorded (unreadable ${kind} file)`;

/** Survey files come in file-name order; every table of a page lists instances in campaign order. */
export function inInstanceOrder<T extends { label: string }>(c: CandidateView, items: T[]): T[] {
  const rank = (label: string) => {
    const i = c.instances.findIndex((inst) => inst.label === label);
    return i < 0 ? c.instances.length : i;
  };
  return [...items].sort((a, b) => rank(a.label) - rank(b.label));
}

/** The sizes an instance's evidence states (the size audit's rule). */
export const instanceSizes = (inst: InstanceView): ApiSizes | undefined => statedSizes(Object.values(inst.records), inst.build);

/** Every instance of the report with its stated sizes, as the size audit takes them. */
export function auditedInstances(model: ReportModel): AuditedInstance[] {
  return model.candidates.flatMap((c) => c.instances.map((inst) => ({ candidate: c.id, label: inst.label, sizes: instanceSizes(inst) })));
}

/**
 * One size as the pages show it. External sizes (public key, ciphertext, signature) come from the
 * curated catalog where it has them, as on the guide's pages: approximate (≈) for a nominal size of
 * variable signatures, marked ⚠ with the API's value when the code does not produce it (the size
 * audit lists these). Secret-key and shared-secret lengths are always the API's.
 */
export function sizeCell(catalog: readonly CatalogSize[], c: CandidateView, inst: InstanceView, key: string): string | undefined {
  const api = instanceSizes(inst)?.[key];
  const entry = catalog.find((e) => e.id === c.id && e.instance === inst.label);
  const item = ITEMS.find(([, , apiKey]) => apiKey === key);
  const fromCatalog = entry && item ? entry[item[1]] : undefined;
  if (fromCatalog === undefined) return api !== undefined ? String(api) : undefined;
  const verdict = sizeVerdict(item![0], fromCatalog, api, entry!.basis);
  if (verdict === 'approximate') return `≈ ${fromCatalog}`;
  return verdict === 'mismatch' ? `${fromCatalog} ⚠ (API: ${api})` : String(fromCatalog);
}

export interface SurveyShown {
  verdict: string;
  notes?: string;
  curated: boolean;
  instances: InstanceSurvey[];
}

/** The curated verdict wins over the automated one; the page says which it shows. */
export function surveyFor(model: ReportModel, id: string): SurveyShown | undefined {
  const curated = model.survey.find((s) => s.id === id);
  const automated = model.surveys.get(id) ?? [];
  if (curated) {
    // Keep the automated verdict in view when the curation overrides it with a different one.
    const differs = automated.length > 0 && candidateVerdict(automated) !== curated.verdict;
    const notes = [curated.notes, differs ? `automated verdict: ${candidateVerdict(automated)}` : ''].filter(Boolean).join('; ');
    return { verdict: curated.verdict, notes: notes || undefined, curated: true, instances: automated };
  }
  if (automated.length > 0) return { verdict: candidateVerdict(automated), curated: false, instances: automated };
  return undefined;
}

/** One line of evidence for an instance's automated verdict. */
export function surveyEvidence(i: InstanceSurvey): string {
  const parts = [
    `${i.verdict}; ICCS helpers reached: ${i.iccs_helpers.length > 0 ? i.iccs_helpers.join(', ') : 'none'}`,
    `own primitives: ${i.own_primitives.length > 0 ? i.own_primitives.map((o) => `${o.primitive} (${o.where})`).join(', ') : 'none'}`,
    `randomness: ${i.randomness.length > 0 ? i.randomness.join(', ') : 'none'}`,
  ];
  if (i.unreachable.length > 0) parts.push(`compiled but unreachable: ${i.unreachable.join(', ')}`);
  return parts.join('; ');
}

/** Why an instance was measured with the harness defaults instead of the guide's flags, when it was. */
export function fellBackWhy(inst: InstanceView): string | undefined {
  const b = inst.build;
  // The fallback built (else the instance is a BUILDFAIL, said as such): only then was it measured so.
  if (b?.flags !== 'harness-default' || !b.guide_result || b.kat === 'BUILDFAIL') return undefined;
  return b.guide_error ?? b.guide_result;
}
