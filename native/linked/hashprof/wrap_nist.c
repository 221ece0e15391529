/*
 * wrap_nist.c: ld --wrap wrappers of the symmetric entry points of NIST-API code
 * (PQClean common/fips202.h, common/sha2.h, randombytes), see README.md.
 *
 * Each wrapper is compiled only with -DNGCC_WRAP_<sym> and must be linked with
 * -Wl,--wrap=<sym>; the harness selects exactly the catalog symbols that the
 * instance's objects define (a wrapper for an undefined symbol would leave
 * __real_<sym> unresolved).
 *
 * Recorded bits (from byte counts x 8):
 *   sha3_256/384/512, sha224/256/384/512      in = inlen,          out = digest size
 *   shake128, shake256                        in = inlen,          out = outlen
 *   *_absorb, *_inc_absorb                    in = inlen,          out = 0
 *   shake128/256_squeezeblocks                in = 0,              out = nblocks x rate (168 / 136)
 *   shake*_inc_squeeze                        in = 0,              out = outlen
 *   sha3_*_inc_finalize                       in = 0,              out = digest size
 *   sha*_inc_blocks                           in = inblocks x 64 (sha224/256) or x 128 (sha384/512)
 *   sha*_inc_finalize                         in = inlen,          out = digest size
 *   *_init, *_finalize (shake), *_release, *_clone               in = 0, out = 0
 *   PQCLEAN_randombytes, randombytes          recorded as "randombytes": in = 0, out = n
 *
 * The context types below have PQClean's layout (one pointer); only pointers to them
 * cross the calls, so any scheme whose functions take pointers links the same way.
 * Build with -DNGCC_HASHPROF_PQCLEAN_HEADERS -I<PQClean common> to take the types from
 * PQClean's own headers instead: the redeclarations in every wrapper then make the
 * compiler check each prototype against fips202.h / sha2.h.
 */
#include "hashprof.h"

#include <stddef.h>
#include <stdint.h>

#ifdef NGCC_HASHPROF_PQCLEAN_HEADERS
#include "fips202.h"
#include "sha2.h"
#else
/* clang-format off */
typedef struct { uint64_t *ctx; } shake128incctx;
typedef struct { uint64_t *ctx; } shake128ctx;
typedef struct { uint64_t *ctx; } shake256incctx;
typedef struct { uint64_t *ctx; } shake256ctx;
typedef struct { uint64_t *ctx; } sha3_256incctx;
typedef struct { uint64_t *ctx; } sha3_384incctx;
typedef struct { uint64_t *ctx; } sha3_512incctx;
typedef struct { uint8_t *ctx; } sha224ctx;
typedef struct { uint8_t *ctx; } sha256ctx;
typedef struct { uint8_t *ctx; } sha384ctx;
typedef struct { uint8_t *ctx; } sha512ctx;
/* clang-format on */
#endif

#define NGCC_BITS(bytes) (8ull * (unsigned long long)(bytes))

/* Every generator declares the real function, __real_ and __wrap_ with one prototype
 * (a mismatch with an included header is a compile error), then defines __wrap_. */

/* void f(uint8_t *out, const uint8_t *in, size_t inlen): fixed-size digest */
#define NGCC_WRAP_DIGEST(name, outbits)                                       \
    void name(uint8_t *output, const uint8_t *input, size_t inlen);           \
    void __real_##name(uint8_t *output, const uint8_t *input, size_t inlen);  \
    void __wrap_##name(uint8_t *output, const uint8_t *input, size_t inlen);  \
    void __wrap_##name(uint8_t *output, const uint8_t *input, size_t inlen) { \
        uint64_t t0 = ngcc_prof__enter();                                     \
        __real_##name(output, input, inlen);                                  \
        ngcc_prof__leave(#name, NGCC_BITS(inlen), (outbits), t0);             \
    }

/* void f(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen): one-shot XOF */
#define NGCC_WRAP_XOF(name)                                                                  \
    void name(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen);           \
    void __real_##name(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen);  \
    void __wrap_##name(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen);  \
    void __wrap_##name(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen) { \
        uint64_t t0 = ngcc_prof__enter();                                                    \
        __real_##name(output, outlen, input, inlen);                                         \
        ngcc_prof__leave(#name, NGCC_BITS(inlen), NGCC_BITS(outlen), t0);                    \
    }

