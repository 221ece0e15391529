import type { Root } from 'mdast';
import { heading, link, para, sectionsPage, table, type Section } from '../md.js';
import type { SystemEntry } from '../types.js';

/** The index of DATA_DIR: one row per benchmark system. */
type IndexSection = Section<[readonly SystemEntry[]]>;

const title: IndexSection = () => [
  heading(1, 'NGCC performance measurements'),
  para(
    'Independent measurements of the NGCC candidates in the layout of the ICCS self-assessment guide §3.5, one summary per benchmark system.',
  ),
];

const systemsTable: IndexSection = (systems) => [
  table(
    ['system', 'architecture', 'candidates', 'pages'],
    systems.map((s) => [
      s.id,
      s.arch,
      String(s.candidates),
      [link(`performance/summary_${s.id}.md`, 'summary'), ' · ', link(`performance/method_${s.id}.md`, 'method')],
    ]),
  ),
];

const surveyLink: IndexSection = () => [para(link('performance/symmetric-survey.md', 'Symmetric-primitive survey'))];

const INDEX_SECTIONS: readonly IndexSection[] = [title, systemsTable, surveyLink];

export const indexPage = (systems: readonly SystemEntry[]): Root => sectionsPage(INDEX_SECTIONS, systems);
