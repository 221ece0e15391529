import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../util/fsx.js';
import type { Root, RootContent } from 'mdast';
import { para, serialize } from '../../text/md.js';
import { candidatePage } from './candidate.js';
import { methodPage } from './method.js';
import { sizeAuditPage } from './sizeAudit.js';
import { summaryPage } from './summary.js';
import { surveyPage } from './survey.js';
import { indexPage } from './systems.js';
import { trendHighlights, trendsPage, trendsPagePath } from './trends.js';
import type { ReportModel, SystemEntry } from '../views.js';

/** Every page of one system, keyed by its path under PAGES_DIR; pure: the model holds all it shows. */
export function renderPages(model: ReportModel): Map<string, string> {
  const sys = model.system;
  const pages = new Map<string, string>();
  const page = (tree: Root) => serialize(withFooter(tree, model.toolVersion));
  for (const c of model.candidates) pages.set(`${c.id}/perf_${sys}.md`, page(candidatePage(model, c)));
  pages.set(`performance/summary_${sys}.md`, page(summaryPage(model)));
  pages.set(`performance/method_${sys}.md`, page(methodPage(model)));
  pages.set(`performance/size-audit_${sys}.md`, page(sizeAuditPage(model)));
  pages.set('performance/symmetric-survey.md', page(surveyPage(model)));
  if (model.trends) pages.set(trendsPagePath(sys), page(trendsPage(model, model.trends)));
  pages.set('index.md', page(indexPage(model.systems, model.trends ? trendHighlights(sys, model.trends) : [])));
  return pages;
}

/** Every page ends by naming the ngcc-perf version that rendered it (`ngcc-perf --version` says the same). */
function withFooter(tree: Root, version: string | undefined): Root {
  return version === undefined ? tree : { ...tree, children: [...tree.children, para(`Rendered by ngcc-perf ${version}.`)] };
}

/** The index page of these systems (at publish time: every system on the data branch). */
export const renderIndex = (systems: readonly SystemEntry[], version?: string, highlights: RootContent[] = []): string =>
  serialize(withFooter(indexPage(systems, highlights), version));

export function writePages(outDir: string, pages: Map<string, string>): void {
  for (const [path, text] of pages) writeFileAtomic(join(outDir, path), text);
}

/** Pages whose file on disk differs from a fresh rendering (or is missing). */
export function differingPages(outDir: string, pages: Map<string, string>): string[] {
  return [...pages]
    .filter(([path, text]) => {
      const file = join(outDir, path);
      return !existsSync(file) || readFileSync(file, 'utf8') !== text;
    })
    .map(([path]) => path);
}
