import type { Root } from 'mdast';
import type { InstanceSurvey } from '../../profile/survey.js';
import { heading, link, para, root, table } from '../md.js';
import { surveyFor, type ReportModel } from '../model.js';
import { inInstanceOrder } from './candidate.js';

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

export function surveyPage(model: ReportModel): Root {
  const reported = new Set(model.candidates.map((c) => c.id));
  const strays = model.survey.filter((s) => !reported.has(s.id));
  return root([
    heading(1, 'Symmetric-primitive survey'),
    para(
      'Does each submission route all its hashing and randomness through the ICCS placeholder functions (pseudohash, pseudoXOF, sm3hash, the ICCS DRNG)? Verdicts: ICCS-only, bypass, mixed, instance-dependent. Automated verdicts follow the calls and data references of each library from its exported API: which ICCS helpers it reaches, whether reachable code carries the constants of its own Keccak, SHA-2, SM3, AES, SM4 or ChaCha, and where its randomness comes from; code that is compiled but unreachable does not count. A verdict in symmetric_survey.csv overrides the automated one.',
    ),
    table(
      ['candidate', 'verdict', 'source', 'evidence'],
      model.candidates.map((c) => {
        const s = surveyFor(model, c.id);
        const evidence = s && inInstanceOrder(c, s.instances).map((i) => `${i.label}: ${surveyEvidence(i)}`).join(' · ');
        return [
          [link(`../${c.id}/perf_${model.system}.md`, c.id)],
          s?.verdict ?? 'not surveyed',
          s ? (s.curated ? 'curated (symmetric_survey.csv)' : 'automated') : '—',
          [s?.notes, evidence].filter(Boolean).join(' — ') || '—',
        ];
      }),
    ),
    ...(strays.length > 0
      ? [para(`symmetric_survey.csv also has verdicts for candidates this report does not include: ${strays.map((s) => `${s.id} (line ${s.line})`).join(', ')}.`)]
      : []),
  ]);
}
