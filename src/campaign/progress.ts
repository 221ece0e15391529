/** Progress of a long run: a bar with ETA on a terminal, one line per finished step otherwise. */
export interface Progress {
  start(totalSteps: number): void;
  tick(message: string): void;
  /** A line that is not a finished step (a wait for a core): shown, not counted. */
  note?(message: string): void;
  done(): void;
}

function formatDuration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${Math.round(s)}s`;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  let total = 0;
  let done = 0;
  let started = 0;
  const tty = stream.isTTY === true;
  return {
    start(n) {
      total = n;
      started = Date.now();
    },
    tick(message) {
      done++;
      const elapsed = (Date.now() - started) / 1000;
      const eta = done > 0 ? (elapsed / done) * (total - done) : Infinity;
      if (!tty) {
        stream.write(`[${done}/${total}] ${message}\n`);
        return;
      }
      const width = 30;
      const filled = Math.round((done / Math.max(total, 1)) * width);
      const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
      const line = `[${bar}] ${done}/${total} ETA ${formatDuration(eta)}  ${message}`;
      stream.write(`\r\x1b[2K${line.slice(0, (stream.columns ?? 120) - 1)}`);
    },
    note(message) {
      // On a terminal the line replaces the bar, which the next step draws again.
      stream.write(tty ? `\r\x1b[2K${message}\n` : `${message}\n`);
    },
    done() {
      if (tty) stream.write('\n');
    },
  };
}
