import type { RootContent } from 'mdast';
import { measurable } from '../../kat/status.js';
import { heldToShown } from '../../kat/unseen.js';
import { code, heading, link, para, table } from '../../text/md.js';
import type { CandidateView, InstanceView, ReportModel } from '../views.js';
import { candidatePageLink } from './cells.js';

/**
 * What each instance's outputs were held to (docs/method.md#unseen-seeds): its published KAT only,
 * a pull request's base, or an earlier night's answers on the secret unseen seed; and whether the
 * last run had a seed at all.
 */

/** An instance that ran its KAT and could be held to anything beyond it. */
const checked = (inst: InstanceView): boolean => inst.build?.library !== undefined && measurable(inst.build.kat);

/** What the last run said of the secret seed: its id, off, or nothing (evidence from before the check). */
function unseenSeedState(campaign: Record<string, unknown>): string {
  const lastRun = campaign.last_run as { unseen_seed_id?: string | null } | undefined;
  const id = lastRun?.unseen_seed_id;
  if (typeof id === 'string')
    return `on: the last run held each changed library to its predecessor's answers on the secret seed of id ${id}`;
  if (id === null)
    return 'off: the last run had no secret seed (NGCC_UNSEEN_SEED, the action input unseen-seed), so a changed library was held to its published KAT only';
  return 'not recorded: this evidence is from before the check';
}

/** The summary's section: every checked instance and what its outputs were held to. */
export function heldToSummary(model: ReportModel): RootContent[] {
  const rows = model.candidates.flatMap((c) =>
    c.instances
      .filter(checked)
      .map((inst) => [[link(candidatePageLink(c.id, model.system), c.id)], code(inst.label), heldToShown(inst.build!)]),
  );
  if (rows.length === 0) return [];
  return [
    heading(2, 'What the outputs were held to'),
    para(
      `Beyond its own run of the published KAT, a library's outputs are held to another library's on seeds it has not seen: a pull request's base, or the answers an earlier night's library gave. A first version is bound only by its published KAT and by review. The unseen-seed check was ${unseenSeedState(model.campaign)}.`,
    ),
    table(['candidate', 'instance', 'outputs held to'], rows),
  ];
}

/** The candidate page's lines, under its KAT table. */
export function heldToLines(model: ReportModel, c: CandidateView): RootContent[] {
  const shown = c.instances.filter(checked);
  if (shown.length === 0) return [];
  return [
    para(`Outputs held to (the unseen-seed check was ${unseenSeedState(model.campaign)}):`),
    table(
      ['instance', 'outputs held to'],
      shown.map((inst) => [code(inst.label), heldToShown(inst.build!)]),
    ),
  ];
}
