/*
 * SM3 as an ICCS CryptHash, for messages of any bit length: the whole bytes go through the
 * streaming SM3 of the ICCS helper library (native/iccs), then the padding is written by hand so
 * that a partial last byte counts only its high msg_len_bits % 8 bits, as GB/T 32905 pads a bit
 * string (the 1 bit right after the message bits). For whole bytes this is plain SM3.
 */
#include "CryptHash_AlgorithmInstance.h"
#include "sm3_internal.h"

#include <stdint.h>
#include <string.h>

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest)
{
    iccs_sm3_ctx ctx;
    unsigned char tail[ICCS_SM3_BLOCK_BYTES + 8];
    unsigned long long whole = msg_len_bits / 8u;
    unsigned partial = (unsigned)(msg_len_bits % 8u);
    size_t n = 0, used;
    int i;

    if (digest_len_bits != DIGEST_BIT_LENGTH || digest == NULL || (msg == NULL && msg_len_bits > 0))
        return -1;
    if (whole > (unsigned long long)SIZE_MAX)
        return -1;
    iccs_sm3_init(&ctx);
    iccs_sm3_update(&ctx, msg, (size_t)whole);
    /* the partial byte's message bits, then the 1 bit; then zeros up to 56 mod 64 bytes */
    tail[n++] = (unsigned char)((partial ? msg[whole] & (0xffu << (8u - partial)) : 0u) | (0x80u >> partial));
    used = (ctx.block_len + n) % ICCS_SM3_BLOCK_BYTES;
    while (used != 56) {
        tail[n++] = 0;
        used = (used + 1) % ICCS_SM3_BLOCK_BYTES;
    }
    for (i = 7; i >= 0; i--)
        tail[n++] = (unsigned char)(msg_len_bits >> (8 * i));
    iccs_sm3_update(&ctx, tail, n);
    for (i = 0; i < 8; i++) {
        digest[4 * i] = (unsigned char)(ctx.state[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(ctx.state[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(ctx.state[i] >> 8);
        digest[4 * i + 3] = (unsigned char)ctx.state[i];
    }
    return 0;
}
