import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { planningSchema } from '../src/config/schemas.js';
import { measureOperations, type OperationResult } from '../src/measure/operation.js';
import { cpuTimeIsPrecise } from '../src/sandbox/cpuTime.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import { BESIDE_WINDOWS_SHARE, checkAgainstInputs, cpuBesideWindows, makeDecInputs } from '../src/measure/decInputs.js';
import { transcriptOf } from '../src/measure/transcript.js';
import { runsOnceMore } from '../src/measure/trial.js';
import { tempDir } from './helpers/tmp.js';
import { DEC, ENC, KEYGEN, variant, variants } from './helpers/toyVariant.js';

/**
 * dec's timed inputs come from another process (src/measure/decInputs.ts, native/jobs/inputs.c).
 * Two decs that cheat without computing, each against what the timing process used to hold:
 * - `peek` finds where the harness keeps the secret enc gave with each ciphertext (to check dec's
 *   answer) by scanning its own process once, then reads each call's answer from there;
 * - `memo` has enc record every (ciphertext, secret) it gives and answers those from the record.
 * With inputs made in the timing process (`-`, as by hand, which was every trial's), both publish a
 * fraction of the honest figure. With inputs made elsewhere, neither gains anything.
 */

/** The toy's sizes (test/fixtures/campaign/kem-1/common/toy_kem.inc). */
const CT = 32;
const SS = 32;

/**
 * Learns, on its first call, where a copy of its answer lies in the process (outside the stack and
 * its own output), and on its second the distance between two calls' ciphertexts; from then on
 * answers a call from the copy at the same place relative to its ciphertext, without decapsulating.
 */
const PEEK = `
  static unsigned char *ct0, *copy0; static long stride; static int learnt;
  if (learnt == 2) {
    long d = ct - ct0;
    if (d >= 0 && d % stride == 0) { SAID_ONCE("peek: answered from a copy"); memcpy(ss, copy0 + (d / stride) * ${SS}, ${SS}); *ss_len = ${SS}; return 0; }
  }
  int rc = honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);
  if (learnt == 1 && ct > ct0) { stride = ct - ct0; learnt = 2; }
  if (learnt == 0) {
    ct0 = ct; learnt = -1;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && learnt < 0 && fgets(line, sizeof line, maps)) {
      unsigned long lo, hi; char perms[5];
      if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[0] != 'r' || perms[1] != 'w' || strstr(line, "[stack]")) continue;
      for (unsigned char *p = (unsigned char *)lo; p + ${SS} <= (unsigned char *)hi; p++)
        if (p != ss && memcmp(p, ss, ${SS}) == 0) { copy0 = p; learnt = 1; break; }
    }
    if (maps) fclose(maps);
  }
  return rc;`;

/** enc records every (ciphertext, secret) it gives; dec answers a recorded ciphertext from the record. */
const MEMO_TABLE = `
#include <stdio.h>
#define MEMO (1u << 20)
static unsigned char memo_ct[MEMO][${CT}], memo_ss[MEMO][${SS}];
static unsigned memo_slot(const unsigned char *ct) { unsigned h; memcpy(&h, ct, sizeof h); return h % MEMO; }`;
const MEMO_ENC = `
  int rc = honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len);
  unsigned k = memo_slot(ct); memcpy(memo_ct[k], ct, ${CT}); memcpy(memo_ss[k], ss, ${SS});
  return rc;`;
const MEMO_DEC = `
  unsigned k = memo_slot(ct);
  if (memcmp(memo_ct[k], ct, ${CT}) == 0) { SAID_ONCE("memo: answered from the record"); memcpy(ss, memo_ss[k], ${SS}); *ss_len = ${SS}; return 0; }
  return honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);`;

/** Says on stderr, once a process, that a cheat answered without decapsulating: what the tests look for. */
const SAID_ONCE_MACRO = `
#include <stdio.h>
#define SAID_ONCE(what) do { static int said_; if (!said_++) fprintf(stderr, "%s\\n", what); } while (0)`;

/**
 * A thread started at load holds stdout's lock, so the driver stops at its fflush before the first
 * window; it waits for the inputs file to be opened, decapsulates every ciphertext in it into a
 * table, and lets go. dec then answers from the table: cheap calls, a true transcript.
 */
