import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runDriver, type ChannelMark } from '../sandbox/runProcess.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { firstDifference, transcriptOf, type Transcript } from './transcript.js';
import { makeScratch, removeScratch } from '../util/scratch.js';

/**
 * dec's timed inputs, made in other processes (docs/method.md#inputs-made-elsewhere). The `keys` job
 * (native/jobs/inputs.c) makes a key pair in a sandbox of its own. The `inputs` job, in another, is
 * given only the public key: it makes the warm-ups' ciphertexts and one ciphertext per timed call,
 * and says the transcript that dec's outputs must give: the secrets enc gave. So enc never sees the
 * secret key, and cannot take its message from it for dec to find again. The trial's process gets
 * only the secret key and the ciphertexts, in two files put in place when the driver asks for them:
 * the warm-ups' right after its seed, the timed calls' after its warm-ups; where the trusted half
 * holds the trial's windows, the timed calls' go to it alone, as an open file. It never holds a secret to
 * read its answer from, and makes no key pair and calls no enc: enc's calls, with whatever they
 * recorded, ran elsewhere. Its transcript is then compared with the one the inputs job gave, every
 * block of it: a difference is FORGED. In a pull request whose library changed under the same KAT,
 * both jobs run the base's library (`truthLibrary`): head's dec must answer what the base made.
 */

export interface InputsRequest {
  driver: string;
  library: string;
  /** The library that makes the key pair and the ciphertexts, when not `library` itself (a pull request's base). */
  truthLibrary?: string;
  /** The operation's one key pair, made by its first trial (keyPairSource); without it, each trial makes its own. */
  keys?: KeyPairSource;
  rng: string;
  iterations: number;
  /** The trial's warm-up calls: their ciphertexts are made too (as many as they go round). */
  warmups: number;
  /** The trial's core (-1: none). */
  cpu: number;
  timeoutMs: number;
  memoryLimitBytes?: number;
  sandbox?: SandboxMode;
}

/** The inputs of one dec trial, made and checked, waiting in a folder of their own. */
export interface DecInputs {
  /** The folder bound read-only into the trial's sandbox: empty until a file is placed. */
  givenDir: string;
  /** Moves the warm-ups' inputs into givenDir and returns the file's path (the answer to the `warmups` mark). */
  placeWarmups: () => string;
  /** Moves the timed calls' inputs into givenDir and returns the file's path (the answer to the `inputs` mark). */
  place: () => string;
  /**
   * The timed calls' inputs as an open file, never placed where the library's process can open it:
   * for the timing driver's trusted half, which shows each window's at its start (native/core/held.h).
   */
  openHeld: () => number;
  /** Why a file could not be moved, once it was asked for and could not. */
  placeFailure: () => string | undefined;
  transcript: Transcript;
  /** The inputs job's wall seconds. */
  wall_s: number;
  /** Removes the folders, whatever the job did to their permissions. */
  dispose: () => void;
}

/** The longest answer to a mark the driver reads (native/core/harness.c proto_ask: 256 bytes with GO and a tab). */
const MOST_PATH_CHARS = 250;

