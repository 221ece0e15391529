import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CT_MAX_CALLS } from '../config/defaults.js';
import { CT_KINDS, CT_STATUSES } from '../ct/findingKinds.js';
import { evidencePaths, instanceKey } from './layout.js';
import type { BuildJson } from './fileTypes.js';

const findingSchema = z
  .object({
    kind: z.enum(CT_KINDS),
    function: z.string(),
    file: z.string(),
    line: z.number().int().min(0),
    count: z.number().int().min(1),
    suppressed: z.boolean(),
    reason: z.string(),
  })
  .passthrough();

/** The search for rarely taken paths (docs/method.md#rare-paths). */
const pathsSchema = z
  .object({
    asked: z.number().int().min(0).max(CT_MAX_CALLS),
    calls: z.number().int().min(1).max(CT_MAX_CALLS),
    needed: z.number().int().min(1).max(CT_MAX_CALLS),
    beyond: z.array(z.string()).optional(),
    beyond_lines: z.number().int().min(1).optional(),
  })
  .strict();

const operationSchema = z
  .object({
    status: z.enum(CT_STATUSES),
    calls: z.number().int().min(0),
    findings: z.array(findingSchema),
    reason: z.string().optional(),
    coverage: z.object({ paths: pathsSchema.optional() }).passthrough().optional(),
  })
  .passthrough();

/** Memcheck's slowdown measured on a build (src/campaign/ctPhase.ts measureSlowdown), or why it could not be. */
const slowdownSchema = z.union([
  z
    .object({ operation: z.string().min(1), factor: z.number().min(1), calls_s: z.number().positive(), native_s: z.number().positive() })
    .strict(),
  z.object({ failure: z.string().min(1) }).strict(),
]);