const EARLY_THREAD = `
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#define EARLY (1u << 16)
static unsigned char early_ct[EARLY][${CT}], early_ss[EARLY][${SS}];
static unsigned early_slot(const unsigned char *ct) { unsigned h; memcpy(&h, ct, sizeof h); return h % EARLY; }
static int early_find(char *path, size_t cap) {
  DIR *d = opendir("/proc/self/fd"); struct dirent *e; int found = 0;
  while (d && !found && (e = readdir(d))) {
    char link[64]; snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(link, path, cap - 1);
    if (n > 0) { path[n] = 0; found = strstr(path, "given/inputs.bin") != NULL; }
  }
  if (d) closedir(d);
  return found;
}
static void *early(void *arg) {
  (void)arg;
  flockfile(stdout);
  char path[512];
  for (int tries = 0; tries < 10000 && !early_find(path, sizeof path); tries++) usleep(200);
  FILE *f = fopen(path, "rb");
  unsigned char sk[4096], ct[${CT}], ss[${SS}]; unsigned long long n;
  if (f && fread(sk, 1, TOY_KEM_SK_BYTES, f) == TOY_KEM_SK_BYTES)
    while (fread(ct, 1, ${CT}, f) == ${CT}) {
      honest_kem_dec(sk, TOY_KEM_SK_BYTES, ct, ${CT}, ss, &n);
      unsigned k = early_slot(ct); memcpy(early_ct[k], ct, ${CT}); memcpy(early_ss[k], ss, ${SS});
    }
  if (f) fclose(f);
  funlockfile(stdout);
  return NULL;
}
__attribute__((constructor)) static void early_start(void) { pthread_t t; if (pthread_create(&t, NULL, early, NULL) == 0) pthread_detach(t); }`;
/**
 * On its first call, dec finds the driver's own GOT entry for pread by its value (libc's pread, in
 * the driver's readable, not executable mappings), and puts a hook there. When the driver then reads
 * its timed inputs, the hook first decapsulates the whole file into a table, in the driver's main
 * thread, outside any window; dec answers from the table: cheap calls, a true transcript, no thread.
 */
const PREAD_HOOK = `
#include <dlfcn.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define SWAP (1u << 16)
static unsigned char swap_ct[SWAP][${CT}], swap_ss[SWAP][${SS}];
static unsigned swap_slot(const unsigned char *ct) { unsigned h; memcpy(&h, ct, sizeof h); return h % SWAP; }
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
static pread_fn real_pread;
static int swapped;
/* Decapsulates every ciphertext of a file of the timed calls' inputs, into the swap table. */
static void swap_all(int fd) {
  swapped = 1;
  fprintf(stderr, "HOOK read the timed inputs\\n");
  unsigned char sk[TOY_KEM_SK_BYTES], ct[${CT}], ss[${SS}]; unsigned long long len;
  if (real_pread(fd, sk, sizeof sk, 0) == (ssize_t)sizeof sk)
    for (off_t at = sizeof sk; real_pread(fd, ct, sizeof ct, at) == (ssize_t)sizeof ct; at += sizeof ct) {
      honest_kem_dec(sk, sizeof sk, ct, sizeof ct, ss, &len);
      unsigned s = swap_slot(ct); memcpy(swap_ct[s], ct, sizeof ct); memcpy(swap_ss[s], ss, sizeof ss);
    }
}
static ssize_t hooked_pread(int fd, void *buf, size_t n, off_t off) {
  char link[64], path[512];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t k = readlink(link, path, sizeof path - 1);
  if (!swapped && k > 0 && (path[k] = 0, strstr(path, "given/inputs.bin"))) swap_all(fd);
  return real_pread(fd, buf, n, off);
}
/* Where the trusted half keeps them: its descriptor 4, in this process or through /proc. */
static void steal_held(void) {
  char parent[64];
  snprintf(parent, sizeof parent, "/proc/%d/fd/4", (int)getppid());
  int fds[2] = {4, open(parent, O_RDONLY)};
  for (int i = 0; i < 2; i++) {
    struct stat st;
    if (!swapped && fds[i] >= 0 && fstat(fds[i], &st) == 0 && S_ISREG(st.st_mode)) swap_all(fds[i]);
  }
}
static void hook_pread(void) {
  static int done;
  if (done++) return;
  steal_held();
  real_pread = (pread_fn)dlsym(RTLD_DEFAULT, "pread");
  char exe[512], line[1024], file[600];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  FILE *maps = fopen("/proc/self/maps", "r");
  if (n <= 0 || !maps || !real_pread) return;
  exe[n] = 0;
  while (fgets(line, sizeof line, maps)) {
    unsigned long lo, hi; char perms[5];
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %599s", &lo, &hi, perms, file) != 4 || strcmp(file, exe) != 0 || perms[0] != 'r' || perms[2] == 'x') continue;
    for (void **p = (void **)lo; (unsigned long)(p + 1) <= hi; p++)
      if (*p == (void *)real_pread && mprotect((void *)((unsigned long)p & ~4095ul), 4096, PROT_READ | PROT_WRITE) == 0) *p = (void *)hooked_pread;
  }
  fclose(maps);
}`;
const PREAD_HOOK_DEC = `
  hook_pread();
  unsigned k = swap_slot(ct);
  if (memcmp(swap_ct[k], ct, ${CT}) == 0) { memcpy(ss, swap_ss[k], ${SS}); *ss_len = ${SS}; return 0; }
  return honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);`;

