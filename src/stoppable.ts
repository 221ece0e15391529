import { releaseEvidenceLocks } from './evidence/lock.js';
import { killLiveProcessGroups } from './sandbox/runProcess.js';

/** Exit codes of a run stopped by a signal: 128 + the signal's number, as a shell reports it. */
const STOP_SIGNALS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * While `work` runs, a stopping signal (Ctrl-C, a cancelled job) kills every child's process group
 * (they have their own groups, so the signal never reaches them and a spinning submission would
 * outlive us on the runner), releases the evidence lock and exits. Everything written so far is
 * whole (atomic writes). `say` prints the one line that explains the stop.
 */
export async function stoppable<T>(
  work: () => Promise<T>,
  say: (line: string) => void = (line) => process.stderr.write(`${process.stderr.isTTY ? '\n' : ''}${line}\n`),
  /** What else goes at a stop: process.exit runs no `finally` (a scratch folder to remove). */
  cleanup?: () => void,
): Promise<T> {
  const handlers = Object.entries(STOP_SIGNALS).map(([signal, code]) => {
    const handler = () => {
      const stopped = killLiveProcessGroups();
      releaseEvidenceLocks();
      cleanup?.();
      say(`interrupted: stopped ${stopped} running process(es); evidence so far is kept`);
      process.exit(code);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  try {
    return await work();
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}
