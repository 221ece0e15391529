/* ICCS KEM API over PQClean's ML-KEM-512 clean implementation. */
#include "KEM_AlgorithmInstance.h"

#include "api.h"

#include <stddef.h>

#define PK_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_PUBLICKEYBYTES
#define SK_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_SECRETKEYBYTES
#define CT_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_CIPHERTEXTBYTES
#define SS_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_BYTES

#define ERR_FAILURE (-1)
#define ERR_ARGUMENT (-2)

unsigned long long kem_get_pk_len_bytes(void) { return PK_BYTES; }
unsigned long long kem_get_sk_len_bytes(void) { return SK_BYTES; }
unsigned long long kem_get_ss_len_bytes(void) { return SS_BYTES; }
unsigned long long kem_get_ct_len_bytes(void) { return CT_BYTES; }

int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len)
{
    if (pk == NULL || pk_len == NULL || sk == NULL || sk_len == NULL)
        return ERR_ARGUMENT;
    if (PQCLEAN_MLKEM512_CLEAN_crypto_kem_keypair(pk, sk) != 0)
        return ERR_FAILURE;
    *pk_len = PK_BYTES;
    *sk_len = SK_BYTES;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len,
            unsigned char *ct, unsigned long long *ct_len)
{
    if (pk == NULL || pk_len != PK_BYTES || ss == NULL || ss_len == NULL || ct == NULL || ct_len == NULL)
        return ERR_ARGUMENT;
    if (PQCLEAN_MLKEM512_CLEAN_crypto_kem_enc(ct, ss, pk) != 0)
        return ERR_FAILURE;
    *ss_len = SS_BYTES;
    *ct_len = CT_BYTES;
    return 0;
}

/* ML-KEM rejects implicitly: a corrupted ciphertext still yields 0 and a
 * pseudorandom secret, so -1 only comes from unusable arguments. */
int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len,
            unsigned char *ss, unsigned long long *ss_len)
{
    if (sk == NULL || sk_len != SK_BYTES || ct == NULL || ct_len != CT_BYTES || ss == NULL || ss_len == NULL)
        return ERR_FAILURE;
    if (PQCLEAN_MLKEM512_CLEAN_crypto_kem_dec(ss, ct, sk) != 0)
        return ERR_FAILURE;
    *ss_len = SS_BYTES;
    return 0;
}
