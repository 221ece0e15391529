import type { Root } from 'mdast';
import { heading, link, para, sectionsPage, table, type Section } from '../../text/md.js';
import type { ReportModel } from '../views.js';
import { candidatePageLink, inInstanceOrder, surveyEvidence, surveyFor } from './cells.js';

/** The symmetric-primitive survey of every candidate of the report. */
type SurveySection = Section<[ReportModel]>;

const title: SurveySection = () => [
  heading(1, 'Symmetric-primitive survey'),
  para(
    'Does each submission route all its hashing and randomness through the ICCS placeholder functions (pseudohash, pseudoXOF, sm3hash, the ICCS DRNG)? Verdicts: ICCS-only, bypass, mixed, instance-dependent. Automated verdicts follow the calls and data references of each library from its exported API: which ICCS helpers it reaches, whether reachable code carries the constants of its own Keccak, SHA-2, SM3, AES, SM4 or ChaCha, and where its randomness comes from; code that is compiled but unreachable does not count. A verdict in symmetric_survey.csv overrides the automated one.',
  ),
];

const verdicts: SurveySection = (model) => [
  table(
    ['candidate', 'verdict', 'source', 'evidence'],
    model.candidates.map((c) => {
      const s = surveyFor(model, c.id);
      const evidence =
        s &&
        inInstanceOrder(c, s.instances)
          .map((i) => `${i.label}: ${surveyEvidence(i)}`)
          .join(' · ');
      return [
        [link(candidatePageLink(c.id, model.system), c.id)],
        s?.verdict ?? 'not surveyed',
        s ? (s.curated ? 'curated (symmetric_survey.csv)' : 'automated') : '—',
        [s?.notes, evidence].filter(Boolean).join(' — ') || '—',
      ];
    }),
  ),
];

/** Curated verdicts for candidates the report does not include: a typo in the CSV, most likely. */
const strays: SurveySection = (model) => {
  const reported = new Set(model.candidates.map((c) => c.id));
  const left = model.survey.filter((s) => !reported.has(s.id));
  return left.length > 0
    ? [
        para(
          `symmetric_survey.csv also has verdicts for candidates this report does not include: ${left.map((s) => `${s.id} (line ${s.line})`).join(', ')}.`,
        ),
      ]
    : [];
};

const SURVEY_SECTIONS: readonly SurveySection[] = [title, verdicts, strays];

export const surveyPage = (model: ReportModel): Root => sectionsPage(SURVEY_SECTIONS, model);
