/**
 * Every default the CLI, the action and the campaign manifests share, written once. action.yml's
 * `default:` fields repeat these for GitHub's documentation; a test keeps the two equal.
 */

/** System ids name evidence folders and sticky-comment markers: one rule for both. */
export const SYSTEM_ID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
export const SYSTEM_ID_RULE = 'a letter or digit, then letters, digits, _ or -';

/** What fails a pull request's check unless the caller says otherwise. */
export const DEFAULT_FAIL_ON = 'regression,kat';

/** A change counts only from this effect size (percent), and only when also significant. */
export const DEFAULT_THRESHOLD_PCT = 3;
/** Significance level of the trial-level permutation test. */
export const DEFAULT_ALPHA = 0.01;
/**
 * Trials per side, at least, of a paired run (base and head interleaved): the signed-rank test of
 * n pairs cannot go below p = 2/2^n, so DEFAULT_ALPHA needs 8 pairs. With 10, a +12% slowdown
 * under a competitor on the core was called in 79-83% of rows (benchmarks (i)): pairs that disagree
 * by the VM's noise left p just above 0.01; 16 give the test room for them.
 */
export const PAIRED_TRIALS = 16;
/**
 * A pull request's extra paired rounds: a row the first PAIRED_TRIALS pairs leave inconclusive or
 * noisy is measured again, this many pairs more, and judged on all of its pairs (about as much
 * again as the first rounds). Each input is at most MAX_PR_PAIRS, which bounds what one row can cost.
 */
export const PR_EXTRA_ROUNDS = PAIRED_TRIALS;
export const MAX_PR_PAIRS = 100;
/**
 * Limits of what a campaign may ask for, checked before anything runs (docs/campaign.md#limits):
 * beyond them a typo (`warmups: 1e12`) or a generated manifest gone wrong would cost hours or the
 * host's memory before failing. A manifest file (candidate.yml, ngcc-perf.yml, kat.sha256) is a
 * few kilobytes; a Round-1 campaign some hundreds of instances.
 */
export const MAX_MANIFEST_BYTES = 1 << 20;
export const MAX_INSTANCES_PER_CANDIDATE = 256;
export const MAX_CAMPAIGN_INSTANCES = 4096;
/** candidate.yml `security_bits`: a claimed strength outside these is a typo (1280 for 128), not a claim. */
export const MIN_SECURITY_BITS = 64;
export const MAX_SECURITY_BITS = 1024;
export const MAX_TRIALS = 1000;
export const MAX_WARMUPS = 10_000;
export const MAX_MIN_MEASUREMENTS = 1_000_000;
/**
 * planning.memory_limit_mb: a driver needs some tens of MiB before the library allocates anything,
 * and a timing driver's trusted half maps the 46 MiB book it shares with the library and keeps up to
 * 32 MiB of slots of its own (native/core/held.h): under 96 MiB it could hold no window of a large batch.
 */
export const MIN_MEMORY_LIMIT_MB = 128;
export const MAX_MEMORY_LIMIT_MB = 1 << 20;

/**
 * One instance's operations on several timing cores at once (ngcc-perf.yml `systems.<id>.side_by_side`,
 * docs/campaign.md#side-by-side-timing): off until a measurement on the bench machine shows that two
 * trials at once leave each other's figures alone (docs/benchmarks.md#side-by-side-timing).
 */
export const SIDE_BY_SIDE_TIMING = false;

/** A peak-RSS change below this many bytes is page-level noise, not reported (docs/statistics.md#always-reported). */
export const RSS_NOISE_BYTES = 64 * 1024;
/**
 * What a sandboxed driver process costs besides its calls (its start, the library's load, its
 * exit): 81–121 ms a process on the 2-core VM of benchmarks (u″). A timing process's, profile round's
 * or memory run's timeout scales with its calls plus this, so a slow host's start does not eat a tight one.
 */
export const PROCESS_FIXED_S = 0.15;
/**
 * `calibrate`'s paired A/A checks of the whole campaign: three give each row three verdicts, and a
 * campaign of 30 rows 90 comparisons (0 false alarms in 90 bound the rate below 3.3 % at 95 %).
 */
export const CALIBRATION_REPEATS = 3;

/**
 * The nightly history rule: with at least HISTORY_MIN_RUNS past runs, a change must also exceed
 * HISTORY_SIGMAS times their coefficient of variation; the last HISTORY_RUNS versions are read.
 */
export const HISTORY_MIN_RUNS = 3;
export const HISTORY_SIGMAS = 3;
export const HISTORY_RUNS = 8;
/** Data-branch commits read for the history: several may carry the same measurement. */
export const HISTORY_COMMITS_READ = 3 * HISTORY_RUNS;

/** Trend pages (report --history, the action's history-nights): the nights read by default and at most. */
const TREND_NIGHTS = 30;
export const MAX_TREND_NIGHTS = 100;

/**
 * The night rule (compare/nights.ts, docs/statistics.md#nights). A change between nights is called at
 * NIGHT_ALPHA (two-sided, Bonferroni over a search's splits): at most one false claim in 200
 * operation-nights of unchanged code. A step of unknown cause needs NIGHT_MIN_BEFORE nights before
 * it and NIGHT_MIN_AFTER after. The host's move is the median of at least HOST_SHIFT_MIN_ROWS
 * unchanged rows. The night noise is measured on NIGHT_NOISE_MIN_PAIRS pairs of unchanged nights or
 * taken to be NIGHT_NOISE_UNMEASURED, and is never below NIGHT_NOISE_FLOOR. A comparison that could
 * not have shown NIGHT_NOISY_FACTOR thresholds is noisy.
 */
