import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { InputError } from '../errors.js';

export type DigestMode = 'strict' | 'nolen';

export interface ManifestEntry {
  sha256: string;
  mode: DigestMode;
  /** Digest only the first N records (and generate N). */
  records?: number;
  label: string;
  file: string;
  line: number;
}

const LINE = /^([0-9a-fA-F]{64})\s+(strict|nolen)(?::([1-9][0-9]*))?\s+([A-Za-z0-9_-]+)\/(\S+)$/;

/** Parses kat.sha256; a missing file is an empty manifest (every instance is NOKAT). */
export function readManifest(path: string, display = path): ManifestEntry[] {
  if (!existsSync(path)) return [];
  return parseManifest(readFileSync(path, 'utf8'), display);
}

export function parseManifest(text: string, display: string): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m)
      throw new InputError(display, `line ${i + 1}`, `expected '<sha256 hex> <strict|nolen>[:N] <label>/<file>', got '${line.slice(0, 80)}'`);
    entries.push({
      sha256: m[1]!.toLowerCase(),
      mode: m[2] as DigestMode,
      records: m[3] ? Number(m[3]) : undefined,
      label: m[4]!,
      file: m[5]!,
      line: i + 1,
    });
  });
  return entries;
}

export function formatManifestLine(e: Pick<ManifestEntry, 'sha256' | 'mode' | 'records' | 'label' | 'file'>): string {
  return `${e.sha256} ${e.mode}${e.records ? `:${e.records}` : ''} ${e.label}/${e.file}`;
}

const RECORD_START = /^(Count|count) =/;

/**
 * The canonical KAT digest (CONTRACT §4): trailing CR/space/tab stripped, empty and `#` lines
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
