import type { Root } from 'mdast';
import { counterRate, environmentRows } from '../environment.js';
import { precisionOf, type AdaptiveRule, type CallRule } from '../../measure/precision.js';
import { formatPrecision } from '../../text/format.js';
import { code, heading, link, para, sectionsPage, table, text, type Cell, type Section } from '../../text/md.js';
import type { ReportModel } from '../views.js';
import { allInstances, provenanceOf } from './cells.js';
import { ctMethodSection } from './ctSection.js';
import { kexStepSums } from './kexTables.js';
import { prCheckSection } from './prCalibration.js';

/** How one system's numbers were taken: planning, host state, counter, flags, limits. */
type MethodSection = Section<[ReportModel]>;

function kv(obj: unknown): Cell[][] {
  if (!obj || typeof obj !== 'object') return [];
  return Object.entries(obj as Record<string, unknown>).map(([k, v]) => [
    code(k),
    v === null || v === undefined ? 'not recorded' : typeof v === 'object' ? JSON.stringify(v) : String(v),
  ]);
}

const title: MethodSection = (model) => [
  heading(1, `Method — system ${model.system}`),
  para(link(`summary_${model.system}.md`, `Performance ${model.system}`), ' › method'),
];

const planning: MethodSection = (model) => [
  heading(2, 'Planning'),
  para(
    'Each operation is calibrated with one call; iterations per trial fill the trial target, at least the guide minimum of calls are timed where the per-operation budget allows, and every trial runs in a fresh process pinned to one core after warm-up calls.',
  ),
  para(planUsed(model)),
  table(
    ['setting', 'value'],
    kv(Object.fromEntries(Object.entries((model.campaign.planning ?? {}) as Record<string, unknown>).filter(([k]) => k !== 'adaptive'))),
  ),
];

/**
 * Which plan the records followed: the guide's fixed trials × target, or the adaptive rule with its
 * target and limits (planning.adaptive), and how many operations each took.
 */
function planUsed(model: ReportModel): string {
  const p = (model.campaign.planning ?? {}) as { trials?: number; trial_target_s?: number; adaptive?: Record<string, unknown> };
  const a = p.adaptive as
    | { enabled?: boolean; ci_target?: number; min_trials?: number; max_trials?: number; trial_target_s?: number }
    | undefined;
  const modes = provenanceOf(allInstances(model)).records.map((r) =>
    precisionOf(r.trials ?? [], r.plan as { adaptive?: AdaptiveRule; calls?: CallRule }),
  );
  const adaptive = modes.filter((m) => m.mode === 'adaptive');
  const inCalls = modes.filter((m) => m.mode === 'calls');
  // Slow operations, one call a trial (measure/plan.ts planCalls), whichever plan the rest followed.
  const calls =
    inCalls.length === 0
      ? ''
      : ` ${inCalls.length} of ${modes.length} timed operations planned in calls, their call being slow; ${inCalls.filter((m) => m.met).length} of them met the target.`;
  const fixed = `fixed, ${p.trials ?? 'not recorded'} trials × ${p.trial_target_s ?? 'not recorded'} s per operation (the guide's reference plan)`;
  const rule = a
    ? `adaptive, trials of ${a.trial_target_s} s until the 95 % interval of the mean per call is within ${formatPrecision(a.ci_target ?? Number.NaN)}, after at least ${a.min_trials} trials and the minimum of calls, at most ${a.max_trials} trials and the per-operation budget`
    : 'adaptive';
  if (adaptive.length === 0) return `Plan: ${fixed}.${calls}`;
  const met = adaptive.filter((m) => m.met).length;
  const counts = `${adaptive.length} of ${modes.length} timed operations planned adaptively, ${met} of them met the target`;
  return `Plan: ${a?.enabled ? rule : fixed}; ${counts}${a?.enabled ? '' : ` (their rule: ${rule})`}.${calls}`;
}

interface HostCheck {
  phase: string;
  cpu: number;
  utc: string;
  problems: string[];
  shard?: string;
}

