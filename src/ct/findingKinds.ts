/**
 * The constant-time check's evidence, `ct/<id>/<label>.json` (docs/evidence-format.md#constant-time-check).
 * Fields beyond the contract's (`failure`, `reason`, `seconds`, …) are optional additions.
 */

/** What memcheck saw depend on a secret: a branch, a memory address, a system call's argument; `division` comes from the division finder. */
export const CT_KINDS = ['branch', 'index', 'division', 'syscall'] as const;

/** What each kind of site means, in one line: the pages and the pull-request comment say it beside the sites. */
export const CT_KIND_MEANING: Readonly<Record<(typeof CT_KINDS)[number], string>> = {
  branch:
    'a conditional jump on a secret: which way it goes, and its time through the branch predictor, can tell the secret; one the compiler made from branch-free source is a leak all the same (Clangover, CVE-2024-37880)',
  index: 'a memory address computed from a secret: which cache line it touches can tell the secret (cache-timing attacks)',
  division: "a division whose operands depend on a secret: on most cores its latency follows the operands' values (KyberSlash)",
  syscall: 'a system call whose argument depends on a secret: the secret leaves the process',
};
export type CtKind = (typeof CT_KINDS)[number];

/** What a branch finding's `compiler_made` means, beside the site on the page and in the pull-request comment. */
export const COMPILER_MADE_NOTE: Readonly<Record<'loop-bound' | 'no-branch', string>> = {
  'loop-bound':
    "made by the compiler from a loop over a fixed count: the source's bound is public, but the jump memcheck saw is decided by a secret; a finding until the machine code shows the operand that decides it public",
  'no-branch':
    'made by the compiler: the source has no branch on this line, and the machine code branches on a secret here, a real leak (Clangover, CVE-2024-37880: clang turned ML-KEM’s branch-free message decoding into such a branch)',
};

export const CT_STATUSES = ['clean', 'flagged', 'skipped', 'failed'] as const;
export type CtStatus = (typeof CT_STATUSES)[number];

/** One site: the first frame inside the library of every report at it. */
export interface CtFinding {
  kind: CtKind;
  function: string;
  /** The source file's base name, as the debug information names it (a path would differ between compilers and folders). */
  file: string;
  line: number;
  /** Times memcheck reported the site over all calls. */
  count: number;
  suppressed: boolean;
  /** The suppression's reason; empty when the finding is not suppressed. */
  reason: string;
  /** The site's callers inside the library, innermost first ("fn file:line"), to tell sites reached by different paths apart. */
  stack?: string[];
  /** A division finding's instruction as the disassembly names it (`div`, `idivq`). */
  instruction?: string;
  /**
   * A branch the source does not make on a secret (ct/sourceHint.ts): `loop-bound`, the source line
   * is a loop over a fixed count; `no-branch`, it has no branch. The compiler's, and counted like any
   * branch: a compiler-made branch on a secret is a leak (Clangover), never benign by its origin.
   */
  compiler_made?: keyof typeof COMPILER_MADE_NOTE;
  /** A division finding's operands that held a secret, as the division check read them. */
  secret_operands?: Array<'dividend' | 'divisor'>;
}

export interface CtOperation {
  status: CtStatus;
  /** Calls of the operation run under memcheck (0 when skipped or failed before any). */
  calls: number;
  findings: CtFinding[];
  /** Why the operation was skipped or failed; for a clean one with no secret input, why. */
  reason?: string;
  /** Wall seconds of the valgrind process. */
  seconds?: number;
  /** Seconds of the calls themselves under memcheck, as the driver measured them (no start-up). */
  calls_s?: number;
  /** Reports whose every frame lies outside the library (the driver's own checks of secret outputs): not findings. */
  outside_library?: number;
  /**
   * The division check (ct/divisionCheck.ts): each division site's operands read at the instruction
   * in this operation's calls, or why it could not run (the sites are then judged by memcheck's
   * findings in their function, as before it existed).
   */
  division_check?: { sites: DivisionObservation[] } | { failure: string };
  /** What the calls ran of the library, counted by gcov in a native run of the same calls (ct/coverage.ts), or why not. */
  coverage?: CtCoverage | { failure: string };
}

/**
 * What a constant-time verdict covers (docs/method.md#coverage): the same calls of the operation,
 * with the same generator and seed, run natively in a build with gcc's coverage counters
 * (ct/build.ts CT_COVERAGE_BUILD), then counted by gcov. memcheck can only judge code that ran:
 * a "clean" over a fifth of the library says less than one over all of it.
 */
export interface CtCoverage {
  /** The library's own functions (the harness's files left out), and those the calls entered. */
  functions: number;
  functions_run: number;
  /** Its source lines with code, and those the calls ran. */
  lines: number;
  lines_run: number;
  /** Functions the calls never entered, `file:function`, sorted, at most NEVER_RUN_SHOWN. */
  never_run: string[];
  /**
   * Paths not taken inside functions the calls did enter (a rejection loop's retry, an error
   * branch): lines never run, as `file:function:first-last` ranges in file and line order, at most
   * UNTAKEN_SHOWN; and how many such lines in all. Absent in coverage counted before they were.
   */
  untaken?: string[];
  untaken_lines?: number;
  /**
   * The search for rarely taken paths (ct.path_calls, docs/method.md#rare-paths): `calls` calls run
   * natively found the operation's paths and `needed` of them, from the first, took them all; the
   * check ran `needed` calls unless its budget held it to fewer, and then `beyond` names the lines
   * only the later calls took (ranges as `untaken`) and `beyond_lines` counts them. `asked` is the
   * setting it ran under (`calls` is fewer when the budget said so).
   */
  paths?: { asked: number; calls: number; needed: number; beyond?: string[]; beyond_lines?: number };
}

