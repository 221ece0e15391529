import { z } from 'zod';
import {
  CANARY_MARGIN,
  ADAPTIVE_CI_TARGET,
  ADAPTIVE_MAX_TRIALS,
  ADAPTIVE_MIN_TRIALS,
  ADAPTIVE_TRIAL_TARGET_S,
  CALL_PLAN_S,
  CT_CALLS,
  CT_MAX_CALLS,
  CT_PATH_CALLS,
  CT_OP_BUDGET_S,
  CT_STARTUP_S,
  CT_VALGRIND_FACTOR,
  MAX_INSTANCES_PER_CANDIDATE,
  MAX_MEMORY_LIMIT_MB,
  MAX_MIN_MEASUREMENTS,
  MAX_SECURITY_BITS,
  MAX_TRIALS,
  MAX_WARMUPS,
  MIN_SECURITY_BITS,
  MIN_MEMORY_LIMIT_MB,
  SYSTEM_ID,
  SYSTEM_ID_RULE,
} from './defaults.js';
import { cflagsSchema, definesSchema, nistNamesProblems, nistNamesSchema } from './instanceBuild.js';

export const CANDIDATE_ID = /^[a-z]+-[0-9]+$/;
/**
 * The ICCS helper baseline's id (src/campaign/iccsBaseline.ts): no candidate's, so that the
 * baseline's evidence can sit beside a campaign's without a clash; config/campaign.ts reserves it.
 */
export const ICCS_BASELINE_ID = 'iccs';
const LABEL = /^[A-Za-z0-9_-]+$/;

const relPathList = z.array(z.string().min(1)).default([]);

export const instanceSchema = z
  .object({
    label: z.string().regex(LABEL, 'must match [A-Za-z0-9_-]+'),
    dir: z.string().min(1),
    sources: z.array(z.string().min(1)).optional(),
    extra_sources: relPathList,
    include: relPathList,
    /** Extra libraries to link, as for gcc's -l (e.g. ':libcrypto.so.3'). */
    libs: z.array(z.string().regex(/^[:A-Za-z0-9_.+-]+$/, 'must be a library name as for -l')).default([]),
    nist_prefix: z
      .string()
      .regex(/^[A-Za-z0-9_]*$/, 'must be a C identifier prefix')
      .optional(),
    /** type hash: the digest length in bits, when CryptHash_AlgorithmInstance.h does not say it (config/hashInstance.ts). */
    digest_bits: z.number().int().min(8).max(65536).multipleOf(8).optional(),
    /** Per-instance -D macros (how most submissions choose a parameter set) and compiler options. */
    defines: definesSchema.default([]),
    cflags: cflagsSchema.default([]),
    /** api: nist only: the scheme's own entry-point and size names, when not <prefix>crypto_*. */
    nist_names: nistNamesSchema.optional(),
    /**
     * api: nist only: the sources that are the submission's own generator (`randombytes`), left out
     * for the harness's; `[]` keeps them all. Absent: judged by the symbols each file defines.
     */
    own_generator: z.array(z.string().min(1)).optional(),
    /** The candidate's `ct` for this instance alone (a candidate of several schemes: Falcon's one-byte header). */
    ct: z.lazy(() => ctCandidateSchema).optional(),
    /** The security the submitter claims for this instance: what the summary's rankings group by (report/rankings.ts). */
    nist_level: z.number().int().min(1).max(5).optional(),
    security_bits: z.number().int().min(MIN_SECURITY_BITS).max(MAX_SECURITY_BITS).optional(),
  })
  .strict();

/** The security an instance's candidate.yml claims: what the summary's rankings group by (report/rankings.ts). */
export interface DeclaredSecurity {
  nist_level?: number;
  security_bits?: number;
}

