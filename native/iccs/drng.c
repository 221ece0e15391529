/*
 * ICCS DRNG: the SP 800-90A Hash_DRBG with SM3 as the hash function
 * (outlen = 256 bits, seedlen = 440 bits = SEEDLEN bytes).
 *
 * init_random_number (Instantiate, seed material = the caller's seed):
 *   V = Hash_df(seed, 440);  C = Hash_df(0x00 || V, 440);  reseed_counter = 1
 * get_random_number (Generate, no additional input):
 *   out = Hashgen(V)                      SM3(V) || SM3(V+1) || ..., truncated
 *   H   = SM3(0x03 || V)
 *   V   = (V + H + C + reseed_counter) mod 2^440;  reseed_counter += 1
 * Hash_df(x, n) = SM3(0x01 || uint32_be(n) || x) || SM3(0x02 || uint32_be(n) || x) ...
 * truncated to n bits.
 *
 * V, C and reseed_counter are kept as 55-byte big-endian integers so that the
 * state is exactly the DRNG_ctx the ICCS header prescribes. The ICCS API has
 * no reseed entry point, so the reseed interval and the per-request size
 * limit of SP 800-90A are not enforced: the generator is deterministic by
 * design, for reproducible known-answer tests.
 */
#include "drng.h"
#include "sm3_internal.h"

#include <stdint.h>
#include <string.h>

#define SEEDLEN_BITS (SEEDLEN * 8)

DRNG_ctx drng_algorithm;

/* acc = (acc + x) mod 2^(8*acc_len); both big-endian, x_len <= acc_len. */
static void be_add(unsigned char *acc, size_t acc_len, const unsigned char *x, size_t x_len) {
    unsigned carry = 0;
    size_t i;

    for (i = 0; i < acc_len; i++) {
        unsigned sum = acc[acc_len - 1 - i] + carry;
        if (i < x_len) sum += x[x_len - 1 - i];
        acc[acc_len - 1 - i] = (unsigned char)sum;
        carry = sum >> 8;
    }
}

static void be_increment(unsigned char *acc, size_t acc_len) {
    static const unsigned char one = 1;
    be_add(acc, acc_len, &one, 1);
}

/* Hash_df over the concatenation a || b, returning SEEDLEN bytes. */
static void hash_df(const unsigned char *a, size_t a_len, const unsigned char *b, size_t b_len, unsigned char out[SEEDLEN]) {
    static const unsigned char bits_be[4] = {(SEEDLEN_BITS >> 24) & 0xff, (SEEDLEN_BITS >> 16) & 0xff, (SEEDLEN_BITS >> 8) & 0xff,
                                             SEEDLEN_BITS & 0xff};
    unsigned char block[ICCS_SM3_DIGEST_BYTES];
    unsigned char counter = 1;
    size_t done;

    for (done = 0; done < SEEDLEN; done += ICCS_SM3_DIGEST_BYTES, counter++) {
        size_t take = SEEDLEN - done < ICCS_SM3_DIGEST_BYTES ? SEEDLEN - done : ICCS_SM3_DIGEST_BYTES;
        iccs_sm3_ctx ctx;

        iccs_sm3_init(&ctx);
        iccs_sm3_update(&ctx, &counter, 1);
        iccs_sm3_update(&ctx, bits_be, sizeof(bits_be));
        iccs_sm3_update(&ctx, a, a_len);
        iccs_sm3_update(&ctx, b, b_len);
        iccs_sm3_final(&ctx, block);
        memcpy(out + done, block, take);
    }
}

static void sm3_of(const unsigned char *a, size_t a_len, const unsigned char *b, size_t b_len,
                   unsigned char digest[ICCS_SM3_DIGEST_BYTES]) {
    iccs_sm3_ctx ctx;

    iccs_sm3_init(&ctx);
    iccs_sm3_update(&ctx, a, a_len);
    iccs_sm3_update(&ctx, b, b_len);
    iccs_sm3_final(&ctx, digest);
}

/* Hashgen: SM3(data) || SM3(data + 1) || ..., with data starting at V. */
static void hashgen(const unsigned char V[SEEDLEN], unsigned char *out, size_t out_len) {
    unsigned char data[SEEDLEN], block[ICCS_SM3_DIGEST_BYTES];
    size_t done;

    memcpy(data, V, SEEDLEN);
    for (done = 0; done < out_len; done += ICCS_SM3_DIGEST_BYTES) {
        size_t take = out_len - done < ICCS_SM3_DIGEST_BYTES ? out_len - done : ICCS_SM3_DIGEST_BYTES;
        sm3_of(data, SEEDLEN, NULL, 0, block);
        memcpy(out + done, block, take);
        be_increment(data, SEEDLEN);
    }
}

static void update_state(DRNG_ctx *drng) {
    static const unsigned char domain = 0x03;
    unsigned char H[ICCS_SM3_DIGEST_BYTES];

    sm3_of(&domain, 1, drng->V, SEEDLEN, H);
    be_add(drng->V, SEEDLEN, H, sizeof(H));
    be_add(drng->V, SEEDLEN, drng->C, SEEDLEN);
    be_add(drng->V, SEEDLEN, drng->reseed_counter, SEEDLEN);
    be_increment(drng->reseed_counter, SEEDLEN);
}

int init_random_number(DRNG_ctx *drng, const unsigned char *seed, unsigned long long seed_len_bytes) {
    static const unsigned char zero = 0x00;

    if (drng == NULL || seed_len_bytes > (unsigned long long)SIZE_MAX) return -1;
    if (seed == NULL && seed_len_bytes > 0) return -1;

    hash_df(seed, (size_t)seed_len_bytes, NULL, 0, drng->V);
    hash_df(&zero, 1, drng->V, SEEDLEN, drng->C);
    memset(drng->reseed_counter, 0, SEEDLEN);
    drng->reseed_counter[SEEDLEN - 1] = 1;
    return 0;
}

/* Any bit count, as the official drng.c: ceil(bits/8) bytes, the unused low bits of a partial last
 * byte zero, and one state update per call whatever the length (the hash KAT_2_12 draws 0..4096
 * bits; KEM and signature KATs only ever ask for whole bytes). */
int get_random_number(DRNG_ctx *drng, unsigned char *out, unsigned long long out_len_bits) {
    unsigned long long out_len = out_len_bits / 8u + (out_len_bits % 8u != 0);

    if (drng == NULL || out_len > (unsigned long long)SIZE_MAX) return -1;
    if (out == NULL && out_len_bits > 0) return -1;

    hashgen(drng->V, out, (size_t)out_len);
    if (out_len_bits % 8u != 0) out[out_len - 1] &= (unsigned char)(0xffu << (8u - out_len_bits % 8u));
    update_state(drng);
    return 0;
}
