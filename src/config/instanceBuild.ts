import { z } from 'zod';

/**
 * The per-instance build needs of candidate.yml: `defines`, `cflags` and `nist_names`. Every
 * value becomes one argv element of the compiler (never a shell word); the rules keep a manifest
 * from steering the compiler anywhere but the build of its own library.
 */

const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Printable ASCII without spaces: a macro value is one argv element and one token sequence. */
const DEFINE_VALUE = /^[!-~]*$/;

/** The harness's own macros (the NIST shim's names, its ICCS helpers): a define must not change them. */
const RESERVED_MACRO = /^NGCC_/;

/** Why a macro name or value is refused, or undefined when it is fine. */
function defineProblem(name: string, value: string): string | undefined {
  if (!C_IDENTIFIER.test(name)) return 'a macro name must be a C identifier';
  if (RESERVED_MACRO.test(name)) return 'names starting with NGCC_ are the harness’s own';
  if (!DEFINE_VALUE.test(value)) return 'a macro value is printable ASCII without spaces or control characters';
  return undefined;
}

/**
 * `{KYBER_K: 3}` (a value may be empty, for -DNAME) or `[KYBER_K=3, NDEBUG]`; either way an ordered
 * list of `NAME[=VALUE]`, each problem named at its key or item.
 */
export const definesSchema = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())], { error: 'a map {NAME: value} or a list [NAME=value, NAME]' })
  .transform((d, ctx) => {
    const items: string[] = [];
    const entries: Array<[string | number, string, unknown]> = Array.isArray(d)
      ? d.map((item, i) => {
          const text = typeof item === 'string' ? item : '';
          const eq = text.indexOf('=');
          return [i, eq < 0 ? text : text.slice(0, eq), typeof item === 'string' ? (eq < 0 ? null : text.slice(eq + 1)) : item];
        })
      : Object.entries(d).map(([name, value]) => [name, name, value]);
    for (const [at, name, value] of entries) {
      const shown = Array.isArray(d) ? `'${String(d[at as number])}': ` : '';
      if (value !== null && typeof value !== 'string' && typeof value !== 'number') {
        ctx.addIssue({ code: 'custom', path: [at], message: `${shown}a macro value is a string or a number (or empty, for -DNAME)` });
        continue;
      }
      const problem = defineProblem(name, value === null ? '' : String(value));
      if (problem) ctx.addIssue({ code: 'custom', path: [at], message: `${shown}${problem}` });
      else items.push(value === null ? name : `${name}=${value}`);
    }
    return items;
  });

/** The gcc options a manifest may add: families that change how code is compiled, nothing else. */
const CFLAG_FAMILY = /^-(O[0-3sgz]?$|Ofast$|f[a-z0-9]|m[a-z0-9]|W[a-z]|w$|std=|g|pedantic|ansi$|pthread$)/;

/**
 * Options of those families that write files, load code into the compiler, hand options to other
 * tools or select them: each refused with the reason.
 */
const REFUSED_CFLAGS: ReadonlyArray<[RegExp, string]> = [
  [/^-fplugin/, 'loads a compiler plugin'],
  [/^-fuse-ld=/, 'selects another linker'],
  [/^-W[lap],/, 'passes options to the linker, assembler or preprocessor'],
  [
    /^-fdump-|^-fopt-info|^-fsave-optimization-record|^-fstack-usage|^-fcallgraph-info|^-fdiagnostics-format=/,
    'writes files beside the library',
  ],
  [/^-f(profile|auto-profile|coverage|test-coverage|branch-probabilities)/, 'reads or writes profile files'],
  [/^-gsplit-dwarf/, 'writes files beside the library'],
  // gcc reads options out of these and runs them, or runs other programs: each would bring back
  // every option refused here (-wrapper, -fplugin, -B).
  [/^-fcompare-debug|^-fself-test/, 'hands options to a second compiler run'],
  [/^-foffload|^-fmodule-mapper|^-fmodules/, 'starts other programs'],
  [/\s/, 'holds a space: one option per entry'],
];

