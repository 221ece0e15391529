/*
 * overhead_bench.c: cost of one hashprof wrapper per call, in the accounting's ticks.
 *
 * One file, five roles chosen with -DOVB_ROLE=<n>; the library roles use the guide flags
 * (-std=c99 -Wpedantic ... -fPIC), the program role gnu11. See README.md for the commands.
 *   1 loop    ngcc_ovb_loop(n): n calls of ngcc_ovb_target; ngcc_ovb_nested(n): one call of
 *             ngcc_ovb_outer(n)                                          (object A)
 *   2 outer   ngcc_ovb_outer(n): n calls of ngcc_ovb_target             (object B)
 *   3 target  ngcc_ovb_target(x) = x + 1, the trivial wrapped function  (object C)
 *   4 wrap    __wrap_ngcc_ovb_target / __wrap_ngcc_ovb_outer with the hashprof macros
 *   0 main    ngcc_ovb_bench PLAIN_LIB WRAPPED_LIB [CALLS]
 * PLAIN_LIB   = A + B + C + hashprof.o
 * WRAPPED_LIB = A + B + C + wrap + hashprof.o, linked with
 *               -Wl,--wrap=ngcc_ovb_target -Wl,--wrap=ngcc_ovb_outer
 * The program prints ticks per call of the target: unwrapped, wrapped with accounting off,
 * wrapped with accounting on (outermost: two counter reads and a table update), and
 * wrapped but nested inside another wrapped call (depth counter only); the best of
 * several rounds each.
 */
#ifndef OVB_ROLE
#define OVB_ROLE 0
#endif

int ngcc_ovb_target(int x);
int ngcc_ovb_outer(int n);
int ngcc_ovb_loop(int n);
int ngcc_ovb_nested(int n);

#if OVB_ROLE == 1
int ngcc_ovb_loop(int n) {
    int acc = 0, i;
    for (i = 0; i < n; i++) acc = ngcc_ovb_target(acc);
    return acc;
}

int ngcc_ovb_nested(int n) { return ngcc_ovb_outer(n); }

#elif OVB_ROLE == 2
int ngcc_ovb_outer(int n) {
    int acc = 0, i;
    for (i = 0; i < n; i++) acc = ngcc_ovb_target(acc);
    return acc;
}

#elif OVB_ROLE == 3
int ngcc_ovb_target(int x) { return x + 1; }

#elif OVB_ROLE == 4
#include "hashprof.h"
int __real_ngcc_ovb_target(int x);
int __wrap_ngcc_ovb_target(int x);
int __real_ngcc_ovb_outer(int n);
int __wrap_ngcc_ovb_outer(int n);

int __wrap_ngcc_ovb_target(int x) {
    uint64_t t0 = ngcc_prof__enter();
    int r = __real_ngcc_ovb_target(x);
    ngcc_prof__leave("ngcc_ovb_target", 32ull, 32ull, t0);
    return r;
}

int __wrap_ngcc_ovb_outer(int n) {
    uint64_t t0 = ngcc_prof__enter();
    int r = __real_ngcc_ovb_outer(n);
    ngcc_prof__leave("ngcc_ovb_outer", 0ull, 0ull, t0);
    return r;
}

#else /* main */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*int_fn)(int);
typedef void (*void_fn)(void);
typedef void (*enable_fn)(int);
typedef unsigned long long (*now_fn)(void);
typedef const char *(*name_fn)(void);
typedef int (*count_fn)(void);
typedef int (*entry_fn)(int, const char **, unsigned long long *, unsigned long long *, unsigned long long *, unsigned long long *);

typedef struct {
    void *h;
    int_fn loop, nested;
    void_fn reset;
    enable_fn enable;
    now_fn now;
    name_fn counter;
    count_fn count;
    entry_fn entry;
} bench_lib;

static void *sym(void *h, const char *lib, const char *name) {
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "%s: missing %s\n", lib, name);
        exit(3);
    }
    return p;
}

static void open_lib(bench_lib *b, const char *path) {
    b->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!b->h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(3);
    }
    b->loop = (int_fn)sym(b->h, path, "ngcc_ovb_loop");
    b->nested = (int_fn)sym(b->h, path, "ngcc_ovb_nested");
    b->reset = (void_fn)sym(b->h, path, "ngcc_prof_reset");
    b->enable = (enable_fn)sym(b->h, path, "ngcc_prof_enable");
    b->now = (now_fn)sym(b->h, path, "ngcc_prof_now");
    b->counter = (name_fn)sym(b->h, path, "ngcc_prof_counter");
    b->count = (count_fn)sym(b->h, path, "ngcc_prof_count");
    b->entry = (entry_fn)sym(b->h, path, "ngcc_prof_entry");
}

/* Ticks per call the accounting itself recorded for the trivial target in the last round:
 * the bias every CALL line carries per call (one counter read plus the call). */
static double recorded_per_call(const bench_lib *b) {
    for (int i = 0; i < b->count(); i++) {
        const char *fn = NULL;
        unsigned long long in, out, calls, ticks;
        if (b->entry(i, &fn, &in, &out, &calls, &ticks) == 0 && calls > 0 && fn && strcmp(fn, "ngcc_ovb_target") == 0)
            return (double)ticks / (double)calls;
    }
    return 0.0;
}

static volatile int sink;

/* Best (lowest) ticks per call over several rounds. */
static double per_call(const bench_lib *b, int_fn fn, int calls, int on) {
    double best = 1e300;
    for (int round = 0; round < 7; round++) {
        b->reset();
        b->enable(on);
        unsigned long long t0 = b->now();
        sink = fn(calls);
        unsigned long long t1 = b->now();
        b->enable(0);
        double v = (double)(t1 - t0) / calls;
        if (v < best) best = v;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ngcc_ovb_bench PLAIN_LIB WRAPPED_LIB [CALLS]\n");
        return 2;
    }
    int calls = argc > 3 ? atoi(argv[3]) : 2000000;
    if (calls < 1) calls = 1;
    bench_lib plain, wrapped;
    open_lib(&plain, argv[1]);
    open_lib(&wrapped, argv[2]);
    per_call(&plain, plain.loop, calls, 0); /* warm-up */
    double p = per_call(&plain, plain.loop, calls, 0);
    double off = per_call(&wrapped, wrapped.loop, calls, 0);
    double on = per_call(&wrapped, wrapped.loop, calls, 1);
    double recorded = recorded_per_call(&wrapped);
    double nested = per_call(&wrapped, wrapped.nested, calls, 1);
    double pn = per_call(&plain, plain.nested, calls, 0);
    printf("META\tcounter\t%s\n", wrapped.counter());
    printf("META\tcalls\t%d\n", calls);
    printf("PERCALL\tunwrapped\t%.2f\n", p);
    printf("PERCALL\twrapped_accounting_off\t%.2f\n", off);
    printf("PERCALL\twrapped_outermost\t%.2f\n", on);
    printf("PERCALL\twrapped_nested\t%.2f\n", nested);
    printf("PERCALL\trecorded_for_trivial\t%.2f\n", recorded);
    printf("OVERHEAD\toutermost\t%.2f\n", on - p);
    printf("OVERHEAD\tnested\t%.2f\n", nested - pn);
    printf("OVERHEAD\taccounting_off\t%.2f\n", off - p);
    printf("STATUS\tcomplete\n");
    return 0;
}
#endif
