/*
 * nist_shim.c - exposes a scheme written to the NIST PQC API (e.g. PQClean)
 * through the ICCS API (KEM_AlgorithmInstance.h / SIG_AlgorithmInstance.h
 * prototypes; all lengths in bytes).
 *
 * Compiled into the scheme's shared library, together with the scheme's
 * sources and nist_drbg.c:
 *   -I<scheme dir>                       so that "api.h" is the scheme's
 *   -DNGCC_NIST_PREFIX=<namespace>       e.g. PQCLEAN_MLKEM512_CLEAN_, may be empty
 *   -DNGCC_NIST_KEM  or  -DNGCC_NIST_SIG
 *
 * Signatures use the detached PQClean calls crypto_sign_signature /
 * crypto_sign_verify (uint8_t buffers, size_t lengths).
 *
 * Code whose entry points have other names (candidate.yml nist_names, e.g.
 * pq-crystals Kyber's pqcrystals_kyber768_ref_keypair) is built unchanged with
 *   -DNGCC_NIST_NAMES -DNGCC_NIST_PREFIX=ngcc_nist_
 *   -DNGCC_NIST_HEADER_1="api.h" [... _4]   the headers that declare them
 *   -DNGCC_NIST_KEYPAIR=... -DNGCC_NIST_PK_BYTES=... (one per name)
 * The shim then calls the scheme's names and exports ngcc_nist_crypto_kem_*
 * (or ngcc_nist_crypto_sign*) for the KAT driver, which looks the NIST entry
 * points up by prefix.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef NGCC_NIST_NAMES
#ifdef NGCC_NIST_HEADER_1
#include NGCC_NIST_HEADER_1
#endif
#ifdef NGCC_NIST_HEADER_2
#include NGCC_NIST_HEADER_2
#endif
#ifdef NGCC_NIST_HEADER_3
#include NGCC_NIST_HEADER_3
#endif
#ifdef NGCC_NIST_HEADER_4
#include NGCC_NIST_HEADER_4
#endif
#else
#include "api.h"
#endif

#ifndef NGCC_NIST_PREFIX
#define NGCC_NIST_PREFIX
#endif

#if defined(NGCC_NIST_KEM) && defined(NGCC_NIST_SIG)
#error "define only one of NGCC_NIST_KEM and NGCC_NIST_SIG"
#endif
#if !defined(NGCC_NIST_KEM) && !defined(NGCC_NIST_SIG)
#error "define NGCC_NIST_KEM or NGCC_NIST_SIG"
#endif

/* NGCC_NS(crypto_kem_keypair) -> PQCLEAN_MLKEM512_CLEAN_crypto_kem_keypair
 * (or crypto_kem_keypair with an empty prefix). */
#define NGCC_PASTE_(a, b) a##b
#define NGCC_PASTE(a, b) NGCC_PASTE_(a, b)
#define NGCC_NS(name) NGCC_PASTE(NGCC_NIST_PREFIX, name)
#define NGCC_STR_(x) #x
#define NGCC_STR(x) NGCC_STR_(x)