/* void f(ctx *state, const uint8_t *in, size_t inlen): absorb */
#define NGCC_WRAP_ABSORB(name, ctx_t)                                      \
    void name(ctx_t *state, const uint8_t *input, size_t inlen);           \
    void __real_##name(ctx_t *state, const uint8_t *input, size_t inlen);  \
    void __wrap_##name(ctx_t *state, const uint8_t *input, size_t inlen);  \
    void __wrap_##name(ctx_t *state, const uint8_t *input, size_t inlen) { \
        uint64_t t0 = ngcc_prof__enter();                                  \
        __real_##name(state, input, inlen);                                \
        ngcc_prof__leave(#name, NGCC_BITS(inlen), 0ull, t0);               \
    }

/* void f(uint8_t *out, size_t nblocks, ctx *state): squeeze whole blocks */
#define NGCC_WRAP_SQUEEZEBLOCKS(name, ctx_t, rate)                      \
    void name(uint8_t *output, size_t nblocks, ctx_t *state);           \
    void __real_##name(uint8_t *output, size_t nblocks, ctx_t *state);  \
    void __wrap_##name(uint8_t *output, size_t nblocks, ctx_t *state);  \
    void __wrap_##name(uint8_t *output, size_t nblocks, ctx_t *state) { \
        uint64_t t0 = ngcc_prof__enter();                               \
        __real_##name(output, nblocks, state);                          \
        ngcc_prof__leave(#name, 0ull, NGCC_BITS(nblocks) * (rate), t0); \
    }

/* void f(uint8_t *out, size_t outlen, ctx *state): incremental squeeze */
#define NGCC_WRAP_SQUEEZE(name, ctx_t)                                 \
    void name(uint8_t *output, size_t outlen, ctx_t *state);           \
    void __real_##name(uint8_t *output, size_t outlen, ctx_t *state);  \
    void __wrap_##name(uint8_t *output, size_t outlen, ctx_t *state);  \
    void __wrap_##name(uint8_t *output, size_t outlen, ctx_t *state) { \
        uint64_t t0 = ngcc_prof__enter();                              \
        __real_##name(output, outlen, state);                          \
        ngcc_prof__leave(#name, 0ull, NGCC_BITS(outlen), t0);          \
    }

/* void f(ctx *state): init / finalize / release */
#define NGCC_WRAP_STATE(name, ctx_t)             \
    void name(ctx_t *state);                     \
    void __real_##name(ctx_t *state);            \
    void __wrap_##name(ctx_t *state);            \
    void __wrap_##name(ctx_t *state) {           \
        uint64_t t0 = ngcc_prof__enter();        \
        __real_##name(state);                    \
        ngcc_prof__leave(#name, 0ull, 0ull, t0); \
    }

/* void f(ctx *dest, const ctx *src): clone */
#define NGCC_WRAP_CLONE(name, ctx_t)                    \
    void name(ctx_t *dest, const ctx_t *src);           \
    void __real_##name(ctx_t *dest, const ctx_t *src);  \
    void __wrap_##name(ctx_t *dest, const ctx_t *src);  \
    void __wrap_##name(ctx_t *dest, const ctx_t *src) { \
        uint64_t t0 = ngcc_prof__enter();               \
        __real_##name(dest, src);                       \
        ngcc_prof__leave(#name, 0ull, 0ull, t0);        \
    }

/* void f(uint8_t *out, ctx *state): SHA-3 incremental finalize */
#define NGCC_WRAP_SHA3_FINALIZE(name, ctx_t, outbits)   \
    void name(uint8_t *output, ctx_t *state);           \
    void __real_##name(uint8_t *output, ctx_t *state);  \
    void __wrap_##name(uint8_t *output, ctx_t *state);  \
    void __wrap_##name(uint8_t *output, ctx_t *state) { \
        uint64_t t0 = ngcc_prof__enter();               \
        __real_##name(output, state);                   \
        ngcc_prof__leave(#name, 0ull, (outbits), t0);   \
    }

/* void f(ctx *state, const uint8_t *in, size_t inblocks): SHA-2 whole blocks */
#define NGCC_WRAP_SHA2_BLOCKS(name, ctx_t, block_bytes)                         \
    void name(ctx_t *state, const uint8_t *in, size_t inblocks);                \
    void __real_##name(ctx_t *state, const uint8_t *in, size_t inblocks);       \
    void __wrap_##name(ctx_t *state, const uint8_t *in, size_t inblocks);       \
    void __wrap_##name(ctx_t *state, const uint8_t *in, size_t inblocks) {      \
        uint64_t t0 = ngcc_prof__enter();                                       \
        __real_##name(state, in, inblocks);                                     \
        ngcc_prof__leave(#name, NGCC_BITS(inblocks) * (block_bytes), 0ull, t0); \
    }

