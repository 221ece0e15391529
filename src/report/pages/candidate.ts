import { instanceStatus } from '../../kat/status.js';
import { candidateProblems, validationNotice } from './validation.js';
import type { Root, RootContent } from 'mdast';
import type { TimingRecord } from '../../evidence/fileTypes.js';
import { archName, environmentRows } from '../environment.js';
import {
  formatCount,
  formatCycles,
  formatKiB,
  formatOpsPerSecond,
  formatSeconds,
  formatShare,
  pyFixed,
  signedPct,
} from '../../text/format.js';
import {
  bullets,
  code,
  heading,
  link,
  mermaid,
  para,
  sectionsPage,
  strong,
  table,
  text,
  type Cell,
  type Inline,
  type Section,
} from '../../text/md.js';
import { callsPerOperation, hashShares } from '../profile.js';
import { recordSpread } from '../../measure/stats.js';
import { figureNotes, isNoisy, NOISY_NOTE, PRECISION_NOTE, spreadCell } from '../spread.js';
import type { CandidateView, InstanceView, ReportModel } from '../views.js';
import {
  fellBackWhy,
  inInstanceOrder,
  instanceSizes,
  notMeasuredReason,
  provenanceOf,
  sizeCell,
  surveyEvidence,
  surveyFor,
  unreadableCell,
  unreadableFile,
} from './cells.js';
import { ctSection } from './ctSection.js';
import { katFootnotes } from './katNotes.js';
import { heldToLines } from './heldTo.js';
import { cyclesPerByteCell, megabytesPerSecondCell, messageCell } from './hashTables.js';
import { kexSizesSection } from './kexTables.js';
import { placeholderCostSection } from './placeholderCost.js';
import { causeText, SPARKLINE_MIN_SPAN, sparkline, trendsPagePath } from './trends.js';

/** One candidate's page on one system: the sections of the guide's §3.5 (1)–(7). */
type CandidateSection = Section<[ReportModel, CandidateView]>;

/** The algorithm's own page, named by who hosts it: NICCS, NIST, else the host itself. */
export function algorithmPageLabel(url: string): string {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return 'algorithm page';
  }
  const within = (domain: string) => host === domain || host.endsWith(`.${domain}`);
  if (within('niccs.org.cn')) return 'NICCS page';
  if (within('nist.gov')) return 'NIST page';
  return host.replace(/^www\./, '');
}

/** The hash column: the ICCS placeholders, or whatever symmetric code a NIST-API baseline wraps. */
const hashHeader = (c: CandidateView) => (c.api === 'nist' ? 'hash (SHA-3/SHAKE/SHA-2)' : 'pseudohash/XOF/sm3');

/** " (36–42% over 5 rounds)": how far the profiling rounds spread, when there were several. */
function roundsRange(rounds: number[] | undefined): string {
  if (!rounds || rounds.length < 2) return '';
  const [lo, hi] = [formatShare(Math.min(...rounds)), formatShare(Math.max(...rounds))];
  return lo === hi ? ` (${lo} in all ${rounds.length} rounds)` : ` (${lo.replace('%', '')}–${hi} over ${rounds.length} rounds)`;
}

function countCell(r: TimingRecord): string {
  const iters = (r.plan as { iterations_per_trial?: number } | null | undefined)?.iterations_per_trial;
  const n = r.measurements ?? r.trials.reduce((a, t) => a + t.measurements, 0);
  if (iters !== undefined && r.trials.every((t) => t.measurements === iters)) return formatCount(r.trials.length, iters);
  return `${n} (${r.trials.length} trials)`;
}

function gapRow(inst: InstanceView, width: number): Cell[] {
  return [code(inst.label), '—', notMeasuredReason(inst), ...dashes(width - 3)];
}

const dashes = (n: number): Cell[] => Array.from({ length: n }, () => '—');

/** A record that is there but holds no trial. */
const failedCell = (r: TimingRecord): string => (r.failure ? `failed: ${String(r.failure)}` : `${r.status}: no trial completed`);

/** Does the instance have any evidence of this kind: a file, or one that could not be read? */
const hasAny = (c: CandidateView, inst: InstanceView, files: 'records' | 'memory', kind: 'timing' | 'memory') =>
  c.operations.some((op) => inst[files][op] || unreadableFile(inst, kind, op));

