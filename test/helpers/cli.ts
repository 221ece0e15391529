import { vi } from 'vitest';
import { main } from '../../src/cliMain.js';

export interface CliRun {
  code: number;
  /** console.log lines (results), console.error lines (errors), and what went to stderr directly (progress). */
  out: string[];
  err: string[];
  progress: string;
}

/** The CLI in this process, as a user runs it, with everything it printed kept apart. */
export async function runCli(args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  let progress = '';
  const log = vi.spyOn(console, 'log').mockImplementation((m: unknown) => void out.push(String(m)));
  const error = vi.spyOn(console, 'error').mockImplementation((m: unknown) => void err.push(String(m)));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    progress += String(chunk);
    return true;
  });
  try {
    return { code: await main(args), out, err, progress };
  } finally {
    log.mockRestore();
    error.mockRestore();
    stderr.mockRestore();
  }
}
