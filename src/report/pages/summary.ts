import { forgeryShown, instanceStatus } from '../../kat/status.js';
import type { Root } from 'mdast';
import { GUIDE_MINIMUM, recordSpread } from '../../measure/stats.js';
import { archName, environmentRows } from '../environment.js';
import { formatCycles, formatN, formatShare, formatSpread } from '../../text/format.js';
import { validationNotice } from './validation.js';
import { rankingsSection } from './rankings.js';
import { heldToSummary } from './heldTo.js';
import { bullets, code, heading, link, para, sectionsPage, table, type Cell, type Section } from '../../text/md.js';
import { hashShares } from '../profile.js';
import { figureMarks, figureNotes, isNoisy, NOISY_MARK, NOISY_NOTE } from '../spread.js';
import type { InstanceView, ReportModel } from '../views.js';
import { anyCt, CT_NOTE_MEANING, ctNote } from './ctSection.js';
import { hashSummarySections } from './hashTables.js';
import { keyExchangeSummary } from './kexTables.js';
import {
  allInstances,
  candidatePageLink,
  fellBackWhy,
  notMeasuredReason,
  provenanceOf,
  sizeCell,
  unreadableCell,
  unreadableFile,
} from './cells.js';

/** One system's summary: every candidate's cycles and sizes, by category. */
type SummarySection = Section<[ReportModel]>;

// The published summary's order: signatures first, then KEMs (key exchange and hashes follow).
const CATEGORIES = [
  {
    type: 'sig',
    title: 'Digital signatures',
    sizes: [
      ['public key', 'pk_bytes'],
      ['signature', 'signature_bytes'],
    ],
  },
  {
    type: 'kem',
    title: 'Key encapsulation',
    sizes: [
      ['public key', 'pk_bytes'],
      ['ciphertext', 'ct_bytes'],
    ],
  },
] as const;

/**
 * "243.4 k (70%)": mean cycles with the hash share in parentheses; (n=N) when under 100 calls;
 * "⚠ noisy 1.97×" when the record's trials spread that far.
 */
function cyclesCell(inst: InstanceView, op: string): string {
  const r = inst.records[op];
  if (!r && unreadableFile(inst, 'timing', op)) return unreadableCell('timing');
  if (!r || r.mean_cycles === undefined || !r.trials?.length) return r?.status === 'failed' ? 'failed' : '—';
  const p = inst.profiles[op];
  const share = p ? ` (${formatShare(hashShares(p).hash)})` : '';
  const n = r.measurements ?? 0;
  const spread = recordSpread(r);
  return `${formatCycles(r.mean_cycles)}${share}${n < GUIDE_MINIMUM ? ` ${formatN(n)}` : ''}${isNoisy(spread) ? ` ${NOISY_MARK} ${formatSpread(spread)}` : ''}${figureMarks(r)}`;
}

const title: SummarySection = (model) => {
  const sys = model.system;
  return [
    heading(1, `Performance on ${archName(model.environment).display} (system ${sys})`),
    para(
      link(`method_${sys}.md`, 'Method'),
      ' · ',
      link('symmetric-survey.md', 'Symmetric-primitive survey'),
      ' · ',
      link(`size-audit_${sys}.md`, 'Size audit'),
      ' · ',
      link('../index.md', 'All systems'),
    ),
    table(['item', 'value'], environmentRows(model.campaign, model.environment, provenanceOf(allInstances(model)))),
  ];
};

