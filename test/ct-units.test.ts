import { lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { placeNotes } from '../src/ct/coverage.js';
import { tempDir } from './helpers/tmp.js';
import { describe, expect, it } from 'vitest';
import { affordableCalls, checkedCalls, planCtOperation, predictedCtSeconds } from '../src/ct/budget.js';
import { findingsOf, parseMemcheckXml } from '../src/ct/memcheck.js';
import { applySuppressions, sourceFunction } from '../src/ct/suppressions.js';
import { parseXml } from '../src/ct/xml.js';

/** The pure parts of the ct phase: reading memcheck's XML, merging sites, suppressions, the budget. */
const frame = (fn: string, file: string, line: number, obj: string) =>
  `<frame><ip>0x1</ip><obj>${obj}</obj><fn>${fn}</fn><dir>/src</dir><file>${file}</file><line>${line}</line></frame>`;
const error = (unique: string, kind: string, frames: string) =>
  `<error><unique>${unique}</unique><tid>1</tid><kind>${kind}</kind><what>x</what><stack>${frames}</stack></error>`;
const LIB = '/b/ct/libx.so';
const DRIVER = '/d/ngcc_ct';

function report(errors: string, counts: Array<[string, number]>, finished = true): string {
  const pairs = counts.map(([u, n]) => `<pair><count>${n}</count><unique>${u}</unique></pair>`).join('');
  return `<?xml version="1.0"?>\n<valgrindoutput><protocolversion>4</protocolversion><status><state>RUNNING</state></status>${errors}${
    finished ? '<status><state>FINISHED</state></status>' : ''
  }<errorcounts>${pairs}</errorcounts></valgrindoutput>`;
}

describe('memcheck XML', () => {
  it('places each report at its first frame in the library and merges reports of one site, adding their counts', () => {
    const xml = report(
      [
        // Two stacks through the same site: one finding, counts added; callers kept from the first.
        error(
          '0x0',
          'UninitCondition',
          frame('memcmp', 'vg.c', 9, '/usr/lib/vgpreload.so') + frame('leak', 'a.c', 12, LIB) + frame('api', 'b.c', 3, LIB),
        ),
        // clang's debug information names the same file by its path from the compiler's folder.
        error('0x1', 'UninitCondition', frame('leak', 'tmp-1/kem-1/x/../a.c', 12, LIB) + frame('other', 'tmp-1/b.c', 7, LIB)),
        error('0x2', 'UninitValue', frame('lookup', 'a.c', 40, LIB)),
        error('0x3', 'SyscallParam', frame('write', 'w.c', 1, '/usr/lib/libc.so.6') + frame('dump', 'a.c', 77, LIB)),
        // Only the driver: its own check of a secret output.
        error('0x4', 'UninitCondition', frame('main', 'ct.c', 5, DRIVER)),
        // Not about secrets.
        error('0x5', 'InvalidRead', frame('oob', 'a.c', 90, LIB)),
      ].join(''),
      [
        ['0x0', 4],
        ['0x1', 2],
        ['0x2', 3],
        ['0x3', 1],
        ['0x4', 6],
        ['0x5', 1],
      ],
    );
    const parsed = parseMemcheckXml(xml);
    expect(parsed.finished).toBe(true);
    const { findings, outsideLibrary } = findingsOf(parsed, (obj) => obj === LIB);
    expect(outsideLibrary).toBe(6);
    expect(findings.map((f) => [f.kind, f.function, f.file, f.line, f.count])).toEqual([
      ['branch', 'leak', 'a.c', 12, 6],
      ['index', 'lookup', 'a.c', 40, 3],
      ['syscall', 'dump', 'a.c', 77, 1],
    ]);
    expect(findings[0]!.stack).toEqual(['api b.c:3']);
    const clang = findingsOf(
      parseMemcheckXml(
        report(error('0x1', 'UninitCondition', frame('leak', 'tmp-1/kem-1/x/../a.c', 12, LIB) + frame('other', 'tmp-1/b.c', 7, LIB)), []),
      ),
      (obj) => obj === LIB,
    );
    expect(clang.findings.map((f) => [f.file, f.stack])).toEqual([['a.c', ['other b.c:7']]]);
  });

  it('says when valgrind did not finish, and refuses text that is not its XML', () => {
    expect(parseMemcheckXml(report('', [], false)).finished).toBe(false);
    expect(() => parseMemcheckXml('<valgrindoutput><error>')).toThrow(/never closed/);
    expect(() => parseMemcheckXml('<other/>')).toThrow(/not <valgrindoutput>/);
    expect(parseXml('<a><b>x &amp; &lt;y&gt; &#65;</b></a>').children[0]!.text).toBe('x & <y> A');
  });
});

describe('suppressions', () => {
  const found = [
    { kind: 'branch' as const, function: 'rej_eta.constprop.0', file: 'poly.c', line: 400, count: 5, suppressed: false, reason: '' },
    { kind: 'index' as const, function: 'lookup', file: 'a.c', line: 40, count: 1, suppressed: false, reason: '' },
  ];
  it('match by function (as in the source, without GCC clone suffixes) or file:line, kind and operation', () => {
    expect(sourceFunction('rej_eta.constprop.0')).toBe('rej_eta');
    expect(sourceFunction('f.isra.0.cold')).toBe('f');
    const rules = [
      { function: 'rej_eta', kind: 'branch' as const, reason: 'public' },
      { file: 'a.c:40', operations: ['dec'], reason: 'r' },
    ];
    expect(applySuppressions(found, rules, 'sign').map((f) => [f.suppressed, f.reason])).toEqual([
      [true, 'public'],
      [false, ''],
    ]);
    expect(applySuppressions(found, rules, 'dec')[1]).toMatchObject({ suppressed: true, reason: 'r' });
    expect(applySuppressions(found, [{ function: 'lookup', kind: 'branch', reason: 'r' }], 'dec')[1]!.suppressed).toBe(false);
  });
});

describe('the budget', () => {
  const budget = { calls: 3, valgrindFactor: 50, startupSeconds: 2, opBudgetSeconds: 60 };
  it('runs an operation whose predicted time fits, and one that was never timed', () => {
    expect(planCtOperation(0.01, budget)).toEqual({ run: true, predictedSeconds: 0.01 * 3 * 50 + 2 });
    expect(planCtOperation(undefined, budget)).toEqual({ run: true });
  });
  it('skips one predicted over the budget, saying why', () => {
    const d = planCtOperation(1, budget);
    expect(d.run).toBe(false);
    expect(!d.run && d.reason).toMatch(/predicted 152 s under memcheck .* over the budget of 60 s \(ct\.op_budget_s\)/);
  });
  it('allows as many calls as fit the budget after valgrind starts, the cap without a figure', () => {
    // (60 - 2) s / (0.01 s × 50) = 116 calls; the 117th would take 60.5 s.
    expect(affordableCalls(0.01, budget, 1000)).toBe(116);
    expect(planCtOperation(0.01, { ...budget, calls: 117 }).run).toBe(false);
    expect(planCtOperation(0.01, { ...budget, calls: 116 }).run).toBe(true);
    expect(affordableCalls(0.0001, budget, 1000)).toBe(1000);
    expect(affordableCalls(undefined, budget, 64)).toBe(64);
  });
  it("checks another build's wanted calls only as far as its own slowdown affords them, never fewer than ct.calls", () => {
    // The measured build at 20× affords 58 calls of 0.05 s; a build memcheck slows 45× affords 25, one at 400× none.
    expect(checkedCalls(55, 0.05, { ...budget, valgrindFactor: 20 }, 1000)).toBe(55);
    expect(checkedCalls(55, 0.05, { ...budget, valgrindFactor: 45 }, 1000)).toBe(25);
    expect(predictedCtSeconds(0.05, 25, { ...budget, valgrindFactor: 45 })).toBeLessThanOrEqual(60);
    expect(checkedCalls(55, 0.05, { ...budget, valgrindFactor: 400 }, 1000)).toBe(3);
    expect(checkedCalls(3, 0.0001, budget, 1000)).toBe(3);
  });
});

describe("placeNotes: the coverage run's folder, written by the library, read back", () => {
  it("places each counters file's notes beside it, and a link the library planted there is removed, never written through", () => {
    const scratch = tempDir();
    const objDir = tempDir();
    writeFileSync(join(objDir, 'poly.gcno'), 'notes of poly');
    writeFileSync(join(objDir, 'kem.gcno'), 'notes of kem');
    writeFileSync(join(scratch, 'poly.gcda'), 'counters');
    writeFileSync(join(scratch, 'kem.gcda'), 'counters');
    // A host file the parent may write, and the library's link to it under a notes file's name.
    const host = join(tempDir(), 'host-file');
    writeFileSync(host, 'the host file');
    symlinkSync(host, join(scratch, 'poly.gcno'));
    // A counters "file" that is a link is not one of the run's counters.
    symlinkSync(host, join(scratch, 'linked.gcda'));
    expect(placeNotes(scratch, objDir).sort()).toEqual(['kem.gcda', 'poly.gcda']);
    expect(readFileSync(host, 'utf8')).toBe('the host file');
    expect(lstatSync(join(scratch, 'poly.gcno')).isFile()).toBe(true);
    expect(readFileSync(join(scratch, 'poly.gcno'), 'utf8')).toBe('notes of poly');
    expect(readFileSync(join(scratch, 'kem.gcno'), 'utf8')).toBe('notes of kem');
  });
});
