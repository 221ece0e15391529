/*
 * ICCS deterministic random number generator (SM3 Hash_DRBG, seedlen 440 bits).
 * init_random_number takes the seed length in BYTES, get_random_number the
 * output length in BITS (any count: a partial last byte keeps its high bits,
 * the others are zero). Both return 0, or -1 on bad input.
 */
#ifndef ICCS_DRNG_H
#define ICCS_DRNG_H

#define SEEDLEN (55)

typedef struct {
    unsigned char V[SEEDLEN], C[SEEDLEN], reseed_counter[SEEDLEN];
} DRNG_ctx;

int init_random_number(DRNG_ctx *drng, const unsigned char *seed, unsigned long long seed_len_bytes);
int get_random_number(DRNG_ctx *drng, unsigned char *out, unsigned long long out_len_bits);

/* The generator schemes draw all their randomness from. */
extern DRNG_ctx drng_algorithm;

#endif
