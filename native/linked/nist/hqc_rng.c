/*
 * hqc_rng.c - the KAT generator of HQC (PQClean META.yml `nistkat-rng: hqc`),
 * in place of NIST's AES-256-CTR DRBG: a SHAKE-256 stream over
 *   entropy_input (48 bytes) [|| personalization_string (48 bytes)] || 0x01
 * from which every randombytes call takes the next bytes. Used with
 * `kat_rng: hqc`; the same exported API as nist_drbg.c (nist_drbg.h), so the
 * KAT driver replays the NIST generator's seed schedule unchanged.
 *
 * Self-contained (own Keccak-f[1600]), all internals static: the scheme may
 * ship a fips202.c of its own, whose names must not collide with these.
 * Like nist_drbg.c it does not include PQClean's randombytes.h.
 *
 * Until randombytes_init is first called it acts as if seeded with entropy
 * 0x00..0x2f and no personalization. One global state, not thread-safe.
 */
#include <string.h>

#include "nist_drbg.h"

#define SHAKE256_RATE 136
#define HQC_PRNG_DOMAIN 0x01

static const uint64_t keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL, 0x000000000000808bULL,
    0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL, 0x0000000000000088ULL,
    0x0000000080008009ULL, 0x000000008000000aULL, 0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

/* Rotation offsets and the lane order of the rho-pi step (FIPS 202, 3.2.2-3.2.3). */
static const unsigned keccak_rho[24] = {1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44};
static const unsigned keccak_pi[24] = {10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1};

static uint64_t rotl64(uint64_t x, unsigned s) { return (x << s) | (x >> (64u - s)); }

static void keccak_f1600(uint64_t a[25]) {
    for (unsigned round = 0; round < 24; round++) {
        uint64_t c[5], t;
        for (unsigned x = 0; x < 5; x++) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        for (unsigned x = 0; x < 5; x++) {
            t = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
            for (unsigned y = 0; y < 25; y += 5) a[y + x] ^= t;
        }
        t = a[1];
        for (unsigned i = 0; i < 24; i++) {
            uint64_t next = a[keccak_pi[i]];
            a[keccak_pi[i]] = rotl64(t, keccak_rho[i]);
            t = next;
        }
        for (unsigned y = 0; y < 25; y += 5) {
            for (unsigned x = 0; x < 5; x++) c[x] = a[y + x];
            for (unsigned x = 0; x < 5; x++) a[y + x] = c[x] ^ (~c[(x + 1) % 5] & c[(x + 2) % 5]);
        }
        a[0] ^= keccak_rc[round];
    }
}

/* Lanes are little-endian whatever the host's byte order (FIPS 202, B.1). */
static void state_xor_byte(uint64_t a[25], unsigned pos, uint8_t b) { a[pos / 8] ^= (uint64_t)b << (8 * (pos % 8)); }
static uint8_t state_byte(const uint64_t a[25], unsigned pos) { return (uint8_t)(a[pos / 8] >> (8 * (pos % 8))); }

static struct {
    uint64_t a[25];
    unsigned pos; /* absorbing: bytes taken into the block; squeezing: bytes given out of it */
} prng;
static int prng_seeded = 0;

static void absorb(const uint8_t *in, size_t n) {
    while (n-- > 0) {
        state_xor_byte(prng.a, prng.pos++, *in++);
        if (prng.pos == SHAKE256_RATE) {
            keccak_f1600(prng.a);
            prng.pos = 0;
        }
    }
}

static void seed(const uint8_t *entropy_input, const uint8_t *personalization_string) {
    const uint8_t domain = HQC_PRNG_DOMAIN;
    memset(&prng, 0, sizeof prng);
    absorb(entropy_input, 48);
    if (personalization_string != NULL) absorb(personalization_string, 48);
    absorb(&domain, 1);
    /* SHAKE padding: the 1111 suffix, then pad10*1 to the end of the block. */
    state_xor_byte(prng.a, prng.pos, 0x1F);
    state_xor_byte(prng.a, SHAKE256_RATE - 1, 0x80);
    keccak_f1600(prng.a);
    prng.pos = 0;
    prng_seeded = 1;
}

static void squeeze(uint8_t *out, unsigned long long n) {
    if (!prng_seeded) {
        uint8_t entropy[48];
        for (unsigned i = 0; i < 48; i++) entropy[i] = (uint8_t)i;
        seed(entropy, NULL);
    }
    while (n-- > 0) {
        if (prng.pos == SHAKE256_RATE) {
            keccak_f1600(prng.a);
            prng.pos = 0;
        }
        *out++ = state_byte(prng.a, prng.pos++);
    }
}

void randombytes_init(unsigned char *entropy_input, unsigned char *personalization_string, int security_strength) {
    (void)security_strength; /* HQC's generator asserts 256; any value means the same here */
    seed(entropy_input, personalization_string);
}

/* Calls that drew from the generator (see nist_drbg.c). */
__attribute__((visibility("default"))) unsigned long long ngcc_rng_draws;

int randombytes(unsigned char *x, unsigned long long xlen) {
    ngcc_rng_draws++;
    squeeze(x, xlen);
    return 0;
}

int PQCLEAN_randombytes(uint8_t *output, size_t n) {
    ngcc_rng_draws++;
    squeeze(output, (unsigned long long)n);
    return 0;
}
