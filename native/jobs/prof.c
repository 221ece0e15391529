/* The profiling job of ngcc_driver: time spent in the wrapped symmetric primitives during
 * OPS calls of one operation, for a library relinked with native/linked/hashprof wrappers.
 *   ngcc_driver LIB prof TYPE OP OPS WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS]
 * TYPE kem|sig; OP keygen|enc|dec (kem) or keygen|sign|verify (sig).
 * Inputs are prepared as the time job (jobs/time.c) does (enc after a keygen, dec after an enc, signatures
 * on a 64-byte message); accounting is off during preparation and warm-ups, then reset
 * and on only around the OPS measured calls. Prints
 *   META counter <source>      tick source of the library's accounting (also used for TOTAL)
 *   META cpu <n>, META rng <name>, META entries <n>
 *   META overflow <calls>      outermost wrapped calls that found the table full
 *   TOTAL <ops> <ticks>        ticks of the whole loop of OPS calls
 *   CALL <fn> <in_bits> <out_bits> <calls> <ticks>   one line per (fn, in, out)
 *   STATUS complete, then END (docs/native-protocol.md)
 * Lines are tab-separated like every driver; exit codes are those of harness.h
 * (LOADFAIL also when the library has no ngcc_prof_* functions). */
#include "core/harness.h"
#include "core/ops.h"
#include "jobs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*prof_reset_fn)(void);
typedef void (*prof_enable_fn)(int);
typedef int (*prof_count_fn)(void);
typedef int (*prof_entry_fn)(int, const char **, unsigned long long *, unsigned long long *, unsigned long long *, unsigned long long *);
typedef const char *(*prof_counter_fn)(void);
typedef unsigned long long (*prof_u64_fn)(void);

typedef struct {
    prof_reset_fn reset;
    prof_enable_fn enable;
    prof_count_fn count;
    prof_entry_fn entry;
    prof_counter_fn counter;
    prof_u64_fn overflow;
    prof_u64_fn now;
} prof_api_t;

static void *need_prof(const api_t *api, const char *name) {
    void *sym = api_optional(api, name);
    if (!sym) fail(EXIT_LOADFAIL, "LOADFAIL", "missing symbol %s (library not linked with native/linked/hashprof)", name);
    return sym;
}

/* dlsym returns void *; POSIX guarantees the round trip to a function pointer. */
#define PROF_SYM(api, type, name) ((type)need_prof((api), (name)))

static void load_prof(prof_api_t *p, const api_t *api) {
    p->reset = PROF_SYM(api, prof_reset_fn, "ngcc_prof_reset");
    p->enable = PROF_SYM(api, prof_enable_fn, "ngcc_prof_enable");
    p->count = PROF_SYM(api, prof_count_fn, "ngcc_prof_count");
    p->entry = PROF_SYM(api, prof_entry_fn, "ngcc_prof_entry");
    p->counter = PROF_SYM(api, prof_counter_fn, "ngcc_prof_counter");
    p->overflow = PROF_SYM(api, prof_u64_fn, "ngcc_prof_overflow");
    p->now = PROF_SYM(api, prof_u64_fn, "ngcc_prof_now");
}

int prof_main(int nf, char **fields) {
    loop_args_t a;
    parse_loop_args(nf, fields, "ngcc_driver LIB prof TYPE OP OPS WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS]", "OPS", &a);
    spots_t spots;
    spots_plan(&spots, a.n, a.spot_checks); /* before the library is loaded */
    const char *lib = a.lib, *type = a.type, *op = a.op, *rng = a.rng;
    unsigned long long ops = a.n, warmups = a.warmups;
    int cpu = a.cpu;

    ctx_t c;
    prof_api_t prof;
    memset(&c, 0, sizeof c);
    api_load(&c.api, lib, type);
    load_prof(&prof, &c.api);
    prof.enable(0);
    prof.reset();
    meta_str("counter", prof.counter());
    meta_u64("cpu", (unsigned long long)(cpu >= 0 ? cpu : -1));
    meta_str("rng", api_seed_default(&c.api, rng));

    ops_alloc(&c);

    op_fn fn = ops_prepare(&c, op);
    for (unsigned long long i = 0; i < warmups; i++) ops_must(fn(&c), op);
    fflush(stdout); /* the library's buffered output, before the measured loop rather than in it */

    /* The loop total and the per-call ticks come from the same source (the library's). A
     * spot-checked call's preparation and check are neither accounted nor in the total. */
    int rc = 0;
    prof.reset();
    proto_mark("begin");
    os_mark_t os0, os1;
    os_mark(&os0);
    prof.enable(1);
    unsigned long long t0 = prof.now(), paused = 0;
    for (unsigned long long i = 0; i < ops; i++) {
        int spot = spots_due(&spots, i);
        if (spot) {
            unsigned long long p0 = prof.now();
            prof.enable(0);
            spots_before(&c, &spots);
            prof.enable(1);
            paused += prof.now() - p0;
        }
        rc |= fn(&c);
        if (spot) {
            unsigned long long p0 = prof.now();
            prof.enable(0);
            spots_after(&c, &spots, i);
            prof.enable(1);
            paused += prof.now() - p0;
        }
    }
    unsigned long long t1 = prof.now();
    prof.enable(0);
    os_mark(&os1);
    proto_mark("end");
    ops_must(rc, op);
    spots_verify(&c, &spots);
    ops_check_guards(&c);

    int n = prof.count();
    meta_u64("entries", (unsigned long long)(n > 0 ? n : 0));
    meta_u64("overflow", prof.overflow());
    proto_line("TOTAL\t%llu\t%llu", ops, t1 - t0 - paused);
    os_report(&os0, &os1);
    for (int i = 0; i < n; i++) {
        const char *name = NULL;
        unsigned long long in_bits = 0, out_bits = 0, calls = 0, ticks = 0;
        if (prof.entry(i, &name, &in_bits, &out_bits, &calls, &ticks) != 0 || name == NULL) continue;
        proto_line("CALL\t%s\t%llu\t%llu\t%llu\t%llu", name, in_bits, out_bits, calls, ticks);
    }
    proto_line("STATUS\tcomplete");
    return EXIT_OK;
}