/** One division site as the division check saw it in an operation's calls. */
interface DivisionObservation {
  address: string;
  /** Times it ran in the measured calls, up to the check's cap. */
  hits: number;
  /** Which operands held a secret at some hit; empty when none did. */
  secret: Array<'dividend' | 'divisor'>;
  /** Only the dividend could be read (a RIP- or segment-relative divisor). */
  divisor_unread?: boolean;
}

/**
 * A division instruction in code the API reaches (ct/division.ts). `tainted`: memcheck flagged the
 * division's function, so its operands may depend on a secret (the finding is then of kind
 * `division`); false: "division reachable, operands not shown tainted".
 */
export interface CtDivision {
  function: string;
  instruction: string;
  /** The instruction's operands as the disassembly writes them (`%r9d`, `0x8(%rsp)`). */
  operand?: string;
  address: string;
  file?: string;
  line?: number;
  /**
   * A secret reached the operands: read at the instruction by the division check, or, where it
   * could not run, memcheck flagged the division's function.
   */
  tainted: boolean;
}

/**
 * One more build of the instance, checked the same way (ngcc-perf.yml ct.variants × ct.compilers,
 * docs/method.md#every-build): a leak can be the compiler's or the flag set's (KyberSlash's division
 * is gcc's at -Os only). No coverage of its own: the source paths are the measured build's.
 */
export interface CtBuildCheck {
  /** `<compiler> <flag set>` as the pages name it: `gcc resource`, `clang performance`. */
  name: string;
  /** The compiler's `--version` line. */
  compiler: string;
  variant: string;
  flags?: string[];
  ct_library_sha256?: string;
  operations: Record<string, CtOperation>;
  divisions?: CtDivision[];
  /** The division sites its calls reach, judged again with the suppressions on a kept file (as CtEvidence's). */
  division_sites?: Array<Omit<CtDivision, 'tainted'>>;
  /** Why the build could not be checked at all (its relink failed): the first error line and the log. */
  failure?: string;
  /**
   * The campaign's own compiler and flag set (ngcc-perf.yml `compiler`, `flags.variant`): in the
   * matrix only when the measured build fell back to the harness defaults. A failure of it is the
   * published figures' configuration, which `fail-on: ct` fails on.
   */
  campaign_build?: boolean;
  /** This build's calls under memcheck against the measured build's native call (the KAT's): its own budget decides what it checks. */
  slowdown?: CtSlowdown;
}

export interface CtEvidence {
  schema: 1;
  tool: string;
  library_sha256: string;
  operations: Record<string, CtOperation>;
  /** Additions: the instance, the build that ran, how many calls and what marked secrets. */
  candidate?: string;
  label?: string;
  /** SHA-256 of the ct build (the library relinked with -g and the generator wrappers). */
  ct_library_sha256?: string;
  flags?: string[];
  /** The generators whose output was marked secret (native/linked/ct_wrap.c). */
  secret_generators?: string[];
  /** The harness's version (its native sources, native/bin/ct.c and native/linked/ct_wrap.c among them): another one redoes the check. */
  harness_version?: string;
  /** The secret key's first bytes not marked secret (candidate.yml ct.public_sk_bytes), when any. */
  public_sk_bytes?: number;
  /** SHA-256 of the candidate's ct-suppressions.yml when there was one. */
  suppressions_sha256?: string;
  /** Division sites reachable from the API (an extension of §8: absent in files that predate it). */
  divisions?: CtDivision[];
  /** The other builds checked (ct.variants × ct.compilers), beside this, the measured one. */
  builds?: CtBuildCheck[];
  /** This build's name in the same terms (`gcc reference`, or `gcc harness-default` after a fallback). */
  build_name?: string;
  /** The division finder's sites as found (kept so that a kept check is held against them again). */
  division_sites?: Array<Omit<CtDivision, 'tainted'>>;
  /** Why the division finder could not run. */
  divisions_failure?: string;
  /** The compiler of the ct build (`gcc --version`'s first line): a finding holds for this compiler and `flags`. */
  compiler?: string;
  /**
   * How many times slower than natively this library runs under memcheck, measured by one call of
   * its cheapest operation (campaign/ctPhase.ts): what each operation's prediction and timeout use.
   */
  slowdown?: CtSlowdown;
}

type CtSlowdown = { operation: string; factor: number; calls_s: number; native_s: number } | { failure: string };

/** The status an operation's findings give: flagged when one is not suppressed. */
export const statusOf = (findings: readonly CtFinding[]): CtStatus => (findings.some((f) => !f.suppressed) ? 'flagged' : 'clean');
