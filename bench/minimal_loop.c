/* An independent, minimal timing loop: the yardstick for the harness's cycle counts.
 *   minimal_loop LIB ITERS
 * Seeds the library's NIST DRBG like the harness (bytes 00..2f), calls kem_keygen ITERS times
 * between two rdtsc reads, and prints the mean cycles per call. Nothing else: no per-call
 * reads, no guards, no separate processes. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*keygen_fn)(unsigned char *, unsigned long long *, unsigned char *, unsigned long long *);
typedef void (*init_fn)(unsigned char *, unsigned char *, int);

static uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) return 3;
    keygen_fn keygen = (keygen_fn)dlsym(h, "kem_keygen");
    init_fn init = (init_fn)dlsym(h, "randombytes_init");
    if (!keygen || !init) return 3;
    unsigned char seed[48];
    for (int i = 0; i < 48; i++) seed[i] = (unsigned char)i;
    init(seed, NULL, 256);
    static unsigned char pk[1 << 16], sk[1 << 16];
    unsigned long long pkl, skl;
    long iters = atol(argv[2]);
    for (int i = 0; i < 3; i++) keygen(pk, &pkl, sk, &skl);
    uint64_t t0 = rdtsc();
    for (long i = 0; i < iters; i++) keygen(pk, &pkl, sk, &skl);
    uint64_t t1 = rdtsc();
    printf("%.1f\n", (double)(t1 - t0) / (double)iters);
    return 0;
}
