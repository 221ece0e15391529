import type { Root } from 'mdast';
import { sizeAudit, type SizeFinding } from '../../catalogs/sizeAudit.js';
import { code, heading, link, para, sectionsPage, table, text, type Section } from '../../text/md.js';
import type { ReportModel } from '../views.js';
import { auditedInstances } from './cells.js';

/** The size catalog against the API's sizes, on one system. */
type SizeAuditSection = Section<[ReportModel, SizeFinding[]]>;

const title: SizeAuditSection = (model, findings) => {
  const mismatches = findings.filter((f) => f.verdict === 'mismatch').length;
  return [
    heading(1, `Size audit — system ${model.system}`),
    para(link(`summary_${model.system}.md`, `Performance ${model.system}`), ' › size audit'),
    para(
      `The size catalog (external_sizes.csv) against the sizes each library's API reports: ${mismatches} mismatch${mismatches === 1 ? '' : 'es'} in ${findings.length} compared size${findings.length === 1 ? '' : 's'}. ≈ marks a nominal size of variable-length signatures.`,
    ),
  ];
};

const findingsTable: SizeAuditSection = (_model, findings) => [
  table(
    ['candidate', 'instance', 'item', 'catalog', 'API', 'basis', 'verdict'],
    findings.map((f) => [
      f.id,
      code(f.instance),
      f.item,
      `${f.verdict === 'approximate' ? '≈ ' : ''}${f.catalog}`,
      f.api !== undefined ? String(f.api) : '—',
      f.basis,
      f.verdict === 'mismatch' ? 'MISMATCH ⚠' : f.verdict,
    ]),
    [text('no catalog entries'), '—', '—', '—', '—', '—', '—'],
  ),
];

const SIZE_AUDIT_SECTIONS: readonly SizeAuditSection[] = [title, findingsTable];

export const sizeAuditPage = (model: ReportModel): Root =>
  sectionsPage(SIZE_AUDIT_SECTIONS, model, sizeAudit(auditedInstances(model), model.sizes));
