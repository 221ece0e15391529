import type { RootContent } from 'mdast';
import { bullets, code } from '../text/md.js';
import { CT_KIND_MEANING, CT_KINDS } from './findingKinds.js';

/** One line on each kind of site the table shows: what it may tell an attacker. */
export function kindMeanings(kinds: readonly string[]): RootContent[] {
  const shown = CT_KINDS.filter((k) => kinds.includes(k));
  return shown.length === 0 ? [] : [bullets(shown.map((k) => [code(k), `: ${CT_KIND_MEANING[k]}.`]))];
}
