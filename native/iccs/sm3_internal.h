/*
 * Internal streaming SM3 interface shared by auxfunc.c and drng.c.
 * Not part of the ICCS API; the iccs_sm3_ prefix keeps the exported
 * symbols from clashing with whatever the candidate links in.
 */
#ifndef ICCS_SM3_INTERNAL_H
#define ICCS_SM3_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define ICCS_SM3_DIGEST_BYTES 32
#define ICCS_SM3_BLOCK_BYTES 64

typedef struct {
    uint32_t state[8];
    unsigned char block[ICCS_SM3_BLOCK_BYTES];
    size_t block_len;   /* bytes buffered in block[] */
    uint64_t total_len; /* bytes absorbed so far */
} iccs_sm3_ctx;

void iccs_sm3_init(iccs_sm3_ctx *ctx);
void iccs_sm3_update(iccs_sm3_ctx *ctx, const unsigned char *data, size_t len);
void iccs_sm3_final(iccs_sm3_ctx *ctx, unsigned char digest[ICCS_SM3_DIGEST_BYTES]);

#endif
