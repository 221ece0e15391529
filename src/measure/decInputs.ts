import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runDriver } from '../sandbox/run.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { firstDifference, transcriptOf, type Transcript } from './transcript.js';

/**
 * dec's timed inputs, made in another process (docs/method.md#inputs-made-elsewhere). The `inputs`
 * job (native/ngcc_inputs.c) makes a key pair and one ciphertext per call in a sandbox of its own,
 * and says the transcript that dec's outputs must give: the secrets enc gave. The trial's process
 * gets only the secret key and the ciphertexts, in a file put in place when the driver asks for
 * them, after its warm-ups; it never holds a secret to read its answer from, and enc's calls, with
 * whatever they recorded, ran elsewhere. Its transcript is then compared with the one the inputs
 * job gave, every block of it: a difference is FORGED.
 */

export interface InputsRequest {
  driver: string;
  library: string;
  rng: string;
  iterations: number;
  /** The trial's core (-1: none). */
  cpu: number;
  timeoutMs: number;
  memoryLimitBytes?: number;
  sandbox?: SandboxMode;
}

/** The inputs of one dec trial, made and checked, waiting in a folder of their own. */
export interface DecInputs {
  /** The folder bound read-only into the trial's sandbox: empty until `place` is called. */
  givenDir: string;
  /** Copies the inputs into givenDir and returns the file's path (the answer to the `inputs` mark). */
  place: () => string;
  transcript: Transcript;
  /** The inputs job's wall seconds. */
  wall_s: number;
  bytes: number;
  /** Removes the folders. */
  dispose: () => void;
}

/** Makes a dec trial's inputs; a string says why it could not. */
export async function makeDecInputs(req: InputsRequest): Promise<DecInputs | string> {
  const root = mkdtempSync(join(tmpdir(), 'ngcc-inputs-'));
  const [madeDir, givenDir] = [join(root, 'made'), join(root, 'given')];
  mkdirSync(madeDir);
  mkdirSync(givenDir);
  const dispose = () => rmSync(root, { recursive: true, force: true });
  const seed = randomBytes(48).toString('hex');
  // On the trial's core, which the parent holds anyway: not on a core another phase is using.
  const job = ['inputs', 'kem', 'dec', String(req.iterations), '0', String(req.cpu), req.rng, '0', seed, madeDir];
  const { run, output, rejected } = await runDriver([req.driver, req.library], job, {
    timeoutMs: req.timeoutMs,
    maxOutputBytes: 64 * 1024,
    memoryLimitBytes: req.memoryLimitBytes,
    sandbox: { mode: req.sandbox ?? 'bwrap', readOnly: [req.driver, req.library], writable: [madeDir] },
  });
  const fail = (why: string) => {
    dispose();
    return `the inputs job ${why}`;
  };
  if (rejected) return fail(`did not finish: ${rejected.reason}`);
  if (run.exitCode !== 0 || output.status !== 'complete')
    return fail(`failed: ${output.status ?? 'no STATUS'}${output.statusDetail ? `: ${output.statusDetail}` : ''}`);
  const transcript = transcriptOf(output.lines);
  if (!transcript) return fail('gave no transcript');
  const [sk, ct] = [Number(output.meta.sk_bytes), Number(output.meta.ct_bytes)];
  const bytes = sk + req.iterations * ct;
  const made = join(madeDir, 'inputs.bin');
  let st: ReturnType<typeof lstatSync> | undefined;
  try {
    st = lstatSync(made);
  } catch {
    return fail('wrote no inputs.bin');
  }
  if (!st.isFile() || !Number.isSafeInteger(bytes) || st.size !== bytes)
    return fail(`wrote an inputs.bin that is not a file of ${bytes} bytes (a secret key of ${sk}, ${req.iterations} ciphertexts of ${ct})`);
  const given = join(givenDir, 'inputs.bin');
  let placed = false;
  return {
    givenDir,
    // A copy, not the file the job's process wrote: nothing left of that process can reach it.
    place: () => {
      // A copy that failed leaves no file: the driver then fails, naming the inputs.
      if (!placed) {
        try {
          copyFileSync(made, given);
        } catch {
          /* the driver says it */
        }
      }
      placed = true;
      return given;
    },
    transcript,
    wall_s: run.wallSeconds,
    bytes,
    dispose,
  };
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
