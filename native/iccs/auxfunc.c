/*
 * ICCS helper library: sm3hash, pseudohash, pseudoXOF.
 *
 * sm3hash    SM3 as specified in GB/T 32905-2016 (256-bit digest only).
 *
 * pseudohash A wide hash built from SM3 so that schemes needing 512/768/1024
 *            output bits have a placeholder to call until NGCC fixes its hash:
 *              K       = SM3("ICCS pseudohash key")      (fixed 32-byte key)
 *              block_i = HMAC-SM3(K, msg || uint32_be(i)), i = 1 .. bits/256
 *              output  = block_1 || block_2 || ...
 *            HMAC-SM3 is RFC 2104 HMAC with SM3 (64-byte block, ipad 0x36,
 *            opad 0x5c).
 *
 * pseudoXOF  The SM2 key-derivation function (GB/T 32918.4):
 *              out = SM3(msg || uint32_be(1)) || SM3(msg || uint32_be(2)) || ...
 *            truncated to the requested length. A shorter output is always a
 *            prefix of a longer one, which callers may rely on for streaming.
 *
 * All lengths are in bits and must be whole bytes.
 */
#include "auxfunc.h"
#include "sm3_internal.h"

#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- SM3 core */

static const uint32_t sm3_iv[8] = {0x7380166fu, 0x4914b2b9u, 0x172442d7u, 0xda8a0600u, 0xa96f30bcu, 0x163138aau, 0xe38dee4du, 0xb0fb0e4eu};

static uint32_t rotl32(uint32_t x, unsigned n) {
    n &= 31u;
    /* the masked right shift keeps n == 0 well defined */
    return (x << n) | (x >> ((32u - n) & 31u));
}

static uint32_t load_be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void store_be32(unsigned char *p, uint32_t x) {
    p[0] = (unsigned char)(x >> 24);
    p[1] = (unsigned char)(x >> 16);
    p[2] = (unsigned char)(x >> 8);
    p[3] = (unsigned char)x;
}

static uint32_t sm3_p0(uint32_t x) { return x ^ rotl32(x, 9) ^ rotl32(x, 17); }
static uint32_t sm3_p1(uint32_t x) { return x ^ rotl32(x, 15) ^ rotl32(x, 23); }

static uint32_t sm3_ff(unsigned j, uint32_t x, uint32_t y, uint32_t z) { return j < 16 ? (x ^ y ^ z) : ((x & y) | (x & z) | (y & z)); }

static uint32_t sm3_gg(unsigned j, uint32_t x, uint32_t y, uint32_t z) { return j < 16 ? (x ^ y ^ z) : ((x & y) | (~x & z)); }

static void sm3_expand(const unsigned char block[ICCS_SM3_BLOCK_BYTES], uint32_t w[68]) {
    unsigned j;
    for (j = 0; j < 16; j++) w[j] = load_be32(block + 4 * j);
    for (j = 16; j < 68; j++) w[j] = sm3_p1(w[j - 16] ^ w[j - 9] ^ rotl32(w[j - 3], 15)) ^ rotl32(w[j - 13], 7) ^ w[j - 6];
}

static void sm3_compress(uint32_t v[8], const unsigned char block[ICCS_SM3_BLOCK_BYTES]) {
    uint32_t w[68];
    uint32_t a = v[0], b = v[1], c = v[2], d = v[3];
    uint32_t e = v[4], f = v[5], g = v[6], h = v[7];
    unsigned j;

    sm3_expand(block, w);
    for (j = 0; j < 64; j++) {
        uint32_t t = j < 16 ? 0x79cc4519u : 0x7a879d8au;
        uint32_t a12 = rotl32(a, 12);
        uint32_t ss1 = rotl32(a12 + e + rotl32(t, j), 7);
        uint32_t ss2 = ss1 ^ a12;
        uint32_t tt1 = sm3_ff(j, a, b, c) + d + ss2 + (w[j] ^ w[j + 4]);
        uint32_t tt2 = sm3_gg(j, e, f, g) + h + ss1 + w[j];
        d = c;
        c = rotl32(b, 9);
        b = a;
        a = tt1;
        h = g;
        g = rotl32(f, 19);
        f = e;
        e = sm3_p0(tt2);
    }
    v[0] ^= a;
    v[1] ^= b;
    v[2] ^= c;
    v[3] ^= d;
    v[4] ^= e;
    v[5] ^= f;
    v[6] ^= g;
    v[7] ^= h;
}

