import type { CtDivision, CtFile, CtFinding } from './findings.js';
import type { SandboxMode, SandboxSpec } from '../sandbox/bwrap.js';
import { runProcess } from '../sandbox/runProcess.js';
import { closure, ENTRY, parseDisassembly, STOPS } from '../profile/survey.js';

/**
 * Division instructions in code the exported API reaches. Integer division takes a time that
 * depends on its operands on most cores (KyberSlash), and stock valgrind does not report it:
 * memcheck only propagates the operands' undefinedness. So the sites come from the disassembly,
 * and memcheck's findings in the same function say whether the operands were shown tainted.
 */

/** A division site, before memcheck's findings are held against it. */
export type DivisionSite = Omit<CtDivision, 'tainted'>;

const HEADER = /^[0-9a-f]+ <([^>]+)>:$/;
/** `objdump -l`: the source line of the instructions that follow ("path/file.c:12 (discriminator 3)"). */
const SOURCE_LINE = /^(\S.*):([0-9]+)(?: \(discriminator [0-9]+\))?$/;
/**
 * x86-64 `div`/`idiv` (AT&T suffixes b/w/l/q, not the SSE `divss`/`divsd`) and AArch64
 * `udiv`/`sdiv`, after optional encoding prefixes.
 */
const DIVISION = /^\s*([0-9a-f]+):\s+(?:(?:rex\S*|data16|addr32)\s+)*(i?div[bwlq]?|[us]div)(?:\s+([^#<]*?))?\s*(?:#.*|<.*)?$/;

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * Every division instruction of an `objdump -d -l --no-show-raw-insn` listing, with its function
 * and, when the library has debug information, the file (base name, as memcheck names it) and line.
 */
export function parseDivisions(listing: string): DivisionSite[] {
  const sites: DivisionSite[] = [];
  let fn: string | undefined;
  let source: { file: string; line: number } | undefined;
  for (const line of listing.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      fn = h[1]!;
      source = undefined;
      continue;
    }
    const s = SOURCE_LINE.exec(line);
    if (s && !line.startsWith(' ')) {
      source = { file: baseName(s[1]!), line: Number(s[2]) };
      continue;
    }
    const d = DIVISION.exec(line);
    if (d && fn)
      sites.push({
        function: fn,
        instruction: d[2]!,
        ...(d[3] ? { operand: d[3] } : {}),
        address: `0x${d[1]!}`,
        ...(source ?? {}),
      });
  }
  return sites;
}

/** The functions the API reaches, from the listing and the dynamic symbol table (as the survey walks them). */
function reachableFunctions(listing: string, dynamicSymbols: string): Set<string> {
  const entries = dynamicSymbols
    .split('\n')
    .map((l) => (l.trim().split(/\s+/).pop() ?? '').replace(/@.*$/, ''))
    .filter((n) => ENTRY.test(n));
  return closure(entries, parseDisassembly(listing), STOPS);
}

export interface DivisionOptions {
  /** How objdump and nm are isolated (they parse a file a competitor wrote); default bwrap. */
  sandbox?: SandboxMode;
  /** The binutils of the library's architecture (e.g. aarch64-linux-gnu-objdump); default the host's. */
  objdump?: string;
  nm?: string;
}

/**
 * The division sites reachable from a built library's API. Runs objdump and nm in the sandbox and
 * writes nothing: the ct phase decides where the result goes.
 */
export async function divisionSites(library: string, opts: DivisionOptions = {}): Promise<DivisionSite[]> {
  const spec: SandboxSpec = { mode: opts.sandbox ?? 'bwrap', readOnly: [library], writable: [] };
  const [dis, dyn] = await Promise.all([
    runProcess([opts.objdump ?? 'objdump', '-d', '-l', '--no-show-raw-insn', library], {
      timeoutMs: 300_000,
      maxOutputBytes: 1 << 30,
      sandbox: spec,
    }),
    runProcess([opts.nm ?? 'nm', '-D', '--defined-only', library], { timeoutMs: 60_000, maxOutputBytes: 64 << 20, sandbox: spec }),
  ]);
  if (dis.exitCode !== 0) throw new Error(`objdump -d -l failed on ${library}: ${dis.stderr.split('\n')[0]}`);
  if (dyn.exitCode !== 0) throw new Error(`nm -D failed on ${library}: ${dyn.stderr.split('\n')[0]}`);
  const reached = reachableFunctions(dis.stdout, dyn.stdout);
  return parseDivisions(dis.stdout).filter((s) => reached.has(s.function));
}

/** Whether memcheck flagged the function: an unsuppressed finding of another kind in it. */
const taintedIn = (findings: readonly CtFinding[], fn: string) =>
  findings.some((f) => !f.suppressed && f.kind !== 'division' && f.function === fn);

/**
 * The sites of an operation that held a secret: read at the instruction by the division check
 * where it ran, else those in a function memcheck flagged (a division it cannot show tainted).
 */
function secretSites(
  o: CtFile['operations'][string],
  sites: readonly DivisionSite[],
): Array<DivisionSite & { secret?: Array<'dividend' | 'divisor'> }> {
  const check = o.division_check;
  if (check && 'sites' in check)
    return sites.flatMap((s) => {
      const seen = check.sites.find((x) => x.address === s.address);
      return seen && seen.secret.length > 0 ? [{ ...s, secret: seen.secret }] : [];
    });
  return sites.filter((s) => taintedIn(o.findings ?? [], s.function));
}

/**
 * The ct file with its division sites judged: a site that held a secret in an operation's calls
 * becomes a `division` finding of that operation (flagging a clean one); every site is listed in
 * `divisions` with `tainted` saying whether any operation showed it so.
 */
export function withDivisions(ct: CtFile, sites: readonly DivisionSite[]): CtFile {
  const tainted = new Set<string>();
  const operations = Object.fromEntries(
    Object.entries(ct.operations).map(([op, o]) => {
      // Division findings come only from here: a kept file's are judged again, never doubled, and
      // never taken for memcheck's flag in their function.
      const findings = (o.findings ?? []).filter((f) => f.kind !== 'division');
      const added: CtFinding[] = secretSites({ ...o, findings }, sites).map((s) => {
        tainted.add(s.address);
        return {
          kind: 'division',
          function: s.function,
          // An address the debug information does not place keeps the finding, unplaced.
          file: s.file ?? '',
          line: s.line ?? 0,
          count: 1,
          suppressed: false,
          // A finding's reason is its suppression's (validate): the instruction and address are in `divisions`.
          reason: '',
          instruction: s.instruction,
          ...(s.secret ? { secret_operands: s.secret } : {}),
        };
      });
      const open = [...findings, ...added].some((f) => !f.suppressed);
      const status: typeof o.status = o.status === 'clean' || o.status === 'flagged' ? (open ? 'flagged' : 'clean') : o.status;
      return [op, { ...o, status, findings: [...findings, ...added] }];
    }),
  );
  return { ...ct, operations, divisions: sites.map((s) => ({ ...s, tainted: tainted.has(s.address) })) };
}