/* void f(uint8_t *out, ctx *state, const uint8_t *in, size_t inlen): SHA-2 finalize */
#define NGCC_WRAP_SHA2_FINALIZE(name, ctx_t, outbits)                                 \
    void name(uint8_t *out, ctx_t *state, const uint8_t *in, size_t inlen);           \
    void __real_##name(uint8_t *out, ctx_t *state, const uint8_t *in, size_t inlen);  \
    void __wrap_##name(uint8_t *out, ctx_t *state, const uint8_t *in, size_t inlen);  \
    void __wrap_##name(uint8_t *out, ctx_t *state, const uint8_t *in, size_t inlen) { \
        uint64_t t0 = ngcc_prof__enter();                                             \
        __real_##name(out, state, in, inlen);                                         \
        ngcc_prof__leave(#name, NGCC_BITS(inlen), (outbits), t0);                     \
    }

/* ------------------------------------------------------------------ SHA-3 */
#ifdef NGCC_WRAP_sha3_256
NGCC_WRAP_DIGEST(sha3_256, 256ull)
#endif
#ifdef NGCC_WRAP_sha3_384
NGCC_WRAP_DIGEST(sha3_384, 384ull)
#endif
#ifdef NGCC_WRAP_sha3_512
NGCC_WRAP_DIGEST(sha3_512, 512ull)
#endif
#ifdef NGCC_WRAP_sha3_256_inc_init
NGCC_WRAP_STATE(sha3_256_inc_init, sha3_256incctx)
#endif
#ifdef NGCC_WRAP_sha3_256_inc_absorb
NGCC_WRAP_ABSORB(sha3_256_inc_absorb, sha3_256incctx)
#endif
#ifdef NGCC_WRAP_sha3_256_inc_finalize
NGCC_WRAP_SHA3_FINALIZE(sha3_256_inc_finalize, sha3_256incctx, 256ull)
#endif
#ifdef NGCC_WRAP_sha3_256_inc_ctx_clone
NGCC_WRAP_CLONE(sha3_256_inc_ctx_clone, sha3_256incctx)
#endif
#ifdef NGCC_WRAP_sha3_256_inc_ctx_release
NGCC_WRAP_STATE(sha3_256_inc_ctx_release, sha3_256incctx)
#endif
#ifdef NGCC_WRAP_sha3_384_inc_init
NGCC_WRAP_STATE(sha3_384_inc_init, sha3_384incctx)
#endif
#ifdef NGCC_WRAP_sha3_384_inc_absorb
NGCC_WRAP_ABSORB(sha3_384_inc_absorb, sha3_384incctx)
#endif
#ifdef NGCC_WRAP_sha3_384_inc_finalize
NGCC_WRAP_SHA3_FINALIZE(sha3_384_inc_finalize, sha3_384incctx, 384ull)
#endif
#ifdef NGCC_WRAP_sha3_384_inc_ctx_clone
NGCC_WRAP_CLONE(sha3_384_inc_ctx_clone, sha3_384incctx)
#endif
#ifdef NGCC_WRAP_sha3_384_inc_ctx_release
NGCC_WRAP_STATE(sha3_384_inc_ctx_release, sha3_384incctx)
#endif
#ifdef NGCC_WRAP_sha3_512_inc_init
NGCC_WRAP_STATE(sha3_512_inc_init, sha3_512incctx)
#endif
#ifdef NGCC_WRAP_sha3_512_inc_absorb
NGCC_WRAP_ABSORB(sha3_512_inc_absorb, sha3_512incctx)
#endif
#ifdef NGCC_WRAP_sha3_512_inc_finalize
NGCC_WRAP_SHA3_FINALIZE(sha3_512_inc_finalize, sha3_512incctx, 512ull)
#endif
#ifdef NGCC_WRAP_sha3_512_inc_ctx_clone
NGCC_WRAP_CLONE(sha3_512_inc_ctx_clone, sha3_512incctx)
#endif
#ifdef NGCC_WRAP_sha3_512_inc_ctx_release
NGCC_WRAP_STATE(sha3_512_inc_ctx_release, sha3_512incctx)
#endif