/**
 * Rows per instance and operation. An instance without any evidence gets one row saying why; one
 * with some gets a row for every operation, so a failed, unreadable or missing file is a row that
 * says so, never a silent gap.
 */
function perOperation(
  c: CandidateView,
  width: number,
  has: (inst: InstanceView) => boolean,
  row: (inst: InstanceView, op: string) => Cell[],
): Cell[][] {
  return c.instances.flatMap((inst) => (has(inst) ? c.operations.map((op) => row(inst, op)) : [gapRow(inst, width)]));
}

/** Rows from each operation's timing record; where there is none with trials, the row says why. */
function perTimedOperation(c: CandidateView, width: number, cells: (inst: InstanceView, op: string, r: TimingRecord) => Cell[]): Cell[][] {
  return perOperation(
    c,
    width,
    (inst) => hasAny(c, inst, 'records', 'timing'),
    (inst, op) => {
      const r = inst.records[op];
      if (r?.trials?.length) return cells(inst, op, r);
      const why = unreadableFile(inst, 'timing', op) ? unreadableCell('timing') : r ? failedCell(r) : notMeasuredReason(inst);
      return [code(inst.label), op, why, ...dashes(width - 3)];
    },
  );
}

function sizeColumns(c: CandidateView): Array<[string, string]> {
  return c.type === 'kem'
    ? [
        ['public key', 'pk_bytes'],
        ['secret key', 'sk_bytes'],
        ['ciphertext', 'ct_bytes'],
        ['shared secret', 'ss_bytes'],
      ]
    : [
        ['public key', 'pk_bytes'],
        ['secret key', 'sk_bytes'],
        ['signature', 'signature_bytes'],
      ];
}

const title: CandidateSection = (model, c) => {
  const sys = model.system;
  const arch = archName(model.environment);
  return [
    heading(1, `${c.id} ${c.algorithm} — performance on ${arch.display} (system ${sys})`),
    para(
      link(`../performance/summary_${sys}.md`, `Performance ${sys}`),
      ' › ',
      code(c.id),
      ' · ',
      link(`../performance/method_${sys}.md`, 'method'),
      ...(c.page ? [' · ', link(c.page, algorithmPageLabel(c.page))] : []),
    ),
    para(
      `Independent measurement following the structure of the NICCS ${arch.guide} self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment.`,
    ),
  ];
};

const basicInformation: CandidateSection = (_model, c) => {
  const variants = [...new Set(c.instances.map((i) => i.build?.variant ?? 'reference'))];
  return [
    heading(2, '1. Basic information'),
    bullets([
      [
        c.type === 'hash'
          ? 'Category: cryptographic hash algorithm; function: hash'
          : `Category: public-key algorithm; function: ${{ kem: 'key encapsulation', sig: 'digital signature', kex: 'key exchange' }[c.type]}`,
      ],
      [`Algorithm: ${c.algorithm}`],
      [`Implementation versions measured: ${variants.join(', ')}`],
      ['Parameter sets: ', ...c.instances.flatMap((i, k) => (k === 0 ? [code(i.label)] : [', ', code(i.label)]))],
    ]),
  ];
};

const environment: CandidateSection = (model, c) => [
  heading(2, '2. Assessment environment'),
  table(['item', 'value'], environmentRows(model.campaign, model.environment, provenanceOf(c.instances))),
];

/**
 * What the KAT digests stand on: vectors the submitter gave, or what this harness recorded from its own
 * output (`kat-manifest`), which shows only that the library still gives what it gave that day.
 */
function katSource(c: CandidateView): RootContent {
  const manifest = code(`${c.id}/kat.sha256`);
  const recorded = c.instances.filter((i) => i.build?.kat_recorded);
  if (recorded.length === 0)
    return para('Each library was checked against the submitted KAT vectors (SHA-256 manifest ', manifest, ') before timing.');
  const days = [...new Set(recorded.map((i) => i.build!.kat_recorded!))].sort().join(', ');
  const which: Inline[] =
    recorded.length === c.instances.length
      ? ['Every instance’s digests']
      : [
          ...recorded.flatMap((i, k): Inline[] => (k === 0 ? [code(i.label)] : [', ', code(i.label)])),
          recorded.length === 1 ? '’s digests' : ': their digests',
        ];
  return para(
    'Each library was checked against its KAT digests (SHA-256 manifest ',
    manifest,
    ') before timing. ',
    ...which,
    ` were recorded by the harness on ${days} from its own output (`,
    code('kat-manifest'),
    '), not from submitted vectors: they show that a library still gives what it gave then, not that it gives the scheme’s answers.',
    ...(recorded.length < c.instances.length ? [' The other instances’ lines, where they have one, are of submitted vectors.'] : []),
  );
}

