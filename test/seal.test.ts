import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * The seal the drivers install before loading a library (native/core/affinityseal.h): every call it
 * lists, made by test/fixtures/seal/seal_calls.c through each of x86-64's entries, is refused with
 * EPERM in a driver, while the same calls in a plain program get the kernel's own answer. Without a
 * sandbox, so the seal alone is what refuses them.
 */
const x64 = process.arch === 'x64';
if (!x64) console.warn('test/seal.test.ts: skipped: the fixture makes x86-64 system calls');

const fixture = join(repoRoot, 'test', 'fixtures', 'seal', 'seal_calls.c');

/** "SEAL <entry> <number> <call> <errno>" lines as entry/number → errno. */
function outcomes(stderr: string): Map<string, string> {
  const seen = new Map<string, string>();
  for (const m of stderr.matchAll(/^SEAL (x86_64|x32|i386) (\d+) (\S+) (\S+)$/gm)) seen.set(`${m[1]} ${m[2]} ${m[3]}`, m[4]!);
  return seen;
}

/** The x86-64 numbers affinityseal.h refuses outright (futex's shared ops are judged by their argument apart). */
function sealedNumbers(): number[] {
  const header = readFileSync(join(repoRoot, 'native', 'core', 'affinityseal.h'), 'utf8');
  const common = /#define SEAL_COMMON ([\d, ]+)/.exec(header)![1]!;
  const list = /static const unsigned x86_64\[\] = \{([^}]*)\}/.exec(header)![1]!.replace('SEAL_COMMON', common);
  return list.split(',').map((n) => Number(n.trim()));
}

describe.skipIf(!x64)("the drivers' seal", () => {
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });

  it('refuses every call it lists with EPERM, through every entry, where a plain process gets the kernel’s answer', async () => {
    const lib = join(dir, 'libseal.so');
    const control = join(dir, 'seal-control');
    execFileSync('gcc', ['-O2', '-fPIC', '-shared', '-o', lib, fixture]);
    execFileSync('gcc', ['-O2', '-DSEAL_CONTROL', '-o', control, fixture]);

    const plain = outcomes(spawnSync(control, { encoding: 'utf8' }).stderr);
    // The library has no API: the driver stops once it is loaded, after its constructor ran.
    const sealed = outcomes(
      (await runDriver([tools.driver, lib], ['time', 'kem', 'keygen', '1', '0', '-1', 'iccs-drng'], { timeoutMs: 20_000 })).run.stderr,
    );

    const numbers = [...plain.keys()].filter((k) => k.startsWith('x86_64 ')).map((k) => Number(k.split(' ')[1]));
    expect(numbers.sort((a, b) => a - b)).toEqual(sealedNumbers().sort((a, b) => a - b));
    expect(sealed.size).toBe(plain.size);
    for (const [call, errno] of plain) {
      expect(sealed.get(call), call).toBe('EPERM');
      // As root the kernel refuses none of them with EPERM; unprivileged, bpf and userfaultfd may be.
      if (process.getuid?.() === 0 || !/ (bpf|userfaultfd)$/.test(call)) expect(errno, call).not.toBe('EPERM');
    }
  });

  it('binds what runs with the library: its dependencies’ constructors, its IFUNC resolvers, its threads and its children', async () => {
    // Each asks for the mask it already has: allowed in a plain process, refused under the seal.
    const affinity = `#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
static int affinity(void) {
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) != 0) return errno;
  return sched_setaffinity(0, sizeof s, &s) == 0 ? 0 : errno;
}
static void say(const char *who, int err) { fprintf(stderr, "SEALED %s %s\\n", who, err < 0 ? "not run" : err ? strerror(err) : "allowed"); fflush(stderr); }
`;
    writeFileSync(
      join(dir, 'dep.c'),
      `${affinity}void seal_dep(void) {}\n__attribute__((constructor)) static void dep_at_load(void) { say("dependency-constructor", affinity()); }\n`,
    );
    writeFileSync(
      join(dir, 'inherit.c'),
      `${affinity}#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
void seal_dep(void);
static int resolved = -1;
static int probe_impl(void) { return 0; }
/* An IFUNC resolver runs while the library is relocated, before its calls into libc work: raw system calls. */
static long raw_affinity(void) {
  unsigned long mask[16];
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(204L), "D"(0L), "S"(sizeof mask), "d"(mask) : "rcx", "r11", "memory");
  if (r < 0) return -r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(203L), "D"(0L), "S"(sizeof mask), "d"(mask) : "rcx", "r11", "memory");
  return r < 0 ? -r : 0;
}
static void *resolve_probe(void) { resolved = (int)raw_affinity(); return (void *)probe_impl; }
int seal_probe(void) __attribute__((ifunc("resolve_probe")));
static void *thread_main(void *arg) { (void)arg; say("thread", affinity()); return NULL; }
__attribute__((constructor)) static void at_load(void) {
  seal_dep();
  (void)seal_probe();
  say("ifunc-resolver", resolved);
  say("constructor", affinity());
  pthread_t t;
  if (pthread_create(&t, NULL, thread_main, NULL) == 0) pthread_join(t, NULL);
  pid_t pid = fork();
  if (pid == 0) { say("child", affinity()); _exit(0); }
  if (pid > 0) waitpid(pid, NULL, 0);
}
`,
    );
    writeFileSync(
      join(dir, 'loader.c'),
      '#include <dlfcn.h>\n#include <stdio.h>\nint main(int argc, char **argv) { (void)argc; if (!dlopen(argv[1], RTLD_NOW)) { fprintf(stderr, "%s\\n", dlerror()); return 1; } return 0; }\n',
    );
    const lib = join(dir, 'libinherit.so');
    execFileSync('gcc', ['-O2', '-fPIC', '-shared', '-o', join(dir, 'libsealdep.so'), join(dir, 'dep.c')]);
    execFileSync('gcc', [
      '-O2',
      '-fPIC',
      '-shared',
      '-pthread',
      '-o',
      lib,
      join(dir, 'inherit.c'),
      `-L${dir}`,
      '-lsealdep',
      `-Wl,-rpath,${dir}`,
    ]);
    execFileSync('gcc', ['-O2', '-o', join(dir, 'loader'), join(dir, 'loader.c'), '-ldl']);
    const said = (stderr: string) => Object.fromEntries([...stderr.matchAll(/^SEALED (\S+) (.+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const who = ['dependency-constructor', 'ifunc-resolver', 'constructor', 'thread', 'child'];

    // The control: loaded by a plain program, every one of them may set its mask.
    const plain = said(spawnSync(join(dir, 'loader'), [lib], { encoding: 'utf8' }).stderr);
    expect(plain).toEqual(Object.fromEntries(who.map((w) => [w, 'allowed'])));
    // Loaded by a driver, none of them may.
    const sealed = said(
      (await runDriver([tools.driver, lib], ['time', 'kem', 'keygen', '1', '0', '-1', 'iccs-drng'], { timeoutMs: 20_000 })).run.stderr,
    );
    expect(sealed).toEqual(Object.fromEntries(who.map((w) => [w, 'Operation not permitted'])));
  });
});
