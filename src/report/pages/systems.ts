import type { Root, RootContent } from 'mdast';
import { heading, link, para, sectionsPage, table, type Section } from '../../text/md.js';
import type { SystemEntry } from '../views.js';

/** The index of DATA_DIR: one row per benchmark system. */
type IndexSection = Section<[readonly SystemEntry[], readonly RootContent[]]>;

const title: IndexSection = () => [
  heading(1, 'NGCC performance measurements'),
  para(
    'Independent measurements of the NGCC candidates in the layout of the ICCS self-assessment guide §3.5, one summary per benchmark system.',
  ),
];

/** What moved since last night and the recent change points (trends pages), when a history was read. */
const highlights: IndexSection = (_systems, h) => [...h];

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

const INDEX_SECTIONS: readonly IndexSection[] = [title, highlights, systemsTable, surveyLink];

export const indexPage = (systems: readonly SystemEntry[], highlights: readonly RootContent[] = []): Root =>
  sectionsPage(INDEX_SECTIONS, systems, highlights);