/* --------------------------------------------------------------- SHAKE128 */
#ifdef NGCC_WRAP_shake128
NGCC_WRAP_XOF(shake128)
#endif
#ifdef NGCC_WRAP_shake128_absorb
NGCC_WRAP_ABSORB(shake128_absorb, shake128ctx)
#endif
#ifdef NGCC_WRAP_shake128_squeezeblocks
NGCC_WRAP_SQUEEZEBLOCKS(shake128_squeezeblocks, shake128ctx, 168u)
#endif
#ifdef NGCC_WRAP_shake128_ctx_clone
NGCC_WRAP_CLONE(shake128_ctx_clone, shake128ctx)
#endif
#ifdef NGCC_WRAP_shake128_ctx_release
NGCC_WRAP_STATE(shake128_ctx_release, shake128ctx)
#endif
#ifdef NGCC_WRAP_shake128_inc_init
NGCC_WRAP_STATE(shake128_inc_init, shake128incctx)
#endif
#ifdef NGCC_WRAP_shake128_inc_absorb
NGCC_WRAP_ABSORB(shake128_inc_absorb, shake128incctx)
#endif
#ifdef NGCC_WRAP_shake128_inc_finalize
NGCC_WRAP_STATE(shake128_inc_finalize, shake128incctx)
#endif
#ifdef NGCC_WRAP_shake128_inc_squeeze
NGCC_WRAP_SQUEEZE(shake128_inc_squeeze, shake128incctx)
#endif
#ifdef NGCC_WRAP_shake128_inc_ctx_clone
NGCC_WRAP_CLONE(shake128_inc_ctx_clone, shake128incctx)
#endif
#ifdef NGCC_WRAP_shake128_inc_ctx_release
NGCC_WRAP_STATE(shake128_inc_ctx_release, shake128incctx)
#endif

/* --------------------------------------------------------------- SHAKE256 */
#ifdef NGCC_WRAP_shake256
NGCC_WRAP_XOF(shake256)
#endif
#ifdef NGCC_WRAP_shake256_absorb
NGCC_WRAP_ABSORB(shake256_absorb, shake256ctx)
#endif
#ifdef NGCC_WRAP_shake256_squeezeblocks
NGCC_WRAP_SQUEEZEBLOCKS(shake256_squeezeblocks, shake256ctx, 136u)
#endif
#ifdef NGCC_WRAP_shake256_ctx_clone
NGCC_WRAP_CLONE(shake256_ctx_clone, shake256ctx)
#endif
#ifdef NGCC_WRAP_shake256_ctx_release
NGCC_WRAP_STATE(shake256_ctx_release, shake256ctx)
#endif
#ifdef NGCC_WRAP_shake256_inc_init
NGCC_WRAP_STATE(shake256_inc_init, shake256incctx)
#endif
#ifdef NGCC_WRAP_shake256_inc_absorb
NGCC_WRAP_ABSORB(shake256_inc_absorb, shake256incctx)
#endif
#ifdef NGCC_WRAP_shake256_inc_finalize
NGCC_WRAP_STATE(shake256_inc_finalize, shake256incctx)
#endif
#ifdef NGCC_WRAP_shake256_inc_squeeze
NGCC_WRAP_SQUEEZE(shake256_inc_squeeze, shake256incctx)
#endif
#ifdef NGCC_WRAP_shake256_inc_ctx_clone
NGCC_WRAP_CLONE(shake256_inc_ctx_clone, shake256incctx)
#endif
#ifdef NGCC_WRAP_shake256_inc_ctx_release
NGCC_WRAP_STATE(shake256_inc_ctx_release, shake256incctx)
#endif