/** "⚠ `x` was measured with the harness defaults: its guide build failed (…)", one per instance that fell back. */
function fellBackNotes(c: CandidateView): RootContent[] {
  return c.instances.flatMap((i) => {
    const why = fellBackWhy(i);
    return why
      ? [para('⚠ ', code(i.label), ` was measured with the harness defaults, not the guide’s flags: its guide build failed (${why}).`)]
      : [];
  });
}

const kat: CandidateSection = (model, c) => {
  const { marks, notes } = katFootnotes(c, model.katIssues);
  return [
    heading(2, '3. Functional testing (KAT)'),
    katSource(c),
    table(
      ['instance', 'build flags', 'KAT'],
      c.instances.map((inst) => [
        code(inst.label),
        inst.build?.flags ?? 'not built',
        `${instanceStatus(inst.build) ?? 'not checked'}${marks.get(inst.label) ?? ''}`,
      ]),
    ),
    ...notes.map((n) => para(n)),
    ...fellBackNotes(c),
    ...heldToLines(model, c),
  ];
};

/**
 * Mean cycles across the instances that have a number for every operation. An instance with a gap
 * (a record not measured, failed or unreadable) is left out and named: a line through a made-up 0
 * would read as a real, very fast operation. One instance gets bars over its operations (a line of
 * one point shows nothing); a hash gets cycles per byte against message length, a chart per instance.
 */
function performanceChart(c: CandidateView): RootContent[] {
  const has = (i: InstanceView, op: string) => Number.isFinite(i.records[op]?.mean_cycles) && (i.records[op]?.trials?.length ?? 0) > 0;
  const measured = c.instances.filter((i) => c.operations.every((op) => has(i, op)));
  const partial = c.instances.filter((i) => !measured.includes(i) && hasAny(c, i, 'records', 'timing'));
  if (measured.length === 0) return [];
  const leftOut: Inline[] = partial.flatMap((i, k): Inline[] => (k === 0 ? [code(i.label)] : [', ', code(i.label)]));
  const intro = (what: string) =>
    partial.length > 0 ? para(`${what}. Not plotted, lacking a number for some operation: `, ...leftOut, '.') : para(`${what}:`);
  if (c.type === 'hash')
    return [intro('Mean cycles per message byte against the message length'), ...measured.map((i) => bytesChart(c, i))];
  if (measured.length === 1) {
    const only = measured[0]!;
    const values = c.operations.map((op) => Math.round(only.records[op]!.mean_cycles!));
    return [
      intro('Mean cycles per operation (the table above holds the numbers)'),
      mermaid(
        `xychart-beta\n  title "${c.id} ${only.label} mean cycles per operation"\n  x-axis [${c.operations.map((op) => `"${op}"`).join(', ')}]\n  y-axis "cycles"\n  bar [${values.join(', ')}]`,
      ),
    ];
  }
  const series = c.operations
    .map((op) => {
      const values = measured.map((i) => Math.round(i.records[op]!.mean_cycles!));
      return `  line "${op}" [${values.join(', ')}]`;
    })
    .join('\n');
  const labels = measured.map((i) => `"${i.label}"`).join(', ');
  return [
    intro(`Mean cycles per operation across the instances (lines: ${c.operations.join(', ')}; the table above holds the numbers)`),
    mermaid(`xychart-beta\n  title "${c.id} mean cycles per operation"\n  x-axis [${labels}]\n  y-axis "cycles"\n${series}`),
  ];
}

/** A hash instance's mean cycles per message byte at each of the guide's message lengths. */
function bytesChart(c: CandidateView, inst: InstanceView): RootContent {
  const lengths = c.operations.map((op) => `"${messageCell(op)}"`).join(', ');
  const values = c.operations.map((op) => cyclesPerByteCell(inst.records[op]!, op)).join(', ');
  return mermaid(
    `xychart-beta\n  title "${c.id} ${inst.label} mean cycles per byte"\n  x-axis "message" [${lengths}]\n  y-axis "cycles per byte"\n  line [${values}]`,
  );
}