void iccs_sm3_init(iccs_sm3_ctx *ctx) {
    memcpy(ctx->state, sm3_iv, sizeof(sm3_iv));
    ctx->block_len = 0;
    ctx->total_len = 0;
}

void iccs_sm3_update(iccs_sm3_ctx *ctx, const unsigned char *data, size_t len) {
    if (len == 0) return; /* also keeps memcpy away from a NULL data pointer */
    ctx->total_len += len;
    if (ctx->block_len > 0) {
        size_t take = ICCS_SM3_BLOCK_BYTES - ctx->block_len;
        if (take > len) take = len;
        memcpy(ctx->block + ctx->block_len, data, take);
        ctx->block_len += take;
        data += take;
        len -= take;
        if (ctx->block_len < ICCS_SM3_BLOCK_BYTES) return;
        sm3_compress(ctx->state, ctx->block);
        ctx->block_len = 0;
    }
    while (len >= ICCS_SM3_BLOCK_BYTES) {
        sm3_compress(ctx->state, data);
        data += ICCS_SM3_BLOCK_BYTES;
        len -= ICCS_SM3_BLOCK_BYTES;
    }
    if (len > 0) {
        memcpy(ctx->block, data, len);
        ctx->block_len = len;
    }
}

void iccs_sm3_final(iccs_sm3_ctx *ctx, unsigned char digest[ICCS_SM3_DIGEST_BYTES]) {
    uint64_t bit_len = ctx->total_len * 8u;
    unsigned i;

    /* Merkle-Damgard padding: 0x80, zeros, 64-bit big-endian bit length */
    ctx->block[ctx->block_len++] = 0x80;
    if (ctx->block_len > ICCS_SM3_BLOCK_BYTES - 8) {
        memset(ctx->block + ctx->block_len, 0, ICCS_SM3_BLOCK_BYTES - ctx->block_len);
        sm3_compress(ctx->state, ctx->block);
        ctx->block_len = 0;
    }
    memset(ctx->block + ctx->block_len, 0, ICCS_SM3_BLOCK_BYTES - 8 - ctx->block_len);
    store_be32(ctx->block + ICCS_SM3_BLOCK_BYTES - 8, (uint32_t)(bit_len >> 32));
    store_be32(ctx->block + ICCS_SM3_BLOCK_BYTES - 4, (uint32_t)bit_len);
    sm3_compress(ctx->state, ctx->block);

    for (i = 0; i < 8; i++) store_be32(digest + 4 * i, ctx->state[i]);
}

/* ------------------------------------------------------- argument helpers */

/* Converts a bit length to bytes; fails on partial bytes or size_t overflow. */
static int whole_bytes(unsigned long long bits, size_t *bytes) {
    if (bits % 8u != 0 || bits / 8u > (unsigned long long)SIZE_MAX) return -1;
    *bytes = (size_t)(bits / 8u);
    return 0;
}

static int message_arg(const unsigned char *msg, unsigned long long msg_len_bits, size_t *msg_len) {
    if (whole_bytes(msg_len_bits, msg_len) != 0) return -1;
    return (msg == NULL && *msg_len > 0) ? -1 : 0;
}

/* SM3(prefix || uint32_be(counter)), where prefix is already absorbed. */
static void sm3_with_counter(const iccs_sm3_ctx *prefix, uint32_t counter, unsigned char digest[ICCS_SM3_DIGEST_BYTES]) {
    iccs_sm3_ctx ctx = *prefix;
    unsigned char ctr[4];

    store_be32(ctr, counter);
    iccs_sm3_update(&ctx, ctr, sizeof(ctr));
    iccs_sm3_final(&ctx, digest);
}

/* ---------------------------------------------------------------- sm3hash */

int sm3hash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest) {
    iccs_sm3_ctx ctx;
    size_t msg_len;

    if (digest_len_bits != 256 || digest == NULL || message_arg(msg, msg_len_bits, &msg_len) != 0) return -1;
    iccs_sm3_init(&ctx);
    iccs_sm3_update(&ctx, msg, msg_len);
    iccs_sm3_final(&ctx, digest);
    return 0;
}

/* ------------------------------------------------------------- pseudohash */