/**
 * Work of the library's own beside the windows: a hook on the driver's write() (got_patch.inc) that,
 * as the driver writes a window's begin mark, first spins 4 ms of the process's CPU. With this
 * file's 0.02-s trials that is a fifth of the windows' CPU: more than the twentieth a held trial is
 * allowed there (and its 1 ms of slack). NOT cryptography, hostile on purpose.
 */
const BESIDE_SPIN = `
#include "${fileURLToPath(new URL('./fixtures/hostile/kem-66/got_patch.inc', import.meta.url))}"
#include <time.h>
#include <unistd.h>
typedef ssize_t (*spin_write_fn)(int, const void *, size_t);
static spin_write_fn spin_real_write;
static double spin_cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static ssize_t spin_write(int fd, const void *buf, size_t n) {
  volatile unsigned long x = 0;
  if (memmem(buf, n, "MARK\\tbegin", 10))
    for (double until = spin_cpu() + 0.004; spin_cpu() < until;) x++;
  return spin_real_write(fd, buf, n);
}
static void spin_hook(void) __attribute__((constructor));
static void spin_hook(void) { got_patch("write", (void *)spin_write, (void **)&spin_real_write); }`;

/** keygen and enc say on stderr that they ran (once a process): a dec trial's process must need neither. */
const SAY = `
#include <stdio.h>
static void say(const char *what) { static int said[2]; if (!said[what[0] == 'e']++) fprintf(stderr, "%s ran\\n", what); }`;
const EARLY_DEC = `
  unsigned k = early_slot(ct);
  if (memcmp(early_ct[k], ct, ${CT}) == 0) { memcpy(ss, early_ss[k], ${SS}); *ss_len = ${SS}; return 0; }
  return honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);`;

/**
 * The secret hidden in the key: keygen keeps the key's secret part; enc draws its coins as it must,
 * then throws them away and takes its message from that secret and a count of its calls. dec never
 * decapsulates: it rebuilds the message from the secret key it is given and its own count (trying
 * the next few counts, against the ciphertext). Where keygen and enc share a process, every secret
 * is right.
 */
const KEY_SECRET = `
static unsigned char kept_r[32]; static int kept; static unsigned long enc_n, dec_n;
static void msg_of(const unsigned char *r, unsigned long i, unsigned char m[32]) {
  unsigned char buf[40]; memcpy(buf, r, 32); memcpy(buf + 32, &i, 8); sm3hash(256, buf, 8 * sizeof buf, m);
}`;
const KEY_SECRET_KEYGEN = 'int rc = honest_kem_keygen(pk, pk_len, sk, sk_len); memcpy(kept_r, sk, 32); kept = 1; return rc;';
const KEY_SECRET_ENC = `
  int rc = honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len);
  if (rc != 0 || !kept) return rc;
  unsigned char m[32]; msg_of(kept_r, enc_n++, m);
  toy_kem_mask(pk, m, ct); return toy_kem_shared_secret(pk, m, ss);`;
