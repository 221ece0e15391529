import type { RootContent } from 'mdast';
import { INSTANCE_DIRS } from '../../evidence/layout.js';
import { code, para, strong } from '../../text/md.js';

/** Problems of `validate` that concern one candidate: its files, or its build.json entries. */
export function candidateProblems(problems: readonly string[], id: string): string[] {
  return problems.filter(
    (line) => [...INSTANCE_DIRS].some((dir) => line.startsWith(`${dir}/${id}/`)) || line.includes(`instances["${id}/`),
  );
}

/**
 * Said before a page's figures when the evidence they come from does not validate (a mean that is
 * not its trials', a record of another library): they may not be what was measured.
 */
export function validationNotice(problems: readonly string[]): RootContent[] {
  if (problems.length === 0) return [];
  return [
    para(
      '⚠ ',
      strong('This evidence does not validate'),
      `: ${problems.length} problem${problems.length === 1 ? '' : 's'}, so the figures below may not be what was measured. The first: `,
      code(problems[0]!),
      '. ',
      code('ngcc-perf validate'),
      ' lists them all.',
    ),
  ];
}