const categories: SummarySection = (model) => {
  const sys = model.system;
  const sections = CATEGORIES.flatMap((cat) => {
    const cands = model.candidates.filter((c) => c.type === cat.type);
    if (cands.length === 0) return [];
    const ops = cands[0]!.operations;
    const warn: string[] = [];
    const cycleRows: Cell[][] = [];
    const sizeRows: Cell[][] = [];
    let noisy = false;
    // A notes column only where an instance had a constant-time check: other summaries keep their layout.
    const notes = anyCt(cands.flatMap((c) => c.instances));
    for (const c of cands) {
      for (const inst of c.instances) {
        const kat = instanceStatus(inst.build) ?? 'not checked';
        const flagged = kat !== 'PASS';
        const detail = inst.build?.forged ? forgeryShown(inst.build.forged) : inst.build?.kat_detail;
        if (flagged) warn.push(`${c.id} ${inst.label}: ${kat}${detail ? ` — ${detail}` : ''}`);
        const fell = fellBackWhy(inst);
        if (fell) warn.push(`${c.id} ${inst.label}: measured with the harness defaults, its guide build failed (${fell})`);
        const measured = ops.some((op) => inst.records[op] || unreadableFile(inst, 'timing', op));
        const name: Cell = [link(candidatePageLink(c.id, sys), c.id)];
        const cells = measured ? ops.map((op) => cyclesCell(inst, op)) : [notMeasuredReason(inst), ...ops.slice(1).map(() => '—')];
        noisy ||= cells.some((cell) => cell.includes(NOISY_MARK));
        cycleRows.push([name, code(inst.label), flagged ? `${kat} ⚠` : kat, ...cells, ...(notes ? [ctNote(inst) ?? '–'] : [])]);
        sizeRows.push([name, code(inst.label), ...cat.sizes.map(([, k]) => sizeCell(model.sizes, c, inst, k) ?? '—')]);
      }
    }
    return [
      heading(2, cat.title),
      para(
        `Mean cycles per operation; in parentheses the share spent in the ICCS placeholder hash functions${cands.some((c) => c.api === 'nist') ? ' (for NIST-API code, in its SHA-3/SHAKE/SHA-2 functions)' : ''}; (n=N) where fewer than ${GUIDE_MINIMUM} calls were timed. ⚠ marks a KAT status other than PASS.`,
      ),
      table(['candidate', 'instance', 'KAT', ...ops, ...(notes ? ['notes'] : [])], cycleRows),
      ...(notes ? [para(CT_NOTE_MEANING)] : []),
      ...(noisy ? [para(`${NOISY_NOTE} The number after the mark is that ratio; the candidate's page gives every operation's.`)] : []),
      heading(3, 'Sizes (bytes)'),
      table(['candidate', 'instance', ...cat.sizes.map(([h]) => h)], sizeRows),
      heading(3, 'Notes'),
      warn.length > 0 ? bullets(warn.map((w) => [`⚠ ${w}`])) : para('Every instance of this category passed its KAT.'),
    ];
  });
  return sections.length > 0 ? sections : [para('No candidate has evidence on this system yet.')];
};

/**
 * Candidates the last run could not read (candidate.yml or kat.sha256 wrong), from campaign.json:
 * nothing of theirs was built, so they appear in no table above, yet their submitters must see why.
 */
const invalidCandidates: SummarySection = (model) => {
  const invalid = Array.isArray(model.campaign.invalid_candidates)
    ? (model.campaign.invalid_candidates as Array<{ id: string; problem: string }>)
    : [];
  if (invalid.length === 0) return [];
  return [
    heading(2, 'Invalid candidates'),
    para('Not built: their manifests could not be read. Mend the file the error names and run again.'),
    table(
      ['candidate', 'status', 'error'],
      invalid.map((c) => [code(c.id), 'INVALID ⚠', c.problem]),
    ),
  ];
};

/** What the marks of a figure whose measurement lacked something mean, once, when any figure on the page carries one. */
const figureNotesOf: SummarySection = (model) =>
  figureNotes(
    [...model.candidates, ...(model.iccsBaseline ? [model.iccsBaseline] : [])].flatMap((c) =>
      c.instances.flatMap((i) => Object.values(i.records)),
    ),
  );

const SUMMARY_SECTIONS: readonly SummarySection[] = [
  title,
  (model) => validationNotice(model.validation),
  rankingsSection,
  categories,
  keyExchangeSummary,
  hashSummarySections,
  figureNotesOf,
  heldToSummary,
  invalidCandidates,
];

export const summaryPage = (model: ReportModel): Root => sectionsPage(SUMMARY_SECTIONS, model);