#ifdef NGCC_NIST_NAMES
#define NGCC_PK_BYTES ((unsigned long long)(NGCC_NIST_PK_BYTES))
#define NGCC_SK_BYTES ((unsigned long long)(NGCC_NIST_SK_BYTES))
#ifdef NGCC_NIST_KEM
#define NGCC_CRYPTO_BYTES ((unsigned long long)(NGCC_NIST_SS_BYTES))
#define NGCC_CT_BYTES ((unsigned long long)(NGCC_NIST_CT_BYTES))
#define NGCC_KEM_KEYPAIR NGCC_NIST_KEYPAIR
#define NGCC_KEM_ENC NGCC_NIST_ENC
#define NGCC_KEM_DEC NGCC_NIST_DEC
#else
#define NGCC_CRYPTO_BYTES ((unsigned long long)(NGCC_NIST_SIG_BYTES))
#define NGCC_SIGN_KEYPAIR NGCC_NIST_KEYPAIR
#define NGCC_SIGN_SIGNATURE NGCC_NIST_SIGNATURE
#define NGCC_SIGN_VERIFY NGCC_NIST_VERIFY
#endif
#else
#define NGCC_PK_BYTES ((unsigned long long)(NGCC_NS(CRYPTO_PUBLICKEYBYTES)))
#define NGCC_SK_BYTES ((unsigned long long)(NGCC_NS(CRYPTO_SECRETKEYBYTES)))
#define NGCC_CRYPTO_BYTES ((unsigned long long)(NGCC_NS(CRYPTO_BYTES)))
#define NGCC_CT_BYTES ((unsigned long long)(NGCC_NS(CRYPTO_CIPHERTEXTBYTES)))
#define NGCC_KEM_KEYPAIR NGCC_NS(crypto_kem_keypair)
#define NGCC_KEM_ENC NGCC_NS(crypto_kem_enc)
#define NGCC_KEM_DEC NGCC_NS(crypto_kem_dec)
#define NGCC_SIGN_KEYPAIR NGCC_NS(crypto_sign_keypair)
#define NGCC_SIGN_SIGNATURE NGCC_NS(crypto_sign_signature)
#define NGCC_SIGN_VERIFY NGCC_NS(crypto_sign_verify)
#endif

/* Errors beyond -1 (ICCS lets submitters use -1..-99). */
#define NGCC_ERR_BADLEN (-2) /* an input length is too small / too large */
#define NGCC_ERR_SCHEME (-3) /* the scheme's function reported failure */

const char *ngcc_nist_prefix(void);
unsigned long long ngcc_nist_sk_bytes(void);

const char *ngcc_nist_prefix(void) { return NGCC_STR(NGCC_NIST_PREFIX); }

unsigned long long ngcc_nist_sk_bytes(void) { return NGCC_SK_BYTES; }

#ifdef NGCC_NIST_KEM

unsigned long long kem_get_pk_len_bytes(void);
unsigned long long kem_get_sk_len_bytes(void);
unsigned long long kem_get_ss_len_bytes(void);
unsigned long long kem_get_ct_len_bytes(void);
int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len);
int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len, unsigned char *ct,
            unsigned long long *ct_len);
int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len, unsigned char *ss,
            unsigned long long *ss_len);

unsigned long long kem_get_pk_len_bytes(void) { return NGCC_PK_BYTES; }
unsigned long long kem_get_sk_len_bytes(void) { return NGCC_SK_BYTES; }
unsigned long long kem_get_ss_len_bytes(void) { return NGCC_CRYPTO_BYTES; }
unsigned long long kem_get_ct_len_bytes(void) { return NGCC_CT_BYTES; }

int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    if (NGCC_KEM_KEYPAIR(pk, sk) != 0) return NGCC_ERR_SCHEME;
    if (pk_len != NULL) *pk_len = NGCC_PK_BYTES;
    if (sk_len != NULL) *sk_len = NGCC_SK_BYTES;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len, unsigned char *ct,
            unsigned long long *ct_len) {
    if (pk_len < NGCC_PK_BYTES) return NGCC_ERR_BADLEN;
    if (NGCC_KEM_ENC(ct, ss, pk) != 0) return NGCC_ERR_SCHEME;
    if (ss_len != NULL) *ss_len = NGCC_CRYPTO_BYTES;
    if (ct_len != NULL) *ct_len = NGCC_CT_BYTES;
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len, unsigned char *ss,
            unsigned long long *ss_len) {
    if (sk_len < NGCC_SK_BYTES || ct_len < NGCC_CT_BYTES) return NGCC_ERR_BADLEN;
    /* A scheme's return value may be derived from the secret (HQC's is its ciphertext comparison):
     * no branch on it here, or the constant-time check would flag the harness's own code. The caller
     * sees -1 (ICCS: decapsulation failure) or 0, computed without a jump. */
    int rc = NGCC_KEM_DEC(ss, ct, sk);
    if (ss_len != NULL) *ss_len = NGCC_CRYPTO_BYTES;
    unsigned u = (unsigned)rc;
    return -(int)((u | (0u - u)) >> (sizeof(unsigned) * 8 - 1));
}

