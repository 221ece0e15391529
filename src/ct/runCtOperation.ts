import { realpathSync } from 'node:fs';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { runDriver, type DriverRun } from '../sandbox/runProcess.js';
import { compilerMadeIn } from './sourceHint.js';
import { findingsOf, parseMemcheckXml } from './memcheck.js';
import { statusOf, type CtOperation } from './findingKinds.js';

/** The memcheck command line around the driver (docs/method.md#constant-time-check). */
const VALGRIND_ARGS = [
  '--tool=memcheck',
  '--xml=yes',
  // The XML goes to the parent on a pipe of its own (RunOptions.sideMaxBytes), never to a file the library could reach.
  '--xml-fd=4',
  '--track-origins=yes',
  '--error-limit=no',
  '--leak-check=no',
  '--num-callers=40',
  '--vgdb=no',
  '--child-silent-after-fork=yes',
];

/** Bytes of XML kept: far above what a few calls of any operation produce (each site once, with its count). */
const XML_MAX_BYTES = 32 << 20;

export interface CtRunRequest {
  /** ngcc_ct (src/ct/tools.ts). */
  driver: string;
  /** The ct build of the library (src/ct/build.ts). */
  library: string;
  /** The driver's TYPE: kem, sig or kex. */
  type: string;
  operation: string;
  calls: number;
  /** The candidate's generator (kat_rng), as the other drivers take it. */
  rng: string;
  /** The secret key's first bytes that are a public header (candidate.yml ct.public_sk_bytes). */
  publicSkBytes?: number;
  timeoutMs: number;
  sandbox: SandboxMode;
  /** valgrind (default: the system's, under /usr, which every sandbox shows read-only). */
  valgrind?: string;
  /** What the build read of the submission: a branch finding's source line is read there, never elsewhere (ct/sourceHint.ts). */
  sourceRoots?: readonly string[];
  /**
   * The operation's budget (ct.op_budget_s): a run stopped at its timeout is then `skipped` with a
   * reason that names it, not failed: memcheck ran it slower than the measured slowdown predicted.
   */
  budgetS?: number;
}

/** Why a ct run gave no result. */
function failureOf({ run, output, rejected }: DriverRun): string | undefined {
  if (rejected) return rejected.kind === 'unfinished' ? `the driver did not finish: ${rejected.reason}` : rejected.reason;
  if (run.exitCode !== 0 || output.status !== 'complete')
    return `${output.status ?? `exit code ${run.exitCode}`}${output.statusDetail ? ` ${output.statusDetail}` : ''}`;
  return undefined;
}

/** The ct driver's job line (native/bin/ct.c): what to run, how often, with which generator. */
export const ctJob = (req: Pick<CtRunRequest, 'type' | 'operation' | 'calls' | 'rng' | 'publicSkBytes'>): string[] => [
  'ct',
  req.type,
  req.operation,
  String(req.calls),
  req.rng,
  ...(req.publicSkBytes ? [String(req.publicSkBytes)] : []),
];

/**
 * One operation under memcheck: `calls` calls in one sandboxed process (the driver's result channel
 * on fd 3, valgrind's XML on fd 4), then the findings placed at their first frame in the library.
 * No suppressions are applied here.
 */
export async function runCtOperation(req: CtRunRequest): Promise<CtOperation> {
  const job = ctJob(req);
  const started = process.hrtime.bigint();
  const driverRun = await runDriver([req.valgrind ?? 'valgrind', ...VALGRIND_ARGS, req.driver, req.library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 1 << 20,
    sideMaxBytes: XML_MAX_BYTES,
    sandbox: { mode: req.sandbox, readOnly: [req.driver, req.library], writable: [] },
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const failed = (reason: string): CtOperation => ({ status: 'failed', calls: 0, findings: [], reason, seconds });
  if (driverRun.rejected?.kind === 'timeout' && req.budgetS !== undefined)
    return {
      status: 'skipped',
      calls: 0,
      findings: [],
      reason: `stopped after ${Math.round(seconds)} s, past the budget of ${req.budgetS} s (ct.op_budget_s): memcheck ran it slower than predicted`,
      seconds,
    };
  const failure = failureOf(driverRun);
  if (failure) return failed(failure);
  const side = driverRun.run.side;
  if (!side || side.truncated) return failed(side ? `valgrind's report is over ${XML_MAX_BYTES >> 20} MiB` : 'valgrind wrote no report');
  let report: ReturnType<typeof parseMemcheckXml>;
  try {
    report = parseMemcheckXml(side.text);
  } catch (e) {
    return failed(`valgrind's report is not readable: ${(e as Error).message}`);
  }
  if (!report.finished) return failed("valgrind's report ends before its final status");
  const library = realpathSync(req.library);
  const { findings, outsideLibrary } = findingsOf(
    report,
    (obj) => obj === req.library || obj === library,
    req.sourceRoots ? compilerMadeIn(req.sourceRoots) : undefined,
  );
  const calls = Number(driverRun.output.lines.find((l) => l[0] === 'CT' && l[1] === 'calls')?.[2] ?? req.calls);
  const callsS = Number(driverRun.output.lines.find((l) => l[0] === 'CT' && l[1] === 'calls_s')?.[2]);
  return {
    status: statusOf(findings),
    calls,
    findings,
    seconds,
    ...(Number.isFinite(callsS) ? { calls_s: callsS } : {}),
    ...(outsideLibrary > 0 ? { outside_library: outsideLibrary } : {}),
  };
}