/** A hash's §4: one row per message length, with cycles per byte and MB/s (10^6 bytes per second). */
function hashTiming(c: CandidateView): RootContent[] {
  let noisy = false;
  const rows = perTimedOperation(c, 8, (inst, op, r) => {
    noisy ||= isNoisy(recordSpread(r));
    return [
      code(inst.label),
      messageCell(op),
      formatCycles(r.mean_cycles!),
      cyclesPerByteCell(r, op),
      formatSeconds(r.mean_seconds!),
      megabytesPerSecondCell(r, op),
      countCell(r),
      spreadCell(r),
    ];
  });
  const loops = c.instances.flatMap((i) =>
    i.build?.kat_loop_iterations ? [[code(i.label), `: ${i.build.kat_loop_iterations}`] as Inline[]] : [],
  );
  return [
    heading(2, '4. Performance'),
    table(['instance', 'message', 'mean cycles', 'cycles/byte', 'mean time', 'MB/s', 'n', 'trial spread'], rows),
    para(
      "Each timed call hashes a message of its own, drawn from its trial's seed (the hash profile and the memory run hash message byte i = (i·131 + length) mod 256). Trial spread: the slowest trial's time per call over the fastest's. ",
      PRECISION_NOTE,
    ),
    ...(loops.length > 0
      ? [
          para(
            'KAT_Loop ran fewer than the generator’s 10^6 iterations, as a ',
            code(':N'),
            ' in kat.sha256 asks; its check is that much shorter: ',
            ...loops.flatMap((l, k) => (k === 0 ? l : ['; ', ...l])),
            ' iterations.',
          ),
        ]
      : []),
    ...(noisy ? [para(NOISY_NOTE)] : []),
    ...figureNotes(c.instances.flatMap((i) => c.operations.map((op) => i.records[op]))),
    ...performanceChart(c),
  ];
}

const timing: CandidateSection = (_model, c) => {
  if (c.type === 'hash') return hashTiming(c);
  let noisy = false;
  const rows = perTimedOperation(c, 8, (inst, op, r) => {
    noisy ||= isNoisy(recordSpread(r));
    return [
      code(inst.label),
      op,
      formatCycles(r.mean_cycles!),
      formatSeconds(r.mean_seconds!),
      formatOpsPerSecond(r.operations_per_second!),
      formatSeconds(r.median_trial_seconds!),
      countCell(r),
      spreadCell(r),
    ];
  });
  return [
    heading(2, '4. Performance'),
    table(['instance', 'operation', 'mean cycles', 'mean time', 'ops/s', 'median trial', 'n (trials × iters)', 'trial spread'], rows),
    para("Trial spread: the slowest trial's time per call over the fastest's, from the record's trials. ", PRECISION_NOTE),
    ...(noisy ? [para(NOISY_NOTE)] : []),
    ...figureNotes(c.instances.flatMap((i) => c.operations.map((op) => i.records[op]))),
    ...performanceChart(c),
  ];
};

