/*
 * hashprof.c: per-(function, input bits, output bits) call counts and ticks of the
 * outermost wrapped calls. See hashprof.h and native/linked/hashprof/README.md.
 *
 * Compiled into the library under test with the guide flags, e.g.
 *   -std=c99 -Wpedantic -Wall -Wextra -O2 -fPIC -D_GNU_SOURCE
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#include "hashprof.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Open-addressing index over the entries: at most half full, so probes stay short. */
#define NGCC_PROF_SLOTS (2 * NGCC_PROF_MAX_ENTRIES)

typedef struct {
    const char *fn;
    unsigned long long in_bits, out_bits, calls, ticks;
} prof_entry;

NGCC_PROF_HIDDEN unsigned ngcc_prof__depth = 0;
NGCC_PROF_HIDDEN int ngcc_prof__on = 0;
NGCC_PROF_HIDDEN int ngcc_prof__monotonic = 0;

static prof_entry entries[NGCC_PROF_MAX_ENTRIES];
static unsigned short slots[NGCC_PROF_SLOTS]; /* entry index + 1; 0 = empty */
static int nentries = 0;
static unsigned long long overflow_calls = 0;
static int counter_chosen = 0;

NGCC_PROF_HIDDEN uint64_t ngcc_prof__monotonic_ns(void) {
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_RAW
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* NGCC_COUNTER=monotonic forces the portable clock, as in native/core/cpucycles.c. */
static void choose_counter(void) {
    const char *force;
    if (counter_chosen) return;
    force = getenv("NGCC_COUNTER");
    ngcc_prof__monotonic = force != NULL && strcmp(force, "monotonic") == 0;
    counter_chosen = 1;
}

static unsigned slot_of(const char *fn, unsigned long long in_bits, unsigned long long out_bits) {
    uint64_t h = (uint64_t)(uintptr_t)fn * 0x9E3779B97F4A7C15ull;
    h ^= in_bits * 0xC2B2AE3D27D4EB4Full;
    h ^= out_bits * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    return (unsigned)(h % NGCC_PROF_SLOTS);
}

/* Names come from string literals in the wrappers; equal pointers are the fast path,
 * strcmp covers a linker that did not merge identical literals. */
static int same_name(const char *a, const char *b) { return a == b || strcmp(a, b) == 0; }

NGCC_PROF_HIDDEN void ngcc_prof__record(const char *fn, unsigned long long in_bits, unsigned long long out_bits, uint64_t ticks) {
    unsigned s = slot_of(fn, in_bits, out_bits);
    prof_entry *e;
    while (slots[s] != 0) {
        e = &entries[slots[s] - 1];
        if (e->in_bits == in_bits && e->out_bits == out_bits && same_name(e->fn, fn)) {
            e->calls++;
            e->ticks += ticks;
            return;
        }
        s = (s + 1) % NGCC_PROF_SLOTS;
    }
    if (nentries >= NGCC_PROF_MAX_ENTRIES) {
        overflow_calls++;
        return;
    }
    e = &entries[nentries];
    e->fn = fn;
    e->in_bits = in_bits;
    e->out_bits = out_bits;
    e->calls = 1;
    e->ticks = ticks;
    slots[s] = (unsigned short)(++nentries);
}

void ngcc_prof_reset(void) {
    memset(entries, 0, sizeof entries);
    memset(slots, 0, sizeof slots);
    nentries = 0;
    overflow_calls = 0;
}

void ngcc_prof_enable(int on) {
    choose_counter();
    ngcc_prof__on = on != 0;
}

int ngcc_prof_count(void) { return nentries; }

int ngcc_prof_entry(int i, const char **fn, unsigned long long *in_bits, unsigned long long *out_bits, unsigned long long *calls,
                    unsigned long long *ticks) {
    const prof_entry *e;
    if (i < 0 || i >= nentries) return -1;
    e = &entries[i];
    if (fn) *fn = e->fn;
    if (in_bits) *in_bits = e->in_bits;
    if (out_bits) *out_bits = e->out_bits;
    if (calls) *calls = e->calls;
    if (ticks) *ticks = e->ticks;
    return 0;
}

const char *ngcc_prof_counter(void) {
    choose_counter();
    if (ngcc_prof__monotonic) return "monotonic-ns";
#if defined(__x86_64__) || defined(__i386__)
    return "rdtsc";
#elif defined(__aarch64__)
    return "cntvct_el0";
#else
    return "monotonic-ns";
#endif
}

unsigned long long ngcc_prof_overflow(void) { return overflow_calls; }

unsigned long long ngcc_prof_now(void) {
    choose_counter();
    return ngcc_prof__ticks();
}
