/* The canary's reference work (native/core/canary.h): Keccak-f[1600], the permutation under SHA-3 and
 * SHAKE, which most NGCC operations spend much of their time in. */
#include "canary.h"
#include "cpucycles.h"
#include <string.h>

/* FIPS 202, §3.2.5: the round constants ι adds. */
static const uint64_t round_constants[24] = {0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
                                             0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
                                             0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
                                             0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
                                             0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
                                             0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

/* FIPS 202, §3.2.2: ρ's offsets, lane x + 5y. */
static const unsigned rho_offsets[25] = {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14};

static uint64_t rotate(uint64_t v, unsigned by) { return by == 0 ? v : (v << by) | (v >> (64 - by)); }

/* The lanes θ, π and χ name, as tables: a division in the round would be most of its cost. */
static const unsigned char next1[5] = {1, 2, 3, 4, 0}, next2[5] = {2, 3, 4, 0, 1}, prev1[5] = {4, 0, 1, 2, 3};
static const unsigned char pi_target[25] = {0, 10, 20, 5, 15, 16, 1, 11, 21, 6, 7, 17, 2, 12, 22, 23, 8, 18, 3, 13, 14, 24, 9, 19, 4};

static void permute(uint64_t a[25]) {
    for (int round = 0; round < 24; round++) {
        uint64_t column[5], b[25];
        for (int x = 0; x < 5; x++) column[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        for (int x = 0; x < 5; x++) {
            uint64_t d = column[prev1[x]] ^ rotate(column[next1[x]], 1);
            for (int y = 0; y < 25; y += 5) a[y + x] ^= d;
        }
        for (int i = 0; i < 25; i++) b[pi_target[i]] = rotate(a[i], rho_offsets[i]);
        for (int y = 0; y < 25; y += 5)
            for (int x = 0; x < 5; x++) a[y + x] = b[y + x] ^ (~b[y + next1[x]] & b[y + next2[x]]);
        a[0] ^= round_constants[round];
    }
}

#define RATE_LANES 21 /* SHAKE128's 168 bytes */
#define BUFFER_LANES (8192 / 8)

uint64_t canary_run(void) {
    static uint64_t buffer[BUFFER_LANES];
    uint64_t state[25];
    memset(state, 0, sizeof state);
    uint64_t start = cpucycles();
    size_t at = 0;
    for (int i = 0; i < CANARY_PERMUTATIONS; i++) {
        for (int l = 0; l < RATE_LANES; l++) state[l] ^= buffer[(at + (size_t)l) % BUFFER_LANES];
        permute(state);
        for (int l = 0; l < RATE_LANES; l++) buffer[(at + (size_t)l) % BUFFER_LANES] = state[l];
        at = (at + RATE_LANES * 3) % BUFFER_LANES; /* every run the same places: the same work each time */
    }
    uint64_t spent = cpucycles() - start;
    /* The work's result kept where the compiler cannot drop it. */
    __atomic_store_n(&buffer[0], buffer[0] ^ state[0], __ATOMIC_RELAXED);
    return spent;
}

uint64_t canary_self_test(void) {
    uint64_t state[25];
    memset(state, 0, sizeof state);
    permute(state);
    return state[0];
}
