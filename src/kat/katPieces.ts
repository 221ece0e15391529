import type { DriverOutput, DriverRun, RunResult } from '../sandbox/runProcess.js';

/**
 * A KAT in pieces (docs/method.md#kat-in-pieces): its records cut into contiguous ranges, each
 * computed by a driver process of its own with the job's field `piece=FROM:TO`, side by side. Each
 * process still draws every earlier record's seed and message, so its records are the serial run's;
 * joined in record order, the pieces' texts are the serial text.
 */

/** Records [from, to) of a KAT computed by one process; `fresh`: the one piece that runs the fresh-seed checks too. */
export interface Piece {
  from: number;
  to: number;
  fresh: boolean;
}

/**
 * Records [0, records) as at most `pieces` contiguous ranges, cut so that each process has about as
 * much to do: the fresh-seed checks (`fresh` records' worth of work, native/jobs/kat.c) count as
 * records after the last, and the piece they fall in runs them (alone, `[records, records)`, when
 * they fill it). Without such weight they go to the last piece. Sizes differ by at most one.
 */
export function pieceRanges(records: number, pieces: number, fresh = 0): Piece[] {
  const units = records + fresh;
  const n = Math.max(1, Math.min(Math.floor(pieces), units));
  const out: Piece[] = [];
  for (let k = 0, from = 0; k < n; k++) {
    const to = from + Math.floor(units / n) + (k < units % n ? 1 : 0);
    // A piece wholly inside the fresh checks after the first that holds some adds nothing.
    if (from <= records && (from < records || to > records))
      out.push({ from, to: Math.min(to, records), fresh: fresh > 0 && to > records });
    from = to;
  }
  if (fresh === 0) out[out.length - 1]!.fresh = true;
  return out;
}

/** The job's field of a piece (native/jobs/kat.c take_piece). */
const pieceField = (p: Piece): string => `piece=${p.from}:${p.to}${p.fresh ? ':fresh' : ''}`;

/** Starts one driver process: `piece` is the job's extra field (none for a whole KAT), `records` how many it computes. */
export type StartPiece = (piece: string[], records: number) => Promise<DriverRun>;

/**
 * Runs a KAT of `records` records as `pieces` processes side by side, or as one, exactly as before,
 * when there is one piece to run. The answer reads as one driver's: the earliest failing piece's run
 * when one fails (`failed`), else the pieces' lines in record order with their metas merged.
 */
export async function runInPieces(
  records: number,
  pieces: number,
  start: StartPiece,
  failed: (d: DriverRun) => boolean,
  fresh = 0,
): Promise<DriverRun> {
  if (pieces < 2 || records < 2) return start([], records);
  const ranges = pieceRanges(records, pieces, fresh);
  // The fresh checks alone count as their records for the piece's timeout (kat_fresh_started's mark).
  const runs = await Promise.all(ranges.map((p) => start([pieceField(p)], p.to - p.from || fresh)));
  const failing = runs.find(failed);
  if (failing) return failing;
  const run = joinedRun(runs.map((d) => d.run));
  const merged = mergeMetas(runs.map((d) => d.output.meta));
  if ('differs' in merged) {
    const [key, a, b] = merged.differs;
    const where = (k: number) => (ranges[k]!.to > ranges[k]!.from ? `records ${ranges[k]!.from}–${ranges[k]!.to - 1}` : 'the fresh seeds');
    const detail = `the library's ${key} differs between the KAT's processes: ${runs[a]!.output.meta[key]} for ${where(a)}, ${runs[b]!.output.meta[key]} for ${where(b)}`;
    // A size is read when the library loads: another in another process is a load-time fault.
    return { run, output: { meta: runs[0]!.output.meta, lines: [], status: 'LOADFAIL', statusDetail: detail } };
  }
  const output: DriverOutput = { meta: merged.meta, lines: runs.flatMap((d) => d.output.lines), status: 'PASS' };
  return { run, output };
}

/** The pieces' process runs as one: the first's command, every piece's output, the longest wall time. */
function joinedRun(runs: RunResult[]): RunResult {
  return {
    ...runs[0]!,
    stdout: runs.map((r) => r.stdout).join(''),
    stderr: runs.map((r) => r.stderr).join(''),
    truncated: runs.some((r) => r.truncated),
    wallSeconds: Math.max(...runs.map((r) => r.wallSeconds)),
  };
}

/**
 * The pieces' META lines as one KAT's: draws_<op> the fewest of any piece, call_s_<op> the longest,
 * records their sum; anything else (the library's sizes) must be the same in every piece that
 * reports it, or the pieces that differ first are named.
 */
export function mergeMetas(metas: Array<Record<string, string>>): { meta: Record<string, string> } | { differs: [string, number, number] } {
  const meta: Record<string, string> = {};
  const from: Record<string, number> = {};
  for (const [k, m] of metas.entries()) {
    for (const [key, value] of Object.entries(m)) {
      const known = meta[key];
      if (known === undefined) {
        meta[key] = value;
        from[key] = k;
      } else if (key.startsWith('draws_')) meta[key] = String(Math.min(Number(known), Number(value)));
      else if (key.startsWith('call_s_')) meta[key] = Number(value) > Number(known) ? value : known;
      else if (key === 'records') meta[key] = String(Number(known) + Number(value));
      else if (known !== value) return { differs: [key, from[key]!, k] };
    }
  }
  return { meta };
}