/** Why a cflags entry is refused, or undefined when it is allowed. */
function cflagProblem(flag: string): string | undefined {
  if (!flag.startsWith('-')) return 'is not an option (each entry is one compiler option, starting with -)';
  if (/^-D/.test(flag)) return 'defines a macro: put it under defines';
  if (/^-(I|L|l|include|imacros|isystem|iquote|idirafter)/.test(flag)) return 'names files or folders: use include, extra_sources or libs';
  for (const [pattern, why] of REFUSED_CFLAGS) if (pattern.test(flag)) return why;
  if (!CFLAG_FAMILY.test(flag))
    return 'is not an allowed option: -O…, -f…, -m…, -W…, -w, -std=…, -g…, -pedantic…, -ansi and -pthread are (not -o, -B, -specs, -wrapper, -x, @file)';
  return undefined;
}

export const cflagsSchema = z.array(
  z.string().superRefine((flag, ctx) => {
    const problem = cflagProblem(flag);
    if (problem) ctx.addIssue({ code: 'custom', message: `'${flag}' ${problem}` });
  }),
);

/** The names a NIST-API scheme must give, by candidate type (the shim's and the KAT driver's calls). */
const NIST_NAME_KEYS = {
  kem: ['keypair', 'enc', 'dec', 'pk_bytes', 'sk_bytes', 'ct_bytes', 'ss_bytes'],
  sig: ['keypair', 'sign', 'open', 'signature', 'verify', 'pk_bytes', 'sk_bytes', 'sig_bytes'],
} as const satisfies Record<string, readonly NistNameKey[]>;

/** A header of the scheme, found through its include folders (never above them, never absolute). */
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9_.+-]+(\/[A-Za-z0-9_.+-]+)*\.h$/, 'a header name relative to an include folder, ending in .h')
  .refine((h) => !h.split('/').includes('..'), 'must not climb out of the include folders (..)');

/** At most as many headers as the shim has NGCC_NIST_HEADER_<n> slots. */
const NIST_HEADERS_MAX = 4;

const functionName = z.string().regex(C_IDENTIFIER, 'a C function name').optional();
const sizeName = z
  .union([z.string().regex(C_IDENTIFIER, 'a C identifier (a macro) or a number'), z.number().int().positive()])
  .transform(String)
  .optional();

/**
 * The scheme's own entry points and size macros, for NIST-API code whose names are not
 * `<prefix>crypto_kem_*` / `<prefix>CRYPTO_*`: a function name, or for sizes a C identifier or a
 * number. Which keys are required depends on the candidate's type (checked with it).
 */
export const nistNamesSchema = z
  .object({
    headers: z.array(headerName).min(1).max(NIST_HEADERS_MAX).default(['api.h']),
    keypair: functionName,
    enc: functionName,
    dec: functionName,
    sign: functionName,
    open: functionName,
    signature: functionName,
    verify: functionName,
    pk_bytes: sizeName,
    sk_bytes: sizeName,
    ct_bytes: sizeName,
    ss_bytes: sizeName,
    sig_bytes: sizeName,
  })
  .strict();

export type NistNames = z.infer<typeof nistNamesSchema>;
export type NistNameKey = Exclude<keyof NistNames, 'headers'>;

/** The keys a type needs that `names` lacks, and the keys it gives that the type does not use. */
export function nistNamesProblems(names: NistNames, type: string): { missing: string[]; unused: string[] } {
  const wanted: readonly string[] = type === 'sig' ? NIST_NAME_KEYS.sig : type === 'kem' ? NIST_NAME_KEYS.kem : [];
  const given = Object.entries(names)
    .filter(([k, v]) => k !== 'headers' && v !== undefined)
    .map(([k]) => k);
  return { missing: wanted.filter((k) => !given.includes(k)), unused: given.filter((k) => !wanted.includes(k)) };
}
