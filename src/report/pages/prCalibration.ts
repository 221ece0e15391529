import { type Calibration, rowMdePct } from '../../evidence/calibration.js';
import { CALIBRATION_FILE } from '../../evidence/layout.js';
import { plural, formatDetectable, formatShare, MISSING } from '../../text/format.js';
import { code, heading, para, table, type Cell } from '../../text/md.js';
import type { ReportModel } from '../views.js';

/** How each repeat judged a row: '3× unchanged', '2× unchanged, 1× inconclusive'. */
function verdictCounts(verdicts: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of verdicts) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n}× ${v}`).join(', ');
}

function calibrated(c: Calibration): Cell[][] {
  return c.rows.map((r) => {
    const mde = rowMdePct(r);
    const alarm = r.verdicts.some((v) => v === 'regression' || v === 'improvement');
    return [
      code(r.row),
      `${alarm ? '⚠ ' : ''}${verdictCounts(r.verdicts)}`,
      r.pairs.join(', '),
      mde === undefined ? 'too few pairs' : `${formatDetectable(mde)}${mde > c.threshold_pct ? ' (above the threshold)' : ''}`,
    ];
  });
}

/**
 * The method page's account of the pull-request check on this system: how often it called a change
 * in code that did not change, and the smallest change it can call, from calibration.json
 * (`ngcc-perf calibrate`); or how to measure them, where nobody has.
 */
export function prCheckSection(model: ReportModel) {
  const c = model.calibration;
  const title = heading(2, 'Pull-request check on this system');
  const unreadable = model.unreadable.find((u) => u.path === CALIBRATION_FILE);
  if (!c && unreadable)
    return [title, para(code(CALIBRATION_FILE), ` could not be read (${unreadable.problem}): its figures are not shown.`)];
  if (!c)
    return [
      title,
      para(
        'Not calibrated on this system: its false-alarm rate and the smallest change it can call are not known here. ',
        code(`ngcc-perf calibrate CAMPAIGN_DIR --system ${model.system} --out DATA_DIR`),
        ' measures both: the campaign paired against itself, judged as a pull request is.',
      ),
    ];
  const mde = c.mde_pct;
  return [
    title,
    para(
      `The campaign measured paired against itself ${plural(c.repeats, 'time')} (unchanged code on both sides, ${c.rounds} trial pairs, then ${c.extra_rounds} more for each row left undecided; `,
      code('ngcc-perf calibrate'),
      `, ${c.started_utc.slice(0, 10)}, harness ${c.harness_version}, ${c.cpus.length === 1 ? 'core' : 'cores'} ${c.cpus.join(', ')}), judged by the pull-request rule (threshold ${c.threshold_pct} %, significance ${c.alpha}).`,
    ),
    para(
      `False alarms: ${c.false_alarms} of ${plural(c.comparisons, 'comparison')} called a regression or an improvement (${formatShare(c.comparisons > 0 ? c.false_alarms / c.comparisons : Number.NaN)}; at most ${formatShare(c.false_alarm_upper_95)} at 95 % confidence, counting every comparison as independent, which rows of one run, sharing the machine's state, are not quite); ${c.undecided} still inconclusive or noisy after the extra rounds.`,
    ),
    para(
      mde
        ? `Smallest change a row's pairs could call (80 % power), over every row of every repeat: median ${formatDetectable(mde.median)}, 90 % within ${formatDetectable(mde.p90)}, the largest ${formatDetectable(mde.max)}. A change below the threshold of ${c.threshold_pct} % is never called, however many pairs.`
        : 'Smallest change a row could call: no row had pairs enough to say.',
    ),
    table(['operation', 'A/A verdicts', 'trial pairs', 'smallest change it could call'], calibrated(c), [
      MISSING,
      MISSING,
      MISSING,
      MISSING,
    ]),
  ];
}
