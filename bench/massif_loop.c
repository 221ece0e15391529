/* The workload for bench/memory.mjs's valgrind massif cross-check of ngcc_mem's stack figure.
 *   massif_loop LIB TYPE OP N [empty]
 * Prepares OP's inputs as the drivers do (native/core/ops.h), then runs OP N times on a fresh
 * thread; with `empty` the thread calls an empty function N times instead, which gives the
 * call-site level to subtract. Prints tab-separated lines: META rng, META iterations,
 * STATUS complete.
 *
 * massif --stacks=yes reports the sum of all threads' stacks, and its peak snapshot is the
 * global maximum of heap + stacks over the whole run. Two things keep that maximum inside
 * the loop:
 * - the thread waits until the main thread is parked in pthread_join: otherwise its first
 *   call overlaps the main thread's pthread_create (several hundred bytes deeper than
 *   pthread_join) and the peak includes that;
 * - around the loop the thread declares a 1 MiB "ballast" block to massif (a client request,
 *   which is inline code: no call, no stack). Without it the peak of the `empty` run would be
 *   wherever else the stacks were deepest (ld.so's start-up reaches ~7.5 KB, preparing dec
 *   runs keygen and enc on the main thread), not the call-site level. Natively the client
 *   requests do nothing.
 * N repetitions are cheap insurance: massif looks for a new peak only when memory is
 * released (a return, a free), so every repetition is another chance to catch it. */
#define _GNU_SOURCE
#include "core/harness.h"
#include "core/ops.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/valgrind.h>

typedef struct {
    op_fn fn;
    ctx_t *c;
    unsigned long n;
    int rc;
} job_t;

/* Set by the main thread immediately before pthread_join. */
static int main_joining;

/* Never touched: only its address and size are declared to massif. */
static char ballast[1 << 20];

/* noinline and an empty asm with a memory clobber: the compiler must keep the calls, so the
 * baseline has the same call (return address, alignment) as the real operation. */
static __attribute__((noinline)) int do_nothing(ctx_t *c) {
    __asm__ __volatile__("" : : "r"(c) : "memory");
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *run_loop(void *arg) {
    job_t *j = arg;
    /* Poll with sleeps rather than a tight spin: valgrind runs one thread at a time, and a
     * sleeping thread hands the lock back to the main thread at once. */
    while (!__atomic_load_n(&main_joining, __ATOMIC_ACQUIRE)) sleep_ms(1);
    /* The flag is set just before pthread_join, not inside it: the extra sleep lets the main
     * thread reach its futex wait, where its stack stays put for the rest of the run. */
    sleep_ms(50);
    VALGRIND_MALLOCLIKE_BLOCK(ballast, sizeof ballast, 0, 0);
    for (unsigned long i = 0; i < j->n; i++) {
        int rc = j->fn(j->c);
        if (rc != 0 && j->rc == 0) j->rc = rc;
    }
    VALGRIND_FREELIKE_BLOCK(ballast, 0);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "empty") != 0)) {
        fprintf(stderr, "usage: massif_loop LIB TYPE OP N [empty]\n");
        return EXIT_USAGE;
    }
    const char *lib = argv[1], *type = argv[2], *op = argv[3];
    char *end = NULL;
    unsigned long n = strtoul(argv[4], &end, 10);
    if (*end != '\0' || n < 1) fail(EXIT_USAGE, "USAGE", "N must be a positive integer");
    int empty = argc == 6;

    static ctx_t c;
    api_load(&c.api, lib, type);
    meta_str("rng", api_seed_default(&c.api, NULL));
    ops_alloc(&c);
    /* Inputs are prepared in both modes, so the heap and the main thread look the same. */
    op_fn fn = ops_prepare(&c, op);

    job_t job = {empty ? do_nothing : fn, &c, n, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, run_loop, &job) != 0) fail(EXIT_IOERROR, "ERROR", "cannot start the thread");
    __atomic_store_n(&main_joining, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    ops_must(job.rc, op);
    ops_check_guards(&c);
    meta_u64("iterations", n);
    printf("STATUS\tcomplete\n");
    return EXIT_OK;
}
