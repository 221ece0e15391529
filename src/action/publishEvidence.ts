import * as core from '@actions/core';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { loadCampaign } from '../config/campaign.js';
import { instanceKey } from '../evidence/layout.js';
import type { ActionInputs } from '../github/inputs.js';
import { publish } from '../github/publish.js';
import { baselineInstanceKeys } from '../campaign/iccsBaseline.js';
import { systemsIn } from '../report/model.js';
import { renderIndex } from '../report/pages/render.js';
import { filesUnder } from '../util/fsx.js';
import { toolVersion } from '../util/paths.js';
import { workspace } from './context.js';
import type { Rendered } from './pages.js';

/** The pages' index of every system (a path under pages-dir). */
const INDEX_PAGE = 'index.md';

/**
 * Evidence files (never built libraries) and, unless this is a shard, the pages: committed to the
 * data branch, or copied under the artifact folder for the workflow to upload.
 */
export async function publishEvidence(
  inputs: ActionInputs,
  systemDir: string,
  rendered: Rendered | undefined,
  work: string,
): Promise<void> {
  const pages = rendered?.pages;
  const repo = workspace();
  const evidenceTo = join(relative(repo, resolve(repo, inputs.dataDir)), inputs.system);
  const pagesTo = relative(repo, resolve(repo, inputs.pagesDir));
  const files = filesUnder(systemDir)
    .filter((f) => !f.startsWith('build/'))
    .map((f) => ({ from: join(systemDir, f), to: join(evidenceTo, f) }));
  if (inputs.publish === 'artifact') {
    const dir = join(work, 'artifact', 'evidence', inputs.system);
    for (const f of files) cpSync(f.from, join(dir, relative(evidenceTo, f.to)));
    core.setOutput('artifact-dir', join(work, 'artifact'));
    return;
  }
  // index.md lists every system on the data branch, which only the branch knows: rendered there.
  const pageFiles = [...(pages ?? [])]
    .filter(([p]) => p !== INDEX_PAGE)
    .map(([p, text]) => {
      const from = join(work, 'pages-out', p);
      mkdirSync(dirname(from), { recursive: true });
      writeFileSync(from, text);
      return { from, to: join(pagesTo, p) };
    });
  // A shard owns exactly its files; a whole system owns its evidence folder per instance: what it
  // re-measured is replaced, instances the campaign no longer has leave the branch, and those a
  // failed shard lacks stay. The pages folder is shared by every system: never owned.
  const owns = inputs.shard ? files.map((f) => f.to) : [evidenceTo];
  const campaign = loadCampaign(resolve(repo, inputs.campaign));
  const campaignInstances = new Set([
    ...campaign.candidates.flatMap((c) => c.instances.map((i) => instanceKey(c.id, i.label))),
    // The ICCS baseline is measured once per system (ngcc-perf iccs-baseline), not by each run: kept.
    ...baselineInstanceKeys(),
  ]);
  const result = await publish({
    repoDir: repo,
    remote: 'origin',
    branch: inputs.publishBranch,
    files: [...files, ...pageFiles],
    owns,
    campaignInstances,
    // A shard's campaign.json spans its own run: merged with the branch's as `ngcc-perf merge` does.
    mergeCampaign: inputs.shard !== undefined,
    derived: pages
      ? [
          {
            to: join(pagesTo, INDEX_PAGE),
            render: (tree) => renderIndex(systemsIn(join(tree, dirname(evidenceTo))), toolVersion(), rendered?.highlights),
          },
        ]
      : [],
    message: `ngcc-perf ${inputs.system}: evidence${inputs.shard ? ` (shard ${inputs.shard.index}/${inputs.shard.count})` : ' and pages'}`,
    author: { name: 'ngcc-perf', email: 'ngcc-perf@users.noreply.github.com' },
    token: inputs.token || undefined,
  });
  core.info(result.changed ? `published ${result.commit} after ${result.attempts} attempt(s)` : 'nothing to publish: evidence unchanged');
}
