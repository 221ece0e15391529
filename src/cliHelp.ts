import { DEFAULT_ALPHA, DEFAULT_FAIL_ON, DEFAULT_THRESHOLD_PCT } from './config/defaults.js';

/**
 * Each command's own help (`ngcc-perf help run`, `ngcc-perf run --help`): its synopsis, every option
 * with its default, and an example. docs/cli.md says the same at length; test/cli-help.test.ts
 * holds every option of the usage block to a line here.
 */
interface CommandHelp {
  /** What the command is for, in a line of the top-level usage's command list. */
  line: string;
  synopsis: string;
  about: string;
  options: Array<[string, string]>;
  example: string;
}

const HELP: Record<string, CommandHelp> = {
  run: {
    line: "build, KAT-check, time and profile a campaign's instances",
    synopsis: 'ngcc-perf run CAMPAIGN_DIR --system ID --out DATA_DIR [options]',
    about: 'Builds, KAT-checks, times and profiles every instance of the campaign; evidence goes to DATA_DIR/ID.',
    options: [
      ['--system ID', 'the machine the evidence is for (a folder name: letters, digits, _ and -); required'],
      ['--out DATA_DIR', 'where the system folder is written; required'],
      ['--only REGEX', "instances whose key (id/label) the expression finds; default: all ('^kem-90/')"],
      ['--phases LIST', 'of build,kat,measure,profile,ct, comma-separated; default build,kat,measure,profile (ct only when named)'],
      ['--trial-target S', 'seconds per trial, instead of planning.trial_target_s (default 1)'],
      ['--op-budget S', 'seconds per operation over all trials, instead of planning.op_budget_s (default 60)'],
      ['--adaptive', 'trials until the mean per call is known to ±1 % (planning.adaptive); default off'],
      ['--cpu N', "the core trials are pinned to; default: the system's cpus/cpu in ngcc-perf.yml, else the last allowed"],
      ['--shard K/N', 'shard K of N, balanced on expected cost; default: everything'],
      ['--force', 'measure everything again, keeping nothing; default off'],
      ['--jobs N', 'builds and KATs at once beside the timing; default: the cores left over'],
      ['--serial', 'nothing beside the timing (for contested numbers); default off'],
      ['--audit', 'replay every timing trial from its seed, not one per operation; default off'],
      [
        '--remeasure LIST',
        'noisy (kept records whose trials spread 1.25× or more), failed (KATs that ended TIMEOUT or CRASH): measured again, the rest kept; default: none',
      ],
      ['--against BASE_CAMPAIGN_DIR', 'a paired run: the base side, measured interleaved with this one'],
      [
        '--against-out BASE_DATA_DIR',
        "where the base side's evidence goes (with --against); the pairs' verdicts are kept in the run's paired/",
      ],
      ['--against-only REGEX', 'pair only the instances (<candidate>/<label>) it matches; the others are measured once'],
    ],
    example: 'ngcc-perf run examples/campaign --system local --out out/data --only ^kem-80/',
  },
  report: {
    line: "render the §3.5 pages of one system's evidence",
    synopsis: 'ngcc-perf report DATA_DIR/ID [--campaign CAMPAIGN_DIR] --out PAGES_DIR [--check] [--history DIR,...]',
    about: "Renders the §3.5 pages of one system's evidence.",
    options: [
      ['--campaign CAMPAIGN_DIR', "the campaign's catalogs (sizes, KAT issues, pages' links); default: none"],
      ['--out PAGES_DIR', 'where the pages go; required'],
      ['--check', 'write nothing: compare with PAGES_DIR byte for byte, exit 1 on a difference; default off'],
      ['--history DIR,...', 'earlier versions of the same system folder, oldest first: the trend page; default: none'],
    ],
    example: 'ngcc-perf report out/data/local --campaign examples/campaign --out out/pages',
  },
  doctor: {
    line: 'check that this host is ready to time: sandbox, tools, counter, clock, disk',
    synopsis: 'ngcc-perf doctor [--cpu N] [--campaign CAMPAIGN_DIR [--system ID]] [--out DIR] [--format text|json]',
    about:
      'Checks the host a run would time on, without root: the sandbox, the tools, the cycle counter on the timing core, the governor, a fixed clock, turbo, SMT, isolated cores, free disk and the driver cache. One line per check and what to do. Exit 0 ready, 1 something makes the numbers less trustworthy, 2 something stops a run.',
    options: [
      [
        '--cpu N',
        "the timing core to check; default: the system's first in ngcc-perf.yml (with --campaign and --system), else the last allowed CPU, as a run takes it",
      ],
      ['--campaign CAMPAIGN_DIR', "its ngcc-perf.yml's sandbox setting (default auto) and, with --system, that system's core"],
      ['--system ID', 'the system whose cpus/cpu in ngcc-perf.yml give the core (with --campaign)'],
      ['--out DIR', 'where the evidence will go, for its free space; default: the current folder'],
      ['--format text|json', 'default text'],
    ],
    example: 'ngcc-perf doctor --cpu 3',
  },
  validate: {
    line: 'recompute every derived number of evidence and check it',
    synopsis: 'ngcc-perf validate DATA_DIR/ID',
    about: 'Recomputes every derived number of the evidence and checks it against build.json and the KAT logs.',
    options: [],
    example: 'ngcc-perf validate out/data/local',
  },
  compare: {
    line: 'compare two datasets as the pull-request comment does',
    synopsis: 'ngcc-perf compare --base DATA_DIR --head DATA_DIR --system ID [options]',
    about: "Compares two datasets' system folders: regressions, KAT and size-audit changes, as the pull-request comment.",
    options: [
      ['--base DATA_DIR', 'the baseline; required'],
      ['--head DATA_DIR', 'the change; required'],
      ['--system ID', 'the system folder in both; required'],
      ['--format md|json', 'default md'],
      ['--campaign CAMPAIGN_DIR', "the head campaign's catalogs (size audit); default: none"],
      ['--threshold PCT', `smallest change called a regression; default ${DEFAULT_THRESHOLD_PCT}`],
      ['--alpha P', `significance of the paired test; default ${DEFAULT_ALPHA}`],
      ['--history DATA_DIR,...', 'earlier nightly datasets, for the spread term; default: none'],
      ['--fail-on LIST', `exit 1 on these: regression,kat,size-audit,ct; default ${DEFAULT_FAIL_ON}`],
    ],
    example: 'ngcc-perf compare --base base/data --head out/data --system local',
  },
  'calibrate-nights': {
    line: "the night rule's false claims on kept nights of unchanged code",
    synopsis: 'ngcc-perf calibrate-nights NIGHT_DIR,... --system ID [options]',
    about:
      'Calibrates the night rule on an A/A history: kept evidence folders of nights of unchanged code on one host (DATA_DIR/ID each, oldest first), each judged as it came. Every claim is false: it prints them, the change points, and the claims per 200 operation-nights.',
    options: [
      ['--system ID', 'the system the nights are of; required'],
      ['--threshold PCT', `the smallest change called, percent; default ${DEFAULT_THRESHOLD_PCT}`],
      ['--format text|json', 'default text'],
    ],
    example: 'ngcc-perf calibrate-nights nights/1/local,nights/2/local,nights/3/local --system local',
  },
  calibrate: {
    line: "the pull-request check's false alarms on this machine",
    synopsis: 'ngcc-perf calibrate CAMPAIGN_DIR --system ID --out DATA_DIR [options]',
    about:
      'Calibrates the pull-request check on this machine: the campaign measured paired against itself, judged as a pull request is; its false alarms and smallest detectable changes go to DATA_DIR/ID/calibration.json (the method page).',
    options: [
      ['--system ID', 'the machine the calibration is for; required'],
      ['--out DATA_DIR', "where the system folder is; only calibration.json is written, the system's records are not touched; required"],
      ['--only REGEX', "instances whose key (id/label) the expression finds; default: all ('^kem-90/')"],
      ['--repeat N', 'how many times the paired check runs, 1 to 100; default 3'],
      ['--rounds N', "trial pairs of the first rounds, 2 to 100 (the action's pr-rounds); default 16"],
      ['--extra-rounds N', "more pairs for each row left undecided, 0 to 100 (the action's pr-extra-rounds); default 16"],
      ['--threshold PCT', 'the smallest change called, percent; default 3'],
      ['--trial-target S', 'seconds per trial, instead of planning.trial_target_s'],
      ['--cpu N', 'the core trials are pinned to; default as for run'],
    ],
    example: 'ngcc-perf calibrate examples/campaign --system local --out out/data --only ^kem-80/ --repeat 2',
  },
  'kat-manifest': {
    line: "a candidate's kat.sha256 lines from a run's KAT files",
    synopsis: 'ngcc-perf kat-manifest DATA_DIR/ID CANDIDATE_ID [--mode strict|nolen] [--records N] [--write CAMPAIGN_DIR [--force]]',
    about: "Prints a candidate's kat.sha256 lines from the KAT files a run generated (run --phases build,kat first).",
    options: [
      ['--mode strict|nolen', 'nolen leaves out the *_Len lines; default strict'],
      ['--records N', 'digest of the first N records only; default: all'],
      ['--write CAMPAIGN_DIR', "update the candidate's kat.sha256 in place"],
      ['--force', 'with --write: replace lines that say something else; default off'],
    ],
    example: 'ngcc-perf kat-manifest out/data/local kem-90 --write examples/campaign',
  },
  'kat-digest': {
    line: "the kat.sha256 line of a submitter's own KAT file",
    synopsis: 'ngcc-perf kat-digest FILE... [--label LABEL] [--mode strict|nolen] [--records N]',
    about: "Prints the kat.sha256 line of a submitter's own KAT file (not its sha256sum).",
    options: [
      ['--label LABEL', 'the instance; default: the folder the file is in'],
      ['--mode strict|nolen', 'default strict'],
      ['--records N', 'digest of the first N records only; default: all'],
    ],
    example: 'ngcc-perf kat-digest submissions/kem-12/ml-kem-512/PQCkemKAT_1632.rsp',
  },
  merge: {
    line: "merge the system folders of a campaign's shards",
    synopsis: 'ngcc-perf merge --out DATA_DIR/ID SHARD_DIR...',
    about: "Merges the system folders of a campaign's shards into one.",
    options: [['--out DATA_DIR/ID', 'the merged system folder; required']],
    example: 'ngcc-perf merge --out out/data/local shard1/local shard2/local',
  },
  'iccs-baseline': {
    line: 'time the ICCS helper functions once per system',
    synopsis: 'ngcc-perf iccs-baseline --system ID --out DATA_DIR [options]',
    about: 'Times the ICCS helper functions once per system, so the pages can price every helper call.',
    options: [
      ['--system ID', 'required'],
      ['--out DATA_DIR', 'required'],
      ['--campaign CAMPAIGN_DIR', "whose ngcc-perf.yml's planning applies; default: the defaults"],
      ['--trial-target S', 'seconds per trial'],
      ['--op-budget S', 'seconds per operation'],
      ['--cpu N', 'the core trials are pinned to'],
      ['--force', 'measure again; default off'],
    ],
    example: 'ngcc-perf iccs-baseline --system local --out out/data',
  },
  example: {
    line: 'run the bundled example campaign and render its pages (npm start)',
    synopsis: 'ngcc-perf example [--out DIR]',
    about: 'Runs the bundled example campaign and renders its pages (what npm start does).',
    options: [['--out DIR', "default: out/ in the tool's folder"]],
    example: 'ngcc-perf example',
  },
  'pqclean-campaign': {
    line: "write a campaign of the PQClean catalogue's schemes",
    synopsis: 'ngcc-perf pqclean-campaign OUT_DIR [--only REGEX] [--pqclean DIR] [--digests FILE]',
    about: "Writes a campaign of the PQClean catalogue's schemes, with their published KAT digests.",
    options: [
      ['--only REGEX', 'schemes whose name the expression finds; default: all'],
      ['--pqclean DIR', "a PQClean checkout; default: the pqclean package's"],
      ['--digests FILE', "published digests; default: the tool's"],
    ],
    example: "ngcc-perf pqclean-campaign out/pqclean --only '^ml-kem'",
  },
};

export const HELP_COMMANDS: readonly string[] = Object.keys(HELP);

/** The top-level usage's command list: every command and what it is for, a line each. */
export function commandList(): string {
  const width = Math.max(...HELP_COMMANDS.map((c) => c.length));
  return ['commands:', ...Object.entries(HELP).map(([c, h]) => `  ${c.padEnd(width)}  ${h.line}`)].join('\n');
}

/** One command's help text, or undefined for a command that has none. */
export function commandHelp(command: string): string | undefined {
  const h = HELP[command];
  if (!h) return undefined;
  const width = Math.max(0, ...h.options.map(([o]) => o.length));
  return [
    `usage: ${h.synopsis}`,
    '',
    h.about,
    ...(h.options.length > 0 ? ['', 'options:', ...h.options.map(([o, d]) => `  ${o.padEnd(width)}  ${d}`)] : []),
    '',
    'example:',
    `  ${h.example}`,
    '',
    'docs/cli.md says more; `ngcc-perf --help` lists every command.',
  ].join('\n');
}