/** An instance's claim, when it makes one (kept in build.json's `security`). */
export function declaredSecurity(i: Pick<InstanceSpec, 'nist_level' | 'security_bits'>): DeclaredSecurity | undefined {
  if (i.nist_level === undefined && i.security_bits === undefined) return undefined;
  return {
    ...(i.nist_level !== undefined ? { nist_level: i.nist_level } : {}),
    ...(i.security_bits !== undefined ? { security_bits: i.security_bits } : {}),
  };
}

/** candidate.yml `ct`: the secret key's first bytes that are a public format header (Falcon's one). */
const ctCandidateSchema = z
  .object({
    public_sk_bytes: z
      .number()
      .int()
      .min(0)
      .max(1 << 20)
      .default(0),
  })
  .strict();

export const candidateSchema = z
  .object({
    id: z.string().refine((id) => CANDIDATE_ID.test(id) || id === ICCS_BASELINE_ID, 'must match [a-z]+-[0-9]+'),
    type: z.enum(['kem', 'sig', 'kex', 'hash']),
    algorithm: z.string().min(1),
    page: z.string().url().optional(),
    api: z.enum(['iccs', 'nist']).default('iccs'),
    kat_rng: z.enum(['iccs-drng', 'nist-ctr-drbg', 'hqc']).optional(),
    instances: z.array(instanceSchema).min(1).max(MAX_INSTANCES_PER_CANDIDATE),
    /** The constant-time check: `public_sk_bytes`, the secret key's first bytes that are a public format header (Falcon's one). */
    ct: ctCandidateSchema.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.type === 'hash' && c.api !== 'iccs')
      ctx.addIssue({ code: 'custom', path: ['api'], message: 'type hash has the ICCS API (CryptHash) only' });
    // KEX_AlgorithmInstance.h has no NIST form, and its KAT is the ICCS one (KAT_KEX.c).
    if (c.type === 'kex' && c.api !== 'iccs')
      ctx.addIssue({ code: 'custom', path: ['api'], message: 'a key exchange (type: kex) has only the ICCS API' });
    if (c.type === 'kex' && c.kat_rng !== undefined && c.kat_rng !== 'iccs-drng')
      ctx.addIssue({ code: 'custom', path: ['kat_rng'], message: 'a key exchange (type: kex) has only the ICCS KAT (iccs-drng)' });
    const seen = new Set<string>();
    c.instances.forEach((inst, i) => {
      if (seen.has(inst.label))
        ctx.addIssue({ code: 'custom', path: ['instances', i, 'label'], message: `duplicate label '${inst.label}'` });
      seen.add(inst.label);
      if (inst.nist_prefix !== undefined && c.api !== 'nist')
        ctx.addIssue({ code: 'custom', path: ['instances', i, 'nist_prefix'], message: 'only allowed with api: nist' });
      if (inst.own_generator !== undefined && c.api !== 'nist')
        ctx.addIssue({ code: 'custom', path: ['instances', i, 'own_generator'], message: 'only allowed with api: nist' });
      if (inst.digest_bits !== undefined && c.type !== 'hash')
        ctx.addIssue({ code: 'custom', path: ['instances', i, 'digest_bits'], message: 'only allowed with type: hash' });
      if (inst.nist_names !== undefined) nistNamesIssues(c.api, c.type, inst, i, ctx);
    });
    if (c.kat_rng === 'hqc' && c.api !== 'nist')
      ctx.addIssue({ code: 'custom', path: ['kat_rng'], message: 'hqc is a NIST-API generator: only allowed with api: nist' });
  });

/** nist_names: only for api: nist, instead of nist_prefix, with every name the type calls. */
function nistNamesIssues(api: string, type: string, inst: z.infer<typeof instanceSchema>, i: number, ctx: z.RefinementCtx): void {
  const path = ['instances', i, 'nist_names'];
  if (api !== 'nist') ctx.addIssue({ code: 'custom', path, message: 'only allowed with api: nist' });
  if (inst.nist_prefix !== undefined)
    ctx.addIssue({ code: 'custom', path, message: 'set nist_prefix or nist_names, not both (nist_names gives whole names)' });
  const { missing, unused } = nistNamesProblems(inst.nist_names!, type);
  if (missing.length > 0) ctx.addIssue({ code: 'custom', path, message: `a ${type} needs ${missing.join(', ')}` });
  if (unused.length > 0) ctx.addIssue({ code: 'custom', path, message: `${unused.join(', ')}: not used by a ${type}` });
}

