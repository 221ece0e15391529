import { createHash } from 'node:crypto';
import { InputError } from '../errors.js';
import { formatManifestLine, parseManifest, type DigestMode, type ManifestEntry } from '../config/katManifest.js';

/** `Msg_Len =` starts a record of the hash generator's files, which have no Count. */
const RECORD_START = /^(Count|count|Msg_Len) =/;

/** The records of a KAT file: lines starting `Count =` / `count =` / `Msg_Len =` (docs/evidence-format.md). */
export function countRecords(text: string): number {
  return text.split('\n').filter((raw) => RECORD_START.test(raw.replace(/[\r \t]+$/, ''))).length;
}

export type GeneratedLine = Pick<ManifestEntry, 'sha256' | 'mode' | 'records' | 'label' | 'file' | 'recorded'>;

export interface ManifestUpdate {
  text: string;
  /** Lines appended for instances that had none. */
  added: string[];
  /** Lines replaced (`after`) or removed (no `after`) under `force`, by their line number before. */
  changed: Array<{ line: number; before: string; after?: string }>;
  /** Instances whose lines already say what was generated. */
  unchanged: string[];
}

const same = (e: ManifestEntry, g: GeneratedLine) =>
  e.sha256 === g.sha256 && e.mode === g.mode && e.records === g.records && e.file === g.file;

/**
 * kat.sha256 updated in place with generated lines: comments and the lines of other instances stay
 * as they are, an instance without a line gets one appended. An instance whose line says something
 * else (another digest, mode, record count or file) is refused, naming that line: a digest that
 * differs is a MISMATCH to look into, never to overwrite silently. With `force` its lines are
 * replaced by the generated one, and each change is listed. `byFile`: an instance has a line per
 * file (a hash candidate's generator files), so a line is matched by its label and file.
 */
function updateManifest(
  text: string,
  display: string,
  generated: GeneratedLine[],
  opts: { force?: boolean; header?: string; byFile?: boolean } = {},
): ManifestUpdate {
  const entries = parseManifest(text, display);
  const lines = text === '' ? [] : text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const edits = new Map<number, string | null>();
  const update: ManifestUpdate = { text, added: [], changed: [], unchanged: [] };
  for (const g of generated) {
    const wanted = formatManifestLine(g);
    const mine = entries.filter((e) => e.label === g.label && (!opts.byFile || e.file === g.file));
    const differing = mine.filter((e) => !same(e, g));
    if (mine.length === 0) update.added.push(wanted);
    else if (differing.length === 0) {
      if (!update.unchanged.includes(g.label)) update.unchanged.push(g.label);
    } else if (!opts.force)
      throw new InputError(
        display,
        `line ${differing[0]!.line}`,
        `says ${formatManifestLine(differing[0]!)}, the generated KAT gives ${formatManifestLine(g)}; not replaced (a differing digest is a MISMATCH to look into; --force replaces the line)`,
      );
    else {
      // A line that already says it stays; otherwise the first differing line becomes the generated one.
      const keep = differing.length < mine.length;
      differing.forEach((e, i) => {
        const after = !keep && i === 0 ? wanted : undefined;
        edits.set(e.line - 1, after ?? null);
        update.changed.push({ line: e.line, before: lines[e.line - 1]!.trim(), ...(after ? { after } : {}) });
      });
    }
  }
  const out = lines.flatMap((l, i) => {
    const edit = edits.get(i);
    return edit === undefined ? [l] : edit === null ? [] : [edit];
  });
  if (update.added.length > 0 && !out.some((l) => l.trim() !== '') && opts.header) out.push(opts.header);
  out.push(...update.added);
  update.text = out.length > 0 ? `${out.join('\n')}\n` : '';
  parseManifest(update.text, display);
  return update;
}

/** The line of one KAT file a run generated, its digest cut to `records` when given. */
export function katFileLine(
  text: string,
  line: { mode: DigestMode; records?: number; label: string; file: string },
  /** The file and its instance, as the refusal names them. */
  where: string,
): GeneratedLine {
  const { mode, records, label, file } = line;
  // A digest of more records than the file holds is the digest of fewer: it would never match a run.
  const available = countRecords(text);
  if (records !== undefined && records > available)
    throw new InputError(
      'command line',
      '--records',
      `${records} exceeds the ${available} record(s) in ${where}; use --records ${available} or fewer`,
    );
  return { sha256: canonicalDigest(text, mode, records), mode, records, label, file };
}

