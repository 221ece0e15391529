import { z } from 'zod';

/**
 * The shape every reader of evidence relies on, checked as a file is read (evidence/dataset.ts): a
 * file of another shape (a record that is `null`, a build.json without `instances`) is unreadable,
 * named with the field at fault, never a TypeError deep inside report or compare. Only what the
 * readers index is required; every other field passes through, as the ngcc-harness's do.
 */

const object = z.looseObject({});

/** campaign.json, a survey: an object, whatever its fields. */
export const objectShape = object;

/** The fields of a build.json entry that readers compare or print, where present. */
const buildEntryShape = z.looseObject({
  candidate: z.string().optional(),
  label: z.string().optional(),
  kat: z.string().optional(),
  kat_detail: z.string().optional(),
  flags: z.string().optional(),
  library_sha256: z.string().optional(),
  build_key: z.string().optional(),
  kat_log: z.string().optional(),
  forged: object.optional(),
  security: object.optional(),
});

export const buildShape = z.looseObject({
  instances: z.record(z.string(), buildEntryShape),
});

const trialShape = z.looseObject({
  measurements: z.number(),
  seconds: z.number(),
  cycles: z.number(),
});

export const recordShape = z.looseObject({
  candidate: z.string(),
  label: z.string(),
  operation: z.string(),
  status: z.string(),
  trials: z.array(trialShape).optional(),
});

export const profileShape = z.looseObject({
  candidate: z.string(),
  label: z.string(),
  operation: z.string(),
  status: z.string(),
});

/** A file's first problem of shape, as "<field>: <what is wrong>", or undefined when it has the shape. */
export function shapeProblem(schema: z.ZodType, value: unknown): string | undefined {
  const result = schema.safeParse(value);
  if (result.success) return undefined;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  return `${where}${issue.message.replace(/^Invalid input: /, '')}`;
}
