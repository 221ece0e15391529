import * as core from '@actions/core';
import { InputError } from '../errors.js';
import { FAIL_ON, type FailOn } from '../compare/failOn.js';

export const MODES = ['pull-request', 'nightly', 'report'] as const;
export type Mode = (typeof MODES)[number];

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
  comment: 'always' | 'on-change' | 'never';
  failOn: Set<FailOn>;
  publish: 'commit' | 'artifact' | 'none';
  publishBranch: string;
  buildCache: boolean;
  allowForks: boolean;
  token: string;
}

const bad = (name: string, problem: string) => new InputError(`input '${name}'`, '', problem);

function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const v = core.getInput(name) || fallback;
  if (!(allowed as readonly string[]).includes(v)) throw bad(name, `expected one of ${allowed.join(', ')}, got '${v}'`);
  return v as T;
}

function positive(name: string, integer = false): number | undefined {
  const raw = core.getInput(name);
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw bad(name, `expected a positive ${integer ? 'integer' : 'number'}, got '${raw}'`);
  return n;
}

function bool(name: string, fallback: boolean): boolean {
  const raw = core.getInput(name);
  if (!raw) return fallback;
  if (!['true', 'false'].includes(raw)) throw bad(name, `expected true or false, got '${raw}'`);
  return raw === 'true';
}

export function readInputs(): ActionInputs {
  const system = core.getInput('system', { required: true });
  if (!/^[A-Za-z0-9_-]+$/.test(system)) throw bad('system', `'${system}' must match [A-Za-z0-9_-]+`);
  const onlyRaw = core.getInput('only');
  let only: RegExp | undefined;
  try {
    only = onlyRaw ? new RegExp(onlyRaw) : undefined;
  } catch {
    throw bad('only', `not a regular expression: '${onlyRaw}'`);
  }
  const shardRaw = core.getInput('shard');
  const shardMatch = shardRaw ? /^(\d+)\/(\d+)$/.exec(shardRaw) : null;
  if (shardRaw && (!shardMatch || Number(shardMatch[1]) < 1 || Number(shardMatch[1]) > Number(shardMatch[2]))) throw bad('shard', `expected K/N with 1 <= K <= N, got '${shardRaw}'`);
  const cpuRaw = core.getInput('cpu');
  if (cpuRaw && !/^\d+$/.test(cpuRaw)) throw bad('cpu', `expected a CPU number, got '${cpuRaw}'`);
  const failOn = (core.getInput('fail-on') || 'regression,kat').split(',').map((s) => s.trim()).filter(Boolean);
  for (const f of failOn) if (!(FAIL_ON as readonly string[]).includes(f)) throw bad('fail-on', `unknown check '${f}' (known: ${FAIL_ON.join(', ')})`);
  const token = core.getInput('token');
  if (token) core.setSecret(token);
  return {
    mode: oneOf('mode', MODES, 'pull-request'),
    campaign: core.getInput('campaign') || '.',
    system,
    dataDir: core.getInput('data-dir') || 'performance/data',
    pagesDir: core.getInput('pages-dir') || 'performance/pages',
    only,
    cpu: cpuRaw ? Number(cpuRaw) : undefined,
    trialTarget: positive('trial-target'),
    opBudget: positive('op-budget'),
    shard: shardMatch ? { index: Number(shardMatch[1]), count: Number(shardMatch[2]) } : undefined,
    regressionThreshold: positive('regression-threshold') ?? 3,
    comment: oneOf('comment', ['always', 'on-change', 'never'] as const, 'on-change'),
    failOn: new Set(failOn as FailOn[]),
    publish: oneOf('publish', ['commit', 'artifact', 'none'] as const, 'none'),
    publishBranch: core.getInput('publish-branch') || 'ngcc-perf-data',
    buildCache: bool('build-cache', true),
    allowForks: bool('allow-forks', false),
    token,
  };
}
