/*
 * hashprof: accounting core of the link-time wrappers (native/linked/hashprof/README.md).
 *
 * Linked INTO the library under test together with wrap_iccs.c and/or wrap_nist.c.
 * Every wrapper brackets its __real_ call with NGCC_PROF_ENTER / NGCC_PROF_LEAVE:
 * only the outermost wrapped call is counted and timed (a wrapped function reached
 * from inside another wrapped function is part of the outer call's time), and only
 * while accounting is enabled. Records are keyed by (function name, input bits,
 * output bits) in a fixed table; nothing allocates memory.
 *
 * Single-threaded by design: the depth counter and the table are plain globals.
 *
 * Exported API (resolved by the prof job of ngcc_driver, native/jobs/prof.c, with dlsym):
 *   ngcc_prof_reset, ngcc_prof_enable, ngcc_prof_count, ngcc_prof_entry,
 *   ngcc_prof_counter, ngcc_prof_overflow, ngcc_prof_now.
 */
#ifndef NGCC_HASHPROF_H
#define NGCC_HASHPROF_H

#include <stdint.h>

#define NGCC_PROF_MAX_ENTRIES 256

#if defined(__GNUC__)
#define NGCC_PROF_HIDDEN __attribute__((visibility("hidden")))
#define NGCC_PROF_EXPORT __attribute__((visibility("default")))
#else
#define NGCC_PROF_HIDDEN
#define NGCC_PROF_EXPORT
#endif

/* ---- exported API ---- */
NGCC_PROF_EXPORT void ngcc_prof_reset(void);
NGCC_PROF_EXPORT void ngcc_prof_enable(int on);
NGCC_PROF_EXPORT int ngcc_prof_count(void);
/* Returns 0 and fills the fields for 0 <= i < ngcc_prof_count(), else -1. */
NGCC_PROF_EXPORT int ngcc_prof_entry(int i, const char **fn, unsigned long long *in_bits, unsigned long long *out_bits,
                                     unsigned long long *calls, unsigned long long *ticks);
/* Name of the tick source: "rdtsc", "cntvct_el0" or "monotonic-ns". */
NGCC_PROF_EXPORT const char *ngcc_prof_counter(void);
/* Outermost calls that found the table full (not in any entry). */
NGCC_PROF_EXPORT unsigned long long ngcc_prof_overflow(void);
/* Current tick value of the same source, so a driver can time its loop in the same unit. */
NGCC_PROF_EXPORT unsigned long long ngcc_prof_now(void);

/* ---- internals shared with the wrappers (hidden: not exported from the library) ---- */
extern NGCC_PROF_HIDDEN unsigned ngcc_prof__depth;
extern NGCC_PROF_HIDDEN int ngcc_prof__on;
extern NGCC_PROF_HIDDEN int ngcc_prof__monotonic;
NGCC_PROF_HIDDEN uint64_t ngcc_prof__monotonic_ns(void);
NGCC_PROF_HIDDEN void ngcc_prof__record(const char *fn, unsigned long long in_bits, unsigned long long out_bits, uint64_t ticks);

static inline uint64_t ngcc_prof__ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    if (ngcc_prof__monotonic) return ngcc_prof__monotonic_ns();
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    if (ngcc_prof__monotonic) return ngcc_prof__monotonic_ns();
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
#else
    return ngcc_prof__monotonic_ns();
#endif
}

/* Start of a wrapped call: returns the start tick if this is an outermost call while
 * accounting is on, else 0 (no counter read). */
static inline uint64_t ngcc_prof__enter(void) {
    if (ngcc_prof__depth++ != 0 || !ngcc_prof__on) return 0;
    return ngcc_prof__ticks();
}

/* End of a wrapped call: records it if it was outermost and accounting is on. */
static inline void ngcc_prof__leave(const char *fn, unsigned long long in_bits, unsigned long long out_bits, uint64_t t0) {
    if (--ngcc_prof__depth != 0 || !ngcc_prof__on) return;
    ngcc_prof__record(fn, in_bits, out_bits, ngcc_prof__ticks() - t0);
}

#endif
