import type { RootContent } from 'mdast';
import { COMPILER_MADE_NOTE, CT_KINDS, type CtFile, type CtFinding, flaggedOperations, siteOf } from '../../ct/findings.js';
import { kindMeanings } from '../../ct/meanings.js';
import type { CtCoverage } from '../../ct/findingKinds.js';
import { formatShare, MISSING, plural } from '../../text/format.js';
import { bullets, code, heading, link, para, table, text, type Cell } from '../../text/md.js';
import type { CandidateView, InstanceView, ReportModel } from '../views.js';
import { allInstances, unreadableCell, unreadableFile } from './cells.js';

/**
 * The constant-time check on the pages (CONTRACT §8): the candidate page's section, the summary's
 * `ct: N flagged` note and the method page's description. Every part is absent without ct evidence,
 * so pages of evidence that has none read as before.
 */

const CT_TITLE = 'Constant-time check (machine)';
/** Sites listed per instance in the candidate page's table of sites, the most reported first. */
const CT_TOP_SITES = 10;
const METHOD_ANCHOR = '#constant-time-check-machine';

const hasCt = (inst: InstanceView) => inst.ct !== undefined || unreadableFile(inst, 'constant-time check') !== undefined;

const siteCell = (f: { file?: string; line?: number }): Cell =>
  f.file !== undefined ? code(`${f.file}:${f.line ?? '?'}`) : 'no line information';

/** An instance's sites over its operations, each once, with the operations that reached it and its reports. */
function sites(ct: CtFile): Array<{ finding: CtFinding; operations: string[]; count: number }> {
  const by = new Map<string, { finding: CtFinding; operations: string[]; count: number }>();
  for (const [op, o] of Object.entries(ct.operations))
    for (const f of o.findings ?? []) {
      const key = `${f.suppressed ? 's' : 'u'} ${f.kind} ${f.function} ${f.file ?? ''}:${f.line ?? ''}`;
      const s = by.get(key) ?? { finding: f, operations: [], count: 0 };
      s.operations.push(op);
      s.count += f.count;
      by.set(key, s);
    }
  // Unsuppressed first, then the most reported; ties in the file's own order.
  return [...by.values()].sort((a, b) => Number(a.finding.suppressed) - Number(b.finding.suppressed) || b.count - a.count);
}

/** Distinct sites of one operation by kind: unsuppressed per kind, then suppressed. */
function kindCounts(findings: readonly CtFinding[]): string[] {
  const distinct = (list: readonly CtFinding[]) => new Set(list.map((f) => `${f.kind} ${f.function} ${f.file ?? ''}:${f.line ?? ''}`)).size;
  const open = findings.filter((f) => !f.suppressed);
  return [
    ...CT_KINDS.map((k) => String(distinct(open.filter((f) => f.kind === k)))),
    String(distinct(findings.filter((f) => f.suppressed))),
  ];
}

const STATUS_CELL: Record<string, string> = { clean: 'clean', flagged: '⚠ flagged', skipped: 'skipped', failed: '⚠ failed' };

/** The candidate page's section: per instance and operation the status and counts, the top sites, the division sites. */
export function ctSection(model: ReportModel, c: CandidateView): RootContent[] {
  const checked = c.instances.filter(hasCt);
  if (checked.length === 0) return [];
  return [
    heading(2, CT_TITLE),
    para(
      'Each operation ran a few times under valgrind memcheck with its secrets marked undefined; every conditional jump (branch), memory address (index) or system call that depended on them is a site. "clean" means this method flagged nothing on the path it ran, never that the code is constant-time (',
      link(`../performance/method_${model.system}.md${METHOD_ANCHOR}`, 'method and limits'),
      '). Counts are distinct sites; suppressed ones are public by the reason given in the candidate’s ',
      code('ct-suppressions.yml'),
      ' and do not make an operation flagged.',
    ),
    table(['instance', 'operation', 'status', ...CT_KINDS, 'suppressed', 'calls', 'coverage'], statusRows(c.instances)),
    ...coverageGaps(checked),
    ...topSites(checked),
    ...buildMatrix(checked),
    ...divisionSites(checked),
  ];
}

