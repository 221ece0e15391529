import { secretSeedOf } from '../kat/unseen.js';
import * as core from '@actions/core';
import { InputError } from '../errors.js';
import { parseFailOn, type FailOn } from '../compare/failOn.js';
import { checkSystemId, parseCount, parseCpu, parseOnly, parsePositive, parseShard } from '../config/arguments.js';
import { ACTION_INPUT_DEFAULTS, DEFAULT_THRESHOLD_PCT, MAX_PR_PAIRS, MAX_TREND_NIGHTS } from '../config/defaults.js';

const MODES = ['pull-request', 'nightly', 'report'] as const;
type Mode = (typeof MODES)[number];

/** Every input of action.yml, validated in one place; a bad value names the input. */
export interface ActionInputs {
  mode: Mode;
  campaign: string;
  system: string;
  dataDir: string;
  pagesDir: string;
  only?: RegExp;
  cpu?: number;
  trialTarget?: number;
  opBudget?: number;
  shard?: { index: number; count: number };
  regressionThreshold: number;
  /** Trial pairs a side of a pull request's paired comparison, at least. */
  prRounds: number;
  /** The secret seed of the unseen-seed check (the `unseen-seed` input, from a repository secret). */
  unseenSeed?: Buffer;
  /** More pairs for a row the first rounds left undecided: inconclusive, noisy, or unchanged on too few pairs (0: none). */
  prExtraRounds: number;
  /** Earlier nights of the data branch read for the trend pages (0: none). */
  historyNights: number;
  /** Nightly: rebuilt instances measured beside last night's libraries (github/lastNight.ts). */
  pairNights: boolean;
  comment: 'always' | 'on-change' | 'never';
  failOn: Set<FailOn>;
  publish: 'commit' | 'artifact' | 'none';
  publishBranch: string;
  buildCache: boolean;
  allowForks: boolean;
  token: string;
  reportUrl?: string;
}

const bad = (name: string, problem: string) => new InputError(`input '${name}'`, '', problem);

type Defaulted = keyof typeof ACTION_INPUT_DEFAULTS;
/** An input as given, else its default: GitHub passes action.yml's, a test or a local run may not. */
const withDefault = (name: Defaulted) => core.getInput(name) || ACTION_INPUT_DEFAULTS[name];

function oneOf<T extends string>(name: Defaulted, allowed: readonly T[]): T {
  const v = withDefault(name);
  if (!(allowed as readonly string[]).includes(v)) throw bad(name, `expected one of ${allowed.join(', ')}, got '${v}'`);
  return v as T;
}

const input = (name: string) => [`input '${name}'`, ''] as const;
const positive = (name: string) => parsePositive(core.getInput(name), input(name));

const count = (name: Defaulted, what: string, min: number, max: number) =>
  parseCount(withDefault(name), input(name), what, min, max) as number;

function bool(name: Defaulted): boolean {
  const raw = withDefault(name);
  if (!['true', 'false'].includes(raw)) throw bad(name, `expected true or false, got '${raw}'`);
  return raw === 'true';
}

export function readInputs(): ActionInputs {
  const system = checkSystemId(core.getInput('system', { required: true }), input('system'));
  const token = core.getInput('token');
  if (token) core.setSecret(token);
  // The unseen-seed check's secret (campaign/unseen.ts): masked in the log, never written.
  const seedText = core.getInput('unseen-seed');
  if (seedText) core.setSecret(seedText);
  const unseenSeed = secretSeedOf(seedText, 'action inputs', "input 'unseen-seed'");
  const mode = oneOf('mode', MODES);
  const publish = oneOf('publish', ['commit', 'artifact', 'none'] as const);
  // The data branch holds what was merged: a PR's numbers are unmerged, and a commit would also
  // drop the evidence of every candidate the pull request did not measure.
  if (mode === 'pull-request' && publish === 'commit')
    throw bad(
      'publish',
      "'commit' is refused in pull-request mode (it would push unmerged numbers to the data branch); use 'artifact' or 'none'",
    );
  return {
    mode,
    campaign: withDefault('campaign'),
    system,
    dataDir: withDefault('data-dir'),
    pagesDir: withDefault('pages-dir'),
    only: parseOnly(core.getInput('only'), input('only')),
    cpu: parseCpu(core.getInput('cpu'), input('cpu')),
    trialTarget: positive('trial-target'),
    opBudget: positive('op-budget'),
    shard: parseShard(core.getInput('shard'), input('shard')),
    regressionThreshold: positive('regression-threshold') ?? DEFAULT_THRESHOLD_PCT,
    prRounds: count('pr-rounds', 'trial pairs', 2, MAX_PR_PAIRS),
    prExtraRounds: count('pr-extra-rounds', 'trial pairs', 0, MAX_PR_PAIRS),
    historyNights: count('history-nights', 'nights', 0, MAX_TREND_NIGHTS),
    pairNights: bool('pair-nights'),
    comment: oneOf('comment', ['always', 'on-change', 'never'] as const),
    failOn: parseFailOn(withDefault('fail-on'), `input 'fail-on'`),
    publish,
    publishBranch: withDefault('publish-branch'),
    buildCache: bool('build-cache'),
    allowForks: bool('allow-forks'),
    token,
    reportUrl: core.getInput('report-url') || undefined,
    ...(unseenSeed ? { unseenSeed } : {}),
  };
}
