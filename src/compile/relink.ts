import { resolve } from 'node:path';
import { runProcess, type RunResult } from '../sandbox/runProcess.js';
import { type buildArgv, buildSandbox, type BuildRequest } from './compile.js';
import { toolchainOf } from '../env/toolchain.js';
import { compileObjects, symbolsOf } from './objects.js';

/**
 * The steps the relinked builds share (the profile's wrapped build, the constant-time build): each
 * command in the build's sandbox under its limits, logged; every source compiled to its own object
 * (a link-time wrapper can only reach a call across objects); the functions they define.
 */
export function relinkSteps(req: BuildRequest, plain: Awaited<ReturnType<typeof buildArgv>>, outDir: string, log: string[]) {
  const sandbox = buildSandbox(req, plain.readOnly, outDir);
  const tools = toolchainOf(req.compiler);
  const run = async (argv: string[], cwd = plain.cwd): Promise<RunResult> => {
    const r = await runProcess(argv, {
      cwd,
      timeoutMs: req.timeoutMs,
      memoryLimitBytes: req.memoryLimitBytes,
      maxOutputBytes: 256 * 1024,
      sandbox,
    });
    log.push(`$ ${argv.join(' ')}`, r.stdout, r.stderr);
    return r;
  };
  log.push(...plain.notes);
  return {
    /** The compiler's system path: what every step runs. */
    cc: tools.cc,
    run,
    /** The objects, one per source, or undefined when one does not compile. */
    compileEach: (compileFlags: string[], objDir: string): Promise<string[] | undefined> =>
      compileObjects(
        run,
        tools,
        plain.sources.map((src) => resolve(plain.cwd, src)),
        compileFlags,
        objDir,
      ),
    /** The global functions the objects define (`nm`'s T symbols). */
    async definedFunctions(objects: string[]): Promise<Set<string>> {
      const symbols = await symbolsOf(run, tools, objects);
      return new Set(
        [...(symbols?.values() ?? [])].flatMap((o) => [...o.defined].filter(([, type]) => type === 'T').map(([name]) => name)),
      );
    },
  };
}
