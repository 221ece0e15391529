import { existsSync, rmSync } from 'node:fs';
import type { EvidencePaths } from '../evidence/layout.js';
import type { BuildEntry } from '../evidence/fileTypes.js';
import { measurable } from '../kat/status.js';
import { operationsOf } from '../measure/operation.js';
import { KEX_MAX_PASSES } from '../measure/kexOperations.js';
import { katShown, preparedEntry, type PhaseStep } from './context.js';
import type { Unit } from './runPlan.js';
import { readPrevious } from './previous.js';

/**
 * Timing, profile, memory and survey files that no longer describe this instance's library: built
 * from another library (the sources changed), or left from before a build failure or a KAT that now
 * fails. Kept, they would sit on the pages beside the new status and compare as this code's numbers.
 * The previous versions stay in the data branch's history. Returns how many were removed.
 */
function dropStaleEvidence(unit: Unit, entry: BuildEntry, paths: EvidencePaths, force: boolean): number {
  const { id } = unit.candidate;
  const { label } = unit.instance;
  const notMeasured = !entry.library || (entry.kat !== undefined && !measurable(entry.kat));
  // A survey describes any built library, measured or not; the rest exist only for measured ones.
  const files = [
    // Every pass a key exchange may have: the previous library may have had more passes than this one.
    ...operationsOf(unit.candidate.type, KEX_MAX_PASSES)
      .flatMap((op) => [paths.record(id, label, op), paths.profile(id, label, op), paths.memory(id, label, op)])
      .map((file) => ({ file, measuredOnly: true })),
    { file: paths.survey(id, label), measuredOnly: false },
    { file: paths.ct(id, label), measuredOnly: false },
  ];
  let dropped = 0;
  for (const { file, measuredOnly } of files) {
    if (!existsSync(file)) continue;
    const previous = readPrevious<{ library_sha256?: string }>(file, force);
    const otherLibrary = previous?.library_sha256 !== undefined && previous.library_sha256 !== entry.library_sha256;
    if (otherLibrary || !entry.library || (measuredOnly && notMeasured)) {
      rmSync(file, { force: true });
      dropped++;
    }
  }
  return dropped;
}

/**
 * Removes the evidence of a previous library, then prints the instance's status line: its KAT
 * status and what was removed (the line that ends the instance's preparation).
 */
export const stale: PhaseStep = {
  name: 'stale',
  ticks: () => 1,
  expect: () => ({ seconds: 0, source: 'plan' }),
  async run(ctx) {
    const entry = preparedEntry(ctx, 'stale');
    const dropped = dropStaleEvidence(ctx.unit, entry, ctx.run.plan.paths, ctx.run.plan.force);
    ctx.tick(
      `${katShown(entry.kat)}${entry.kat_detail ? ` (${entry.kat_detail})` : ''}${dropped > 0 ? `; removed ${dropped} evidence file(s) of a previous library` : ''}`,
    );
    // A sweep that removed nothing did no work: its time is no figure for the next plan.
    return dropped > 0 ? undefined : 'kept';
  },
};
