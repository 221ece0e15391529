/* ngcc_probe [CPU]: what a driver gets where it runs (inside the sandbox, or not).
 * Prints one line, COUNTER <tab> <source> <tab> <ticks over ~1 ms>, after pinning itself to CPU
 * when one is given; exits 1 when pinning fails or the counter does not advance. Links no
 * submission code: the run's start compares its answer inside and outside the sandbox. */
#define _GNU_SOURCE
#include "cpucycles.h"
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

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
    while (wallclock_seconds() - start < 0.001) {
    }
    uint64_t b = cpucycles();
    printf("COUNTER\t%s\t%" PRIu64 "\n", source, b > a ? b - a : 0);
    return b > a ? 0 : 1;
}
