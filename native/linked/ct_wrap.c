/*
 * ct_wrap.c: linked into the constant-time build of a library (src/ct/build.ts), with
 * -Wl,--wrap=<sym> for each generator the library's own objects define. Every byte a generator
 * hands out is marked undefined for memcheck: whatever the scheme derives from its randomness
 * (secret keys, encapsulation and signing nonces) is then secret, and memcheck reports each branch
 * and address that depends on it (docs/method.md#constant-time-check).
 *
 * Each wrapper is compiled only with -DNGCC_CT_WRAP_<sym>: a wrapper of a symbol nobody defines
 * would leave __real_<sym> undefined. The generator itself runs on its fixed seed (defined data),
 * so its own code is never flagged; only its output is secret.
 */
#include <stddef.h>
#include <stdint.h>
#include <valgrind/memcheck.h>

#ifdef NGCC_CT_WRAP_get_random_number
int __real_get_random_number(void *drng, unsigned char *out, unsigned long long out_len_bits);
int __wrap_get_random_number(void *drng, unsigned char *out, unsigned long long out_len_bits);
int __wrap_get_random_number(void *drng, unsigned char *out, unsigned long long out_len_bits) {
    int rc = __real_get_random_number(drng, out, out_len_bits);
    if (out) (void)VALGRIND_MAKE_MEM_UNDEFINED(out, (size_t)((out_len_bits + 7) / 8));
    return rc;
}
#endif

#ifdef NGCC_CT_WRAP_randombytes
int __real_randombytes(unsigned char *x, unsigned long long xlen);
int __wrap_randombytes(unsigned char *x, unsigned long long xlen);
int __wrap_randombytes(unsigned char *x, unsigned long long xlen) {
    int rc = __real_randombytes(x, xlen);
    if (x) (void)VALGRIND_MAKE_MEM_UNDEFINED(x, (size_t)xlen);
    return rc;
}
#endif

#ifdef NGCC_CT_WRAP_PQCLEAN_randombytes
int __real_PQCLEAN_randombytes(uint8_t *output, size_t n);
int __wrap_PQCLEAN_randombytes(uint8_t *output, size_t n);
int __wrap_PQCLEAN_randombytes(uint8_t *output, size_t n) {
    int rc = __real_PQCLEAN_randombytes(output, n);
    if (output) (void)VALGRIND_MAKE_MEM_UNDEFINED(output, n);
    return rc;
}
#endif

/* Keeps the translation unit non-empty (ISO C) when no wrapper is selected. */
typedef int ngcc_ct_wrap_unit;
