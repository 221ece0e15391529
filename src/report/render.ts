import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../util/fsx.js';
import { archName, measuredEnvironment } from './environment.js';
import { serialize } from './md.js';
import type { ReportModel } from './model.js';
import { candidatePage } from './pages/candidate.js';
import { indexPage, methodPage, sizeAuditPage, summaryPage } from './pages/system.js';
import { surveyPage } from './pages/survey.js';

/** Other systems beside this one in DATA_DIR, for the index (read from their campaign.json). */
export function siblingSystems(model: ReportModel): Array<{ id: string; arch: string; candidates: number }> {
  const dataDir = dirname(model.systemDir.replace(/\/$/, ''));
  const found = new Map<string, { id: string; arch: string; candidates: number }>();
  for (const name of existsSync(dataDir) ? readdirSync(dataDir).sort() : []) {
    const campaign = join(dataDir, name, 'campaign.json');
    const build = join(dataDir, name, 'build.json');
    if (!existsSync(campaign) || name === model.system) continue;
    try {
      const c = JSON.parse(readFileSync(campaign, 'utf8')) as Record<string, unknown>;
      const ids = existsSync(build) ? new Set(Object.keys((JSON.parse(readFileSync(build, 'utf8')) as { instances: object }).instances).map((k) => k.split('/')[0])) : new Set();
      found.set(name, { id: name, arch: archName(measuredEnvironment(c)).display, candidates: ids.size });
    } catch {
      /* an unreadable sibling is left out of the index; validate reports it */
    }
  }
  found.set(model.system, { id: model.system, arch: archName(model.environment).display, candidates: model.candidates.length });
  return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Every page of one system, keyed by its path under PAGES_DIR. */
export function renderPages(model: ReportModel): Map<string, string> {
  const sys = model.system;
  const pages = new Map<string, string>();
  for (const c of model.candidates) pages.set(`${c.id}/perf_${sys}.md`, serialize(candidatePage(model, c)));
  pages.set(`performance/summary_${sys}.md`, serialize(summaryPage(model)));
  pages.set(`performance/method_${sys}.md`, serialize(methodPage(model)));
  pages.set(`performance/size-audit_${sys}.md`, serialize(sizeAuditPage(model)));
  pages.set('performance/symmetric-survey.md', serialize(surveyPage(model)));
  pages.set('index.md', serialize(indexPage(siblingSystems(model))));
  return pages;
}

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