/** planning.adaptive: trials stop once the mean per call is known to ±ci_target (measure/precision.ts). */
const adaptiveSchema = z
  .object({
    /** Every run of the campaign plans adaptively (the CLI's `--adaptive` does it for one run). */
    enabled: z.boolean().default(false),
    /** The action's nightly runs plan adaptively unless this is false. */
    nightly: z.boolean().default(true),
    ci_target: z.number().positive().max(1).default(ADAPTIVE_CI_TARGET),
    // An interval needs two trials.
    min_trials: z.number().int().min(2).max(MAX_TRIALS).default(ADAPTIVE_MIN_TRIALS),
    max_trials: z.number().int().min(2).max(MAX_TRIALS).default(ADAPTIVE_MAX_TRIALS),
    trial_target_s: z.number().positive().default(ADAPTIVE_TRIAL_TARGET_S),
  })
  .strict()
  .refine((a) => a.min_trials <= a.max_trials, { message: 'must be at least min_trials', path: ['max_trials'] });

export const planningSchema = z
  .object({
    trials: z.number().int().min(1).max(MAX_TRIALS).default(5),
    trial_target_s: z.number().positive().default(1),
    op_budget_s: z.number().positive().default(60),
    /** An operation whose call takes this many seconds or more is planned in calls (measure/plan.ts planCalls). */
    call_plan_s: z.number().positive().default(CALL_PLAN_S),
    min_measurements: z.number().int().min(1).max(MAX_MIN_MEASUREMENTS).default(100),
    warmups: z.number().int().min(0).max(MAX_WARMUPS).default(3),
    process_timeout_s: z.number().positive().default(300),
    kat_timeout_s: z.number().positive().default(600),
    build_timeout_s: z.number().positive().default(600),
    /** Address-space cap for KAT and timing processes: a submission that eats memory fails alone. */
    // At most 1 TiB: far beyond any host, and far below what the shell's ulimit -v (KiB) can hold.
    memory_limit_mb: z.number().int().min(MIN_MEMORY_LIMIT_MB).max(MAX_MEMORY_LIMIT_MB).default(8192),
    disturbed_retries: z.number().int().min(0).default(2),
    min_clock_ratio: z.number().positive().max(1).default(0.95),
    /** A trial whose canary ran this many times the host's recent reference is disturbed (measure/canary.ts); 0 turns the rule off. */
    canary_margin: z.union([z.literal(0), z.number().min(1.05)]).default(CANARY_MARGIN),
    adaptive: adaptiveSchema.default(adaptiveSchema.parse({})),
  })
  .strict();

const systemSchema = z
  .object({
    description: z.string().optional(),
    cpu: z.number().int().min(0).optional(),
    /** Cores a run may take any free one of, per instance (host-wide locks keep runs apart); instead of `cpu`. */
    cpus: z
      .array(z.number().int().min(0))
      .min(1)
      .refine((l) => new Set(l).size === l.length, 'lists a CPU twice')
      .optional(),
    fixed_clock_hz: z.number().positive().optional(),
    /** With several `cpus`: an instance's operations each on a timing core of its own, at once (default SIDE_BY_SIDE_TIMING). */
    side_by_side: z.boolean().optional(),
  })
  .strict()
  .refine((s) => s.cpu === undefined || s.cpus === undefined, { message: 'set cpu or cpus, not both', path: ['cpus'] });

/** The ICCS guide's flag sets (compile/flags.ts spells their flags). */
const FLAG_VARIANTS = ['reference', 'performance', 'resource'] as const;

