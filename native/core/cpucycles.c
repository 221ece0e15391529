#include "cpucycles.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__aarch64__) && defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

typedef uint64_t (*reader_fn)(void);

static uint64_t read_monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static uint64_t read_rdtsc(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#endif

#if defined(__aarch64__)
static uint64_t read_cntvct(void) {
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
#if defined(__linux__)
static int perf_fd = -1;
static uint64_t read_perf(void) {
    uint64_t v = 0;
    if (read(perf_fd, &v, sizeof v) != (ssize_t)sizeof v) return 0;
    return v;
}
/* Core cycles need perf_event_paranoid <= 2 (user-space only counting). */
static int open_perf_cycles(void) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    int fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) return -1;
    uint64_t a = 0, b = 0;
    if (read(fd, &a, sizeof a) != (ssize_t)sizeof a) {
        close(fd);
        return -1;
    }
    for (volatile int i = 0; i < 10000; i++) {}
    if (read(fd, &b, sizeof b) != (ssize_t)sizeof b || b <= a) {
        close(fd);
        return -1;
    }
    return fd;
}
#endif
#endif

static reader_fn reader = read_monotonic;
static const char *source_name = "monotonic-ns";

const char *cpucycles_init(void) {
    /* NGCC_COUNTER=monotonic forces the portable fallback (tests, odd hosts). */
    const char *force = getenv("NGCC_COUNTER");
    if (force && strcmp(force, "monotonic") == 0) return source_name;
#if defined(__x86_64__)
    reader = read_rdtsc;
    source_name = "rdtsc";
#elif defined(__aarch64__)
#if defined(__linux__)
    perf_fd = open_perf_cycles();
    if (perf_fd >= 0) {
        reader = read_perf;
        source_name = "perf_event-cycles";
        return source_name;
    }
#endif
    reader = read_cntvct;
    source_name = "cntvct_el0";
#endif
    return source_name;
}

const char *cpucycles_source(void) { return source_name; }
uint64_t cpucycles(void) { return reader(); }

double wallclock_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
