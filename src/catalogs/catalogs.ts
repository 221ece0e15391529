import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CANDIDATE_ID, type CampaignSettings } from '../config/schemas.js';
import { InputError } from '../errors.js';

/** The size catalog's name when ngcc-perf.yml does not choose one (a campaign may have none). */
const DEFAULT_EXTERNAL_SIZES = 'external_sizes.csv';

/**
 * Where the size catalog is. A name other than the default was chosen in ngcc-perf.yml, so its
 * absence is a mistake (a typo would otherwise silently empty the size audit).
 */
export function externalSizesPath(campaignRoot: string, configured: string): string {
  const path = resolve(campaignRoot, configured);
  if (configured !== DEFAULT_EXTERNAL_SIZES && !existsSync(path)) {
    const yml = join(campaignRoot, 'ngcc-perf.yml');
    throw new InputError(
      relative(process.cwd(), yml) || yml,
      'catalogs.external_sizes',
      `'${configured}' does not exist (looked for ${relative(process.cwd(), path) || path})`,
    );
  }
  return path;
}

/** A `;`-separated catalog with `#` comments and a header line (the harness's CSV dialect). */
interface CsvRow {
  fields: Record<string, string>;
  line: number;
}

function readSemicolonCsv(path: string, columns: string[]): CsvRow[] {
  if (!existsSync(path)) return [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(path, '', code === 'EISDIR' ? 'a folder, not a catalog file' : `cannot read the catalog (${code ?? String(e)})`);
  }
  const rows: CsvRow[] = [];
  let header: string[] | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '' || line.startsWith('#')) return;
    const fields = line.split(';');
    if (!header) {
      header = fields.map((f) => f.trim());
      const missing = columns.filter((c) => !header!.includes(c));
      if (missing.length > 0)
        throw new InputError(path, `line ${i + 1}`, `missing column(s) ${missing.join(', ')} (expected ${columns.join(';')})`);
      return;
    }
    if (fields.length < header.length)
      throw new InputError(path, `line ${i + 1}`, `expected ${header.length} fields separated by ';', found ${fields.length}`);
    const rec = Object.fromEntries(header.map((h, j) => [h, (fields[j] ?? '').trim()])) as Record<string, string>;
    // The last column may contain ';' in free text (Cause, Notes): keep the rest of the line.
    if (fields.length > header.length)
      rec[header[header.length - 1]!] = fields
        .slice(header.length - 1)
        .join(';')
        .trim();
    rows.push({ fields: rec, line: i + 1 });
  });
  return rows;
}

export interface KatIssue {
  id: string;
  label: RegExp;
  action: string;
  cause: string;
}

export function readKatIssues(path: string): KatIssue[] {
  return readSemicolonCsv(path, ['ID', 'Label', 'Action', 'Cause']).map(({ fields: f, line }) => {
    let label: RegExp;
    try {
      label = new RegExp(f.Label!);
    } catch {
      throw new InputError(path, `line ${line}`, `Label is not a regular expression: '${f.Label}'`);
    }
    return { id: f.ID!, label, action: f.Action!, cause: f.Cause! };
  });
}

export interface SurveyVerdict {
  id: string;
  verdict: string;
  notes: string;
  line: number;
}

const SURVEY_VERDICTS = ['ICCS-only', 'bypass', 'mixed', 'instance-dependent'] as const;

/** symmetric_survey.csv: one curated verdict per candidate, spelled as on the pages (any case accepted). */
export function readSurvey(path: string): SurveyVerdict[] {
  const seen = new Map<string, number>();
  return readSemicolonCsv(path, ['ID', 'Verdict', 'Notes']).map(({ fields: f, line }) => {
    const id = f.ID!;
    if (!CANDIDATE_ID.test(id)) throw new InputError(path, `line ${line}`, `ID: '${id}' is not a candidate id (like kem-7 or sign-12)`);
    if (seen.has(id)) throw new InputError(path, `line ${line}`, `ID: ${id} already has a verdict on line ${seen.get(id)}`);
    seen.set(id, line);
    const verdict = SURVEY_VERDICTS.find((v) => v.toLowerCase() === f.Verdict!.toLowerCase());
    if (!verdict) throw new InputError(path, `line ${line}`, `Verdict: '${f.Verdict}' is not one of ${SURVEY_VERDICTS.join(', ')}`);
    return { id, verdict, notes: f.Notes!, line };
  });
}

export interface CatalogSize {
  id: string;
  instance: string;
  pk?: number;
  ct?: number;
  sig?: number;
  basis: string;
  line: number;
}

function readExternalSizes(path: string): CatalogSize[] {
  const num = (v: string | undefined, field: string, line: number) => {
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InputError(path, `line ${line}`, `${field}: expected a byte count, got '${v}'`);
    return n;
  };
  return readSemicolonCsv(path, ['ID', 'Instance', 'PublicKeyBytes', 'CiphertextBytes', 'SignatureBytes', 'Basis']).map(
    ({ fields: f, line }) => {
      if (!['encoded', 'maximum-variable', 'nominal-variable'].includes(f.Basis!))
        throw new InputError(path, `line ${line}`, `Basis: expected encoded, maximum-variable or nominal-variable, got '${f.Basis}'`);
      return {
        id: f.ID!,
        instance: f.Instance!,
        pk: num(f.PublicKeyBytes, 'PublicKeyBytes', line),
        ct: num(f.CiphertextBytes, 'CiphertextBytes', line),
        sig: num(f.SignatureBytes, 'SignatureBytes', line),
        basis: f.Basis!,
        line,
      };
    },
  );
}

/** The campaign's size catalog, under the name ngcc-perf.yml gives it (none: an empty catalog). */
export function readSizeCatalog(campaign: { root: string; settings: CampaignSettings }): CatalogSize[] {
  return readExternalSizes(externalSizesPath(campaign.root, campaign.settings.catalogs.external_sizes));
}
