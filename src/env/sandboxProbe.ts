import { InputError } from '../errors.js';
import { hostSystemView, unshareArgv, type SandboxMode, type SandboxSetting, type SandboxSpec } from '../sandbox/bwrap.js';
import { runProcess, runsQuietly, type RunResult } from '../sandbox/runProcess.js';
import { HARNESS_CC, systemToolPath } from './toolchain.js';

export interface SandboxProbe {
  mode: SandboxMode;
  /** The harness's ngcc_probe: prints the cycle counter it gets after pinning itself. */
  probeTool: string;
  /** The core the run measures on. */
  cpu: number;
  /** ngcc-perf.yml as shown in the refusal. */
  settingsFile?: string;
  compiler?: string;
}

const OPT_OUT = 'or set `sandbox: none` in ngcc-perf.yml to run submissions unsandboxed (see docs/security.md)';

const USERNS_FIX =
  'allow unprivileged user namespaces — on Ubuntu 24.04 `sysctl kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile that lets /usr/bin/bwrap use them; elsewhere `sysctl user.max_user_namespaces=15000` (and `kernel.unprivileged_userns_clone=1` on older Debian kernels) — or run as root';

const firstLine = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '') ?? '';

/** Why bwrap could not make a sandbox, and the fix, from how `bwrap … true` failed. */
function sandboxFailure(r: Pick<RunResult, 'exitCode' | 'stderr'>): string {
  const said = firstLine(r.stderr);
  if (/ENOENT/.test(r.stderr) && /spawn bwrap/.test(r.stderr))
    return `bubblewrap (bwrap) is not installed or not on PATH: install the bubblewrap package (e.g. apt-get install bubblewrap), ${OPT_OUT}`;
  if (/namespace|uid map|setting up uid|Operation not permitted|Permission denied|No permissions/i.test(r.stderr))
    return `bwrap cannot create a sandbox here (${said}): ${USERNS_FIX}; ${OPT_OUT}`;
  return `bwrap cannot create a sandbox here (exit ${r.exitCode}${said ? `: ${said}` : ''}); ${OPT_OUT}`;
}

/** Why util-linux unshare could not make a sandbox, and the fix. */
function unshareFailure(r: Pick<RunResult, 'exitCode' | 'stderr'>): string {
  const said = firstLine(r.stderr);
  if (/ENOENT/.test(r.stderr)) return `util-linux's setpriv and unshare are not installed or not on PATH: install util-linux, ${OPT_OUT}`;
  return `unshare cannot create a sandbox here (${said || `exit ${r.exitCode}`}): ${USERNS_FIX}; ${OPT_OUT}`;
}

const counterOf = (r: RunResult) => {
  const f = r.stdout.split('\n').find((l) => l.startsWith('COUNTER\t'));
  return r.exitCode === 0 && f ? f.split('\t')[1] : undefined;
};

const rateOf = (r: RunResult) => {
  const f = r.stdout.split('\n').find((l) => l.startsWith('RATE\t'));
  const hz = f ? Number(f.split('\t')[1]) : NaN;
  return r.exitCode === 0 && hz > 0 ? hz : undefined;
};

/** Why the probe could not seal its cores (native/core/affinityseal.h), or undefined when the seal held. */
const sealProblem = (r: RunResult) => {
  const f = r.stdout.split('\n').find((l) => l.startsWith('SEAL\t'));
  if (f === undefined) return 'the probe said nothing of it';
  const [, state, why] = f.split('\t');
  return state === 'held' ? undefined : (why ?? 'no reason given');
};

/** What the probe found: the counter's rate where drivers run (undefined when it could not tell). */
export interface ProbeResult {
  counterHz?: number;
}

const NOTHING: SandboxSpec = { mode: 'bwrap', readOnly: [], writable: [] };

/**
 * The sandbox `auto` stands for on this host, decided before anything is planned: bubblewrap where it
 * can make a sandbox, else util-linux unshare where it can, else bubblewrap (whose start check then
 * refuses the run, naming the cause and the fix). A mode named in ngcc-perf.yml is taken as it is.
 */
