import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flagsFor } from '../compile/compile.js';
import { planCtOperation } from '../ct/budget.js';
import { buildCt } from '../ct/build.js';
import { divisionSites, withDivisions } from '../ct/division.js';
import { runCtOperation } from '../ct/run.js';
import { errorMessage } from '../errors.js';
import { applySuppressions, CT_SUPPRESSIONS_FILE, loadCtSuppressions, type CtSuppression } from '../ct/suppressions.js';
import { ctDriver } from '../ct/tools.js';
import { statusOf, type CtEvidence, type CtOperation } from '../ct/types.js';
import type { TimingRecord } from '../evidence/types.js';
import { operationsOf } from '../measure/operation.js';
import { readJsonIfExists, sha256Hex, writeJsonAtomic } from '../util/fsx.js';
import { buildRequest, katShown, libraryReplaced, preparedEntry, type InstanceContext, type PhaseStep } from './context.js';
import { ctSuppressionsShown } from './plan.js';
import { readPrevious } from './previous.js';

/** The tool named in every ct file: what produced the findings. */
export const CT_TOOL = 'valgrind-memcheck';

/**
 * The constant-time check of an instance (docs/method.md#constant-time-check): the library relinked
 * with -g and its generators' output marked secret, each operation run a few times under memcheck,
 * the findings placed at their first frame in the library, suppressed where ct-suppressions.yml
 * says why the data is public. One file per instance, `ct/<id>/<label>.json`. A file of the same
 * library, calls and operations is kept: only its suppressions are applied again.
 */
export const ct: PhaseStep = {
  name: 'ct',
  phase: 'ct',
  ticks: () => 1,
  async run(ctx) {
    const entry = preparedEntry(ctx, 'ct');
    const { plan } = ctx.run;
    const { candidate, instance } = ctx.unit;
    const path = plan.paths.ct(candidate.id, instance.label);
    if (!entry.library || entry.kat === 'BUILDFAIL' || !entry.library_sha256) {
      ctx.tick(`ct: not run (${katShown(entry.kat)})`);
      return;
    }
    const replaced = libraryReplaced(ctx.run, entry);
    if (replaced) {
      ctx.tick(`ct: not run (${replaced})`);
      return;
    }
    // Checked by planRun before anything ran: read again here, the file is the candidate's.
    const suppressions = loadCtSuppressions(candidate.folder, ctSuppressionsShown(candidate.id));
    const suppressionsFile = join(candidate.folder, CT_SUPPRESSIONS_FILE);
    const suppressionsSha = existsSync(suppressionsFile) ? sha256Hex(readFileSync(suppressionsFile)) : undefined;
    const operations = operationsOf(candidate.type, entry.sizes?.kex_passes);
    const { calls } = plan.settings.ct;
    const previous = readPrevious<CtEvidence>(path, plan.force);
    // Another driver or wrapper (a new harness version) marks secrets anew: its results are redone.
    const reusable =
      previous?.library_sha256 === entry.library_sha256 &&
      previous.harness_version === ctx.run.tools.version &&
      operations.every((op) => {
        const o = previous.operations[op];
        return o !== undefined && (o.status === 'skipped' || (o.status !== 'failed' && o.calls === calls));
      });
    const results: Record<string, CtOperation> = {};
    let head: Omit<CtEvidence, 'operations'>;
    if (reusable) {
      const { operations: old, ...rest } = previous;
      head = rest;
      for (const op of operations) results[op] = old[op]!;
    } else {
      head = {
        schema: 1,
        tool: CT_TOOL,
        library_sha256: entry.library_sha256,
        candidate: candidate.id,
        label: instance.label,
        harness_version: ctx.run.tools.version,
      };
      if (candidate.type === 'hash') {
        for (const op of operations)
          results[op] = { status: 'skipped', calls: 0, findings: [], reason: 'a hash has no secret input: nothing to mark secret' };
      } else {
        await checkOperations(ctx, operations, results, (more) => {
          head = { ...head, ...more };
        });
      }
    }
    for (const op of operations) results[op] = suppressed(results[op]!, suppressions, op);
    const { suppressions_sha256: _, division_sites: sites, divisions: __, ...base } = head;
    const checked: CtEvidence = { ...base, ...(suppressionsSha ? { suppressions_sha256: suppressionsSha } : {}), operations: results };
    // After the suppressions: only an unsuppressed finding shows a division's operands tainted.
    const evidence = sites ? { ...withDivisions(checked, sites), division_sites: sites } : checked;
    writeJsonAtomic(path, evidence);
    const each = operations.map((op) => shown(results[op]!));
    const line =
      new Set(each).size === 1 && each.length > 1
        ? `all ${each.length} operations ${each[0]}`
        : operations.map((op, i) => `${op} ${each[i]}`).join(', ');
    ctx.tick(`ct ${line}${reusable ? ' (kept)' : ''}`);
  },
};

