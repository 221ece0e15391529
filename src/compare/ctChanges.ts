import { type CtFile, type CtFinding, siteOf } from '../ct/findings.js';
import { type CtEvidence, ctByInstance } from '../evidence/ctEvidence.js';

/** An unsuppressed constant-time site of head that the baseline did not have. */
export interface CtNewFinding {
  /** The instance key `<candidate>/<label>`. */
  key: string;
  kind: CtFinding['kind'];
  function: string;
  file?: string;
  line?: number;
  /** Head's reports of the site, over the operations below. */
  count: number;
  /** Head's operations that reached it. */
  operations: string[];
  /** False: the baseline has no ct evidence of the instance (a new candidate, or never checked), or not of this build. */
  baseline_checked: boolean;
  /** The other build the site is in (`gcc resource`, docs/method.md#every-build); absent: the measured build. */
  build?: string;
  /** The other builds where the same site is new too: one site is one finding, whichever builds have it. */
  also_in?: string[];
  /** A branch the source does not make (CtFinding's `compiler_made`). */
  compiler_made?: CtFinding['compiler_made'];
}

/** A build of head's constant-time matrix that did not build: nothing was checked in it. */
export interface CtBuildFailure {
  key: string;
  /** `clang-16 performance`. */
  build: string;
  failure: string;
  /** The campaign's own compiler and flag set, from which the measured build fell back (CtBuildCheck's). */
  campaign_build?: boolean;
}

/** The builds of head's matrices that failed to build where the base's build of that name did not (new failures only). */
export function ctBuildFailures(base: readonly CtEvidence[], head: readonly CtEvidence[]): CtBuildFailure[] {
  const baseBy = ctByInstance(base);
  return [...ctByInstance(head)]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .flatMap(([key, h]) =>
      (h.ct.builds ?? [])
        .filter((b) => b.failure && !baseBy.get(key)?.ct.builds?.find((x) => x.name === b.name)?.failure)
        .map((b) => ({ key, build: b.name, failure: b.failure!, ...(b.campaign_build ? { campaign_build: true } : {}) })),
    );
}

/** Where a finding is: `file:line`, or the function alone when the library had no line information. */
export const ctSite = (f: { function: string; file?: string; line?: number }): string =>
  f.file !== undefined ? `${f.file}:${f.line ?? '?'}` : `${f.function} (no line information)`;

interface Site {
  finding: CtFinding;
  operations: string[];
  count: number;
}

/** An instance's unsuppressed sites, each once, with the operations that reached it. */
function sitesOf(ct: Pick<CtFile, 'operations'>): Site[] {
  const sites = new Map<string, Site>();
  for (const [op, o] of Object.entries(ct.operations))
    for (const f of o.findings ?? []) {
      if (f.suppressed) continue;
      const s = sites.get(siteOf(f)) ?? { finding: f, operations: [], count: 0 };
      s.operations.push(op);
      s.count += f.count;
      sites.set(siteOf(f), s);
    }
  return [...sites.values()];
}

/** Sites are held against the baseline per function and file: an edit above them moves their lines. */
const groupOf = (f: CtFinding) => `${f.kind}\u0000${f.function}\u0000${f.file ?? ''}`;

/**
 * Head's unsuppressed sites that the baseline did not have. Within one kind, function and file,
 * head has as many new sites as it has more than the base; those named are the ones whose line the
 * base did not have. So a line shift alone adds nothing, while one more secret-dependent branch in
 * a function is one new finding. An instance the baseline never checked has all its sites new.
 */
export function newCtFindings(base: readonly CtEvidence[], head: readonly CtEvidence[]): CtNewFinding[] {
  const baseBy = ctByInstance(base);
  const out: CtNewFinding[] = [];
  for (const [key, h] of [...ctByInstance(head)].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const b = baseBy.get(key);
    // The measured build against the baseline's, and each other build against the baseline's of that name.
    const found = new Map<string, CtNewFinding>();
    const add = (f: CtNewFinding) => {
      const site = `${f.kind} ${f.function} ${f.file ?? '?'}:${f.line ?? '?'}`;
      const first = found.get(site);
      if (!first) found.set(site, f);
      else first.also_in = [...(first.also_in ?? []), f.build ?? 'measured'];
    };
    for (const f of newSites(key, h.ct, b?.ct)) add(f);
    // A build that did not build checked nothing: it is named apart (ctBuildFailures), never a site's.
    for (const build of (h.ct.builds ?? []).filter((x) => !x.failure)) {
      // A base build that did not build checked nothing: head's sites there are new, and unchecked on the base.
      const before = b?.ct.builds?.find((x) => x.name === build.name && !x.failure);
      for (const f of newSites(key, build, before)) add({ ...f, build: build.name });
    }
    out.push(...found.values());
  }
  return out;
}

/** The sites of one build of head that the same build of the baseline did not have (`base` absent: never checked). */
function newSites(key: string, head: Pick<CtFile, 'operations'>, base: Pick<CtFile, 'operations'> | undefined): CtNewFinding[] {
  const out: CtNewFinding[] = [];
  const baseSites = base ? sitesOf(base) : [];
  const groups = new Map<string, Site[]>();
  for (const s of sitesOf(head)) groups.set(groupOf(s.finding), [...(groups.get(groupOf(s.finding)) ?? []), s]);
  for (const [group, sites] of groups) {
    const before = baseSites.filter((s) => groupOf(s.finding) === group);
    const extra = sites.length - before.length;
    if (extra <= 0) continue;
    const lines = new Set(before.map((s) => s.finding.line));
    const unknown = sites.filter((s) => !lines.has(s.finding.line)).sort((x, y) => (x.finding.line ?? 0) - (y.finding.line ?? 0));
    for (const s of unknown.slice(0, extra))
      out.push({
        key,
        kind: s.finding.kind,
        function: s.finding.function,
        ...(s.finding.file !== undefined ? { file: s.finding.file } : {}),
        ...(s.finding.line !== undefined ? { line: s.finding.line } : {}),
        count: s.count,
        operations: s.operations,
        baseline_checked: base !== undefined,
        ...(s.finding.compiler_made ? { compiler_made: s.finding.compiler_made } : {}),
      });
  }
  return out;
}