/** Each line says where its digest came from: this harness's output on `day`, not vectors the submitter gave. */
export function markRecorded(generated: GeneratedLine[], day: string = new Date().toISOString().slice(0, 10)): void {
  for (const g of generated) g.recorded = day;
}

/** Generated lines as a manifest of their own, for a submitter to read and copy. */
export function printedManifest(id: string, generated: GeneratedLine[]): string {
  return `# KAT manifest for ${id}: ${new Set(generated.map((g) => g.label)).size} instance(s); see docs/evidence-format.md\n${generated.map(formatManifestLine).join('\n')}\n`;
}

/**
 * A line for an instance candidate.yml no longer has would make the campaign fail to load. `where`
 * names the evidence the line came from: its file, and the field an instance's line is.
 */
export function checkGeneratedLabels(
  generated: GeneratedLine[],
  candidate: { id: string; labels: readonly string[] },
  where: { file: string; field: (label: string) => string },
): void {
  const gone = generated.find((g) => !candidate.labels.includes(g.label));
  if (gone)
    throw new InputError(
      where.file,
      where.field(gone.label),
      `no instance is labelled '${gone.label}' in ${candidate.id}/candidate.yml any more (labels: ${candidate.labels.join(', ')}); its kat.sha256 line would name none`,
    );
}

/**
 * Generated lines recorded in a candidate's kat.sha256 (updateManifest), under the manifest's header
 * when the file has no line yet. `byFile`: a hash candidate, which has a line per generator file.
 */
export function recordGenerated(
  before: string,
  display: string,
  generated: GeneratedLine[],
  opts: { id: string; byFile: boolean; force: boolean },
): ManifestUpdate {
  return updateManifest(before, display, generated, {
    force: opts.force,
    header: `# KAT manifest for ${opts.id}; see docs/evidence-format.md`,
    byFile: opts.byFile,
  });
}

/**
 * The canonical KAT digest (docs/evidence-format.md): trailing CR/space/tab stripped, empty and `#` lines
 * dropped, `nolen` also drops `*_Len` lines, `records` keeps the first N records only; SHA-256
 * over each remaining line followed by "\n".
 */
export function canonicalDigest(text: string, mode: DigestMode, records?: number): string {
  const h = createHash('sha256');
  let seen = 0;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[\r \t]+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    if (RECORD_START.test(line) && records !== undefined && ++seen > records) break;
    if (mode === 'nolen') {
      const eq = line.indexOf(' =');
      if (eq >= 0 && line.slice(0, eq).trimEnd().endsWith('_Len')) continue;
    }
    h.update(`${line}\n`);
  }
  return h.digest('hex');
}

/** KAT_2_12's records when the generator runs whole: one per message length, 0..4096 bits. */
const KAT_2_12_RECORDS = 4097;

/** One file a hash instance's KAT run wrote: `kind` is its generator file (KAT_2_12, KAT_Loop, …). */
export interface HashKatText {
  kind: string;
  file: string;
  text: string;
}

/**
 * The kat.sha256 lines of a hash instance: one per generator file its run wrote (a hash KAT is
 * several files, each checked against its own line). KAT_Loop's `:N` is the loop cut the run used,
 * which its file (one message, one digest) cannot tell; `records` cuts KAT_2_12, and a KAT_2_12 the
 * run already cut keeps its count, since an uncut line would never match a run of that file again.
 */
export function hashManifestLines(
  label: string,
  files: HashKatText[],
  opts: { mode: DigestMode; records?: number; loopIterations?: number; where: string },
): GeneratedLine[] {
  return files.map(({ kind, file, text }) => {
    if (kind === 'KAT_Loop')
      return { sha256: canonicalDigest(text, opts.mode), mode: opts.mode, records: opts.loopIterations, label, file };
    if (kind !== 'KAT_2_12') return { sha256: canonicalDigest(text, opts.mode), mode: opts.mode, label, file };
    const available = countRecords(text);
    if (opts.records !== undefined && opts.records > available)
      throw new InputError(
        'command line',
        '--records',
        `${opts.records} exceeds the ${available} record(s) of ${file} in ${opts.where}; use --records ${available} or fewer`,
      );
    const records = opts.records ?? (available < KAT_2_12_RECORDS ? available : undefined);
    return { sha256: canonicalDigest(text, opts.mode, records), mode: opts.mode, records, label, file };
  });
}