/** CONTRACT §8's file; fields it does not name are additions and pass. */
const ctEvidenceSchema = z
  .object({
    schema: z.literal(1),
    tool: z.string().min(1),
    library_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex'),
    operations: z.record(z.string(), operationSchema),
    slowdown: slowdownSchema.optional(),
    /** The other builds checked (docs/method.md#every-build): each named once, its operations as the measured build's. */
    builds: z
      .array(
        z
          .object({
            name: z.string().min(1),
            compiler: z.string(),
            variant: z.string(),
            operations: z.record(z.string(), operationSchema),
            slowdown: slowdownSchema.optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

/** The problems of one operation's counts: its status must be the one its findings give. */
function operationProblems(where: string, o: z.infer<typeof operationSchema>): string[] {
  const problems: string[] = [];
  const open = o.findings.filter((f) => !f.suppressed).length;
  if (o.status === 'skipped' || o.status === 'failed') {
    if (o.findings.length > 0) problems.push(`${where}: ${o.status} with ${o.findings.length} finding(s)`);
    if (!o.reason) problems.push(`${where}: ${o.status} without a reason`);
  } else {
    if (o.calls < 1) problems.push(`${where}: ${o.status} after ${o.calls} calls`);
    if (o.status === 'flagged' && open === 0) problems.push(`${where}: flagged, but every finding is suppressed`);
    if (o.status === 'clean' && open > 0) problems.push(`${where}: clean, but ${open} finding(s) are not suppressed`);
  }
  problems.push(...pathsProblems(where, o));
  const sites = new Set<string>();
  for (const [i, f] of o.findings.entries()) {
    const site = `${f.kind} ${f.function} ${f.file}:${f.line}`;
    if (sites.has(site)) problems.push(`${where}.findings[${i}]: ${site} listed twice (findings are one per site)`);
    sites.add(site);
    if (f.suppressed && f.reason.trim() === '') problems.push(`${where}.findings[${i}]: suppressed without a reason`);
    if (!f.suppressed && f.reason !== '') problems.push(`${where}.findings[${i}]: a reason, but not suppressed`);
  }
  return problems;
}

/** The path search's figures against each other and the calls the check made: lines beyond them exactly when it made fewer than needed. */
function pathsProblems(where: string, o: z.infer<typeof operationSchema>): string[] {
  const p = o.coverage?.paths;
  if (!p) return [];
  const problems: string[] = [];
  const at = `${where}.coverage.paths`;
  if (p.needed > p.calls) problems.push(`${at}: needed ${p.needed} calls, more than the ${p.calls} it ran`);
  if (p.calls > p.asked) problems.push(`${at}: ran ${p.calls} calls, more than the ${p.asked} asked`);
  if ((p.beyond_lines === undefined) !== (p.beyond === undefined)) problems.push(`${at}: beyond and beyond_lines go together`);
  if (o.status === 'clean' || o.status === 'flagged') {
    const fewer = o.calls < p.needed;
    if (fewer && p.beyond_lines === undefined)
      problems.push(`${at}: the check made ${o.calls} calls, fewer than the ${p.needed} needed, but no line beyond them is named`);
    if (!fewer && p.beyond_lines !== undefined)
      problems.push(`${at}: lines beyond the checked calls are named, but the check made the ${p.needed} calls needed`);
  }
  return problems;
}

/**
 * A build's slowdown against its operations: measured on one of them, the factor its two times give;
 * a failure skipped every operation with it as the reason.
 */
function slowdownProblems(
  where: string,
  s: z.infer<typeof slowdownSchema> | undefined,
  operations: Record<string, { status: string; reason?: string }>,
): string[] {
  if (!s) return [];
  if ('failure' in s) {
    const other = Object.entries(operations).filter(([, o]) => o.status !== 'skipped' || o.reason !== s.failure);
    return other.length > 0 ? [`${where}: a failure, but ${other.map(([op]) => op).join(', ')} not skipped with it as the reason`] : [];
  }
  const problems: string[] = [];
  if (!(s.operation in operations)) problems.push(`${where}.operation: ${s.operation} is not one of the file's operations`);
  const factor = Math.max(1, s.calls_s / s.native_s);
  if (Math.abs(s.factor - factor) > 1e-9 * factor) problems.push(`${where}.factor: ${s.factor}, but calls_s / native_s gives ${factor}`);
  return problems;
}

/**
 * Every `ct/<id>/<label>.json` (docs/evidence-format.md#constant-time-check): its schema, its
 * library against build.json's, and statuses consistent with the findings. One line per problem.
 */
export function validateCtFiles(systemDir: string, build: BuildJson): string[] {
  const dir = evidencePaths(systemDir).ctDir;
  if (!existsSync(dir)) return [];
  const problems: string[] = [];
  for (const id of readdirSync(dir, { withFileTypes: true })) {
    if (!id.isDirectory()) {
      problems.push(`ct/${id.name}: not a candidate folder`);
      continue;
    }
    for (const file of readdirSync(join(dir, id.name))) {
      const rel = `ct/${id.name}/${file}`;
      if (!file.endsWith('.json')) {
        problems.push(`${rel}: not a ct file (<label>.json)`);
        continue;
      }
      let parsed: ReturnType<typeof ctEvidenceSchema.safeParse>;
      try {
        parsed = ctEvidenceSchema.safeParse(JSON.parse(readFileSync(join(dir, id.name, file), 'utf8')));
      } catch (e) {
        problems.push(`${rel}: not JSON (${(e as Error).message})`);
        continue;
      }
      if (!parsed.success) {
        for (const issue of parsed.error.issues) problems.push(`${rel}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
        continue;
      }
      const ct = parsed.data;
      const key = instanceKey(id.name, file.slice(0, -'.json'.length));
      const entry = build.instances[key];
      if (!entry) problems.push(`${rel}: no build.json entry for ${key}`);
      else if (entry.library_sha256 !== ct.library_sha256)
        problems.push(
          `${rel}: library_sha256 ${ct.library_sha256.slice(0, 12)}… differs from build.json's ${(entry.library_sha256 ?? 'none').slice(0, 12)}…`,
        );
      for (const [op, o] of Object.entries(ct.operations)) problems.push(...operationProblems(`${rel}: operations.${op}`, o));
      problems.push(...slowdownProblems(`${rel}: slowdown`, ct.slowdown, ct.operations));
      const names = new Set<string>();
      for (const [i, b] of (ct.builds ?? []).entries()) {
        if (names.has(b.name)) problems.push(`${rel}: builds[${i}]: ${b.name} listed twice`);
        names.add(b.name);
        for (const [op, o] of Object.entries(b.operations)) problems.push(...operationProblems(`${rel}: builds[${i}].operations.${op}`, o));
        problems.push(...slowdownProblems(`${rel}: builds[${i}].slowdown`, b.slowdown, b.operations));
      }
    }
  }
  return problems;
}
