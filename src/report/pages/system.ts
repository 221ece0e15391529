import type { Root } from 'mdast';
import { archName, environmentRows } from '../environment.js';
import { formatCycles, formatN, formatShare } from '../format.js';
import { code, heading, link, para, root, table, text, type Cell, bullets } from '../md.js';
import type { InstanceView, ReportModel } from '../model.js';
import { hashShares } from '../profile.js';
import { sizeAudit } from '../sizeAudit.js';
import { sizeCell, notMeasuredReason } from './candidate.js';
import { GUIDE_MINIMUM } from '../../measure/stats.js';

const CATEGORIES = [
  { type: 'kem', title: 'Key encapsulation', sizes: [['public key', 'pk_bytes'], ['ciphertext', 'ct_bytes']] },
  { type: 'sig', title: 'Digital signatures', sizes: [['public key', 'pk_bytes'], ['signature', 'signature_bytes']] },
] as const;

const pageOf = (id: string, sys: string) => `../${id}/perf_${sys}.md`;

/** "243.4 k (70%)": mean cycles with the hash share in parentheses; (n=N) when under 100 calls. */
function cyclesCell(inst: InstanceView, op: string): string {
  const r = inst.records[op];
  if (!r || r.mean_cycles === undefined) return '—';
  const p = inst.profiles[op];
  const share = p ? ` (${formatShare(hashShares(p).hash)})` : '';
  const n = r.measurements ?? 0;
  return `${formatCycles(r.mean_cycles)}${share}${n < GUIDE_MINIMUM ? ` ${formatN(n)}` : ''}`;
}

export function summaryPage(model: ReportModel): Root {
  const sys = model.system;
  const arch = archName(model.environment);
  const sections = CATEGORIES.flatMap((cat) => {
    const cands = model.candidates.filter((c) => c.type === cat.type);
    if (cands.length === 0) return [];
    const ops = cands[0]!.operations;
    const warn: string[] = [];
    const cycleRows: Cell[][] = [];
    const sizeRows: Cell[][] = [];
    for (const c of cands) {
      for (const inst of c.instances) {
        const kat = inst.build?.kat ?? 'not checked';
        const flagged = kat !== 'PASS';
        if (flagged) warn.push(`${c.id} ${inst.label}: ${kat}${inst.build?.kat_detail ? ` — ${inst.build.kat_detail}` : ''}`);
        const measured = ops.some((op) => inst.records[op]);
        const name: Cell = [link(pageOf(c.id, sys), c.id)];
        cycleRows.push([name, code(inst.label), flagged ? `${kat} ⚠` : kat, ...(measured ? ops.map((op) => cyclesCell(inst, op)) : [notMeasuredReason(inst), ...ops.slice(1).map(() => '—')])]);
        sizeRows.push([name, code(inst.label), ...cat.sizes.map(([, k]) => sizeCell(model, c, inst, k) ?? '—')]);
      }
    }
    return [
      heading(2, cat.title),
      para(
        `Mean cycles per operation; in parentheses the share spent in the ICCS placeholder hash functions${cands.some((c) => c.api === 'nist') ? ' (for NIST-API code, in its SHA-3/SHAKE/SHA-2 functions)' : ''}; (n=N) where fewer than ${GUIDE_MINIMUM} calls were timed. ⚠ marks a KAT status other than PASS.`,
      ),
      table(['candidate', 'instance', 'KAT', ...ops], cycleRows),
      heading(3, 'Sizes (bytes)'),
      table(['candidate', 'instance', ...cat.sizes.map(([h]) => h)], sizeRows),
      heading(3, 'Notes'),
      warn.length > 0 ? bullets(warn.map((w) => [`⚠ ${w}`])) : para('Every instance of this category passed its KAT.'),
    ];
  });
  return root([
    heading(1, `Performance on ${arch.display} (system ${sys})`),
    para(link(`method_${sys}.md`, 'Method'), ' · ', link('symmetric-survey.md', 'Symmetric-primitive survey'), ' · ', link(`size-audit_${sys}.md`, 'Size audit'), ' · ', link('../index.md', 'All systems')),
    table(['item', 'value'], environmentRows(model)),
    ...(sections.length > 0 ? sections : [para('No candidate has evidence on this system yet.')]),
  ]);
}

