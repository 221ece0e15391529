import { run } from '../../src/main.js';

/** The action's run() with the workflow commands it prints (::error::, ::warning::) captured. */
export async function runActionCaptured(): Promise<{ log: string; failed: boolean }> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await run();
  } finally {
    process.stdout.write = write;
  }
  const failed = process.exitCode === 1;
  process.exitCode = undefined;
  return { log: chunks.join(''), failed };
}
