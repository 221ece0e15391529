import type { KatIssue } from '../../catalogs/catalogs.js';
import type { CandidateView } from '../views.js';
import { forgeryShown, instanceStatus, measurable } from '../../kat/status.js';

const EXPLAIN: Record<string, string> = {
  MISMATCH: 'the generated KAT differs from the submitted vectors',
  NOKAT: 'no submitted KAT vectors to compare with',
  CRYPTOFAIL: 'the scheme failed its own correctness check during the KAT',
  OVERFLOW: 'an output buffer was written past its claimed length',
  LOADFAIL: 'the library could not be loaded or lacks an API function',
  TIMEOUT: 'the KAT did not finish within the time limit',
  CRASH: 'the KAT process crashed',
  BUILDFAIL: 'the library did not build',
  FORGED:
    "the KAT passed, but its outputs were not those the same calls give when made again elsewhere: by itself from a trial's seed without timing, by its pull request's base, or on an earlier night's unseen seed",
};

/**
 * A footnote for every KAT status other than PASS: the curated cause from kat_issues.csv when
 * one matches the instance (ID and Label regex), else what the harness recorded.
 * Returns the marker per label (" [1]") and the footnote paragraphs in order.
 */
export function katFootnotes(c: CandidateView, issues: KatIssue[]): { marks: Map<string, string>; notes: string[] } {
  const marks = new Map<string, string>();
  const notes: string[] = [];
  const numberOf = new Map<string, number>();
  for (const inst of c.instances) {
    const status = instanceStatus(inst.build);
    if (!status || status === 'PASS') continue;
    const issue = issues.find((i) => i.id === c.id && i.label.test(inst.label));
    let key: string;
    let note: string;
    // A curated cause explains a KAT status, never a forgery found in this run.
    if (issue && status !== 'FORGED') {
      key = `issue:${issue.label.source}`;
      const tail =
        issue.action === 'exclude' ? 'These instances are not timed.' : 'These instances are timed anyway; their output is not validated.';
      note = `${issue.cause} ${tail}`;
    } else {
      const detail = inst.build?.forged ? forgeryShown(inst.build.forged) : (inst.build?.kat_detail ?? inst.build?.build_error);
      key = `status:${status}:${detail ?? ''}`;
      const timed =
        status === 'FORGED'
          ? ' No figure of this library is published.'
          : measurable(status)
            ? ' Timed anyway; the output is not validated.'
            : ' Not timed.';
      note = `${status}: ${EXPLAIN[status] ?? 'see the KAT log'}${detail ? ` (${detail})` : ''}.${timed}`;
    }
    let n = numberOf.get(key);
    if (n === undefined) {
      n = numberOf.size + 1;
      numberOf.set(key, n);
      notes.push(`⚠ [${n}] ${note}`);
    }
    marks.set(inst.label, ` [${n}]`);
  }
  return { marks, notes };
}