function kv(obj: unknown): Cell[][] {
  if (!obj || typeof obj !== 'object') return [];
  return Object.entries(obj as Record<string, unknown>).map(([k, v]) => [code(k), v === null || v === undefined ? 'not recorded' : typeof v === 'object' ? JSON.stringify(v) : String(v)]);
}

export function methodPage(model: ReportModel): Root {
  const c = model.campaign;
  const checks = (c.host_checks as Array<{ phase: string; cpu: number; utc: string; problems: string[]; shard?: string }> | undefined) ?? [];
  const counter = (c.counter_source as string | undefined) ?? 'not recorded';
  return root([
    heading(1, `Method — system ${model.system}`),
    para(link(`summary_${model.system}.md`, `Performance ${model.system}`), ' › method'),
    heading(2, 'Planning'),
    para(
      'Each operation is calibrated with one call; iterations per trial fill the trial target, at least the guide minimum of calls are timed where the per-operation budget allows, and every trial runs in a fresh process pinned to one core after warm-up calls.',
    ),
    table(['setting', 'value'], kv(c.planning)),
    heading(2, 'Host state'),
    table(['item', 'value'], environmentRows(model)),
    table(
      ['phase', 'CPU', 'UTC', 'shard', 'problems'],
      checks.map((h) => [h.phase, String(h.cpu), h.utc.slice(0, 19), h.shard ?? '—', h.problems.length > 0 ? `⚠ ${h.problems.join('; ')}` : 'none']),
      [text('no host checks recorded'), '—', '—', '—', '—'],
    ),
    heading(2, 'Counter source'),
    para(`Cycle counter: ${counter}. On x86-64 rdtsc counts at the constant TSC rate, which equals core cycles on a core fixed at that frequency; on AArch64 the harness prefers perf_event core cycles and falls back to cntvct_el0.`),
    heading(2, 'Build flags'),
    table(['setting', 'value'], [...kv(c.flags), ...kv(c.arch_config), ...(c.harness_additions ? [[code('harness_additions'), String(c.harness_additions)] as Cell[]] : [])]),
    heading(2, 'Limits'),
    para(
      'Peak memory is the process high-water mark (VmHWM) including the driver and libc; static memory is the sum of the PT_LOAD segments. KAT and timing processes run with a timeout that kills the whole process group, a cap on captured output and an address-space limit; a submission that fails gets a status on its row and the campaign goes on.',
    ),
    ...(typeof c.history_note === 'string' ? [heading(2, 'History'), para(c.history_note)] : []),
  ]);
}

export function sizeAuditPage(model: ReportModel): Root {
  const findings = sizeAudit(model);
  const mismatches = findings.filter((f) => f.verdict === 'mismatch');
  return root([
    heading(1, `Size audit — system ${model.system}`),
    para(link(`summary_${model.system}.md`, `Performance ${model.system}`), ' › size audit'),
    para(
      `The size catalog (external_sizes.csv) against the sizes each library's API reports: ${mismatches.length} mismatch${mismatches.length === 1 ? '' : 'es'} in ${findings.length} compared size${findings.length === 1 ? '' : 's'}. ≈ marks a nominal size of variable-length signatures.`,
    ),
    table(
      ['candidate', 'instance', 'item', 'catalog', 'API', 'basis', 'verdict'],
      findings.map((f) => [
        f.id,
        code(f.instance),
        f.item,
        `${f.verdict === 'approximate' ? '≈ ' : ''}${f.catalog}`,
        f.api !== undefined ? String(f.api) : '—',
        f.basis,
        f.verdict === 'mismatch' ? 'MISMATCH ⚠' : f.verdict,
      ]),
      [text('no catalog entries'), '—', '—', '—', '—', '—', '—'],
    ),
  ]);
}

export function indexPage(systems: Array<{ id: string; arch: string; candidates: number }>): Root {
  return root([
    heading(1, 'NGCC performance measurements'),
    para('Independent measurements of the NGCC candidates in the layout of the ICCS self-assessment guide §3.5, one summary per benchmark system.'),
    table(
      ['system', 'architecture', 'candidates', 'pages'],
      systems.map((s) => [s.id, s.arch, String(s.candidates), [link(`performance/summary_${s.id}.md`, 'summary'), ' · ', link(`performance/method_${s.id}.md`, 'method')]]),
    ),
    para(link('performance/symmetric-survey.md', 'Symmetric-primitive survey')),
  ]);
}
