/* What a fresh page costs this machine (docs/benchmarks.md (af)).
 *   first_touch MIB
 * Maps MIB MiB of anonymous memory and writes every byte twice; prints the milliseconds of each
 * pass and the microseconds per 4-KiB page of the first. The first pass pays a page fault per page,
 * and in a virtual machine whatever the host does to back a guest page touched for the first time;
 * the second pass is the memory's own speed. A timing process touches its driver's, its library's
 * and its slots' pages once each, so the first figure prices part of its fixed cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 32, n = mib << 20;
    unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mib == 0 || p == MAP_FAILED) {
        fprintf(stderr, "usage: first_touch MIB (at least 1)\n");
        return 2;
    }
    double t0 = now();
    memset(p, 0xa5, n);
    double t1 = now();
    memset(p, 0x5a, n);
    double t2 = now();
    printf("%zu MiB: first pass %.2f ms (%.2f us a page), second %.2f ms\n", mib, (t1 - t0) * 1e3, (t1 - t0) * 1e6 / (double)(n >> 12),
           (t2 - t1) * 1e3);
    return 0;
}
