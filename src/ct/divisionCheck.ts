import { existsSync, writeFileSync } from 'node:fs';
import { makeScratch, removeScratch } from '../util/scratch.js';
import { basename, join } from 'node:path';
import type { SandboxSpec } from '../sandbox/bwrap.js';
import { runDriver, runProcess } from '../sandbox/runProcess.js';
import type { DivisionSite } from './division.js';
import { ctJob, type CtRunRequest } from './runCtOperation.js';
import type { CtOperation } from './findingKinds.js';

/**
 * The division check (docs/method.md#constant-time-check): every division the scan found is watched
 * while the operation runs under memcheck, and its operands' definedness read at the instruction.
 * A secret makes memcheck's shadow bits of everything derived from it "undefined", so an operand
 * with a shadow bit set is secret-dependent, whatever the quotient flows into (KyberSlash's only
 * reaches output bits, where memcheck itself reports nothing).
 *
 * How: valgrind's gdbserver with precise registers (--vgdb=full) and its shadow registers
 * (--vgdb-shadow-registers=yes), driven by gdb in batch mode, a breakpoint at each site. At a hit,
 * gdb prints the shadow of the dividend (rdx:rax) and of a register divisor, or valgrind's
 * `get_vbits` of a memory one. Only x86-64 is read so: the ct phase runs on the host.
 */

/** Hits of one site read before its breakpoint is disabled for good: a hot loop would otherwise cost a gdb round trip (~1.5 ms) per division. */
const DIVISION_HITS_CAP = 512;

export type DivisionCheck = NonNullable<CtOperation['division_check']>;

interface Register {
  name: string;
  bits: number;
  shift: number;
}

const GPR = ['ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp', 'sp'];

/** An AT&T register name (`%r9d`, `%ecx`, `%ah`) as its 64-bit register, width and shift. */
export function registerOf(operand: string): Register | undefined {
  const r = operand.replace(/^%/, '');
  const numbered = /^r(\d+)([dwb]?)$/.exec(r);
  if (numbered) return { name: `r${numbered[1]}`, bits: { '': 64, d: 32, w: 16, b: 8 }[numbered[2]!]!, shift: 0 };
  for (const g of GPR) {
    if (r === `r${g}`) return { name: `r${g}`, bits: 64, shift: 0 };
    if (r === `e${g}`) return { name: `r${g}`, bits: 32, shift: 0 };
    if (r === g) return { name: `r${g}`, bits: 16, shift: 0 };
  }
  const low = /^([abcd])l$|^(si|di|bp|sp)l$/.exec(r);
  if (low) return { name: `r${low[1] ? `${low[1]}x` : low[2]}`, bits: 8, shift: 0 };
  const high = /^([abcd])h$/.exec(r);
  if (high) return { name: `r${high[1]}x`, bits: 8, shift: 8 };
  return undefined;
}

const mask = (bits: number) => (bits === 64 ? '' : ` & 0x${((1n << BigInt(bits)) - 1n).toString(16)}`);
const shadow = (reg: Register) => `(($${reg.name}s1 >> ${reg.shift})${mask(reg.bits)})`;

/** What the check reads at one site: gdb expressions for the dividend's shadow and the divisor's. */
interface SiteReading {
  dividend: string;
  divisor: { shadow: string } | { address: string; bytes: number } | undefined;
}

const SUFFIX_BITS: Record<string, number> = { b: 8, w: 16, l: 32, q: 64 };

/** The reading of an x86-64 `div`/`idiv` site, or undefined for an operand this check does not read. */
export function siteReading(site: Pick<DivisionSite, 'instruction' | 'operand'>): SiteReading | undefined {
  if (!/^i?div[bwlq]?$/.test(site.instruction) || !site.operand) return undefined;
  const operand = site.operand.trim();
  const reg = operand.startsWith('%') ? registerOf(operand) : undefined;
  const suffix = site.instruction.replace(/^i?div/, '');
  const bits = reg?.bits ?? SUFFIX_BITS[suffix];
  if (!bits) return undefined;
  // div r/m8 divides ax; wider ones divide rdx:rax at their width.
  const dividend = bits === 8 ? '($raxs1 & 0xffff)' : `(($raxs1${mask(bits)}) | ($rdxs1${mask(bits)}))`;
  if (reg) return { dividend, divisor: { shadow: shadow(reg) } };
  const memory = /^(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\)$/.exec(operand);
  if (!memory || memory[2] === '%rip') return { dividend, divisor: undefined };
  const [, disp, base, index, scale] = memory;
  const parts = [disp ? `(${disp})` : '0', ...(base ? [`$${base.slice(1)}`] : []), ...(index ? [`$${index.slice(1)}*${scale ?? 1}`] : [])];
  return { dividend, divisor: { address: `(long)(${parts.join(' + ')})`, bytes: bits / 8 } };
}

