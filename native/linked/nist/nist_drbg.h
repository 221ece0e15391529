/*
 * nist_drbg.h - the AES-256-CTR DRBG of NIST's PQC KAT generator (rng.c of
 * PQCgenKAT), self-contained (own AES-256, no OpenSSL).
 *
 * Exported (found by the KAT driver with dlsym):
 *   randombytes_init  - (re)seed from 48 bytes of entropy [xor personalization]
 *   randombytes       - NIST API: draw xlen bytes
 *   PQCLEAN_randombytes - PQClean's name for the same generator
 *
 * Until randombytes_init is first called, the generator behaves as if it had
 * been seeded with entropy = 0x00, 0x01, ..., 0x2f and no personalization.
 *
 * Not thread-safe (one global state, like the original).
 */
#ifndef NGCC_NIST_DRBG_H
#define NGCC_NIST_DRBG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void randombytes_init(unsigned char *entropy_input, unsigned char *personalization_string, int security_strength);

int randombytes(unsigned char *x, unsigned long long xlen);

int PQCLEAN_randombytes(uint8_t *output, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* NGCC_NIST_DRBG_H */