#ifdef NGCC_NIST_NAMES
/* The NIST entry points under fixed names, for the KAT driver (spelled out: a
 * scheme header may #define crypto_kem_keypair, which NGCC_NS would expand). */
int ngcc_nist_crypto_kem_keypair(unsigned char *pk, unsigned char *sk);
int ngcc_nist_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int ngcc_nist_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);

int ngcc_nist_crypto_kem_keypair(unsigned char *pk, unsigned char *sk) { return NGCC_KEM_KEYPAIR(pk, sk); }
int ngcc_nist_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) { return NGCC_KEM_ENC(ct, ss, pk); }
int ngcc_nist_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) { return NGCC_KEM_DEC(ss, ct, sk); }
#endif

#endif /* NGCC_NIST_KEM */

#ifdef NGCC_NIST_SIG

unsigned long long sig_get_pk_len_bytes(void);
unsigned long long sig_get_sk_len_bytes(void);
unsigned long long sig_get_sn_len_bytes(void);
int sig_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len);
int sig_sign(unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len, unsigned char *sn,
             unsigned long long *sn_len);
int sig_verify(unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len, unsigned char *m,
               unsigned long long m_len);

unsigned long long sig_get_pk_len_bytes(void) { return NGCC_PK_BYTES; }
unsigned long long sig_get_sk_len_bytes(void) { return NGCC_SK_BYTES; }
unsigned long long sig_get_sn_len_bytes(void) { return NGCC_CRYPTO_BYTES; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    if (NGCC_SIGN_KEYPAIR(pk, sk) != 0) return NGCC_ERR_SCHEME;
    if (pk_len != NULL) *pk_len = NGCC_PK_BYTES;
    if (sk_len != NULL) *sk_len = NGCC_SK_BYTES;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len, unsigned char *sn,
             unsigned long long *sn_len) {
    size_t siglen = 0;

    if (sk_len < NGCC_SK_BYTES || m_len > (unsigned long long)SIZE_MAX) return NGCC_ERR_BADLEN;
    if (NGCC_SIGN_SIGNATURE(sn, &siglen, m, (size_t)m_len, sk) != 0) return NGCC_ERR_SCHEME;
    if (sn_len != NULL) *sn_len = (unsigned long long)siglen;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len, unsigned char *m,
               unsigned long long m_len) {
    if (pk_len < NGCC_PK_BYTES || sn_len > NGCC_CRYPTO_BYTES || m_len > (unsigned long long)SIZE_MAX) return -1;
    return NGCC_SIGN_VERIFY(sn, (size_t)sn_len, m, (size_t)m_len, pk) == 0 ? 0 : -1;
}

#ifdef NGCC_NIST_NAMES
int ngcc_nist_crypto_sign_keypair(unsigned char *pk, unsigned char *sk);
int ngcc_nist_crypto_sign(unsigned char *sm, size_t *smlen, const unsigned char *m, size_t mlen, const unsigned char *sk);
int ngcc_nist_crypto_sign_open(unsigned char *m, size_t *mlen, const unsigned char *sm, size_t smlen, const unsigned char *pk);

int ngcc_nist_crypto_sign_keypair(unsigned char *pk, unsigned char *sk) { return NGCC_SIGN_KEYPAIR(pk, sk); }
int ngcc_nist_crypto_sign(unsigned char *sm, size_t *smlen, const unsigned char *m, size_t mlen, const unsigned char *sk) {
    return NGCC_NIST_SIGN(sm, smlen, m, mlen, sk);
}
int ngcc_nist_crypto_sign_open(unsigned char *m, size_t *mlen, const unsigned char *sm, size_t smlen, const unsigned char *pk) {
    return NGCC_NIST_OPEN(m, mlen, sm, smlen, pk);
}
#endif

#endif /* NGCC_NIST_SIG */