/** Per instance and operation: the status, the distinct sites by kind, the calls and the coverage. */
function statusRows(instances: readonly InstanceView[]): Cell[][] {
  return instances.flatMap((inst): Cell[][] => {
    if (!inst.ct) {
      const why = unreadableFile(inst, 'constant-time check') ? unreadableCell('constant-time check') : 'not checked';
      return [[code(inst.label), MISSING, why, ...CT_KINDS.map(() => MISSING), MISSING, MISSING, MISSING]];
    }
    return Object.entries(inst.ct.operations).map(([op, o]): Cell[] => [
      code(inst.label),
      op,
      o.reason && (o.status === 'skipped' || o.status === 'failed')
        ? `${STATUS_CELL[o.status]}: ${o.reason}`
        : (STATUS_CELL[o.status] ?? o.status),
      ...kindCounts(o.findings ?? []),
      String(o.calls),
      coverageCell(o),
    ]);
  });
}

/** What the checked calls never ran, per operation whose coverage has a gap. */
function coverageGaps(checked: InstanceView[]): RootContent[] {
  const neverRows = checked.flatMap((inst): Cell[][] =>
    Object.entries(inst.ct?.operations ?? {}).flatMap(([op, o]): Cell[][] => {
      const c = o.coverage;
      if (!c || 'failure' in c || (c.functions_run === c.functions && !c.untaken_lines && !c.paths?.beyond_lines)) return [];
      return [[code(inst.label), op, ...neverRunCells(c)]];
    }),
  );
  if (neverRows.length === 0) return [];
  return [
    para(
      'Coverage: the same calls, with the same generator, run natively in a -O0 build with gcc’s coverage counters and counted by gcov; the library’s own files, the harness’s left out. Before the check, more calls run the same way to find the rarely taken paths, and the check makes as many calls as took them all, within its budget. The verdict says nothing of code the checked calls never ran: the functions they never entered, the lines they never ran inside functions they did (a rejection loop’s retry, an error path; file:function:lines), and the lines only later calls took when the budget held the check to fewer:',
    ),
    table(
      ['instance', 'operation', 'never entered', 'not taken in functions that ran', 'taken only by later calls, not checked'],
      neverRows,
    ),
  ];
}

/** An operation's gaps: the functions never entered, the lines not taken in the ones that ran, the lines only later calls took. */
function neverRunCells(c: CtCoverage): Cell[] {
  const missed = c.functions - c.functions_run;
  const more = missed > NEVER_RUN_LISTED ? `, … (${missed} in all)` : '';
  const untaken =
    c.untaken === undefined
      ? 'not recorded'
      : c.untaken.length === 0
        ? 'none'
        : `${c.untaken.slice(0, NEVER_RUN_LISTED).join(', ')}${c.untaken.length > NEVER_RUN_LISTED ? ', …' : ''} (${c.untaken_lines ?? '?'} lines)`;
  const later = c.paths?.beyond_lines
    ? `${(c.paths.beyond ?? []).slice(0, NEVER_RUN_LISTED).join(', ')}${(c.paths.beyond ?? []).length > NEVER_RUN_LISTED ? ', …' : ''} (${plural(c.paths.beyond_lines, 'line')})`
    : 'none';
  return [missed > 0 ? `${c.never_run.slice(0, NEVER_RUN_LISTED).join(', ')}${more}` : 'none', untaken, later];
}

