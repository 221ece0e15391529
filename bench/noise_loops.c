/* Two loops of known work, to tell this machine's noise apart from the harness's (bench/trial-noise.mjs).
 *   noise_loops latency|throughput ITERS
 * latency: one dependent 64-bit multiply-add chain, as the synthetic toys spin (each step waits for
 * the last: the core's other execution ports sit idle, so a neighbour sharing them costs it little).
 * throughput: eight interleaved add/xor chains that keep the ports busy, as real code (Keccak, NTT)
 * does: what a sibling hyperthread or a neighbour on the host's core takes away shows here.
 * Prints the counter ticks of the loop. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static volatile uint64_t sink;

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    unsigned long long n = strtoull(argv[2], NULL, 10), i;
    uint64_t t0 = rdtsc();
    if (strcmp(argv[1], "latency") == 0) {
        uint64_t x = 0x9E3779B97F4A7C15ull;
        for (i = 0; i < n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ __volatile__("" : "+r"(x));
        }
        sink = x;
    } else {
        uint64_t x0 = 1, x1 = 2, x2 = 3, x3 = 4, x4 = 5, x5 = 6, x6 = 7, x7 = 8;
        for (i = 0; i < n; i++) {
            x0 += x1 ^ i, x1 += x2 ^ x0, x2 += x3 ^ x1, x3 += x4 ^ x2;
            x4 ^= x5 + i, x5 ^= x6 + x4, x6 ^= x7 + x5, x7 ^= x0 + x6;
            __asm__ __volatile__("" : "+r"(x0), "+r"(x4));
        }
        sink = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;
    }
    printf("%llu\n", (unsigned long long)(rdtsc() - t0));
    return 0;
}
