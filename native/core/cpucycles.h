/* One cycle source, chosen by probing once at start (the SUPERCOP cpucycles idea):
 * x86-64 rdtsc; AArch64 perf_event cycles, else cntvct_el0; else CLOCK_MONOTONIC_RAW (ns). */
#ifndef NGCC_CPUCYCLES_H
#define NGCC_CPUCYCLES_H
#include <stdint.h>

/* Probes and selects the source; returns its name (also kept for cpucycles_source()). */
const char *cpucycles_init(void);
const char *cpucycles_source(void);
uint64_t cpucycles(void);
/* Seconds from a monotonic clock, independent of the cycle source. */
double wallclock_seconds(void);
#endif