/** The most reported sites of each instance, with what their kinds mean. */
function topSites(checked: InstanceView[]): RootContent[] {
  const siteRows = checked.flatMap((inst): Cell[][] =>
    inst.ct
      ? sites(inst.ct)
          .slice(0, CT_TOP_SITES)
          .map(({ finding: f, operations, count }): Cell[] => [
            code(inst.label),
            f.kind,
            code(f.function),
            siteCell(f),
            operations.join(', '),
            String(count),
            f.suppressed
              ? `suppressed: ${f.reason ?? 'no reason recorded'}`
              : f.compiler_made
                ? COMPILER_MADE_NOTE[f.compiler_made]
                : (f.reason ?? ''),
          ])
      : [],
  );
  if (siteRows.length === 0) return [];
  const shownFewer = checked.some((inst) => inst.ct && sites(inst.ct).length > CT_TOP_SITES);
  return [
    para(
      shownFewer
        ? `The most reported sites (at most ${CT_TOP_SITES} per instance), unsuppressed first:`
        : 'Every site, unsuppressed first:',
    ),
    table(['instance', 'kind', 'function', 'site', 'operations', 'reports', 'note'], siteRows),
    ...kindMeanings(checked.flatMap((inst) => (inst.ct ? sites(inst.ct).map((s) => s.finding.kind) : []))),
  ];
}

/** The division instructions the API reaches, when the division check ran. */
function divisionSites(checked: InstanceView[]): RootContent[] {
  if (!checked.some((inst) => inst.ct?.divisions !== undefined)) return [];
  const divisionRows = checked.flatMap((inst): Cell[][] =>
    (inst.ct?.divisions ?? []).map((d): Cell[] => [
      code(inst.label),
      code(d.function),
      code(d.operand ? `${d.instruction} ${d.operand}` : d.instruction),
      siteCell(d),
      divisionVerdict(inst.ct!, d),
      inst.ct!.compiler ? `${inst.ct!.compiler}, ${(inst.ct!.flags ?? []).filter((f) => /^-O/.test(f)).pop() ?? 'default -O'}` : MISSING,
    ]),
  );
  if (divisionRows.length === 0) return [para('No division instruction in code the API reaches.')];
  return [
    para(
      'Division instructions in code the API reaches (variable-latency on most cores, which memcheck does not report): each was read at the instruction in the measured calls, and one whose dividend or divisor held a secret is a division finding. A division is the compiler’s choice: the build names the compiler and the optimisation level.',
    ),
    table(['instance', 'function', 'instruction', 'site', 'operands', 'build'], divisionRows),
  ];
}

/** A build's operations in one cell: `keygen clean, dec ⚠ flagged`, or why the build was not checked. */
function buildStatus(b: { operations: CtFile['operations']; failure?: string }): string {
  if (b.failure) return `⚠ ${b.failure}`;
  return Object.entries(b.operations)
    .map(([op, o]) => `${op} ${STATUS_CELL[o.status] ?? o.status}`)
    .join(', ');
}

/**
 * Where an instance was checked in more than one build (ct.variants × ct.compilers): each build's
 * operations, and every unsuppressed site with the operations that reached it in each build, so a
 * leak that only one compiler or flag set makes (KyberSlash's division at gcc -Os) shows as such.
 */