const resources: CandidateSection = (_model, c) => {
  const wholeProcess = perTimedOperation(c, 5, (inst, op, r) => [
    code(inst.label),
    op,
    inst.build?.elf_load_bytes !== undefined ? String(inst.build.elf_load_bytes) : 'not recorded',
    typeof r.baseline_rss_bytes === 'number' ? formatKiB(r.baseline_rss_bytes) : 'not recorded',
    typeof r.peak_rss_bytes === 'number' ? formatKiB(r.peak_rss_bytes) : 'not recorded',
  ]);
  const measured = (inst: InstanceView) => hasAny(c, inst, 'records', 'timing') || hasAny(c, inst, 'memory', 'memory');
  const isolated = perOperation(c, 5, measured, (inst, op) => {
    const m = inst.memory[op];
    const e = inst.build?.elf_sections;
    const sections = e ? `${e.text} / ${e.data} / ${e.bss}` : 'not recorded';
    if (!m && unreadableFile(inst, 'memory', op)) return [code(inst.label), op, unreadableCell('memory'), '—', sections];
    if (m?.status !== 'complete') return [code(inst.label), op, m?.failure ? `failed: ${m.failure}` : 'not measured', '—', sections];
    const heap = m.heap_peak_bytes === null ? 'not recorded' : `${m.heap_peak_bytes} (${m.heap_allocations ?? 0} allocations)`;
    return [code(inst.label), op, m.stack_net_bytes === null ? 'not recorded' : String(m.stack_net_bytes), heap, sections];
  });
  // A hash has no isolated-memory run yet: its table would only say "not measured" on every row.
  const isolatedShown = c.type !== 'hash' || c.instances.some((i) => i.memoryFiles.length > 0);
  return [
    heading(2, '5. Resource consumption'),
    para(
      "Static memory is approximated by the library's loadable ELF segments; peak memory is the process high-water mark (VmHWM) including the benchmark driver and libc, so both are upper-bound proxies rather than isolated algorithm memory.",
    ),
    table(['instance', 'operation', 'static: ELF image (bytes)', 'baseline RSS', 'peak RSS'], wholeProcess),
    ...(isolatedShown
      ? [
          para(
            'The operation alone: peak stack by painting a dedicated thread stack, peak heap by interposing the allocator around the single call; the static image split into sections.',
          ),
          table(
            [
              'instance',
              'operation',
              'peak stack (bytes)',
              'peak heap (bytes)',
              'static bytes: .text / .data, .rodata, .data.rel.ro / .bss',
            ],
            isolated,
          ),
        ]
      : []),
  ];
};

const sizes: CandidateSection = (model, c) => {
  if (c.type === 'hash') return []; // a digest is all a hash transmits: §4 has its length
  if (c.type === 'kex') return kexSizesSection(c);
  const cols = sizeColumns(c);
  const rows = c.instances.map((inst): Cell[] => {
    if (!instanceSizes(inst)) return [code(inst.label), notMeasuredReason(inst), ...cols.slice(1).map(() => '—')];
    return [code(inst.label), ...cols.map(([, k]) => sizeCell(model.sizes, c, inst, k) ?? 'not recorded')];
  });
  return [
    heading(2, '6. Transmission and storage overhead'),
    ...(model.sizes.some((e) => e.id === c.id)
      ? [
          para(
            'External public-key, ciphertext and signature sizes follow the curated size catalog (external_sizes.csv); secret-key and shared-secret lengths remain API figures. See the ',
            link(`../performance/size-audit_${model.system}.md`, 'size audit'),
            ' for disagreements.',
          ),
        ]
      : []),
    table(['instance', ...cols.map(([h]) => h)], rows),
  ];
};

const symmetricPrimitives: CandidateSection = (model, c) => {
  // The hash is the symmetric primitive: its section shows only what it delegates to the ICCS
  // helpers, when this system profiled it (the harness's pages never did).
  if (c.type === 'hash' && c.instances.every((i) => i.profileFiles.length === 0)) return [];
  const verdict = surveyFor(model, c.id);
  const shares = c.instances.flatMap((inst): Cell[][] => {
    const rows = c.operations.flatMap((op) => {
      const p = inst.profiles[op];
      if (!p) return unreadableFile(inst, 'hash profile', op) ? [[code(inst.label), op, unreadableCell('hash profile'), '—', '—']] : [];
      const { hash, drng } = hashShares(p);
      return [
        [code(inst.label), op, `${formatShare(hash)}${roundsRange(p.round_hash_shares)}`, formatShare(drng), callsPerOperation(p) || '–'],
      ];
    });
    return rows.length > 0
      ? rows
      : [[code(inst.label), '—', inst.build?.kat === 'BUILDFAIL' ? 'build failed (BUILDFAIL)' : 'not profiled', '—', '—']];
  });
  return [
    heading(2, 'Symmetric primitives'),
    para(
      link('../performance/symmetric-survey.md', 'Survey'),
      ' verdict: ',
      strong(verdict?.verdict ?? 'not surveyed'),
      ...(verdict?.notes ? [` — ${verdict.notes}`] : []),
      ...(verdict ? [verdict.curated ? ' (curated)' : ' (automated)'] : []),
    ),
    ...(verdict && verdict.instances.length > 0
      ? [bullets(inInstanceOrder(c, verdict.instances).map((i) => [code(i.label), `: ${surveyEvidence(i)}`]))]
      : []),
    para(
      c.type === 'hash'
        ? 'Share of CryptHash at each message length spent in the ICCS helpers it calls (sm3hash, pseudohash, pseudoXOF) and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):'
        : c.api === 'nist'
          ? 'Share of each operation spent in the SHA-3/SHAKE/SHA-2 functions the code calls across object files and in randombytes, which the harness provides as the NIST AES-256-CTR DRBG (reference build, measured in the same run with link-time wrappers):'
          : 'Share of each operation spent in the ICCS placeholder hash functions and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):',
    ),
    table(['instance', 'operation', hashHeader(c), c.api === 'nist' ? 'randombytes' : 'DRNG', 'calls per operation'], shares),
    ...placeholderCostSection(model, c),
  ];
};

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);