/** How an operation's result reads in the progress line. */
function shown(o: CtOperation): string {
  if (o.status === 'flagged' || o.status === 'clean') {
    const open = o.findings.filter((f) => !f.suppressed).length;
    const quiet = o.findings.length - open;
    return `${o.status}${open > 0 ? ` (${open} site${open === 1 ? '' : 's'})` : ''}${quiet > 0 ? ` (${quiet} suppressed)` : ''}`;
  }
  return `${o.status}${o.reason ? ` (${o.reason})` : ''}`;
}

/** The operation's findings with the candidate's suppressions, and the status they give. */
function suppressed(o: CtOperation, suppressions: readonly CtSuppression[], operation: string): CtOperation {
  if (o.status === 'skipped' || o.status === 'failed') return o;
  const findings = applySuppressions(o.findings, suppressions, operation);
  return { ...o, findings, status: statusOf(findings) };
}

async function checkOperations(
  ctx: InstanceContext,
  operations: readonly string[],
  results: Record<string, CtOperation>,
  note: (head: Partial<CtEvidence>) => void,
): Promise<void> {
  const { run, unit } = ctx;
  const { plan } = run;
  const entry = preparedEntry(ctx, 'ct');
  const { id } = unit.candidate;
  const { label } = unit.instance;
  const request = buildRequest(run, unit, entry.flags);
  const built = await buildCt(request, flagsFor(request));
  note({ flags: built.flags, secret_generators: built.wrapped });
  if (!built.ok) {
    for (const op of operations)
      results[op] = {
        status: 'failed',
        calls: 0,
        findings: [],
        reason: 'the ct build (-g, -fno-lto, generator wrappers) failed: see its build.log',
      };
    return;
  }
  if (built.librarySha256) note({ ct_library_sha256: built.librarySha256 });
  // Division instructions the API reaches, from the -g build (file and line): held against
  // memcheck's findings below (withDivisions). A finder that cannot run leaves them out, said so.
  const sites = await divisionSites(built.library, { sandbox: plan.sandbox }).catch((e: unknown) => {
    note({ divisions_failure: errorMessage(e) });
    return undefined;
  });
  if (sites) note({ division_sites: sites });
  const driver = await ctDriver(run.tools);
  const { ct } = plan.settings;
  for (const operation of operations) {
    const record = readJsonIfExists<TimingRecord>(plan.paths.record(id, label, operation));
    const perCall = typeof record?.mean_seconds === 'number' ? record.mean_seconds : undefined;
    const decision = planCtOperation(perCall, {
      calls: ct.calls,
      valgrindFactor: ct.valgrind_factor,
      startupSeconds: ct.startup_s,
      opBudgetSeconds: ct.op_budget_s,
    });
    if (!decision.run) {
      results[operation] = { status: 'skipped', calls: 0, findings: [], reason: decision.reason };
      continue;
    }
    results[operation] = await runCtOperation({
      driver,
      library: built.library,
      type: unit.candidate.type,
      operation,
      calls: ct.calls,
      rng: unit.candidate.katRng,
      timeoutMs: plan.settings.planning.process_timeout_s * 1000,
      sandbox: plan.sandbox,
    });
  }
}
