import { existsSync } from 'node:fs';
import { InputError } from '../errors.js';
import { readUtf8File } from './textFile.js';

/**
 * The kat.sha256 file format (docs/evidence-format.md), read beside candidate.yml so that a campaign is
 * checked whole when it loads; computing and updating digests is the KAT code's (kat/manifest.ts).
 */
export type DigestMode = 'strict' | 'nolen';

export interface ManifestEntry {
  sha256: string;
  mode: DigestMode;
  /** Digest only the first N records (and generate N). */
  records?: number;
  label: string;
  file: string;
  line: number;
  /**
   * The day `kat-manifest` recorded the digest from this harness's own KAT output (YYYY-MM-DD), when
   * the line says so (`# recorded by the harness on …`): no submitted vectors stand behind it.
   */
  recorded?: string;
}

/**
 * The most records a `:N` may ask for: ten times the NIST generator's 100. The KAT driver writes
 * every record it is asked for, so an unbounded N is a way to fill the disk or the KAT timeout.
 */
const MAX_KAT_RECORDS = 1000;

const LINE = /^([0-9a-fA-F]{64})\s+(strict|nolen)(?::([1-9][0-9]*))?\s+([A-Za-z0-9_-]+)\/(\S+)(?:\s+#\s*(.*))?$/;
const RECORDED = /^recorded by the harness on (\d{4}-\d\d-\d\d)\b/;
/** The mark `kat-manifest` puts after a line it recorded from the harness's own output. */
const recordedMark = (day: string): string => `# recorded by the harness on ${day}`;

/** Parses kat.sha256; a missing file is an empty manifest (every instance is NOKAT). */
export function readManifest(path: string, display = path): ManifestEntry[] {
  if (!existsSync(path)) return [];
  return parseManifest(readUtf8File(path, display), display);
}

/**
 * Parses kat.sha256 text. Two lines for one file, mode and record count with different digests
 * can never both pass: an error naming both lines (an exact repeat is accepted).
 */
export function parseManifest(text: string, display: string): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  const seen = new Map<string, ManifestEntry>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m)
      throw new InputError(
        display,
        `line ${i + 1}`,
        `expected '<sha256 hex> <strict|nolen>[:N] <label>/<file>' (then an optional '# comment'), got '${line.slice(0, 80)}'`,
      );
    if (m[3] && Number(m[3]) > MAX_KAT_RECORDS)
      throw new InputError(display, `line ${i + 1}`, `:${m[3]} asks for more than ${MAX_KAT_RECORDS} records`);
    const entry: ManifestEntry = {
      sha256: m[1]!.toLowerCase(),
      mode: m[2] as DigestMode,
      records: m[3] ? Number(m[3]) : undefined,
      label: m[4]!,
      file: m[5]!,
      line: i + 1,
      ...(RECORDED.test(m[6] ?? '') ? { recorded: RECORDED.exec(m[6]!)![1]! } : {}),
    };
    const key = `${entry.label}/${entry.file} ${modeText(entry)}`;
    const earlier = seen.get(key);
    if (earlier && earlier.sha256 !== entry.sha256)
      throw new InputError(
        display,
        `line ${entry.line}`,
        `conflicts with line ${earlier.line}: two different ${modeText(entry)} digests for ${entry.label}/${entry.file}`,
      );
    seen.set(key, earlier ?? entry);
    entries.push(entry);
  });
  return entries;
}

/**
 * A line for a label the candidate does not have checks nothing: a typo, or an instance renamed
 * in candidate.yml but not here, whose real line is then missing (NOKAT) without a word.
 */
export function checkManifestLabels(entries: ManifestEntry[], labels: readonly string[], display: string): void {
  const unknown = entries.find((e) => !labels.includes(e.label));
  if (unknown)
    throw new InputError(
      display,
      `line ${unknown.line}`,
      `no instance is labelled '${unknown.label}' in candidate.yml (labels: ${labels.join(', ')})`,
    );
}

const modeText = (e: Pick<ManifestEntry, 'mode' | 'records'>) => `${e.mode}${e.records ? `:${e.records}` : ''}`;

export function formatManifestLine(e: Pick<ManifestEntry, 'sha256' | 'mode' | 'records' | 'label' | 'file' | 'recorded'>): string {
  return `${e.sha256} ${modeText(e)} ${e.label}/${e.file}${e.recorded ? `  ${recordedMark(e.recorded)}` : ''}`;
}
