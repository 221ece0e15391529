/*
 * Replaces PQClean's common/fips202.c and common/randombytes.c for ML-KEM-512
 * so that every hash, XOF and random byte goes through the ICCS helpers:
 *   sha3_256                  -> sm3hash(256)
 *   sha3_512                  -> pseudohash(512)
 *   shake128_absorb/squeeze   -> pseudoXOF stream over the absorbed input
 *   shake256, shake256_inc_*  -> pseudoXOF
 *   PQCLEAN_randombytes       -> get_random_number(&drng_algorithm, ...)
 * Only the functions the ML-KEM-512 clean code calls are provided.
 *
 * The fips202 API returns void, so a failure here (out of memory, helper
 * rejecting its arguments) cannot be reported; we abort rather than let the
 * scheme continue on unset or stale buffers.
 */
#include "fips202.h"
#include "randombytes.h"

#include "auxfunc.h"
#include "drng.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- utilities */

static void require(int ok)
{
    if (!ok)
        abort();
}

static size_t add_size(size_t a, size_t b)
{
    require(a <= SIZE_MAX - b);
    return a + b;
}

static unsigned long long bits_of(size_t bytes)
{
    require((unsigned long long)bytes <= ~0ull / 8u);
    return 8ull * bytes;
}

static void *resize(void *p, size_t n)
{
    void *q = realloc(p, n > 0 ? n : 1);
    require(q != NULL);
    return q;
}

/* --------------------------------------------------- pseudoXOF as a stream */

/*
 * pseudoXOF output of length n is a prefix of any longer output, so a stream
 * is served from a cached prefix that is regenerated at (at least) double the
 * size whenever a read runs past it.
 */
typedef struct {
    unsigned char *input;
    size_t input_len, input_cap;
    unsigned char *output;  /* cached prefix of pseudoXOF(input) */
    size_t output_len;
    size_t read_pos;        /* bytes of the stream already returned */
} xof_stream;

static xof_stream *stream_new(void)
{
    xof_stream *s = calloc(1, sizeof(*s));
    require(s != NULL);
    return s;
}

/* The output depends on the whole input, so input after the first read
 * would invalidate bytes already returned. */
static void stream_absorb(xof_stream *s, const uint8_t *in, size_t len)
{
    size_t needed = add_size(s->input_len, len);

    require(s->read_pos == 0);
    if (len == 0)
        return;
    if (needed > s->input_cap) {
        s->input_cap = needed > SIZE_MAX / 2 ? needed : 2 * needed;
        s->input = resize(s->input, s->input_cap);
    }
    memcpy(s->input + s->input_len, in, len);
    s->input_len = needed;
}

static void stream_fill(xof_stream *s, size_t needed)
{
    size_t len;

    if (needed <= s->output_len)
        return;
    len = s->output_len <= SIZE_MAX / 2 && 2 * s->output_len > needed ? 2 * s->output_len : needed;
    s->output = resize(s->output, len);
    require(pseudoXOF(bits_of(len), s->input, bits_of(s->input_len), s->output) == 0);
    s->output_len = len;
}

static void stream_read(xof_stream *s, uint8_t *out, size_t len)
{
    size_t end = add_size(s->read_pos, len);

    stream_fill(s, end);
    memcpy(out, s->output + s->read_pos, len);
    s->read_pos = end;
}

static void stream_free(xof_stream *s)
{
    if (s == NULL)
        return;
    free(s->input);
    free(s->output);
    free(s);
}

/* The PQClean contexts only hold a uint64_t pointer; it carries our stream. */
static xof_stream *stream_of(uint64_t *ctx)
{
    require(ctx != NULL);
    return (xof_stream *)(void *)ctx;
}

static uint64_t *as_ctx(xof_stream *s)
{
    return (uint64_t *)(void *)s;
}

/* ----------------------------------------------------------- fixed hashes */

void sha3_256(uint8_t *output, const uint8_t *input, size_t inlen)
{
    require(sm3hash(256, input, bits_of(inlen), output) == 0);
}

void sha3_512(uint8_t *output, const uint8_t *input, size_t inlen)
{
    require(pseudohash(512, input, bits_of(inlen), output) == 0);
}

/* --------------------------------------------------------------- SHAKE128 */

void shake128_absorb(shake128ctx *state, const uint8_t *input, size_t inlen)
{
    xof_stream *s = stream_new();

    stream_absorb(s, input, inlen);
    state->ctx = as_ctx(s);
}

void shake128_squeezeblocks(uint8_t *output, size_t nblocks, shake128ctx *state)
{
    require(nblocks <= SIZE_MAX / SHAKE128_RATE);
    stream_read(stream_of(state->ctx), output, nblocks * SHAKE128_RATE);
}

void shake128_ctx_release(shake128ctx *state)
{
    stream_free((xof_stream *)(void *)state->ctx);
    state->ctx = NULL;
}

/* --------------------------------------------------------------- SHAKE256 */

void shake256(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen)
{
    require(pseudoXOF(bits_of(outlen), input, bits_of(inlen), output) == 0);
}

void shake256_inc_init(shake256incctx *state)
{
    state->ctx = as_ctx(stream_new());
}

void shake256_inc_absorb(shake256incctx *state, const uint8_t *input, size_t inlen)
{
    stream_absorb(stream_of(state->ctx), input, inlen);
}

/* Nothing to do: the buffered input is hashed on the first squeeze. */
void shake256_inc_finalize(shake256incctx *state)
{
    (void)stream_of(state->ctx);
}

void shake256_inc_squeeze(uint8_t *output, size_t outlen, shake256incctx *state)
{
    stream_read(stream_of(state->ctx), output, outlen);
}

void shake256_inc_ctx_release(shake256incctx *state)
{
    stream_free((xof_stream *)(void *)state->ctx);
    state->ctx = NULL;
}

/* ------------------------------------------------------------- randomness */

int PQCLEAN_randombytes(uint8_t *output, size_t n)
{
    if ((unsigned long long)n > ~0ull / 8u)
        return -1;
    return get_random_number(&drng_algorithm, output, 8ull * n);
}