/** Makes a dec trial's inputs; a string says why it could not. */
export async function makeDecInputs(req: InputsRequest): Promise<DecInputs | string> {
  const root = makeScratch('inputs');
  const [madeDir, givenDir] = [join(root, 'made'), join(root, 'given')];
  mkdirSync(madeDir);
  mkdirSync(givenDir);
  const dispose = () => removeScratch(root);
  const given = join(givenDir, 'warmup.bin');
  if (given.length > MOST_PATH_CHARS) {
    dispose();
    return `the temporary folder's path is too long for dec's inputs (${given.length} characters, at most ${MOST_PATH_CHARS}): set TMPDIR to a shorter one`;
  }
  const fail = (why: string) => {
    dispose();
    return why;
  };
  const maker = req.truthLibrary ?? req.library;
  const keys = req.keys ? await req.keys.get(req, maker) : await runKeysJob(req, maker, join(root, 'keys'));
  if (typeof keys === 'string') return fail(keys);
  const seed = randomBytes(48).toString('hex');
  // On the trial's core, which the parent holds anyway: not on a core another phase is using.
  const job = ['inputs', 'kem', 'dec', String(req.iterations), String(req.warmups), String(req.cpu), req.rng, '0', seed, madeDir, keys.pk];
  const { run, output, rejected } = await runDriver([req.driver, maker], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, maker, keys.pk], writable: [madeDir] },
  });
  if (rejected) return fail(`the inputs job did not finish: ${rejected.reason}`);
  if (run.exitCode !== 0 || output.status !== 'complete')
    return fail(`the inputs job failed: ${output.status ?? 'no STATUS'}${output.statusDetail ? `: ${output.statusDetail}` : ''}`);
  const transcript = transcriptOf(output.lines);
  if (!transcript) return fail('the inputs job gave no transcript');
  const [ct, warm] = [Number(output.meta.ct_bytes), Number(output.meta.warmup_ciphertexts)];
  if (Number(output.meta.sk_bytes) !== keys.sk.length)
    return fail(`the inputs job's secret key of ${output.meta.sk_bytes ?? 'no'} bytes is not the keys job's ${keys.sk.length}`);
  if (!Number.isSafeInteger(warm) || warm < 0 || warm > req.warmups)
    return fail(`the inputs job reported ${output.meta.warmup_ciphertexts ?? 'no'} warm-up ciphertexts for ${req.warmups} warm-up calls`);
  const files = [
    { name: 'warmup.bin', calls: warm },
    { name: 'inputs.bin', calls: req.iterations },
  ];
  for (const { name, calls } of files) {
    const wrong = putSecretKey(join(madeDir, name), keys.sk, calls, ct);
    if (wrong) return fail(`the inputs job ${wrong}`);
  }
  let heldFd: number | undefined;
  const openHeld = () => (heldFd ??= openSync(join(madeDir, 'inputs.bin'), 'r'));
  const placed = new Set<string>();
  let placeFailure: string | undefined;
  // Moved, not copied: no process of the job outlives it in a sandbox (its own PID namespace), so
  // nothing can change the files after the checks above.
  const placer = (name: string) => () => {
    const to = join(givenDir, name);
    if (!placed.has(name)) {
      placed.add(name);
      try {
        renameSync(join(madeDir, name), to);
      } catch (e) {
        placeFailure ??= `the parent could not put dec's inputs in place: ${(e as Error).message}`;
      }
    }
    return to;
  };
  return {
    givenDir,
    placeWarmups: placer('warmup.bin'),
    place: placer('inputs.bin'),
    placeFailure: () => placeFailure,
    openHeld,
    transcript,
    wall_s: keys.wall_s + run.wallSeconds,
    dispose: () => {
      if (heldFd !== undefined) closeSync(heldFd);
      dispose();
    },
  };
}

/** A key pair as the `keys` job made it: its public key's file, its secret key's bytes, the job's wall seconds. */
interface KeyPair {
  pk: string;
  sk: Buffer;
  wall_s: number;
}

/**
 * One key pair for all the dec trials of an operation: the `keys` job runs once, for the first
 * trial (its seconds are charged to that trial's inputs), and every trial's ciphertexts are made to
 * it in processes of their own. A trial's process is fresh either way, and enc is given only the
 * public key. `dispose` removes the key pair's folder.
 */
export interface KeyPairSource {
  get(req: InputsRequest, library: string): Promise<KeyPair | string>;
  dispose(): void;
}

export function keyPairSource(): KeyPairSource {
  let made: Promise<KeyPair | string> | undefined;
  let root: string | undefined;
  return {
    async get(req, library) {
      if (!made) {
        root = makeScratch('keys');
        made = runKeysJob(req, library, join(root, 'keys'));
        return made;
      }
      const known = await made;
      return typeof known === 'string' ? known : { ...known, wall_s: 0 };
    },
    dispose() {
      if (root) removeScratch(root);
      root = undefined;
      made = undefined;
    },
  };
}

/** The `keys` job's key pair: the public key's file (bound read-only into the inputs job), the secret key's bytes. */
async function runKeysJob(req: InputsRequest, library: string, dir: string): Promise<KeyPair | string> {
  mkdirSync(dir);
  const job = ['keys', 'kem', 'dec', '1', '0', String(req.cpu), req.rng, '0', dir];
  const { run, output, rejected } = await runDriver([req.driver, library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, library], writable: [dir] },
  });
  if (rejected) return `the keys job did not finish: ${rejected.reason}`;
  if (run.exitCode !== 0 || output.status !== 'complete')
    return `the keys job failed: ${output.status ?? 'no STATUS'}${output.statusDetail ? `: ${output.statusDetail}` : ''}`;
  const [pkBytes, skBytes] = [Number(output.meta.pk_bytes), Number(output.meta.sk_bytes)];
  const read = (name: string, bytes: number): Buffer | string => {
    const path = join(dir, name);
    const st = lstatSafe(path);
    if (!st?.isFile() || !Number.isSafeInteger(bytes) || st.size !== bytes) return `the keys job wrote no ${name} of ${bytes} bytes`;
    return readFileSync(path);
  };
  const [pk, sk] = [read('pk.bin', pkBytes), read('sk.bin', skBytes)];
  if (typeof pk === 'string') return pk;
  if (typeof sk === 'string') return sk;
  return { pk: join(dir, 'pk.bin'), sk, wall_s: run.wallSeconds };
}