/* ------------------------------------------------------------------ SHA-2 */
#ifdef NGCC_WRAP_sha224
NGCC_WRAP_DIGEST(sha224, 224ull)
#endif
#ifdef NGCC_WRAP_sha256
NGCC_WRAP_DIGEST(sha256, 256ull)
#endif
#ifdef NGCC_WRAP_sha384
NGCC_WRAP_DIGEST(sha384, 384ull)
#endif
#ifdef NGCC_WRAP_sha512
NGCC_WRAP_DIGEST(sha512, 512ull)
#endif
#ifdef NGCC_WRAP_sha224_inc_init
NGCC_WRAP_STATE(sha224_inc_init, sha224ctx)
#endif
#ifdef NGCC_WRAP_sha224_inc_ctx_clone
NGCC_WRAP_CLONE(sha224_inc_ctx_clone, sha224ctx)
#endif
#ifdef NGCC_WRAP_sha224_inc_blocks
NGCC_WRAP_SHA2_BLOCKS(sha224_inc_blocks, sha224ctx, 64u)
#endif
#ifdef NGCC_WRAP_sha224_inc_finalize
NGCC_WRAP_SHA2_FINALIZE(sha224_inc_finalize, sha224ctx, 224ull)
#endif
#ifdef NGCC_WRAP_sha224_inc_ctx_release
NGCC_WRAP_STATE(sha224_inc_ctx_release, sha224ctx)
#endif
#ifdef NGCC_WRAP_sha256_inc_init
NGCC_WRAP_STATE(sha256_inc_init, sha256ctx)
#endif
#ifdef NGCC_WRAP_sha256_inc_ctx_clone
NGCC_WRAP_CLONE(sha256_inc_ctx_clone, sha256ctx)
#endif
#ifdef NGCC_WRAP_sha256_inc_blocks
NGCC_WRAP_SHA2_BLOCKS(sha256_inc_blocks, sha256ctx, 64u)
#endif
#ifdef NGCC_WRAP_sha256_inc_finalize
NGCC_WRAP_SHA2_FINALIZE(sha256_inc_finalize, sha256ctx, 256ull)
#endif
#ifdef NGCC_WRAP_sha256_inc_ctx_release
NGCC_WRAP_STATE(sha256_inc_ctx_release, sha256ctx)
#endif
#ifdef NGCC_WRAP_sha384_inc_init
NGCC_WRAP_STATE(sha384_inc_init, sha384ctx)
#endif
#ifdef NGCC_WRAP_sha384_inc_ctx_clone
NGCC_WRAP_CLONE(sha384_inc_ctx_clone, sha384ctx)
#endif
#ifdef NGCC_WRAP_sha384_inc_blocks
NGCC_WRAP_SHA2_BLOCKS(sha384_inc_blocks, sha384ctx, 128u)
#endif
#ifdef NGCC_WRAP_sha384_inc_finalize
NGCC_WRAP_SHA2_FINALIZE(sha384_inc_finalize, sha384ctx, 384ull)
#endif
#ifdef NGCC_WRAP_sha384_inc_ctx_release
NGCC_WRAP_STATE(sha384_inc_ctx_release, sha384ctx)
#endif
#ifdef NGCC_WRAP_sha512_inc_init
NGCC_WRAP_STATE(sha512_inc_init, sha512ctx)
#endif
#ifdef NGCC_WRAP_sha512_inc_ctx_clone
NGCC_WRAP_CLONE(sha512_inc_ctx_clone, sha512ctx)
#endif
#ifdef NGCC_WRAP_sha512_inc_blocks
NGCC_WRAP_SHA2_BLOCKS(sha512_inc_blocks, sha512ctx, 128u)
#endif
#ifdef NGCC_WRAP_sha512_inc_finalize
NGCC_WRAP_SHA2_FINALIZE(sha512_inc_finalize, sha512ctx, 512ull)
#endif
#ifdef NGCC_WRAP_sha512_inc_ctx_release
NGCC_WRAP_STATE(sha512_inc_ctx_release, sha512ctx)
#endif

/* ------------------------------------------------------------ randombytes */
/* PQClean: randombytes.h #defines randombytes as PQCLEAN_randombytes. */
#ifdef NGCC_WRAP_PQCLEAN_randombytes
int PQCLEAN_randombytes(uint8_t *output, size_t n);
int __real_PQCLEAN_randombytes(uint8_t *output, size_t n);
int __wrap_PQCLEAN_randombytes(uint8_t *output, size_t n);
int __wrap_PQCLEAN_randombytes(uint8_t *output, size_t n) {
    uint64_t t0 = ngcc_prof__enter();
    int rc = __real_PQCLEAN_randombytes(output, n);
    ngcc_prof__leave("randombytes", 0ull, NGCC_BITS(n), t0);
    return rc;
}
#endif

/* NIST PQC rng.c (and native/linked/nist/nist_drbg.c): randombytes(x, xlen). */
#ifdef NGCC_WRAP_randombytes
int randombytes(unsigned char *x, unsigned long long xlen);
int __real_randombytes(unsigned char *x, unsigned long long xlen);
int __wrap_randombytes(unsigned char *x, unsigned long long xlen);
int __wrap_randombytes(unsigned char *x, unsigned long long xlen) {
    uint64_t t0 = ngcc_prof__enter();
    int rc = __real_randombytes(x, xlen);
    ngcc_prof__leave("randombytes", 0ull, NGCC_BITS(xlen), t0);
    return rc;
}
#endif

/* Keeps the translation unit non-empty (ISO C) when no wrapper is selected. */
typedef int ngcc_wrap_nist_unit;
