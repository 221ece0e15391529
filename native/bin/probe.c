/* ngcc_probe [CPU]: what a driver gets where it runs (inside the sandbox, or not).
 * Prints COUNTER <tab> <source> <tab> <ticks over ~1 ms>, then RATE <tab> <ticks per second over
 * ~20 ms> (the trusted rate every trial's cycles are checked against, src/measure/kernelCheck.ts),
 * after pinning itself to CPU when one is given; exits 1 when pinning fails or the counter does
 * not advance. Then KERNEL <tab> writable or read-only: whether it could open
 * /proc/sys/kernel/core_pattern for writing (it writes nothing). Then SEAL <tab> held, or
 * SEAL <tab> failed <tab> <why>: whether the seal every driver takes before loading a library
 * (affinityseal.h) keeps this process from changing its cores. Links no submission code: the
 * run's start compares its answer inside and outside the sandbox. */
#define _GNU_SOURCE
#include "core/cpucycles.h"
#include "core/affinityseal.h"
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
    if (argc > 1) {
        int cpu = atoi(argv[1]);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (cpu >= 0 && sched_setaffinity(0, sizeof set, &set) != 0) {
            printf("PIN\tfailed\t%d\n", cpu);
            return 1;
        }
    }
    const char *source = cpucycles_init();
    double start = wallclock_seconds();
    uint64_t a = cpucycles();
    while (wallclock_seconds() - start < 0.001) {}
    uint64_t b = cpucycles();
    printf("COUNTER\t%s\t%" PRIu64 "\n", source, b > a ? b - a : 0);
    if (b <= a) return 1;
    double t0 = wallclock_seconds(), t1;
    uint64_t c0 = cpucycles();
    while ((t1 = wallclock_seconds()) - t0 < 0.02) {}
    uint64_t c1 = cpucycles();
    printf("RATE\t%.0f\n", (double)(c1 - c0) / (t1 - t0));
    /* Opened, never written: whether a process here could change the kernel's settings. */
    int k = open("/proc/sys/kernel/core_pattern", O_WRONLY);
    printf("KERNEL\t%s\n", k >= 0 ? "writable" : "read-only");
    if (k >= 0) close(k);
    int err = affinity_seal();
    if (err != 0) {
        printf("SEAL\tfailed\tseccomp: %s\n", strerror(err));
        return 0;
    }
    cpu_set_t mine;
    CPU_ZERO(&mine);
    /* Asking for the cores it already has must be refused too: the filter refuses the call. */
    if (sched_getaffinity(0, sizeof mine, &mine) == 0 && sched_setaffinity(0, sizeof mine, &mine) == 0) {
        printf("SEAL\tfailed\tsched_setaffinity still allowed\n");
        return 0;
    }
    if (syscall(425 /* io_uring_setup */, 1, NULL) != -1 || errno != EPERM) {
        printf("SEAL\tfailed\tio_uring_setup not refused\n");
        return 0;
    }
    /* A shared wake on this program's read-only data (a page of its file, keyed by the file) must be refused. */
    static const unsigned text_word = 0;
    if (syscall(SYS_futex, &text_word, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0) != -1 || errno != EPERM) {
        printf("SEAL\tfailed\tshared futex wake not refused\n");
        return 0;
    }
    printf("SEAL\theld\n");
    return 0;
}
