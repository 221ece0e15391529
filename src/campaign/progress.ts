import cliProgress from 'cli-progress';

/**
 * Progress of a long run: on a terminal a live bar (cli-progress) with the done/total count, the
 * ETA and the step just finished; elsewhere (CI logs) one line per finished step with its UTC time
 * and the ETA. The ETA is the run's own (campaign/tracker.ts): what is left, laid out as the
 * scheduler runs it, not a rate of steps (a step can take a second or an hour).
 */
export interface Progress {
  /**
   * `eta` gives the seconds left whenever asked. A later start (calibrate's repeats, a pull
   * request's extra rounds) adds its steps to those done: the count goes on, never past its total.
   */
  start(totalSteps: number, eta?: () => number): void;
  tick(message: string): void;
  /** A line that is not a finished step (the plan, a wait for a core): shown, not counted. */
  note?(message: string): void;
  /**
   * The run waits for a core (`what`, with its holder), or no longer (undefined): the bar says so
   * instead of its last step, and the ETA counts the wait so far on top of the work left.
   */
  waiting?(what: string | undefined): void;
  done(): void;
}

/** "4m05s", "1h02m", "37s": an ETA. */
export function formatDuration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '?';
  const r = Math.round(s);
  if (r >= 3600) return `${Math.floor(r / 3600)}h${String(Math.floor((r % 3600) / 60)).padStart(2, '0')}m`;
  const m = Math.floor(r / 60);
  return m > 0 ? `${m}m${String(r % 60).padStart(2, '0')}s` : `${r}s`;
}

/** An ISO time to the second: what a CI log line starts with. */
const stamp = (now: Date) => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  let total = 0;
  let done = 0;
  let eta: (() => number) | undefined;
  const started = Date.now();
  let waitingFor: { what: string; since: number } | undefined;
  const etaShown = () => {
    const left = formatDuration(eta ? eta() : Number.NaN);
    // Work left once the core is free; the wait has no known end, its length so far is what is known.
    return waitingFor ? `${left} after the wait (waiting ${formatDuration((Date.now() - waitingFor.since) / 1000)})` : left;
  };
  const wait = (what: string | undefined) => {
    waitingFor = what === undefined ? undefined : { what, since: waitingFor?.since ?? Date.now() };
  };
  if (stream.isTTY !== true) {
    return {
      start(n, e) {
        total = done + n;
        eta = e;
      },
      tick(message) {
        done++;
        stream.write(`${stamp(new Date())} [${done}/${total}] ${message} · ETA ${etaShown()}\n`);
      },
      note(message) {
        stream.write(`${stamp(new Date())} ${message}\n`);
      },
      waiting: wait,
      done() {},
    };
  }
  // A start after done() (calibrate's repeats) gets a MultiBar of its own: a stopped one would draw
  // its finished bar again above the new one.
  const multiBar = () =>
    new cliProgress.MultiBar(
      {
        stream,
        format: '[{bar}] {value}/{total} · ETA {eta_run} · {elapsed_run} · {last}',
        barsize: 24,
        hideCursor: true,
        clearOnComplete: false,
        // Redrawn at most twice a second, however many steps end meanwhile.
        fps: 2,
      },
      cliProgress.Presets.legacy,
    );
  let bars = multiBar();
  let stopped = false;
  let bar: cliProgress.SingleBar | undefined;
  let last = '';
  const payload = () => ({
    eta_run: etaShown(),
    elapsed_run: formatDuration((Date.now() - started) / 1000),
    last: (waitingFor ? waitingFor.what : last).slice(0, Math.max(20, (stream.columns ?? 120) - 60)),
  });
  return {
    start(n, e) {
      total = done + n;
      eta = e;
      if (bar) bar.setTotal(total);
      else {
        if (stopped) bars = multiBar();
        stopped = false;
        bar = bars.create(total, done, payload());
      }
    },
    tick(message) {
      done++;
      last = message;
      if (bar) bar.update(done, payload());
      else stream.write(`${message}\n`);
    },
    note(message) {
      // Above the bar, which the library draws again below it.
      if (bar) {
        bars.log(`${message}\n`);
        // Drawn now: a log line waits for the next redraw, which a run that ends may never make.
        bars.update();
      } else stream.write(`${message}\n`);
    },
    waiting(what) {
      wait(what);
      // Drawn now, and again while the wait lasts: the bar never sits blank behind a wait line.
      if (bar) {
        bar.update(done, payload());
        bars.update();
      }
    },
    done() {
      if (bar) bars.stop();
      stopped = true;
      bar = undefined;
    },
  };
}