/** Host checks with the same phase, CPU, shard and problems: one row, however many runs found it. */
function distinctHostChecks(checks: readonly HostCheck[]): Array<{ check: HostCheck; runs: number; first: string; last: string }> {
  const byKey = new Map<string, { check: HostCheck; runs: number; first: string; last: string }>();
  for (const raw of checks) {
    // Evidence from other tools may leave a field out: a missing list is no problem found.
    const h = { ...raw, problems: Array.isArray(raw.problems) ? raw.problems : [] };
    const key = JSON.stringify([h.phase, h.cpu, h.shard ?? null, h.problems]);
    const seen = byKey.get(key);
    const utc = String(h.utc ?? '').slice(0, 19);
    if (!seen) byKey.set(key, { check: h, runs: 1, first: utc, last: utc });
    else {
      seen.runs += 1;
      if (utc < seen.first) seen.first = utc;
      if (utc > seen.last) seen.last = utc;
    }
  }
  return [...byKey.values()];
}

const hostState: MethodSection = (model) => {
  const checks = Array.isArray(model.campaign.host_checks) ? (model.campaign.host_checks as HostCheck[]) : [];
  return [
    heading(2, 'Host state'),
    table(['item', 'value'], environmentRows(model.campaign, model.environment, provenanceOf(allInstances(model)))),
    para('Every run checks the host; runs that found the same are one row.'),
    table(
      ['phase', 'CPU', 'shard', 'problems', 'runs', 'UTC (first / last)'],
      distinctHostChecks(checks).map(({ check: h, runs, first, last }) => [
        h.phase,
        String(h.cpu),
        h.shard ?? '—',
        h.problems.length > 0 ? `⚠ ${h.problems.join('; ')}` : 'none',
        String(runs),
        first === last ? first : `${first} / ${last}`,
      ]),
      [text('no host checks recorded'), '—', '—', '—', '—', '—'],
    ),
  ];
};

const counterSource: MethodSection = (model) => {
  const counter = (model.campaign.counter_source as string | undefined) ?? 'not recorded';
  const rate = counterRate(provenanceOf(allInstances(model)).records, model.campaign.fixed_clock_hz);
  return [
    heading(2, 'Counter source'),
    para(
      `Cycle counter: ${counter}. On x86-64 rdtsc counts at the constant TSC rate, which equals core cycles on a core fixed at that frequency; on AArch64 the harness prefers perf_event core cycles and falls back to cntvct_el0.`,
    ),
    para(
      rate
        ? `Counter rate: ${rate}. The time columns come from the trials' own clock; mean cycles over this rate give the mean time, to within the spread of the rate.`
        : 'Counter rate: not recorded (no trial with cycles and seconds).',
    ),
  ];
};

const buildFlags: MethodSection = (model) => {
  const c = model.campaign;
  return [
    heading(2, 'Build flags'),
    table(
      ['setting', 'value'],
      [
        ...kv(c.flags),
        ...kv(c.arch_config),
        ...(c.harness_additions ? [[code('harness_additions'), String(c.harness_additions)] as Cell[]] : []),
      ],
    ),
  ];
};

const limits: MethodSection = () => [
  heading(2, 'Limits'),
  para(
    'Peak memory is the process high-water mark (VmHWM) including the driver and libc; static memory is the sum of the PT_LOAD segments. KAT and timing processes run with a timeout that kills the whole process group, a cap on captured output and an address-space limit; a submission that fails gets a status on its row and the campaign goes on.',
  ),
];

/** Said only where the evidence records it (older evidence does not). */
const isolation: MethodSection = (model) => {
  const sandbox = model.campaign.sandbox;
  if (sandbox === 'bwrap' || sandbox === 'unshare')
    return [
      heading(2, 'Isolation'),
      para(
        `Every compiler and driver process of a submission ran in a ${sandbox === 'bwrap' ? 'bubblewrap' : 'util-linux unshare'} sandbox: no network, its own process namespace, the system read-only, and of the runner only the sources its candidate.yml names (inside the campaign repository or the harness), its library and its output folder.`,
      ),
    ];
  if (sandbox === 'none')
    return [
      heading(2, 'Isolation'),
      para('⚠ Not sandboxed: the campaign set ', code('sandbox: none'), ', so submission code ran with the rights of the runner user.'),
    ];
  return [];
};

const history: MethodSection = (model) =>
  typeof model.campaign.history_note === 'string' ? [heading(2, 'History'), para(model.campaign.history_note)] : [];

const METHOD_SECTIONS: readonly MethodSection[] = [
  title,
  planning,
  prCheckSection,
  hostState,
  counterSource,
  buildFlags,
  limits,
  ctMethodSection,
  isolation,
  history,
  kexStepSums,
];

export const methodPage = (model: ReportModel): Root => sectionsPage(METHOD_SECTIONS, model);
