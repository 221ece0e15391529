import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { loadYaml } from '../config/yamlFile.js';
import { CT_KINDS, type CtFinding } from './findingKinds.js';

/** The per-candidate file of known-public sites (docs/evidence-format.md#ct-suppressionsyml). */
export const CT_SUPPRESSIONS_FILE = 'ct-suppressions.yml';

const suppressionSchema = z
  .object({
    /** The function the finding is placed in (its first frame inside the library). */
    function: z.string().min(1).optional(),
    /** `file` or `file:line`, as the finding names them. */
    file: z
      .string()
      .regex(/^[^:\s]+(:[0-9]+)?$/, 'a file name, or file:line')
      .optional(),
    /** Omitted: every kind at the site. */
    kind: z.enum(CT_KINDS).optional(),
    /** Omitted: every operation. */
    operations: z.array(z.string().min(1)).min(1).optional(),
    /** Why the data at the site is public (or the leak harmless): required, and shown with the finding. */
    reason: z.string().trim().min(1, 'a reason is required: say why the data at this site is public'),
  })
  .strict()
  .refine((s) => s.function !== undefined || s.file !== undefined, { message: 'name a function or a file:line', path: ['function'] });

const ctSuppressionsSchema = z.object({ suppressions: z.array(suppressionSchema).default([]) }).strict();

export type CtSuppression = z.infer<typeof suppressionSchema>;

/** A candidate's suppressions; none without the file. Errors name the file, the line and the field. */
export function loadCtSuppressions(candidateFolder: string, shownAs = CT_SUPPRESSIONS_FILE): CtSuppression[] {
  const file = join(candidateFolder, CT_SUPPRESSIONS_FILE);
  if (!existsSync(file)) return [];
  return loadYaml(file, ctSuppressionsSchema, shownAs).suppressions;
}

/**
 * A function's name without the suffixes GCC gives the copies it specialises (`rej_eta.constprop.0`,
 * `f.isra.0`, `f.part.1`, `f.cold`): a suppression names the function of the source, whatever the
 * compiler version made of it.
 */
export const sourceFunction = (name: string): string => name.replace(/(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$/, '');

function matches(s: CtSuppression, f: CtFinding, operation: string): boolean {
  if (s.kind !== undefined && s.kind !== f.kind) return false;
  if (s.operations !== undefined && !s.operations.includes(operation)) return false;
  if (s.function !== undefined && s.function !== f.function && s.function !== sourceFunction(f.function)) return false;
  if (s.file !== undefined) {
    const [file, line] = s.file.split(':');
    if (file !== f.file || (line !== undefined && Number(line) !== f.line)) return false;
  }
  return true;
}

/** The findings with `suppressed` and `reason` set from the first suppression that matches each (any earlier marks are replaced). */
export function applySuppressions(findings: readonly CtFinding[], suppressions: readonly CtSuppression[], operation: string): CtFinding[] {
  return findings.map((f) => {
    const s = suppressions.find((x) => matches(x, f, operation));
    return { ...f, suppressed: s !== undefined, reason: s?.reason ?? '' };
  });
}
