/* A wrapper-free check of where time goes: statistical sampling of the instruction pointer.
 *   sample_loop LIB TYPE OP N [CPU|-1] [sample|nosample]
 * Runs N calls of OP (inputs prepared as the harness does, native/core/ops.c) while a CLOCK_MONOTONIC
 * timer interrupts the thread at random intervals of 20-60 us and records the interrupted
 * instruction pointer; random intervals keep the samples from locking onto the period of the
 * loop. Prints, tab-separated like the drivers:
 *   BASE <hex>        load address of LIB (dladdr's dli_fbase): nm's addresses are relative to it
 *   SAMPLE <hex> <n>  n samples at instruction pointer <hex> (absolute)
 *   META <key> <v>    samples, lost samples (buffer full)
 * If LIB was relinked with native/linked/hashprof, its accounting is switched on around the same loop
 * and TOTAL/CALL lines are printed as the prof job (native/jobs/prof.c) prints them, so both views describe one run.
 * The loop is the function run_loop, which callgrind's --zero-before/--dump-after can select;
 * "nosample" keeps the timer off, so that its handler adds nothing to callgrind's count. */
#define _GNU_SOURCE
#include "core/harness.h"
#include "core/ops.h"
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_SAMPLES (1u << 21)

static uintptr_t samples[MAX_SAMPLES];
static volatile sig_atomic_t collecting = 0;
static volatile unsigned long nsamples = 0, lost = 0;
static timer_t timer;
static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;

static void arm(void) {
    /* xorshift: async-signal-safe, unlike rand(). */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    struct itimerspec it = {{0, 0}, {0, 20000 + (long)(rng_state % 40000)}};
    timer_settime(timer, 0, &it, NULL);
}

static void on_tick(int sig, siginfo_t *info, void *uc_) {
    (void)sig;
    (void)info;
    if (!collecting) return;
    ucontext_t *uc = (ucontext_t *)uc_;
#if defined(__x86_64__)
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.pc;
#else
#error "sample_loop: unsupported architecture"
#endif
    if (nsamples < MAX_SAMPLES) samples[nsamples++] = ip;
    else lost++;
    arm();
}

static int by_address(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

typedef void (*prof_enable_fn)(int);
typedef void (*prof_reset_fn)(void);
typedef int (*prof_count_fn)(void);
typedef int (*prof_entry_fn)(int, const char **, unsigned long long *, unsigned long long *,
                             unsigned long long *, unsigned long long *);
typedef unsigned long long (*prof_now_fn)(void);

__attribute__((noinline)) int run_loop(op_fn fn, ctx_t *c, unsigned long long n) {
    int rc = 0;
    for (unsigned long long i = 0; i < n; i++) rc |= fn(c);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: sample_loop LIB TYPE OP N [CPU|-1] [sample|nosample]\n");
        return EXIT_USAGE;
    }
    unsigned long long n = strtoull(argv[4], NULL, 10);
    if (argc > 5 && atoi(argv[5]) >= 0 && pin_to_cpu(atoi(argv[5])) != 0) fail(EXIT_USAGE, "USAGE", "cannot pin");
    int sampling = !(argc > 6 && strcmp(argv[6], "nosample") == 0);
    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, argv[1], argv[2]);
    api_seed_default(&c.api, NULL);
    ops_alloc(&c);
    op_fn fn = ops_prepare(&c, argv[3]);
    for (int i = 0; i < 10; i++) ops_must(fn(&c), argv[3]);

    Dl_info info;
    void *entry = c.api.kem_keygen ? (void *)c.api.kem_keygen : (void *)c.api.sig_keygen;
    if (!dladdr(entry, &info)) fail(EXIT_LOADFAIL, "LOADFAIL", "dladdr failed");

    prof_enable_fn enable = (prof_enable_fn)api_optional(&c.api, "ngcc_prof_enable");
    prof_reset_fn reset = (prof_reset_fn)api_optional(&c.api, "ngcc_prof_reset");
    prof_count_fn count = (prof_count_fn)api_optional(&c.api, "ngcc_prof_count");
    prof_entry_fn entry_of = (prof_entry_fn)api_optional(&c.api, "ngcc_prof_entry");
    prof_now_fn now = (prof_now_fn)api_optional(&c.api, "ngcc_prof_now");
    int wrapped = enable && reset && count && entry_of && now;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) fail(EXIT_USAGE, "USAGE", "timer_create failed");

    unsigned long long t0 = 0, t1 = 0;
    int rc = 0;
    if (wrapped) {
        reset();
        enable(1);
        t0 = now();
    }
    collecting = sampling;
    if (sampling) arm();
    rc = run_loop(fn, &c, n);
    collecting = 0;
    if (wrapped) {
        t1 = now();
        enable(0);
    }
    ops_must(rc, argv[3]);

    printf("BASE\t%lx\n", (unsigned long)(uintptr_t)info.dli_fbase);
    meta_u64("samples", nsamples);
    meta_u64("lost", lost);
    qsort(samples, nsamples, sizeof samples[0], by_address);
    for (unsigned long i = 0; i < nsamples;) {
        unsigned long j = i;
        while (j < nsamples && samples[j] == samples[i]) j++;
        printf("SAMPLE\t%lx\t%lu\n", (unsigned long)samples[i], j - i);
        i = j;
    }
    if (wrapped) {
        printf("TOTAL\t%llu\t%llu\n", n, t1 - t0);
        for (int i = 0; i < count(); i++) {
            const char *name = NULL;
            unsigned long long in_bits = 0, out_bits = 0, calls = 0, ticks = 0;
            if (entry_of(i, &name, &in_bits, &out_bits, &calls, &ticks) == 0 && name)
                printf("CALL\t%s\t%llu\t%llu\t%llu\t%llu\n", name, in_bits, out_bits, calls, ticks);
        }
    }
    printf("STATUS\tcomplete\n");
    return EXIT_OK;
}