const KEY_SECRET_DEC = `
  unsigned char *pk = sk + 32, m[32], guess[32];
  for (unsigned long k = 0; k < 8; k++) {
    msg_of(sk, dec_n + k, m); toy_kem_mask(pk, m, guess);
    if (memcmp(guess, ct, 32) == 0) { dec_n += k + 1; *ss_len = 32; return toy_kem_shared_secret(pk, m, ss); }
  }
  dec_n++; memset(ss, 0x5a, 32); *ss_len = 32; return 0;`;

describe("dec's inputs, made in another process", () => {
  const dir = tempDir();
  let tools: HarnessTools;
  let libs: Record<'honest' | 'peek' | 'memo' | 'early' | 'decOnly' | 'hook' | 'besideSpin' | 'keySecret', string>;
  beforeAll(async () => {
    tools = await harnessTools();
    libs = {
      honest: variant(dir, 'honest', 'kem', 'kem_dec', DEC, 'return honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);'),
      peek: variants(dir, 'peek', 'kem', [['kem_dec', DEC, PEEK]], SAID_ONCE_MACRO),
      memo: variants(
        dir,
        'memo',
        'kem',
        [
          ['kem_enc', ENC, MEMO_ENC],
          ['kem_dec', DEC, MEMO_DEC],
        ],
        `${SAID_ONCE_MACRO}${MEMO_TABLE}`,
      ),
      early: variants(dir, 'early', 'kem', [['kem_dec', DEC, EARLY_DEC]], EARLY_THREAD),
      hook: variants(dir, 'hook', 'kem', [['kem_dec', DEC, PREAD_HOOK_DEC]], PREAD_HOOK),
      besideSpin: variants(
        dir,
        'beside-spin',
        'kem',
        [['kem_dec', DEC, 'return honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);']],
        BESIDE_SPIN,
      ),
      keySecret: variants(
        dir,
        'key-secret',
        'kem',
        [
          ['kem_keygen', KEYGEN, KEY_SECRET_KEYGEN],
          ['kem_enc', ENC, KEY_SECRET_ENC],
          ['kem_dec', DEC, KEY_SECRET_DEC],
        ],
        KEY_SECRET,
      ),
      decOnly: variants(
        dir,
        'dec-only',
        'kem',
        [
          ['kem_keygen', KEYGEN, 'say("keygen"); return honest_kem_keygen(pk, pk_len, sk, sk_len);'],
          ['kem_enc', ENC, 'say("enc"); return honest_kem_enc(pk, pk_len, ss, ss_len, ct, ct_len);'],
        ],
        SAY,
      ),
    };
  });

  /** The per-call median of a trial of `calls` decs whose inputs are `inputs` ("-": made in the timing process). */
  async function decMedian(lib: string, calls: number): Promise<{ status?: string; median: number; stderr: string }> {
    const seed = randomBytes(48).toString('hex');
    const r = await runDriver([tools.driver, lib], ['time', 'kem', 'dec', String(calls), '1', '-1', 'iccs-drng'], {
      timeoutMs: 60_000,
      markAnswers: { seed, inputs: '-' },
    });
    const line = r.output.lines.find((f) => f[0] === 'CALLS');
    return { status: r.output.status, median: Number(line?.[4]), stderr: r.run.stderr };
  }

  it('both cheats publish a fraction of the honest figure when the timing process makes its own inputs', async () => {
    const calls = 4000;
    const honest = await decMedian(libs.honest, calls);
    expect(honest.status).toBe('complete');
    for (const name of ['peek', 'memo'] as const) {
      const cheat = await decMedian(libs[name], calls);
      expect(cheat.status, name).toBe('complete');
      expect(cheat.median, `${name}: ${cheat.median} against ${honest.median} cycles`).toBeLessThan(0.5 * honest.median);
      expect(cheat.stderr, name).toMatch(/^(peek: answered from a copy|memo: answered from the record)\n/);
    }
  }, 120_000);

  const planning = planningSchema.parse({ trials: 3, trial_target_s: 0.02, op_budget_s: 5, min_measurements: 10, warmups: 1 });
  /** The toy KEM's sizes, as its KAT records them (build.json): with them, the trusted half holds dec's timed inputs. */
  const TOY_SIZES = { pk_bytes: 64, sk_bytes: 96, ct_bytes: CT, ss_bytes: SS };
  const measure = (lib: string, sizes?: Record<string, number>): Promise<OperationResult> =>
    measureOperations([
      {
        driver: tools.driver,
        library: lib,
        libraryShown: 'lib.so',
        type: 'kem',
        operation: 'dec',
        cpu: -1,
        rng: 'iccs-drng',
        sandbox: 'bwrap',
        planning,
        ...(sizes ? { sizes } : {}),
      },
    ]).then((r) => r[0]!);

  it('checks every trial of an honest dec against its inputs, and the trial took them', async () => {
    const r = await measure(libs.honest);
    expect([r.status, r.failure]).toEqual(['complete', undefined]);
    expect(r.replays!.map((x) => [x.trial, x.check, x.outcome])).toEqual(r.trials.map((_, i) => [i, 'inputs', 'agrees']));
    expect(r.processes.every((p) => p.meta.inputs === 'given' && (p.inputs_s ?? 0) > 0)).toBe(true);
    // One key pair for the operation, its folder gone once the trials are over; no trial's folder left either.
    expect(readdirSync(tmpdir()).filter((f) => new RegExp(`^ngcc-(keys|inputs)-${process.pid}-`).test(f))).toEqual([]);
  }, 120_000);

  it('neither the peeking dec nor the recording one gains anything: nothing of their answers is in the process', async () => {
    for (const name of ['peek', 'memo'] as const) {
      const cheat = await measure(libs[name]);
      expect([cheat.status, cheat.failure], name).toEqual(['complete', undefined]);
      // Every call decapsulated: no process of the trials found a copy of an answer or a record of it
      // (each says so on stderr when it does, as in the test above). Not a timing ratio: this host's speed varies 2×.
      expect(
        cheat.processes.map((p) => p.stderr),
        name,
      ).toEqual(cheat.processes.map(() => ''));
    }
  }, 180_000);

  it("a dec trial's process makes no key pair and calls no enc: its warm-ups' inputs come from the inputs job too", async () => {
    // Made in the timing process, the warm-ups' and timed inputs need a key pair and enc's calls.
    const seed = randomBytes(48).toString('hex');
    const own = await runDriver([tools.driver, libs.decOnly], ['time', 'kem', 'dec', '100', '1', '-1', 'iccs-drng'], {
      timeoutMs: 60_000,
      markAnswers: { seed, warmups: '-', inputs: '-' },
    });
    expect(own.output.status).toBe('complete');
    expect(own.run.stderr).toMatch(/keygen ran\nenc ran\n/);
    const r = await measure(libs.decOnly);
    expect([r.status, r.failure]).toEqual(['complete', undefined]);
    expect(r.processes.length).toBeGreaterThan(1);
    for (const p of r.processes) expect([p.meta.inputs, p.stderr]).toEqual(['given', '']);
    expect(r.replays!.every((x) => x.check === 'inputs' && x.outcome === 'agrees')).toBe(true);
  }, 120_000);

  it('the secret hidden in the key: right wherever keygen and enc share a process, FORGED when enc is given only the public key', async () => {
    // Made in one process (as the inputs job made them, key pair and ciphertexts alike), every secret is right.
    const own = await runDriver([tools.driver, libs.keySecret], ['time', 'kem', 'dec', '200', '1', '-1', 'iccs-drng'], {
      timeoutMs: 60_000,
      markAnswers: { seed: randomBytes(48).toString('hex'), warmups: '-', inputs: '-' },
    });
    expect([own.output.status, own.output.statusDetail]).toEqual(['complete', undefined]);
    const r = await measure(libs.keySecret);
    expect(r.forged).toMatch(
      /^FORGED: (the calibration|trial \d+), calls? [\d–]+: dec's secrets differ from those enc gave with the ciphertexts/,
    );
  }, 120_000);

  /** A trial of `calls` decs with the tool's inputs, its lines read here without the tool's checks. */
  async function withToolInputs(lib: string, calls: number) {
    const inputs = await makeDecInputs({
      driver: tools.driver,
      library: lib,
      rng: 'iccs-drng',
      iterations: calls,
      warmups: 1,
      cpu: -1,
      timeoutMs: 60_000,
    });
    if (typeof inputs === 'string') throw new Error(inputs);
    try {
      const r = await runDriver([tools.driver, lib], ['time', 'kem', 'dec', String(calls), '1', '-1', 'iccs-drng'], {
        timeoutMs: 60_000,
        sandbox: { mode: 'bwrap', readOnly: [tools.driver, lib, inputs.givenDir], writable: [] },
        markAnswers: { seed: randomBytes(48).toString('hex'), warmups: inputs.placeWarmups, inputs: inputs.place },
      });
      const transcript = transcriptOf(r.output.lines);
      return {
        status: r.output.status,
        median: Number(r.output.lines.find((f) => f[0] === 'CALLS')?.[4]),
        agrees: transcript ? checkAgainstInputs(transcript, inputs.transcript, calls).outcome : undefined,
        beside: cpuBesideWindows(r.run.channel?.marks ?? []),
        stderr: r.run.stderr,
      };
    } finally {
      inputs.dispose();
    }
  }

  it('a thread that decapsulates the inputs before the first window: cheap calls and a true transcript, but the thread is seen', async () => {
    const calls = 20_000;
    const honest = await withToolInputs(libs.honest, calls);
    const early = await withToolInputs(libs.early, calls);
    expect([honest.status, honest.agrees, early.status, early.agrees]).toEqual(['complete', 'agrees', 'complete', 'agrees']);
    expect(early.median, `${early.median} against ${honest.median} cycles`).toBeLessThan(0.5 * honest.median);
    // The honest driver's tree keeps its threads, and spends beside the windows a small share of what its calls take.
    if (typeof honest.beside === 'string') throw new Error(honest.beside);
    expect(honest.beside.beside_s).toBeLessThan(BESIDE_WINDOWS_SHARE * honest.beside.windows_s);
    expect(early.beside).toBe('the library ran 1 thread(s) or process(es) beside the driver once its inputs existed (at its inputs mark)');
    // And so the tool refuses its trials.
    const r = await measure(libs.early);
    expect(r.status).toBe('failed');
    expect(r.failure).toMatch(
      /^(calibration: )?inconsistent trial: the library ran 1 thread\(s\) or process\(es\) beside the driver once its inputs existed/,
    );
  }, 180_000);

  it("a hook on the driver's pread that decapsulates the inputs as they are read: cheap calls and a true transcript, but its CPU is seen", async () => {
    const calls = 20_000;
    const honest = await withToolInputs(libs.honest, calls);
    const hook = await withToolInputs(libs.hook, calls);
    expect([honest.status, honest.agrees, hook.status, hook.agrees]).toEqual(['complete', 'agrees', 'complete', 'agrees']);
    expect(hook.median, `${hook.median} against ${honest.median} cycles`).toBeLessThan(0.5 * honest.median);
    if (typeof honest.beside === 'string' || typeof hook.beside === 'string') throw new Error(`${honest.beside} / ${hook.beside}`);
    // No thread: the work is the driver's main thread's, outside the windows, where the honest driver
    // spends a small share of what its calls take.
    expect(honest.beside.beside_s).toBeLessThan(BESIDE_WINDOWS_SHARE * honest.beside.windows_s);
    expect(hook.beside.beside_s).toBeGreaterThan(hook.beside.windows_s);
    // Where the kernel counts CPU in ticks, the rule's 20-ms slack can hold this toy's 20 ms of hidden work.
    if (!cpuTimeIsPrecise()) return;
    const r = await measure(libs.hook);
    expect(r.status).toBe('failed');
    expect(r.failure).toMatch(
      /^(calibration: )?inconsistent trial: its process used [\d.]+ s of CPU outside its windows once its inputs existed/,
    );
    // Refused only after it was run once more, as a host's transient charge would have been.
    expect(r.processes.at(-1)!.retried?.map((x) => x.disturbed)).toEqual([
      expect.stringMatching(/^inconsistent trial: its process used [\d.]+ s of CPU outside its windows/),
    ]);
  }, 180_000);

  it("where the trusted half holds the windows, dec's timed inputs go to it alone: the pread hook finds none, and every call decapsulates", async () => {
    // Given where the library's process can open them, the hook reads them all (above).
    const placed = await withToolInputs(libs.hook, 2_000);
    expect(placed.status).toBe('complete');
    expect(placed.stderr).toContain('HOOK read the timed inputs');
    // Held: only the trusted half has the file, as a descriptor the child closed at the fork; each
    // window's ciphertexts are in the book from its start. The trials are dec's own, checked against
    // what the inputs job's enc gave.
    const r = await measure(libs.hook, TOY_SIZES);
    expect([r.status, r.failure]).toEqual(['complete', undefined]);
    expect(r.processes.some((p) => p.stderr.includes('HOOK read the timed inputs'))).toBe(false);
    expect(r.replays!.map((x) => [x.check, x.outcome])).toEqual(r.trials.map(() => ['inputs', 'agrees']));
    expect(r.processes.every((p) => p.window_key !== undefined && p.meta.inputs === 'given')).toBe(true);
    // The trusted half's work between the windows (reading each window's ciphertexts, folding its
    // outputs) is measured, and lies within the CPU beside the windows, where the rule leaves it out.
    const timed = r.processes.filter((p) => p.beside_windows_cpu_s !== undefined);
    expect(timed.length).toBeGreaterThan(0);
    for (const p of timed) {
      expect(p.held_beside_cpu_s).toBeGreaterThan(0);
      expect(p.held_beside_cpu_s).toBeLessThanOrEqual(p.beside_windows_cpu_s! + 0.001);
    }
  }, 180_000);

  it("held, a dec whose library works beside the windows for a fifth of their CPU is refused: the trusted half's share is its own, and a twentieth is left", async () => {
    // Where the kernel counts CPU in ticks, the rule's 20-ms slack holds this much.
    if (!cpuTimeIsPrecise()) return;
    const r = await measure(libs.besideSpin, TOY_SIZES);
    expect(r.status).toBe('failed');
    expect(r.failure).toMatch(
      /^(calibration: )?inconsistent trial: its process used [\d.]+ s of CPU outside its windows once its inputs existed, more than [\d.]+ s \(5 % of the windows' /,
    );
  }, 180_000);

  it('a dec whose book the trusted half cannot hold, once its inputs were given to it, fails for that, and makes no timed call', async () => {
    // Its first call (a warm-up's, the book laid out) overwrites the book's layout: slot 0's
    // ciphertext is two pages past the book's start (native/core/calls.h).
    const scribbler = variant(
      dir,
      'dec-scribble',
      'kem',
      'kem_dec',
      DEC,
      'static int done; if (!done++) memset(ct - 8192 + 8, 0xff, 80); return honest_kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);',
    );
    const r = await measure(scribbler, TOY_SIZES);
    expect([r.status, r.failure]).toEqual([
      'failed',
      expect.stringMatching(
        /^(calibration: )?inconsistent trial: the trusted half held none of its windows' inputs and outputs \(native\/core\/held\.h\): the book holds no layout native\/core\/calls\.c makes$/,
      ),
    ]);
  }, 180_000);

  it("refuses to time warm-ups given without the timed calls' inputs: it would make them from a key it does not have", async () => {
    const inputs = await makeDecInputs({
      driver: tools.driver,
      library: libs.honest,
      rng: 'iccs-drng',
      iterations: 100,
      warmups: 1,
      cpu: -1,
      timeoutMs: 60_000,
    });
    if (typeof inputs === 'string') throw new Error(inputs);
    try {
      const r = await runDriver([tools.driver, libs.honest], ['time', 'kem', 'dec', '100', '1', '-1', 'iccs-drng'], {
        timeoutMs: 60_000,
        sandbox: { mode: 'bwrap', readOnly: [tools.driver, libs.honest, inputs.givenDir], writable: [] },
        markAnswers: { seed: randomBytes(48).toString('hex'), warmups: inputs.placeWarmups, inputs: '-' },
      });
      expect([r.output.status, r.output.statusDetail]).toEqual(['USAGE', "the parent gave the warm-ups' inputs but not the timed calls'"]);
    } finally {
      inputs.dispose();
    }
  }, 60_000);

  it('refuses inputs of more than 1 GiB, as a calibration that claimed a tiny cost would ask for, before writing them', async () => {
    const calls = 40_000_000; // 32-byte ciphertexts: 1.28 GB
    const r = await makeDecInputs({
      driver: tools.driver,
      library: libs.honest,
      rng: 'iccs-drng',
      iterations: calls,
      warmups: 1,
      cpu: -1,
      timeoutMs: 60_000,
    });
    expect(r).toBe(
      `the inputs job failed: USAGE: dec's inputs for ${calls} calls would take ${96 + calls * CT} bytes, over the 1073741824 a trial may have`,
    );
  }, 60_000);

  it('refuses inputs from an enc that writes no ciphertext or secret: CRYPTOFAIL in the inputs job, naming the call', async () => {
    const idle = variant(
      dir,
      'idle-enc',
      'kem',
      'kem_enc',
      ENC,
      '(void)pk; (void)pk_len; (void)ss; (void)ss_len; (void)ct; (void)ct_len; return 0;',
    );
    const r = await makeDecInputs({
      driver: tools.driver,
      library: idle,
      rng: 'iccs-drng',
      iterations: 100,
      warmups: 1,
      cpu: -1,
      timeoutMs: 60_000,
    });
    expect(r).toMatch(/^the inputs job failed: CRYPTOFAIL: call \d+: kem_enc did not write the ciphertext or secret of dec's input$/);
  }, 60_000);

  it('runs once more a trial refused for its CPU beside the windows, as one the kernel contradicted; not one with a thread too many', () => {
    const failed = (failure: string) => ({ status: 'failed' as const, failure });
    expect(
      runsOnceMore(
        failed(
          "inconsistent trial: its process used 0.0188 s of CPU outside its windows once its inputs existed, more than 0.0058 s (a quarter of the windows' 0.0191 s, and the accounting's slack)",
        ),
      ),
    ).toBe(true);
    expect(runsOnceMore(failed('inconsistent trial: its cycles say 1.0 ms, but only 0.5 ms passed during the trial'))).toBe(true);
    expect(
      runsOnceMore(
        failed(
          'inconsistent trial: the library ran 1 thread(s) or process(es) beside the driver once its inputs existed (at its inputs mark)',
        ),
      ),
    ).toBe(false);
    expect(runsOnceMore({ status: 'complete', failure: undefined })).toBe(false);
  });

  it('refuses marks that ask for the inputs twice or out of turn, and a thread more than at start; sums the CPU beside the windows', () => {
    const m = (name: string, cpu_s: number, tasks = 3) => ({ name, wall_s: cpu_s, cpu_s, tasks });
    const [start, seed, warm] = [m('start', 0), m('seed', 0.01), m('warmups', 0.015)];
    const good = [start, seed, warm, m('inputs', 0.02), m('begin', 0.03), m('end', 0.23), m('begin', 0.25), m('end', 0.45)];
    const sum = cpuBesideWindows(good);
    if (typeof sum === 'string') throw new Error(sum);
    expect(sum.windows_s).toBeCloseTo(0.4, 9);
    expect(sum.beside_s).toBeCloseTo(0.03, 9);
    const windows = good.slice(4);
    expect(cpuBesideWindows([...good.slice(0, 4), m('inputs', 0.021), ...windows])).toBe('the driver asked for its inputs 2 times');
    expect(cpuBesideWindows([start, seed, m('inputs', 0.02), ...windows])).toBe("the driver asked for the warm-ups' inputs 0 times");
    expect(cpuBesideWindows([start, seed, warm, warm, m('inputs', 0.02), ...windows])).toBe(
      "the driver asked for the warm-ups' inputs 2 times",
    );
    expect(cpuBesideWindows([start, warm, m('inputs', 0.01), seed, ...windows])).toBe('the driver asked for its inputs out of turn');
    expect(cpuBesideWindows([start, seed, m('inputs', 0.012), warm, ...windows])).toBe('the driver asked for its inputs out of turn');
    expect(cpuBesideWindows([start, seed, warm, m('begin', 0.02), m('inputs', 0.03), m('end', 0.2)])).toBe(
      'the driver asked for its inputs out of turn',
    );
    expect(cpuBesideWindows([...good.slice(0, 5), m('end', 0.23, 4), ...good.slice(6)])).toBe(
      'the library ran 1 thread(s) or process(es) beside the driver once its inputs existed (at its end mark)',
    );
  });
});
