import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareEvidence } from '../src/compare/compare.js';
import { renderComparison } from '../src/compare/markdown.js';
import { buildRecord } from '../src/evidence/record.js';
import type { BuildEntry } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import type { OperationResult } from '../src/measure/operation.js';
import { REFUSED, refusedTrials } from '../src/measure/refusals.js';
import { loadReportModel } from '../src/report/model.js';
import { renderPages } from '../src/report/pages/render.js';
import { writeSyntheticSystem } from './helpers/dataset.js';
import { tempDir } from './helpers/tmp.js';

/**
 * A measurement with a refused trial (measure/refusals.ts) never shows a bare figure: the summary,
 * the candidate page and the comparison mark it by one rule, and validate holds the record's list to
 * its processes. The refusals are trial.ts's own failure texts.
 */

const KERNEL = `${REFUSED}its cycles say 1.00e-3 s, but the kernel charged the process 0.002 s of CPU during the trial`;
const FLOOR = `${REFUSED}below the physical floor: 2.00 ns per keygen call, where moving its 3584 bytes takes at least 4.31 ns (128 bytes a cycle at 6.5 GHz)`;

/** A process as trial.ts leaves it: complete after one attempt refused and run once more, or failed so. */
const process = (status: 'complete' | 'failed', retried: string[] = [], failure?: string) => ({
  status,
  ...(failure ? { failure } : {}),
  trials: [],
  meta: {},
  ...(retried.length > 0 ? { retried: retried.map((disturbed) => ({ started_utc: '2026-12-06T00:00:00Z', wall_s: 0.1, disturbed })) } : {}),
});

describe('refused trials', () => {
  it('are the attempts run once more and the processes that failed on a check, not those re-run for a disturbance or failed otherwise', () => {
    expect(
      refusedTrials([
        process('complete', [KERNEL]),
        process('complete', ['off the CPU 30.0 % of the time']),
        process('failed', [], 'CRYPTOFAIL: call 3: keygen did not write its pk'),
        process('failed', [KERNEL], FLOOR),
      ]),
    ).toEqual([
      { process: 0, retried: true, reason: KERNEL.slice(REFUSED.length) },
      { process: 3, retried: true, reason: KERNEL.slice(REFUSED.length) },
      { process: 3, retried: false, reason: FLOOR.slice(REFUSED.length) },
    ]);
    expect(refusedTrials(undefined)).toEqual([]);
  });

  it('are written into the record by the producer, and validate holds that list to its processes', () => {
    const processes = [process('complete', [KERNEL]), process('complete')];
    const result = { status: 'complete', processes, trials: [], meta: {}, disturbed_retries: 0 } as unknown as OperationResult;
    const entry = { candidate: 'kem-1', label: 'a', variant: 'reference', flags: 'guide', kat: 'PASS' } as BuildEntry;
    const record = buildRecord({
      unit: { candidate: { id: 'kem-1', type: 'kem' } as never, label: 'a' },
      operation: 'keygen',
      entry,
      result,
      environment: {} as never,
    });
    expect(record.refused_trials).toEqual([{ process: 0, retried: true, reason: KERNEL.slice(REFUSED.length) }]);

    const dir = marked();
    expect(validateDataset(dir)).toEqual([]);
    const path = join(dir, 'records', 'kem-1', 'a__keygen.json');
    const r = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...r, refused_trials: undefined }));
    expect(validateDataset(dir)).toEqual(['records/kem-1/a__keygen.json: refused_trials lists 0, its processes[] show 1 refused trial(s)']);
  });

  it('mark the figure on the summary, on the candidate page and in the comparison, each saying what the mark means', () => {
    const head = marked();
    const pages = renderPages(loadReportModel(head));
    const summary = pages.get('performance/summary_x.md')!;
    const candidate = pages.get('kem-1/perf_x.md')!;
    expect(summary).toMatch(/\| `a` \| PASS \| [^|]*⚠ 1 trial refused \| [^|⚠]* \| [^|⚠]* \|/);
    expect(candidate).toMatch(/\| `a` \| keygen \| [^\n]*⚠ 1 trial refused \|\n/);
    expect(candidate).not.toMatch(/\| `a` \| enc \| [^\n]*refused/);
    for (const page of [summary, candidate]) expect(page).toContain('⚠ trials refused: a check refused a trial of this measurement');

    const base = tempDir();
    writeSyntheticSystem(base, 'x', [{ id: 'kem-1', label: 'a' }], ops());
    const md = renderComparison(compareEvidence({ baseDir: base, headDir: join(head, '..'), system: 'x' }));
    expect(md).toMatch(/\| kem-1 \| a \| keygen \| [^|]+ \| [^|]+ ⚠ 1 trial refused \|/);
    expect(md).toContain('Trials refused in kem-1/a keygen (head). ⚠ trials refused:');
  });
});

describe('a measurement stopped before its plan', () => {
  it('is marked partial where the failure was no refusal, by the same rule on the pages, in the comparison and in validate', () => {
    const dir = writeSyntheticSystem(tempDir(), 'x', [{ id: 'kem-1', label: 'a' }], ops());
    const path = join(dir, 'records', 'kem-1', 'a__dec.json');
    const r = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const stopped = 'TIMEOUT: no result within 300 s';
    const record = {
      ...r,
      status: 'partial',
      failure: stopped,
      processes: [{ ...process('complete'), trials: r.trials }, process('failed', [], stopped)],
    };
    writeFileSync(path, JSON.stringify(record));
    expect(validateDataset(dir)).toEqual([]);

    const pages = renderPages(loadReportModel(dir));
    expect(pages.get('performance/summary_x.md')!).toMatch(/\| `a` \| PASS \| [^|⚠]* \| [^|⚠]* \| [^|]* ⚠ partial \|/);
    const candidate = pages.get('kem-1/perf_x.md')!;
    expect(candidate).toMatch(/\| `a` \| dec \| [^\n]*⚠ partial \|\n/);
    expect(candidate).toContain('⚠ partial: a later trial of this measurement failed');
    expect(candidate).not.toContain('⚠ trials refused');

    const base = tempDir();
    writeSyntheticSystem(base, 'x', [{ id: 'kem-1', label: 'a' }], ops());
    const md = renderComparison(compareEvidence({ baseDir: base, headDir: join(dir, '..'), system: 'x' }));
    expect(md).toMatch(/\| kem-1 \| a \| dec \| [^|]+ \| [^|]+ ⚠ partial \|/);
    expect(md).toContain('Measured in part: kem-1/a dec (head).');

    // A hand edit that calls it complete would drop the mark: validate says so.
    writeFileSync(path, JSON.stringify({ ...record, status: 'complete' }));
    expect(validateDataset(dir)).toEqual([
      'records/kem-1/a__dec.json: status complete, but 1 of its processes[] did not complete: partial, or failed',
    ]);
  });
});

const ops = () => ['keygen', 'enc', 'dec'].map((op) => ({ id: 'kem-1', label: 'a', op, trials: [100_000, 100_400, 99_800] }));

/** Synthetic evidence whose keygen record had one attempt refused and run once more, as the producer writes it. */
function marked(): string {
  const dir = writeSyntheticSystem(tempDir(), 'x', [{ id: 'kem-1', label: 'a' }], ops());
  const path = join(dir, 'records', 'kem-1', 'a__keygen.json');
  const r = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const processes = [process('complete', [KERNEL])];
  writeFileSync(
    path,
    JSON.stringify({ ...r, processes: [{ ...processes[0], trials: r.trials }], refused_trials: refusedTrials(processes) }),
  );
  return dir;
}
