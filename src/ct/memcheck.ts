import { basename } from 'node:path';
import type { CompilerMade } from './sourceHint.js';
import type { CtFinding, CtKind } from './findingKinds.js';
import { child, childrenOf, parseXml, textOf, type XmlElement } from './xml.js';

/** One frame of a memcheck stack. */
export interface MemcheckFrame {
  fn?: string;
  dir?: string;
  file?: string;
  line?: number;
  obj?: string;
}

/** One of memcheck's unique errors (same kind and stack), with how often it occurred. */
interface MemcheckError {
  unique: string;
  kind: string;
  frames: MemcheckFrame[];
  count: number;
}

export interface MemcheckReport {
  errors: MemcheckError[];
  /** Whether valgrind wrote its closing status (`FINISHED`): a report cut short is no result. */
  finished: boolean;
}

/**
 * Memcheck's error kinds that mean a secret reached something whose timing or behaviour it may
 * change (docs/method.md#constant-time-check): a conditional jump (memcheck says "jump or move"; a
 * cmov is data flow to it, not reported), an address of a load or
 * store ("Use of uninitialised value of size N"), a system call's argument. The others (invalid
 * reads, leaks) say nothing about secrets.
 */
const KINDS: Readonly<Record<string, CtKind>> = { UninitCondition: 'branch', UninitValue: 'index', SyscallParam: 'syscall' };

const frameOf = (f: XmlElement): MemcheckFrame => {
  const line = textOf(f, 'line');
  return {
    ...(textOf(f, 'fn') ? { fn: textOf(f, 'fn') } : {}),
    ...(textOf(f, 'dir') ? { dir: textOf(f, 'dir') } : {}),
    ...(textOf(f, 'file') ? { file: textOf(f, 'file') } : {}),
    ...(line && /^\d+$/.test(line) ? { line: Number(line) } : {}),
    ...(textOf(f, 'obj') ? { obj: textOf(f, 'obj') } : {}),
  };
};

/** Reads memcheck's --xml=yes output; throws when it is not the XML valgrind writes. */
export function parseMemcheckXml(text: string): MemcheckReport {
  const root = parseXml(text);
  if (root.name !== 'valgrindoutput') throw new Error(`the root element is <${root.name}>, not <valgrindoutput>`);
  const counts = new Map<string, number>();
  for (const pair of childrenOf(child(root, 'errorcounts'), 'pair')) {
    const unique = textOf(pair, 'unique');
    const count = Number(textOf(pair, 'count'));
    if (unique && Number.isInteger(count) && count > 0) counts.set(unique, count);
  }
  const errors = childrenOf(root, 'error').map((e) => {
    const unique = textOf(e, 'unique') ?? '';
    // The first <stack> is where it happened; a second one (with --track-origins) where the value came from.
    return {
      unique,
      kind: textOf(e, 'kind') ?? '',
      frames: childrenOf(child(e, 'stack'), 'frame').map(frameOf),
      count: counts.get(unique) ?? 1,
    };
  });
  const finished = childrenOf(root, 'status').some((s) => textOf(s, 'state') === 'FINISHED');
  return { errors, finished };
}

export interface Findings {
  findings: CtFinding[];
  /** Reports of a ct kind with no frame inside the library (the driver's own use of a secret output). */
  outsideLibrary: number;
}

/**
 * A frame's file by its base name, as gcc's debug information names it: clang's names it by its path
 * from the compiler's working folder, a temporary one, so one site would be two in a comparison.
 */
const fileOf = (f: MemcheckFrame) => (f.file !== undefined ? basename(f.file) : undefined);
const site = (f: MemcheckFrame) => `${f.fn ?? '?'} ${fileOf(f) ?? basename(f.obj ?? '?')}:${f.line ?? 0}`;

/**
 * The findings of a report: each error of a ct kind placed at its first frame inside `library`
 * (the object path as valgrind names it), merged by (kind, function, file, line) with their counts
 * added; most frequent first. Nothing is suppressed yet.
 */
export function findingsOf(
  report: MemcheckReport,
  isLibrary: (obj: string) => boolean,
  compilerMade?: (frame: MemcheckFrame) => CompilerMade | undefined,
): Findings {
  const bySite = new Map<string, CtFinding>();
  let outsideLibrary = 0;
  for (const e of report.errors) {
    const kind = KINDS[e.kind];
    if (!kind) continue;
    const at = e.frames.findIndex((f) => f.obj !== undefined && isLibrary(f.obj));
    if (at < 0) {
      outsideLibrary += e.count;
      continue;
    }
    const frame = e.frames[at]!;
    const finding: CtFinding = {
      kind,
      function: frame.fn ?? '?',
      file: fileOf(frame) ?? '',
      line: frame.line ?? 0,
      count: e.count,
      suppressed: false,
      reason: '',
    };
    const key = `${finding.kind}\t${finding.function}\t${finding.file}\t${finding.line}`;
    const seen = bySite.get(key);
    if (seen) seen.count += e.count;
    else {
      const made = kind === 'branch' ? compilerMade?.(frame) : undefined;
      if (made) finding.compiler_made = made;
      const callers = e.frames
        .slice(at + 1)
        .filter((f) => f.obj !== undefined && isLibrary(f.obj))
        .slice(0, 4)
        .map(site);
      bySite.set(key, { ...finding, ...(callers.length > 0 ? { stack: callers } : {}) });
    }
  }
  const findings = [...bySite.values()].sort(
    (a, b) => b.count - a.count || a.kind.localeCompare(b.kind) || a.function.localeCompare(b.function) || a.line - b.line,
  );
  return { findings, outsideLibrary };
}