/** A compiler as ngcc-perf.yml names it: a system compiler's name on PATH (env/toolchain.ts systemCompiler). */
const compilerName = z
  .string()
  .regex(/^[A-Za-z0-9_.+-]+$/, 'expected the name of a system compiler on PATH (gcc, clang, gcc-12): no path, blank or option');

export const settingsSchema = z
  .object({
    planning: planningSchema.default(planningSchema.parse({})),
    systems: z.record(z.string().regex(SYSTEM_ID, `a system id must match the rule: ${SYSTEM_ID_RULE}`), systemSchema).default({}),
    flags: z
      .object({
        variant: z.enum(FLAG_VARIANTS).default('reference'),
        extra: z.array(z.string()).default([]),
      })
      .strict()
      .default({ variant: 'reference', extra: [] }),
    profile: z
      .object({
        /** Seconds of profiled calls per operation. */
        target_s: z.number().positive().default(0.2),
        /** Fresh profiling processes per operation, interleaved across operations; the median round is kept. */
        rounds: z.number().int().min(1).max(50).default(5),
        /** Symmetric entry points wrapped in NIST-API code (default: the whole catalog of native/linked/hashprof/wrap_nist.c). */
        nist_symbols: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
      })
      .strict()
      .default({ target_s: 0.2, rounds: 5 }),
    /** The constant-time check (phase `ct`): calls per operation under memcheck and the budget that skips an operation. */
    ct: z
      .object({
        /** The action's nightly and pull-request runs add the phase (the CLI's runs take it from `--phases`). */
        enabled: z.boolean().default(false),
        calls: z.number().int().min(1).max(CT_MAX_CALLS).default(CT_CALLS),
        /** Calls run natively to find rarely taken paths; the check makes as many as take them all (0 or ≤ calls: no search). */
        path_calls: z.number().int().min(0).max(CT_MAX_CALLS).default(CT_PATH_CALLS),
        op_budget_s: z.number().positive().default(CT_OP_BUDGET_S),
        valgrind_factor: z.number().positive().default(CT_VALGRIND_FACTOR),
        startup_s: z.number().min(0).default(CT_STARTUP_S),
        /**
         * Builds checked besides the measured one (docs/method.md#every-build): each of the guide's
         * flag sets named here with each compiler of `compilers` (none: the campaign's `compiler`).
         */
        variants: z.array(z.enum(FLAG_VARIANTS)).default([...FLAG_VARIANTS]),
        compilers: z.array(compilerName).default([]),
      })
      .strict()
      .default({
        enabled: false,
        calls: CT_CALLS,
        path_calls: CT_PATH_CALLS,
        op_budget_s: CT_OP_BUDGET_S,
        valgrind_factor: CT_VALGRIND_FACTOR,
        startup_s: CT_STARTUP_S,
        variants: [...FLAG_VARIANTS],
        compilers: [],
      }),
    /** How code of submissions is isolated: bubblewrap, or `none` (the explicit opt-out, named on the method page). */
    sandbox: z.enum(['auto', 'bwrap', 'unshare', 'none']).default('auto'),
    /**
     * The compiler every submission is built with (its flags are the guide's either way): a command
     * the system has on PATH (`gcc`, `clang`, `gcc-12`; env/toolchain.ts systemCompiler). The
     * harness's own tools stay on gcc.
     */
    compiler: compilerName.default('gcc'),
    catalogs: z
      .object({ external_sizes: z.string().default('external_sizes.csv') })
      .strict()
      .default({ external_sizes: 'external_sizes.csv' }),
  })
  .strict();

export type InstanceSpec = z.infer<typeof instanceSchema>;
export type CandidateSpec = z.infer<typeof candidateSchema>;
export type Planning = z.infer<typeof planningSchema>;
export type CampaignSettings = z.infer<typeof settingsSchema>;