function buildMatrix(checked: InstanceView[]): RootContent[] {
  const withBuilds = checked.filter((inst) => (inst.ct?.builds?.length ?? 0) > 0);
  if (withBuilds.length === 0) return [];
  // Columns: the measured build, then every other build in the order the files name them.
  const others = [...new Set(withBuilds.flatMap((inst) => inst.ct!.builds!.map((b) => b.name)))];
  const statusRows: Cell[][] = [];
  const siteRows: Cell[][] = [];
  for (const inst of withBuilds) {
    const ct = inst.ct!;
    const builds = [{ name: 'measured', operations: ct.operations }, ...others.map((n) => ct.builds!.find((b) => b.name === n))];
    statusRows.push([code(inst.label), `${ct.build_name ?? 'measured'} (measured)`, buildStatus(ct)]);
    for (const b of ct.builds!) statusRows.push([code(inst.label), b.name, buildStatus(b)]);
    const bySite = new Map<string, { finding: CtFinding; cells: string[][] }>();
    builds.forEach((b, i) => {
      for (const [op, o] of Object.entries(b?.operations ?? {}))
        for (const f of o.findings ?? []) {
          if (f.suppressed) continue;
          const entry = bySite.get(siteOf(f)) ?? { finding: f, cells: builds.map(() => []) };
          if (!entry.cells[i]!.includes(op)) entry.cells[i]!.push(op);
          bySite.set(siteOf(f), entry);
        }
    });
    for (const { finding: f, cells } of bySite.values())
      siteRows.push([
        code(inst.label),
        f.kind,
        code(f.function),
        siteCell(f),
        ...builds.map((b, i) =>
          b === undefined
            ? 'not checked'
            : 'failure' in b && b.failure
              ? 'not built'
              : cells[i]!.length > 0
                ? cells[i]!.join(', ')
                : MISSING,
        ),
        // A branch the compiler made is a leak all the same: the note says so wherever the site shows.
        f.compiler_made ? COMPILER_MADE_NOTE[f.compiler_made] : '',
      ]);
  }
  const unbuilt = withBuilds.flatMap((inst) => inst.ct!.builds!.filter((b) => b.failure).map((b) => `${inst.label} ${b.name}`));
  const all = withBuilds.reduce((n, inst) => n + inst.ct!.builds!.length + 1, 0);
  return [
    ...(unbuilt.length > 0
      ? [
          para(
            `⚠ ${unbuilt.length} of ${all} ct builds failed to build, so nothing was checked in them: ${unbuilt.join(', ')} (each one's error below).`,
          ),
        ]
      : []),
    para(
      'Every build checked: the measured one, and the others the campaign’s ',
      code('ct.variants'),
      ' and ',
      code('ct.compilers'),
      ' name (a leak can be one compiler’s or one flag set’s alone):',
    ),
    table(['instance', 'build', 'operations'], statusRows),
    ...(siteRows.length > 0
      ? [
          para('Each unsuppressed site by build: the operations that reached it (— none there):'),
          table(['instance', 'kind', 'function', 'site', 'measured', ...others, 'note'], siteRows),
        ]
      : [para('No unsuppressed site in any build.')]),
  ];
}

/** Never-entered functions named per row of the page (the ct file keeps more). */
const NEVER_RUN_LISTED = 8;

/** An operation's coverage in a cell: lines and functions its checked calls ran, or why it was not counted. */
function coverageCell(o: CtFile['operations'][string]): Cell {
  const c = o.coverage;
  if (!c) return MISSING;
  if ('failure' in c) return `not counted: ${c.failure}`;
  const pct = c.lines > 0 ? `${formatShare(c.lines_run / c.lines)} of lines` : 'no lines';
  const paths = c.paths
    ? `; paths of ${c.paths.calls} calls: ${c.paths.beyond_lines ? `${plural(c.paths.beyond_lines, 'line')} only in later calls` : 'all checked'}`
    : '';
  return `${pct}, ${c.functions_run} of ${c.functions} functions${paths}`;
}

/**
 * What the division check read at a site over the operations: the secret operands and where, or the
 * hits that were public, or that no call reached it; where no check ran, memcheck's verdict on its function.
 */
function divisionVerdict(ct: CtFile, d: NonNullable<CtFile['divisions']>[number]): string {
  const readings = Object.entries(ct.operations).flatMap(([op, o]) => {
    const check = o.division_check;
    const seen = check && 'sites' in check ? check.sites.find((x) => x.address === d.address) : undefined;
    return seen ? [{ op, seen }] : [];
  });
  if (readings.length === 0)
    return d.tainted
      ? '⚠ operands tainted (memcheck flagged its function): a division finding'
      : 'division reachable, operands not shown tainted';
  const secret = readings.filter((r) => r.seen.secret.length > 0);
  if (secret.length > 0)
    return `⚠ secret ${[...new Set(secret.flatMap((r) => r.seen.secret))].join(' and ')} in ${secret.map((r) => r.op).join(', ')}: a division finding`;
  const hits = readings.reduce((a, r) => a + r.seen.hits, 0);
  return hits > 0 ? `public in ${hits} read${hits === 1 ? '' : 's'}` : 'not reached in the checked calls';
}

