/*
 * nist_drbg.c - AES-256-CTR DRBG as used by NIST's PQC KAT generator
 * (PQCgenKAT rng.c: CTR_DRBG of SP 800-90A with AES-256, no derivation
 * function, no prediction resistance), with a compact AES-256 (FIPS-197,
 * encryption only).
 *
 * Deliberately does NOT include PQClean's randombytes.h: that header
 * defines "randombytes" as a macro for PQCLEAN_randombytes, which would
 * collide with the NIST-API function of the same name defined here.
 */
#include <string.h>

#include "nist_drbg.h"

/* ------------------------------------------------------------------ */
/* AES-256 (FIPS-197), encryption only                                */
/* ------------------------------------------------------------------ */

#define AES256_NK 8  /* key words */
#define AES256_NR 14 /* rounds */
#define AES256_RK_BYTES (16 * (AES256_NR + 1))

static uint8_t aes_sbox[256];
static int aes_sbox_ready = 0;

/* multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 */
static uint8_t gf_xtime(uint8_t a) { return (uint8_t)((a << 1) ^ ((a & 0x80u) ? 0x1bu : 0x00u)); }

static uint8_t gf_mul(uint8_t a, uint8_t b) {
    uint8_t r = 0;
    while (b) {
        if (b & 1u) r ^= a;
        a = gf_xtime(a);
        b >>= 1;
    }
    return r;
}

static uint8_t rotl8(uint8_t x, unsigned s) { return (uint8_t)((x << s) | (x >> (8u - s))); }

/* S-box from its definition (FIPS-197 sec. 5.1.1): multiplicative
 * inverse (a^254, with 0 -> 0) followed by the affine transformation. */
static void aes_init_sbox(void) {
    unsigned i;
    for (i = 0; i < 256; i++) {
        uint8_t a = (uint8_t)i, inv = 1, base = a;
        unsigned e = 254;
        while (e) {
            if (e & 1u) inv = gf_mul(inv, base);
            base = gf_mul(base, base);
            e >>= 1;
        }
        if (a == 0) inv = 0;
        aes_sbox[i] = (uint8_t)(inv ^ rotl8(inv, 1) ^ rotl8(inv, 2) ^ rotl8(inv, 3) ^ rotl8(inv, 4) ^ 0x63u);
    }
    aes_sbox_ready = 1;
}

/* Key expansion (FIPS-197 sec. 5.2), round keys as 240 bytes. */
static void aes256_expand_key(uint8_t rk[AES256_RK_BYTES], const uint8_t key[32]) {
    unsigned i;
    uint8_t rcon = 0x01;

    if (!aes_sbox_ready) aes_init_sbox();

    memcpy(rk, key, 32);
    for (i = AES256_NK; i < 4 * (AES256_NR + 1); i++) {
        uint8_t t[4];
        const uint8_t *prev = rk + 4 * (i - 1);
        const uint8_t *back = rk + 4 * (i - AES256_NK);
        uint8_t *w = rk + 4 * i;

        if (i % AES256_NK == 0) {
            /* SubWord(RotWord(prev)) xor Rcon */
            t[0] = (uint8_t)(aes_sbox[prev[1]] ^ rcon);
            t[1] = aes_sbox[prev[2]];
            t[2] = aes_sbox[prev[3]];
            t[3] = aes_sbox[prev[0]];
            rcon = gf_xtime(rcon);
        } else if (i % AES256_NK == 4) {
            t[0] = aes_sbox[prev[0]];
            t[1] = aes_sbox[prev[1]];
            t[2] = aes_sbox[prev[2]];
            t[3] = aes_sbox[prev[3]];
        } else {
            memcpy(t, prev, 4);
        }
        w[0] = (uint8_t)(back[0] ^ t[0]);
        w[1] = (uint8_t)(back[1] ^ t[1]);
        w[2] = (uint8_t)(back[2] ^ t[2]);
        w[3] = (uint8_t)(back[3] ^ t[3]);
    }
}

