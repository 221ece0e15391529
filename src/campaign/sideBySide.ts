import type { CandidateType, OperationRequest } from '../measure/operation.js';
import type { InstanceContext, RunContext } from './context.js';

/**
 * An instance's operations on several timing cores at once (ngcc-perf.yml `side_by_side`,
 * docs/campaign.md#side-by-side-timing): which operations must stay together on one core, and the
 * requests of those that move to another.
 */

/**
 * The parts that may go to cores of their own: each operation alone, except a key exchange's, whose
 * steps are timed inside the same exchanges and add up to one (measure/kexOperations.ts).
 */
function timedTogether(type: CandidateType, todo: readonly OperationRequest[]): OperationRequest[][] {
  return type === 'kex' ? [[...todo]] : todo.map((r) => [r]);
}

/** The requests as the run pinned to another core makes them: its core, its counter's rate, its canaries. */
async function pinnedRequests(reqs: readonly OperationRequest[], pinned: RunContext): Promise<OperationRequest[]> {
  const counterHz = await pinned.counterRate?.(pinned);
  const canary = pinned.canary?.(pinned);
  return reqs.map((r) => ({ ...r, cpu: pinned.plan.cpu, counterHz, ...(canary ? { canary } : {}) }));
}

/**
 * Measures `todo` with `measure`: on the stage's own core as one bundle, or, when the scheduler offers
 * cores beside it (InstanceContext.sideBySide), in bundles of whole parts at once. Every bundle's
 * calibration, plan and trials stay on its core. The summary's rows stay in the operations' order.
 */
export async function measuredSideBySide(
  ctx: InstanceContext,
  type: CandidateType,
  todo: readonly OperationRequest[],
  measure: (reqs: OperationRequest[], pinned: RunContext) => Promise<void>,
): Promise<void> {
  const parts = timedTogether(type, todo);
  if (!ctx.sideBySide || parts.length < 2) return measure([...todo], ctx.run);
  const from = ctx.summary.operations.length;
  await ctx.sideBySide(parts, async (bundle, pinned) => measure(await pinnedRequests(bundle.flat(), pinned), pinned));
  const at = (operation: string) => todo.findIndex((r) => r.operation === operation);
  const rows = ctx.summary.operations.splice(from);
  ctx.summary.operations.push(...rows.sort((a, b) => at(a.operation) - at(b.operation)));
}
