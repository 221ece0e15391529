/*
 * Shared parts of the synthetic campaign's toy submissions (bench/synthetic). NOT SECURE: the toys
 * exist to cost a chosen number of cycles per operation while passing the KAT driver's checks.
 *
 * synth_spin(n): n iterations of one dependent 64-bit multiply-add (x = x * A + B). Each iteration
 * waits for the previous one's result, so the loop runs at the latency of imul plus add: 4 core
 * cycles per iteration on x86-64 cores since Sandy Bridge and Zen (3 + 1). The empty asm makes x
 * opaque to the optimiser at every step: no closed form, no vectorisation, no removal. Counting
 * work rather than reading the cycle counter keeps the toy's noise real: a preempted or slowed
 * spin takes longer, as real code does, instead of ending on time.
 *
 * synth_mix(): a cheap 256-bit mixing function (splitmix64 finalisers over four lanes) standing in
 * for the submissions' hashing, so that the toy's own work stays a few hundred cycles and the spin
 * sets the cost.
 */
#ifndef SYNTH_TOY_H
#define SYNTH_TOY_H

#include <stddef.h>
#include <stdint.h>

#include "drng.h"

static volatile uint64_t synth_sink;

static inline void synth_spin(unsigned long long iterations) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    unsigned long long i;
    for (i = 0; i < iterations; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ __volatile__("" : "+r"(x));
    }
    synth_sink = x;
}

static inline uint64_t synth_fmix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define SYNTH_MIX_BYTES 32

/* out (32 bytes) = mix(tag, the first bits of in); a partial last byte counts its high bits only. */
static inline void synth_mix(uint64_t tag, const unsigned char *in, unsigned long long bits, unsigned char *out) {
    uint64_t lane[4] = {0x6A09E667F3BCC908ull ^ tag, 0xBB67AE8584CAA73Bull, 0x3C6EF372FE94F82Bull, 0xA54FF53A5F1D36F1ull};
    unsigned long long whole = bits / 8, i;
    unsigned partial = (unsigned)(bits % 8);
    int j, k;
    /* Eight bytes at a time into four independent lanes: well under a cycle per byte, so that a
     * hash's modelled per-byte cost is the spin's, not the mixer's. */
    for (i = 0; i + 8 <= whole; i += 8) {
        uint64_t w = 0;
        for (k = 0; k < 8; k++) w |= (uint64_t)in[i + k] << (8 * k);
        lane[(i / 8) % 4] = (lane[(i / 8) % 4] ^ w) * 0x100000001B3ull + (uint64_t)i;
    }
    for (; i < whole; i++) lane[i % 4] = (lane[i % 4] ^ in[i]) * 0x100000001B3ull + (uint64_t)i;
    if (partial) lane[whole % 4] = (lane[whole % 4] ^ (in[whole] & (0xFFu << (8 - partial)) & 0xFFu)) * 0x100000001B3ull;
    lane[0] ^= bits;
    for (k = 0; k < 2; k++)
        for (j = 0; j < 4; j++) lane[j] = synth_fmix(lane[j] + lane[(j + 1) % 4] + (uint64_t)(k * 4 + j));
    for (j = 0; j < 32; j++) out[j] = (unsigned char)(lane[j / 8] >> (8 * (j % 8)));
}

/* n bytes from the ICCS DRNG, which the KAT driver seeds: the toys' only randomness. */
static inline int synth_random(unsigned char *out, unsigned long long n) { return get_random_number(&drng_algorithm, out, 8 * n); }

#endif