function lstatSafe(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Writes the secret key over the room the inputs job left for it at the head of an inputs file; a
 * string says why the file is not a secret key's room and `calls` ciphertexts of `ct` bytes.
 */
function putSecretKey(path: string, sk: Buffer, calls: number, ct: number): string | undefined {
  const bytes = sk.length + calls * ct;
  const st = lstatSafe(path);
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (!st) return `wrote no ${name}`;
  if (!st.isFile() || !Number.isSafeInteger(bytes) || st.size !== bytes)
    return `wrote a ${name} that is not a file of ${bytes} bytes (a secret key of ${sk.length}, ${calls} ciphertexts of ${ct})`;
  // One name: a warm-ups' file that is the timed calls' too would be placed where the trial reads it.
  if (st.nlink !== 1) return `wrote a ${name} with ${st.nlink} links`;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, sk, 0, sk.length, 0);
  } finally {
    closeSync(fd);
  }
  return undefined;
}

/** What comparing a dec trial's transcript with its inputs' found: where they differ, if they do. */
export interface InputsCheck {
  outcome: 'agrees' | 'differs';
  /** The calls of the first block that differs ("calls N–M"). */
  calls?: string;
}

/** Compares a dec trial's transcript with the one its inputs job gave (every block). */
export function checkAgainstInputs(trial: Transcript, inputs: Transcript, calls: number): InputsCheck {
  const where =
    firstDifference(inputs, trial, calls) ??
    (inputs.blocks?.length === trial.blocks?.length ? undefined : 'the transcripts have different blocks');
  return where ? { outcome: 'differs', calls: where } : { outcome: 'agrees' };
}

/**
 * How much more CPU than its windows' the trial's process tree may use between the `inputs` mark
 * and its last window's end, as a share of the windows' CPU: there the driver reads each batch's
 * ciphertexts into slots it touched before the inputs existed, and checks the batch before it, about
 * a per cent of a dec's work (docs/benchmarks.md (ag)).
 */
export const BESIDE_WINDOWS_SHARE = 0.25;

/**
 * The same share where the trusted half holds the trial: it reads the ciphertexts and folds the
 * outputs itself, with its own CPU left out, and the driver has only its checks of each batch left.
 * Honest held decs of the example campaign left 0.3–1.0 % of their windows' CPU there over a week
 * of nights (docs/benchmarks.md (al)): a twentieth is five times the most of them.
 */
export const BESIDE_WINDOWS_SHARE_HELD = 0.05;

/**
 * The CPU a dec trial's process tree used once its inputs existed, outside its counted windows: a
 * thread of the library that decapsulated them there (holding the driver back, say, on a lock
 * before its first window) would make the calls look cheap, with a true transcript. A string says
 * why the marks do not allow the sum: one `warmups` mark after `seed`, one `inputs` mark after it
 * and before the first `begin`, and from `inputs` on no thread or process more than before the
 * library was loaded.
 */
export function cpuBesideWindows(marks: readonly ChannelMark[]): { beside_s: number; windows_s: number } | string {
  const at = marks.map((m) => m.name);
  for (const [name, what] of [
    ['warmups', "the warm-ups' inputs"],
    ['inputs', 'its inputs'],
  ] as const) {
    const asked = at.filter((n) => n === name).length;
    if (asked !== 1) return `the driver asked for ${what} ${asked} times`;
  }
  const [seed, warm, i] = [at.indexOf('seed'), at.indexOf('warmups'), at.indexOf('inputs')];
  if (seed < 0 || warm < seed || i < warm || (at.includes('begin') && i > at.indexOf('begin')))
    return 'the driver asked for its inputs out of turn';
  // Threads of the library, alive once the inputs exist, could decapsulate them outside the windows,
  // and one that ends takes its CPU time out of the tree's sum: the tree must have as many threads
  // as before the library was loaded (the `start` mark).
  const before = marks.find((m) => m.name === 'start')?.tasks;
  const more = marks.slice(i).find((m) => before !== undefined && m.tasks !== undefined && m.tasks > before);
  if (more)
    return `the library ran ${more.tasks! - before!} thread(s) or process(es) beside the driver once its inputs existed (at its ${more.name} mark)`;
  let windows_s = 0;
  let last = marks[i]!;
  let begin: ChannelMark | undefined;
  for (const m of marks.slice(i + 1)) {
    if (m.name === 'begin') begin = m;
    if (m.name === 'end' && begin) {
      windows_s += m.cpu_s - begin.cpu_s;
      last = m;
      begin = undefined;
    }
  }
  return { beside_s: Math.max(0, last.cpu_s - marks[i]!.cpu_s - windows_s), windows_s };
}