typedef struct {
    iccs_sm3_ctx inner; /* state after absorbing key ^ ipad */
    iccs_sm3_ctx outer; /* state after absorbing key ^ opad */
} hmac_sm3_ctx;

/* Keys here are at most one block long, so no pre-hashing is needed. */
static void hmac_sm3_init(hmac_sm3_ctx *h, const unsigned char *key, size_t key_len) {
    unsigned char ipad[ICCS_SM3_BLOCK_BYTES], opad[ICCS_SM3_BLOCK_BYTES];
    size_t i;

    for (i = 0; i < ICCS_SM3_BLOCK_BYTES; i++) {
        unsigned char k = i < key_len ? key[i] : 0;
        ipad[i] = (unsigned char)(k ^ 0x36);
        opad[i] = (unsigned char)(k ^ 0x5c);
    }
    iccs_sm3_init(&h->inner);
    iccs_sm3_update(&h->inner, ipad, sizeof(ipad));
    iccs_sm3_init(&h->outer);
    iccs_sm3_update(&h->outer, opad, sizeof(opad));
}

static void hmac_sm3_finish(const hmac_sm3_ctx *h, const unsigned char inner_digest[ICCS_SM3_DIGEST_BYTES],
                            unsigned char mac[ICCS_SM3_DIGEST_BYTES]) {
    iccs_sm3_ctx outer = h->outer;

    iccs_sm3_update(&outer, inner_digest, ICCS_SM3_DIGEST_BYTES);
    iccs_sm3_final(&outer, mac);
}

static void pseudohash_key(unsigned char key[ICCS_SM3_DIGEST_BYTES]) {
    static const char label[] = "ICCS pseudohash key";
    iccs_sm3_ctx ctx;

    iccs_sm3_init(&ctx);
    iccs_sm3_update(&ctx, (const unsigned char *)label, sizeof(label) - 1);
    iccs_sm3_final(&ctx, key);
}

int pseudohash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest) {
    unsigned char key[ICCS_SM3_DIGEST_BYTES], inner_digest[ICCS_SM3_DIGEST_BYTES];
    hmac_sm3_ctx hmac;
    iccs_sm3_ctx with_msg;
    size_t msg_len;
    uint32_t i, blocks;

    if (digest_len_bits != 512 && digest_len_bits != 768 && digest_len_bits != 1024) return -1;
    if (digest == NULL || message_arg(msg, msg_len_bits, &msg_len) != 0) return -1;

    pseudohash_key(key);
    hmac_sm3_init(&hmac, key, sizeof(key));
    /* msg is common to every block: absorb it once and fork per counter */
    with_msg = hmac.inner;
    iccs_sm3_update(&with_msg, msg, msg_len);

    blocks = (uint32_t)digest_len_bits / 256u;
    for (i = 1; i <= blocks; i++) {
        sm3_with_counter(&with_msg, i, inner_digest);
        hmac_sm3_finish(&hmac, inner_digest, digest + (size_t)(i - 1) * ICCS_SM3_DIGEST_BYTES);
    }
    return 0;
}

/* -------------------------------------------------------------- pseudoXOF */

int pseudoXOF(unsigned long long out_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *out) {
    unsigned char block[ICCS_SM3_DIGEST_BYTES];
    iccs_sm3_ctx with_msg;
    size_t out_len, msg_len, done;
    uint32_t counter;

    if (whole_bytes(out_len_bits, &out_len) != 0 || message_arg(msg, msg_len_bits, &msg_len) != 0) return -1;
    if (out == NULL && out_len > 0) return -1;
    /* the 32-bit counter bounds the output to (2^32 - 1) SM3 blocks */
    if ((out_len_bits / 8u + ICCS_SM3_DIGEST_BYTES - 1) / ICCS_SM3_DIGEST_BYTES > 0xffffffffull) return -1;

    iccs_sm3_init(&with_msg);
    iccs_sm3_update(&with_msg, msg, msg_len);

    for (done = 0, counter = 1; done < out_len; done += ICCS_SM3_DIGEST_BYTES, counter++) {
        size_t take = out_len - done < ICCS_SM3_DIGEST_BYTES ? out_len - done : ICCS_SM3_DIGEST_BYTES;
        sm3_with_counter(&with_msg, counter, block);
        memcpy(out + done, block, take);
    }
    return 0;
}
