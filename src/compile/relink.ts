import { basename, join, resolve } from 'node:path';
import { CC } from '../env/toolchain.js';
import { runProcess, type RunResult } from '../sandbox/run.js';
import { type buildArgv, buildSandbox, type BuildRequest } from './compile.js';

/**
 * The steps the relinked builds share (the profile's wrapped build, the constant-time build): each
 * command in the build's sandbox under its limits, logged; every source compiled to its own object
 * (a link-time wrapper can only reach a call across objects); the functions they define.
 */
export function relinkSteps(req: BuildRequest, plain: Awaited<ReturnType<typeof buildArgv>>, outDir: string, log: string[]) {
  const sandbox = buildSandbox(req, plain.readOnly, outDir);
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
  return {
    run,
    /**
     * The objects, one per source, or undefined when one does not compile. One compiler call for
     * them all, in the objects' folder (gcc names each object after its source), unless two
     * sources share a name: then one call each, the objects numbered.
     */
    async compileEach(compileFlags: string[], objDir: string): Promise<string[] | undefined> {
      const sources = plain.sources.map((src) => resolve(plain.cwd, src));
      const names = sources.map((src) => `${basename(src).replace(/\.c$/, '')}.o`);
      if (new Set(names).size === names.length) {
        if ((await run([CC, ...compileFlags, '-c', ...sources], objDir)).exitCode !== 0) return undefined;
        return names.map((n) => join(objDir, n));
      }
      const objects: string[] = [];
      for (const [i, src] of sources.entries()) {
        const obj = join(objDir, `${i}-${basename(src).replace(/\.c$/, '')}.o`);
        if ((await run([CC, ...compileFlags, '-c', src, '-o', obj])).exitCode !== 0) return undefined;
        objects.push(obj);
      }
      return objects;
    },
    /** The global functions the objects define (`nm`'s T symbols). */
    async definedFunctions(objects: string[]): Promise<Set<string>> {
      const nm = await run(['nm', '-g', '--defined-only', ...objects]);
      return new Set(
        nm.stdout
          .split('\n')
          .map((l) => l.trim().split(/\s+/))
          .filter((f) => f.length === 3 && f[1] === 'T')
          .map((f) => f[2]!),
      );
    },
  };
}