export const NIGHT_ALPHA = 0.005;
export const NIGHT_MIN_BEFORE = 2;
export const NIGHT_MIN_AFTER = 2;
export const HOST_SHIFT_MIN_ROWS = 3;
export const NIGHT_NOISE_MIN_PAIRS = 8;
export const NIGHT_NOISE_UNMEASURED = 0.03;
export const NIGHT_NOISE_FLOOR = 0.005;
export const NIGHT_NOISY_FACTOR = 3;
/** A row's own night noise is an upper bound at this confidence on what its nights show (compare/nights.ts rowNoise). */
export const NIGHT_NOISE_CONFIDENCE = 0.8;

/**
 * A row is unstable on the trend page, and its regression fails no pull request, when the
 * pull-request rule called a change this many times between adjacent nights of unchanged code
 * (Arrow's conbench marks such rows the same way).
 */
export const UNSTABLE_MIN_CALLS = 2;

/** The action's inputs as action.yml documents them (strings, as GitHub passes them). */
export const ACTION_INPUT_DEFAULTS = {
  mode: 'pull-request',
  campaign: '.',
  'data-dir': 'performance/data',
  'pages-dir': 'performance/pages',
  'regression-threshold': String(DEFAULT_THRESHOLD_PCT),
  'pr-rounds': String(PAIRED_TRIALS),
  'pr-extra-rounds': String(PR_EXTRA_ROUNDS),
  'history-nights': String(TREND_NIGHTS),
  'pair-nights': 'true',
  comment: 'on-change',
  'fail-on': DEFAULT_FAIL_ON,
  publish: 'none',
  'publish-branch': 'ngcc-perf-data',
  'build-cache': 'true',
  'allow-forks': 'false',
} as const;

/**
 * The constant-time check (ngcc-perf.yml `ct`, docs/method.md#constant-time-check): calls of each
 * operation under memcheck, how much slower memcheck runs than the native code (the 20–50×,
 * its upper end), valgrind's own start and end, and the most one operation's run may be predicted to take.
 */
export const CT_CALLS = 3;
export const CT_VALGRIND_FACTOR = 50;
export const CT_STARTUP_S = 2;
export const CT_OP_BUDGET_S = 60;
/**
 * The search for rarely taken paths (ngcc-perf.yml `ct.path_calls`, docs/method.md#rare-paths):
 * calls of each operation run natively in the coverage build to find its paths (a rejection loop's
 * retry, Falcon's key generation starting over); the check then makes as many calls as took them
 * all, within its budget. The driver takes at most CT_MAX_CALLS calls. The coverage build (-O0,
 * gcov's counters) is taken to run CT_COVERAGE_SLOWDOWN times slower than the measured build when
 * the search's calls are fitted to the budget (its upper end; see docs/benchmarks.md).
 */
export const CT_PATH_CALLS = 64;
export const CT_MAX_CALLS = 1000;
export const CT_COVERAGE_SLOWDOWN = 10;

/**
 * Adaptive precision (ngcc-perf.yml `planning.adaptive`, docs/statistics.md#adaptive-precision):
 * trials of ADAPTIVE_TRIAL_TARGET_S run until the 95 % interval of the mean per call is within
 * ±ADAPTIVE_CI_TARGET of the mean, after ADAPTIVE_MIN_TRIALS at least and ADAPTIVE_MAX_TRIALS at most.
 * Short trials are what lets a tight operation stop early: 5 × 0.1 s against the fixed 5 × 1 s.
 * Five trials at least, not the interval's three: `compare`'s rank test of 5 trials a side is the
 * smallest that can reach DEFAULT_ALPHA (2/252; 3 a side cannot go below 2/20), so records of a
 * nightly can still call a change against each other.
 */
export const ADAPTIVE_CI_TARGET = 0.01;
export const ADAPTIVE_MIN_TRIALS = 5;
export const ADAPTIVE_MAX_TRIALS = 30;
export const ADAPTIVE_TRIAL_TARGET_S = 0.1;

/**
 * Slow operations, planned in calls (ngcc-perf.yml `planning.call_plan_s`, docs/statistics.md#slow-operations-planned-in-calls):
 * an operation whose call takes CALL_PLAN_S or more is timed one call a trial, until the 95 % interval
 * of its mean per call is within ±ADAPTIVE_CI_TARGET, after CALL_PLAN_MIN_CALLS calls at least and
 * within op_budget_s. One second is the fixed plan's whole trial (trial_target_s): such a call
 * already is a trial, and a window that long dwarfs the trusted half's 0.2 ms of slack per window.
 * Three calls at least: the fewest whose median is one call's figure, so a call a neighbour slowed
 * moves the median by one place, not by half its excess.
 */
export const CALL_PLAN_S = 1;
export const CALL_PLAN_MIN_CALLS = 3;

/**
 * The canary (measure/canary.ts, docs/method.md#the-canary). A trial is disturbed when its canary
 * ran CANARY_MARGIN times the host's reference or more: the median canary of the last
 * CANARY_REFERENCE_TRIALS trials on its core in this run, once CANARY_REFERENCE_MIN of them are in.
 * One run of the canary spreads 1.5-2× on this kind of host; at this margin an A/A bench called no
 * trial of 290 disturbed, at 1.3 one in 29 (benchmarks (am)).
 */
export const CANARY_MARGIN = 2;
export const CANARY_REFERENCE_TRIALS = 31;
export const CANARY_REFERENCE_MIN = 5;
/** A night whose median canary ran this many times the nights' median is marked a slow host on the trend page. */
export const NIGHT_CANARY_MARGIN = 1.25;