const evidenceIndex: CandidateSection = (model, c) => {
  const rows = c.instances.flatMap((inst): Cell[][] => [
    ...(inst.katLog
      ? [[code(inst.label), ['KAT log (sha256 ', code(`${inst.katLog.sha256.slice(0, 16)}…`), ')'], code(inst.katLog.path)] as Cell[]]
      : []),
    ...[...inst.recordFiles].sort(byPath).map((f): Cell[] => [code(inst.label), `timing ${f.op}`, code(f.path)]),
    ...[...inst.profileFiles].sort(byPath).map((f): Cell[] => [code(inst.label), `hash profile ${f.op}`, code(f.path)]),
    ...[...inst.memoryFiles].sort(byPath).map((f): Cell[] => [code(inst.label), `memory ${f.op}`, code(f.path)]),
    ...(inst.surveyFile && !unreadableFile(inst, 'survey')
      ? [[code(inst.label), 'symmetric-primitive survey', code(inst.surveyFile)] as Cell[]]
      : []),
    ...(inst.ctFile ? [[code(inst.label), 'constant-time check', code(inst.ctFile)] as Cell[]] : []),
    ...[...inst.unreadable]
      .sort(byPath)
      .map((u): Cell[] => [code(inst.label), `${u.kind}${u.op ? ` ${u.op}` : ''}: ⚠ unreadable (${u.problem})`, code(u.path)]),
  ]);
  return [
    heading(2, '7. Raw evidence index'),
    para(
      'Paths are relative to the evidence folder ',
      code(`${model.system}/`),
      '; each JSON file records its commands, environment and trials.',
    ),
    table(['instance', 'item', 'file'], rows, [text('no evidence files'), '—', '—']),
    para('Generated by ngcc-perf from the evidence alone; ', code('ngcc-perf report --check'), ' regenerates this page byte for byte.'),
  ];
};

/** The last nights of each operation at a glance, with its change points, when a history was read. */
const lastNights: CandidateSection = (model, c) => {
  const t = model.trends;
  if (!t) return [];
  const series = t.series.filter((s) => s.candidate === c.id);
  return [
    heading(2, `Last ${t.nights.length} nights`),
    table(
      ['instance', 'operation', `nights #1–#${t.nights.length}`, 'change points'],
      series.map((s): Cell[] => [
        code(s.label),
        `${s.operation}${s.unstable ? ' (unstable)' : ''}`,
        code(sparkline(s)),
        s.changes.length > 0 ? s.changes.map((ch) => `#${ch.night + 1} ${signedPct(ch.delta_pct)} (${causeText(ch)})`).join('; ') : 'none',
      ]),
    ),
    para(
      `Each mark is a night's median trial, from the series' lowest (▁) up; the scale spans at least ${pyFixed(SPARKLINE_MIN_SPAN * 100, 0)}% of the lowest. `,
      link(`../${trendsPagePath(model.system)}#${c.id}`, `${c.id} on the trends page`),
      ": every night's figure, charts and what changed.",
    ),
  ];
};

const CANDIDATE_SECTIONS: readonly CandidateSection[] = [
  title,
  (model, c) => validationNotice(candidateProblems(model.validation, c.id)),
  basicInformation,
  environment,
  kat,
  timing,
  resources,
  sizes,
  symmetricPrimitives,
  ctSection,
  lastNights,
  evidenceIndex,
];

export const candidatePage = (model: ReportModel, c: CandidateView): Root => sectionsPage(CANDIDATE_SECTIONS, model, c);