export function resolveSandbox(setting: SandboxSetting): SandboxMode {
  if (setting !== 'auto') return setting;
  if (runsQuietly(['bwrap', '--unshare-all', '--ro-bind', '/', '/', 'true'])) return 'bwrap';
  const env = { PATH: '/usr/bin:/bin' };
  if (runsQuietly(unshareArgv({ ...NOTHING, mode: 'unshare' }, { env, system: hostSystemView() }, ['true']))) return 'unshare';
  return 'bwrap';
}

/**
 * Before anything is built: with `sandbox: bwrap` or `unshare`, checks that a sandbox can be made here, that the
 * compiler is reachable in it, that a driver inside pins itself and gets the cycle counter it
 * gets outside, that it cannot write the kernel's settings, and that it can seal itself to its cores
 * before it loads a library. Refuses the run with an InputError naming the cause and the fix otherwise. Returns
 * the counter's rate as a driver sees it, measured by the harness's own probe (no submission code).
 */
export async function probeSandbox(p: SandboxProbe): Promise<ProbeResult> {
  const argv = [p.probeTool, String(p.cpu)];
  if (p.mode === 'none') return { counterHz: rateOf(await runProcess(argv, { timeoutMs: 30_000 })) };
  const file = p.settingsFile ?? 'ngcc-perf.yml';
  const refuse = (problem: string) => {
    throw new InputError(file, 'sandbox', problem);
  };
  const bare: SandboxSpec = { ...NOTHING, mode: p.mode };
  const made = await runProcess(['true'], { timeoutMs: 30_000, sandbox: bare });
  if (made.exitCode !== 0) refuse(p.mode === 'bwrap' ? sandboxFailure(made) : unshareFailure(made));

  const compiler = p.compiler ?? HARNESS_CC;
  const cc = await runProcess([systemToolPath(compiler), '--version'], { timeoutMs: 30_000, sandbox: bare });
  if (cc.exitCode !== 0)
    refuse(
      `the compiler '${compiler}' does not run inside the sandbox, which shows only the system folders (/usr, /bin, /lib…): install it there (${firstLine(cc.stderr) || `exit ${cc.exitCode}`}); ${OPT_OUT}`,
    );

  const outside = await runProcess(argv, { timeoutMs: 30_000 });
  const inside = await runProcess(argv, { timeoutMs: 30_000, sandbox: { mode: p.mode, readOnly: [p.probeTool], writable: [] } });
  const [out, ins] = [counterOf(outside), counterOf(inside)];
  // A counter that fails outside too is the host's problem, reported by the host checks.
  if (out !== undefined && ins !== out)
    refuse(
      ins === undefined
        ? `a driver inside the sandbox cannot pin itself to CPU ${p.cpu} or read the cycle counter (${firstLine(inside.stdout) || firstLine(inside.stderr) || `exit ${inside.exitCode}`}); ${OPT_OUT}`
        : `a driver inside the sandbox gets the cycle counter ${ins}, outside ${out}; ${OPT_OUT}`,
    );
  if (ins !== undefined && !inside.stdout.split('\n').includes('KERNEL\tread-only'))
    refuse(
      `a process inside the sandbox can write the kernel's settings (/proc/sys/kernel/core_pattern), through which a submission would run commands on the host: run the runner as an unprivileged user, or use a bubblewrap that honours --ro-bind over /proc; ${OPT_OUT}`,
    );
  // Builds and KATs run beside the timing: a library that could leave its core could spin on the timing core.
  const unsealed = ins === undefined ? undefined : sealProblem(inside);
  if (unsealed !== undefined)
    refuse(
      `a driver inside the sandbox cannot keep the code it loads on its own cores (${unsealed}): a submission checked beside the timing could move onto the timing core; a Linux kernel with seccomp filters (CONFIG_SECCOMP_FILTER) is needed; ${OPT_OUT}`,
    );
  return { counterHz: rateOf(inside) };
}
