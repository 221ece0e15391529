/*
 * A two-pass key exchange on PQClean's ML-KEM-512 (FIPS 203), B authenticated by its long-term key.
 *
 *   init_a, init_b  long-term (pk, sk) = ML-KEM.KeyGen(64 DRNG bytes); empty state
 *   pass 1 (A)      (ek, dk) = ML-KEM.KeyGen(64 DRNG bytes); (c1, K1) = ML-KEM.Encaps(pkB, 32 DRNG bytes)
 *                   M1 = ek || c1 (1568 bytes); StA = dk || K1
 *   pass 2 (B)      K1 = ML-KEM.Decaps(skB, c1); (c2, K2) = ML-KEM.Encaps(ek, 32 DRNG bytes)
 *                   M2 = c2 (768 bytes); StB = SS = SHA3-256(K1 || K2); the exchange is complete
 *   derive_a        K2 = ML-KEM.Decaps(dk, M2); SS = SHA3-256(K1 || K2)     derive_b  SS = StB
 *
 * Every random byte comes from the ICCS DRNG (drng_algorithm), one get_random_number call per
 * KeyGen or Encaps, through PQClean's deterministic entry points: so the KAT is a function of the
 * generator's seeds alone, and a separate program linked against PQClean can replay it.
 * Output lengths are written, never read: the caller's buffers are the sizes the kex_get_* functions
 * give (KAT_KEX.c passes a message length of 0 in). An example for the harness, not a vetted
 * protocol: A is not authenticated.
 */
#include "KEX_AlgorithmInstance.h"

#include "drng.h"
#include "fips202.h"
#include "kem.h"
#include "randombytes.h"

#include <stddef.h>
#include <string.h>

#define PK_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_PUBLICKEYBYTES
#define SK_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_SECRETKEYBYTES
#define CT_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_CIPHERTEXTBYTES
#define K_BYTES PQCLEAN_MLKEM512_CLEAN_CRYPTO_BYTES
#define KEYGEN_COINS 64
#define ENCAPS_COINS 32

#define M1_BYTES (PK_BYTES + CT_BYTES)
#define M2_BYTES CT_BYTES
#define STA_BYTES (SK_BYTES + K_BYTES)
#define SS_BYTES 32

#define ERR_FAILURE (-1)
#define ERR_ARGUMENT (-2)

unsigned long long kex_get_passes_num(void) { return 2; }
unsigned long long kex_get_pk_len_bytes(void) { return PK_BYTES; }
unsigned long long kex_get_sk_len_bytes(void) { return SK_BYTES; }
unsigned long long kex_get_sta_len_bytes(void) { return STA_BYTES; }
unsigned long long kex_get_stb_len_bytes(void) { return SS_BYTES; }
unsigned long long kex_get_ss_len_bytes(void) { return SS_BYTES; }
unsigned long long kex_get_total_msg_len_bytes(void) { return M1_BYTES + M2_BYTES; }

/* PQClean's randomized KeyGen and Encaps call this; the exchange itself uses the _derand forms. */
int PQCLEAN_randombytes(uint8_t *output, size_t n) {
    return get_random_number(&drng_algorithm, output, 8 * (unsigned long long)n) == 0 ? 0 : -1;
}

static int keygen(unsigned char *pk, unsigned char *sk) {
    unsigned char coins[KEYGEN_COINS];
    if (get_random_number(&drng_algorithm, coins, 8 * KEYGEN_COINS) != 0) return ERR_FAILURE;
    return PQCLEAN_MLKEM512_CLEAN_crypto_kem_keypair_derand(pk, sk, coins) == 0 ? 0 : ERR_FAILURE;
}

static int encaps(unsigned char *ct, unsigned char *k, const unsigned char *pk) {
    unsigned char coins[ENCAPS_COINS];
    if (get_random_number(&drng_algorithm, coins, 8 * ENCAPS_COINS) != 0) return ERR_FAILURE;
    return PQCLEAN_MLKEM512_CLEAN_crypto_kem_enc_derand(ct, k, pk, coins) == 0 ? 0 : ERR_FAILURE;
}

/* SS = SHA3-256(K1 || K2): both KEM secrets, so the secret needs B's long-term key and A's ephemeral one. */
static void combine(unsigned char *ss, const unsigned char *k1, const unsigned char *k2) {
    unsigned char in[2 * K_BYTES];
    memcpy(in, k1, K_BYTES);
    memcpy(in + K_BYTES, k2, K_BYTES);
    sha3_256(ss, in, sizeof in);
}