/* One block. State byte s[r + 4c] is row r, column c (FIPS-197 3.4). */
static void aes256_encrypt_block(const uint8_t rk[AES256_RK_BYTES], const uint8_t in[16], uint8_t out[16]) {
    uint8_t s[16], t[16];
    unsigned round, i, c;

    for (i = 0; i < 16; i++) s[i] = (uint8_t)(in[i] ^ rk[i]);

    for (round = 1; round <= AES256_NR; round++) {
        /* SubBytes + ShiftRows: row r rotates left by r columns */
        for (c = 0; c < 4; c++) {
            unsigned r;
            for (r = 0; r < 4; r++) t[r + 4 * c] = aes_sbox[s[r + 4 * ((c + r) & 3u)]];
        }
        if (round != AES256_NR) {
            /* MixColumns */
            for (c = 0; c < 4; c++) {
                uint8_t a0 = t[4 * c], a1 = t[4 * c + 1];
                uint8_t a2 = t[4 * c + 2], a3 = t[4 * c + 3];
                uint8_t all = (uint8_t)(a0 ^ a1 ^ a2 ^ a3);
                s[4 * c] = (uint8_t)(a0 ^ all ^ gf_xtime((uint8_t)(a0 ^ a1)));
                s[4 * c + 1] = (uint8_t)(a1 ^ all ^ gf_xtime((uint8_t)(a1 ^ a2)));
                s[4 * c + 2] = (uint8_t)(a2 ^ all ^ gf_xtime((uint8_t)(a2 ^ a3)));
                s[4 * c + 3] = (uint8_t)(a3 ^ all ^ gf_xtime((uint8_t)(a3 ^ a0)));
            }
        } else {
            memcpy(s, t, 16);
        }
        /* AddRoundKey */
        for (i = 0; i < 16; i++) s[i] ^= rk[16 * round + i];
    }
    memcpy(out, s, 16);
}

/* ------------------------------------------------------------------ */
/* CTR_DRBG (AES-256, no df) exactly as in PQCgenKAT rng.c            */
/* ------------------------------------------------------------------ */

static struct {
    uint8_t key[32];
    uint8_t v[16];
    uint8_t rk[AES256_RK_BYTES]; /* expanded key, kept in sync with key */
    int reseed_counter;
} drbg;

static int drbg_seeded = 0;

static void drbg_increment_v(void) {
    int j;
    for (j = 15; j >= 0; j--) {
        if (drbg.v[j] == 0xff) {
            drbg.v[j] = 0x00;
        } else {
            drbg.v[j]++;
            break;
        }
    }
}

static void drbg_set_key(const uint8_t key[32]) {
    memcpy(drbg.key, key, 32);
    aes256_expand_key(drbg.rk, drbg.key);
}

static void drbg_update(const uint8_t *provided_data /* 48 bytes or NULL */) {
    uint8_t temp[48];
    unsigned i;

    for (i = 0; i < 3; i++) {
        drbg_increment_v();
        aes256_encrypt_block(drbg.rk, drbg.v, temp + 16 * i);
    }
    if (provided_data != NULL)
        for (i = 0; i < 48; i++) temp[i] ^= provided_data[i];
    drbg_set_key(temp);
    memcpy(drbg.v, temp + 32, 16);
}

/* Internal entry points are static so that calls inside this library never
 * go through an interposable exported symbol. */
static void drbg_instantiate(const uint8_t *entropy_input, const uint8_t *personalization_string) {
    uint8_t seed_material[48];
    uint8_t zero_key[32];
    unsigned i;

    memcpy(seed_material, entropy_input, 48);
    if (personalization_string != NULL)
        for (i = 0; i < 48; i++) seed_material[i] ^= personalization_string[i];

    memset(zero_key, 0, sizeof zero_key);
    drbg_set_key(zero_key);
    memset(drbg.v, 0, sizeof drbg.v);
    drbg_update(seed_material);
    drbg.reseed_counter = 1;
    drbg_seeded = 1;
}

/* Deterministic default: as if randombytes_init(0x00..0x2f, NULL, 256). */
static void drbg_ensure_seeded(void) {
    if (!drbg_seeded) {
        unsigned char entropy[48];
        unsigned i;
        for (i = 0; i < 48; i++) entropy[i] = (unsigned char)i;
        drbg_instantiate(entropy, NULL);
    }
}

static void drbg_generate(uint8_t *x, unsigned long long xlen) {
    uint8_t block[16];

    drbg_ensure_seeded();
    while (xlen > 0) {
        drbg_increment_v();
        aes256_encrypt_block(drbg.rk, drbg.v, block);
        if (xlen > 15) {
            memcpy(x, block, 16);
            x += 16;
            xlen -= 16;
        } else {
            memcpy(x, block, (size_t)xlen);
            xlen = 0;
        }
    }
    drbg_update(NULL);
    drbg.reseed_counter++;
}

/* ------------------------------------------------------------------ */
/* Exported API                                                       */
/* ------------------------------------------------------------------ */

void randombytes_init(unsigned char *entropy_input, unsigned char *personalization_string, int security_strength) {
    (void)security_strength; /* ignored, as in the reference */
    drbg_instantiate(entropy_input, personalization_string);
}

/* Calls that drew from the generator: the driver holds a timed call's draws against the KAT's
 * (harness.c api_draws), as SUPERCOP counts randombytes. */
__attribute__((visibility("default"))) unsigned long long ngcc_rng_draws;

int randombytes(unsigned char *x, unsigned long long xlen) {
    ngcc_rng_draws++;
    drbg_generate(x, xlen);
    return 0;
}

int PQCLEAN_randombytes(uint8_t *output, size_t n) {
    ngcc_rng_draws++;
    drbg_generate(output, (unsigned long long)n);
    return 0;
}