const quoteShell = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A gdb regular expression matching exactly the library's file name. */
const fileRegex = (path: string) => `${basename(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

/**
 * The gdb script: wait for the library to load, put a breakpoint on each readable site (at the
 * anchor's load address minus its link address, plus the site's), print the secret hits, disable a
 * site once it showed a secret or reached the cap, and once the program ended print every site's
 * hit count and the exit code. Lines the parent reads start with NGCC.
 */
function divisionScript(library: string, anchor: { name: string; address: number }, sites: readonly DivisionSite[]): string {
  const lines = [
    'set pagination off',
    'set confirm off',
    'set width 0',
    'set print thread-events off',
    // Memcheck's own reports must not stop the program: only the breakpoints do.
    'monitor v.set vgdb-error 1000000000',
    `catch load ${fileRegex(library)}`,
    'continue',
    'delete 1',
    `set $ngcc_base = (long)&'${anchor.name}' - 0x${anchor.address.toString(16)}`,
  ];
  const watched = sites.map((s, i) => ({ i, reading: siteReading(s) })).filter((w) => w.reading);
  for (const { i } of watched) lines.push(`set $ngcc_h${i} = 0`, `set $ngcc_done${i} = 0`);
  // The driver's window (native/bin/ct.c ngcc_ct_window): a site is watched only in the measured
  // calls, never in the preparation of their inputs (verify's signature is made by sign).
  lines.push('break ngcc_ct_window', 'commands', 'silent', 'if $rdi != 0');
  for (const { i } of watched) lines.push(`if $ngcc_done${i} == 0`, `enable $ngcc_b${i}`, 'end');
  lines.push('else');
  for (const { i } of watched) lines.push(`disable $ngcc_b${i}`);
  lines.push('end', 'continue', 'end');
  sites.forEach((site, i) => {
    const reading = siteReading(site);
    if (!reading) return;
    const h = `$ngcc_h${i}`;
    const b = `$ngcc_b${i}`;
    const done = `set $ngcc_done${i} = 1`;
    lines.push(`break *($ngcc_base + ${site.address})`, `set ${b} = $bpnum`, `disable ${b}`, 'commands', 'silent', `set ${h} = ${h} + 1`);
    const d = reading.divisor;
    if (d && 'address' in d) {
      // valgrind's get_vbits prints the bytes' shadow in hex: the parent reads the line after the tag.
      lines.push(`printf "NGCCMEM ${i} %lx\\n", ${reading.dividend}`, `eval "monitor get_vbits 0x%lx ${d.bytes}", ${d.address}`);
    } else {
      const divisor = d ? d.shadow : '0';
      lines.push(
        `if (${reading.dividend} | ${divisor}) != 0`,
        `printf "NGCCDIV ${i} %lx %lx\\n", ${reading.dividend}, ${divisor}`,
        done,
        `disable ${b}`,
        'end',
      );
    }
    lines.push(`if ${h} >= ${DIVISION_HITS_CAP}`, done, `disable ${b}`, 'end', 'continue', 'end');
  });
  lines.push('continue', 'printf "NGCCEXIT %d\\n", $_exitcode');
  sites.forEach((site, i) => {
    if (siteReading(site)) lines.push(`printf "NGCCHITS ${i} %d\\n", $ngcc_h${i}`);
  });
  lines.push('printf "NGCCEND\\n"');
  return `${lines.join('\n')}\n`;
}

/** The observations of gdb's output, or why it does not show a finished check. */
export function parseDivisionTrace(text: string, sites: readonly DivisionSite[]): DivisionCheck {
  const lines = text.split('\n');
  if (!lines.some((l) => l === 'NGCCEND')) return { failure: 'gdb did not finish the division check' };
  const secret = sites.map(() => new Set<'dividend' | 'divisor'>());
  const hits = sites.map(() => 0);
  const known = (i: number) => Number.isInteger(i) && i >= 0 && i < sites.length;
  const nonZero = (hex: string | undefined) => hex !== undefined && /[1-9a-f]/i.test(hex);
  for (const [n, line] of lines.entries()) {
    const f = line.trim().split(/\s+/);
    const i = Number(f[1]);
    if (!known(i)) continue;
    if (f[0] === 'NGCCDIV') {
      if (nonZero(f[2])) secret[i]!.add('dividend');
      if (nonZero(f[3])) secret[i]!.add('divisor');
    } else if (f[0] === 'NGCCMEM') {
      if (nonZero(f[2])) secret[i]!.add('dividend');
      // get_vbits prints groups of hex digits; anything else (an unaddressable byte's message) is not a reading.
      const vbits = lines[n + 1]?.trim() ?? '';
      if (/^[0-9a-f]+(?: [0-9a-f]+)*$/i.test(vbits) && nonZero(vbits)) secret[i]!.add('divisor');
    } else if (f[0] === 'NGCCHITS') hits[i] = Number(f[2]);
  }
  return {
    sites: sites.map((site, i) => {
      const reading = siteReading(site);
      return {
        address: site.address,
        hits: hits[i]!,
        secret: [...secret[i]!].sort(),
        ...(reading && !reading.divisor ? { divisor_unread: true } : {}),
      };
    }),
  };
}

export type DivisionCheckRequest = Omit<CtRunRequest, 'valgrind'> & { sites: readonly DivisionSite[] };

/** Whether a command is on this process's PATH (the sandbox's is the same, scrubbed of nothing it needs). */
const onPath = (tool: string) => (process.env.PATH ?? '/usr/bin:/bin').split(':').some((dir) => dir !== '' && existsSync(join(dir, tool)));

/** An exported function of the library and its link address: where gdb learns the load address. */
async function anchorOf(library: string, spec: SandboxSpec): Promise<{ name: string; address: number } | undefined> {
  const nm = await runProcess(['nm', '-D', '--defined-only', library], { timeoutMs: 60_000, maxOutputBytes: 64 << 20, sandbox: spec });
  for (const line of nm.stdout.split('\n')) {
    const [address, kind, name] = line.trim().split(/\s+/);
    if (address && name && (kind === 'T' || kind === 't') && /^[A-Za-z_][\w]*$/.test(name))
      return { name, address: Number.parseInt(address, 16) };
  }
  return undefined;
}

/**
 * The operation's calls under memcheck with every readable division site watched, in one sandboxed
 * process tree: valgrind (the driver's channel on fd 3, nothing else of ours) and gdb beside it,
 * whose output alone comes back on fd 4. A secret operand is a finding: the parent reads only
 * NGCC lines and wants gdb's end line; a line the library could add never clears a site.
 */
export async function runDivisionCheck(req: DivisionCheckRequest): Promise<DivisionCheck> {
  if (!req.sites.some((s) => siteReading(s))) return { sites: req.sites.map((s) => ({ address: s.address, hits: 0, secret: [] })) };
  const missing = ['gdb', 'vgdb'].filter((tool) => !onPath(tool));
  if (missing.length > 0) return { failure: `${missing.join(' and ')} not installed (the Debian packages gdb and valgrind)` };
  const scratch = makeScratch('divcheck');
  try {
    const spec: SandboxSpec = { mode: req.sandbox, readOnly: [req.driver, req.library], writable: [] };
    const anchor = await anchorOf(req.library, spec);
    if (!anchor) return { failure: 'the library exports no function to place the breakpoints by' };
    const script = join(scratch, 'division.gdb');
    writeFileSync(script, divisionScript(req.library, anchor, req.sites));
    const valgrind = [
      'valgrind',
      '--tool=memcheck',
      '-q',
      '--log-file=/dev/null',
      '--vgdb=full',
      '--vgdb-error=0',
      '--vgdb-shadow-registers=yes',
      '--child-silent-after-fork=yes',
      req.driver,
      req.library,
    ];
    // The shell exits with valgrind's status. A gdb that failed leaves valgrind waiting for it:
    // killed here, which the driver's missing END line then shows.
    const shell = [
      '"$@" 4>&- >&2 &',
      'P=$!',
      `gdb -nx -batch -ex "target remote | vgdb --wait=60 --pid=$P" -x ${quoteShell(script)} >&4 2>&4 </dev/null || kill -KILL $P 2>/dev/null`,
      'wait $P',
    ].join('\n');
    const run = await runDriver(['sh', '-c', shell, 'ngcc-division-check', ...valgrind], ctJob(req), {
      timeoutMs: req.timeoutMs,
      maxOutputBytes: 1 << 20,
      sideMaxBytes: 16 << 20,
      sandbox: { ...spec, readOnly: [...spec.readOnly, script] },
    });
    if (run.rejected) return { failure: `the division check did not finish: ${run.rejected.reason}` };
    if (run.run.exitCode !== 0 || run.output.status !== 'complete')
      return { failure: `the division check's driver ended ${run.output.status ?? `with exit code ${run.run.exitCode}`}` };
    return parseDivisionTrace(run.run.side?.text ?? '', req.sites);
  } finally {
    removeScratch(scratch);
  }
}