static int init(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len,
                unsigned char *st, unsigned long long *st_len) {
    if (pk == NULL || pk_len == NULL || sk == NULL || sk_len == NULL || st_len == NULL) return ERR_ARGUMENT;
    (void)st;
    if (keygen(pk, sk) != 0) return ERR_FAILURE;
    *pk_len = PK_BYTES;
    *sk_len = SK_BYTES;
    *st_len = 0;
    return 0;
}

int kex_init_a(unsigned char *pka, unsigned long long *pka_len, unsigned char *ska, unsigned long long *ska_len,
               unsigned char *sta, unsigned long long *sta_len) {
    return init(pka, pka_len, ska, ska_len, sta, sta_len);
}

int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len, unsigned char *skb, unsigned long long *skb_len,
               unsigned char *stb, unsigned long long *stb_len) {
    return init(pkb, pkb_len, skb, skb_len, stb, stb_len);
}

int kex_generate_pass1_msg_a(unsigned char *ska, unsigned long long ska_len, unsigned char *pkb, unsigned long long pkb_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m1, unsigned long long *m1_len) {
    (void)ska, (void)ska_len;
    if (pkb == NULL || pkb_len != PK_BYTES || sta == NULL || sta_len == NULL || m1 == NULL || m1_len == NULL)
        return ERR_ARGUMENT;
    /* M1 = ek || c1, StA = dk || K1 */
    if (keygen(m1, sta) != 0) return ERR_FAILURE;
    if (encaps(m1 + PK_BYTES, sta + SK_BYTES, pkb) != 0) return ERR_FAILURE;
    *sta_len = STA_BYTES;
    *m1_len = M1_BYTES;
    return 0;
}

int kex_generate_pass2_msg_b(unsigned char *skb, unsigned long long skb_len, unsigned char *pka, unsigned long long pka_len,
                             unsigned char *m1, unsigned long long m1_len, unsigned char *stb, unsigned long long *stb_len,
                             unsigned char *m2, unsigned long long *m2_len) {
    unsigned char k1[K_BYTES], k2[K_BYTES];
    (void)pka, (void)pka_len;
    if (skb == NULL || skb_len != SK_BYTES || m1 == NULL || m1_len != M1_BYTES || stb == NULL || stb_len == NULL ||
        m2 == NULL || m2_len == NULL)
        return ERR_ARGUMENT;
    if (PQCLEAN_MLKEM512_CLEAN_crypto_kem_dec(k1, m1 + PK_BYTES, skb) != 0) return ERR_FAILURE;
    if (encaps(m2, k2, m1) != 0) return ERR_FAILURE;
    combine(stb, k1, k2);
    *stb_len = SS_BYTES;
    *m2_len = M2_BYTES;
    return 1;
}

int kex_derive_ss_a(unsigned char *ska, unsigned long long ska_len, unsigned char *pkb, unsigned long long pkb_len,
                    unsigned char *mb, unsigned long long mb_len, unsigned char *sta, unsigned long long sta_len,
                    unsigned char *ssa, unsigned long long *ssa_len) {
    unsigned char k2[K_BYTES];
    (void)ska, (void)ska_len, (void)pkb, (void)pkb_len;
    if (mb == NULL || mb_len != M2_BYTES || sta == NULL || sta_len != STA_BYTES || ssa == NULL || ssa_len == NULL)
        return ERR_ARGUMENT;
    if (PQCLEAN_MLKEM512_CLEAN_crypto_kem_dec(k2, mb, sta) != 0) return ERR_FAILURE;
    combine(ssa, sta + SK_BYTES, k2);
    *ssa_len = SS_BYTES;
    return 0;
}

int kex_derive_ss_b(unsigned char *skb, unsigned long long skb_len, unsigned char *pka, unsigned long long pka_len,
                    unsigned char *ma, unsigned long long ma_len, unsigned char *stb, unsigned long long stb_len,
                    unsigned char *ssb, unsigned long long *ssb_len) {
    (void)skb, (void)skb_len, (void)pka, (void)pka_len, (void)ma, (void)ma_len;
    if (stb == NULL || stb_len != SS_BYTES || ssb == NULL || ssb_len == NULL) return ERR_ARGUMENT;
    memcpy(ssb, stb, SS_BYTES);
    *ssb_len = SS_BYTES;
    return 0;
}