/** The summary's note for an instance: `ct: N flagged`, N the operations the check flagged; undefined without a check. */
export function ctNote(inst: InstanceView): string | undefined {
  if (!inst.ct) return unreadableFile(inst, 'constant-time check') ? `ct: ${unreadableCell('constant-time check')}` : undefined;
  const ops = Object.values(inst.ct.operations);
  const unchecked = ops.filter((o) => o.status === 'skipped' || o.status === 'failed').length;
  return `ct: ${flaggedOperations(inst.ct).length} flagged${unchecked > 0 ? `, ${unchecked} not checked` : ''}`;
}

/** A notes cell with the instance's `ct: N flagged` added when it was checked ('–' alone reads as nothing). */
export function withCtNote(note: string, inst: InstanceView): string {
  const ct = ctNote(inst);
  if (!ct) return note;
  return note === '–' ? ct : `${note}; ${ct}`;
}

/** Whether a category's summary table gets a notes column: only when one of its instances was checked. */
export const anyCt = (instances: readonly InstanceView[]): boolean => instances.some((i) => ctNote(i) !== undefined);

/** The sentence under a summary table whose notes carry `ct: N flagged`. */
export const CT_NOTE_MEANING =
  '“ct: N flagged”: N operations of the instance in which the constant-time check (machine) flagged an unsuppressed site; “not checked” counts operations it skipped (over budget) or could not run. Sites and limits: the candidate page and the method page.';

/** The method page's section, when any candidate was checked. */
export function ctMethodSection(model: ReportModel): RootContent[] {
  const files = allInstances(model).flatMap((i) => (i.ct ? [i.ct] : []));
  if (files.length === 0 && !allInstances(model).some(hasCt)) return [];
  const tools = [...new Set(files.map((f) => f.tool))].sort();
  return [
    heading(2, CT_TITLE),
    para(
      'Each operation of each instance runs a few times with fixed seeds under ',
      ...(tools.length > 0 ? [code(tools.join(', '))] : [text('valgrind memcheck')]),
      ', in the sandbox, on a library built with the same flags plus debug information. Before an operation, the driver marks the secret-key bytes, the DRNG (or ',
      code('randombytes'),
      ') output and the key-exchange state as undefined (memcheck client requests); it marks what is public by definition as defined again: public keys after key generation, ciphertexts and signatures once produced, messages. Memcheck then reports every conditional jump, memory address and system-call argument that depends on an undefined value: the finding kinds branch, index and syscall, with function, file and line, deduplicated by site.',
    ),
    bullets([
      [
        'Division: ',
        code('div'),
        '/',
        code('idiv'),
        ' (x86-64) and ',
        code('udiv'),
        '/',
        code('sdiv'),
        ' (AArch64) take operand-dependent time, and stock valgrind does not flag them (it only carries the operands’ undefinedness along). They are found in the disassembly of the code the API reaches; one in a function memcheck flagged is a finding of kind division, the others are listed as “division reachable, operands not shown tainted”.',
      ],
      [
        'Suppressions: a candidate’s ',
        code('ct-suppressions.yml'),
        ' names a function or file:line, a kind and a required reason (e.g. rejection sampling on the public seed). A suppressed finding stays in the evidence with its reason and does not count toward the status.',
      ],
      [
        'Budgets: valgrind runs code 20–50× slower; an operation whose predicted time under it exceeds its budget is skipped, with the reason.',
      ],
    ]),
    para(
      'Limits: memcheck sees the one execution path the seeds lead to, so a secret-dependent branch on a path not taken goes unseen; it follows data, not time, so instructions whose latency depends on their operands (division aside, e.g. some multiplications) are not reported; code a compiler makes variable-time at other flags is not this build. “clean” means that nothing was flagged by this method, never that the code is constant-time.',
    ),
  ];
}
