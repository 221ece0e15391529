import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { evidencePaths } from '../evidence/layout.js';
import { readJsonIfExists } from '../util/fsx.js';
import { loadCampaign } from '../config/campaign.js';
import { errorMessage } from '../errors.js';
import { checkoutAt, headCommit, historyVersions } from './gitTree.js';
import { touchedCandidates } from './touched.js';

/** What a night needs to pair its rebuilt instances with last night's libraries. */
export interface LastNightQuery {
  repo: string;
  campaignDir: string;
  /** The data branch's ref (`origin/<publish-branch>`) and the system's evidence path on it. */
  dataRef: string;
  evidencePath: string;
  /** A scratch folder of this run. */
  work: string;
  say(line: string): void;
}

/** Last night's side of a paired night: its checkout, and which instances to pair. */
export interface LastNightSide {
  commit: string;
  campaignDir: string;
  /** The instances of the candidates whose library changed since last night's commit. */
  only: RegExp;
  candidates: string[];
  remove(): Promise<void>;
}

/**
 * Last night's side (docs/statistics.md#paired-nights): the campaign at the commit last night's
 * evidence on the data branch measured, checked out beside the workspace, when some candidate's
 * library changed since (its build key, as a pull request's touched candidates are found). Undefined,
 * with a line saying why, when there is nothing to pair.
 */
export async function lastNightSide(q: LastNightQuery): Promise<LastNightSide | undefined> {
  const [last] = await historyVersions(q.repo, q.dataRef, q.evidencePath, 1, join(q.work, 'evidence'));
  if (!last) return void q.say(`paired night: no earlier evidence on ${q.dataRef}: nothing to pair with`);
  const run = readJsonIfExists<{ last_run?: { campaign_commit?: string | null } }>(evidencePaths(last.dir).campaign)?.last_run;
  const commit = run?.campaign_commit;
  if (!commit) return void q.say("paired night: last night's evidence names no campaign commit: nothing to pair with");
  // A shard of tonight's run that published first left tonight's commit there: nothing older to pair with.
  if (commit === (await headCommit(q.repo)))
    return void q.say(
      `paired night: the data branch's last evidence was measured at this commit (${commit.slice(0, 7)}): nothing to pair with`,
    );
  let candidates: string[];
  try {
    const touched = await touchedCandidates({
      repo: q.repo,
      campaignDir: q.campaignDir,
      baseSha: commit,
      headSha: 'HEAD',
      baselineSystemDir: last.dir,
      scratch: join(q.work, 'keys'),
    });
    candidates = touched.candidates.filter((id) => existsSync(join(q.campaignDir, id, 'candidate.yml')));
  } catch (e) {
    return void q.say(`paired night: cannot tell what changed since ${commit.slice(0, 7)} (${errorMessage(e)}): nothing paired`);
  }
  if (candidates.length === 0) return void q.say(`paired night: no library changed since last night's commit ${commit.slice(0, 7)}`);
  const checkout = await checkoutAt(q.repo, commit, join(q.work, 'src'));
  if ('error' in checkout) return void q.say(`paired night: ${checkout.error}: nothing paired`);
  const campaignDir = join(checkout.dir, relative(q.repo, q.campaignDir));
  if (!existsSync(campaignDir)) {
    await checkout.remove();
    return void q.say(`paired night: no campaign folder at ${commit.slice(0, 7)}: nothing paired`);
  }
  // Last night's settings under tonight's rules: one they now refuse leaves the night unpaired, never failed.
  try {
    loadCampaign(campaignDir, { candidatesRequired: false });
  } catch (e) {
    await checkout.remove();
    return void q.say(
      `paired night: last night's campaign at ${commit.slice(0, 7)} does not load now (${errorMessage(e)}): nothing paired`,
    );
  }
  const ids = candidates.map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return { commit, campaignDir, only: new RegExp(`^(${ids.join('|')})/`), candidates, remove: checkout.remove };
}
