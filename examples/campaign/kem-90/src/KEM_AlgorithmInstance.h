/*
 * ML-KEM-512 (PQClean "clean" code) behind the ICCS KEM API, with all hashing
 * and randomness routed through the ICCS helpers (see iccs_symmetric.c).
 * Lengths are in bytes. Return values: 0 on success; -1 when PQClean reports
 * failure (kem_dec: any decapsulation failure, including a wrong-size input);
 * -2 from kem_keygen/kem_enc on a NULL pointer or a wrong-size key.
 */
#ifndef KEM_ALGORITHM_INSTANCE_H
#define KEM_ALGORITHM_INSTANCE_H

#define ALGORITHM_INSTANCE "ML-KEM-512-ICCS"
#define OUTPUT_BLANK_TEST_VECTORS 0

unsigned long long kem_get_pk_len_bytes(void);
unsigned long long kem_get_sk_len_bytes(void);
unsigned long long kem_get_ss_len_bytes(void);
unsigned long long kem_get_ct_len_bytes(void);

int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len);
int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len,
            unsigned char *ct, unsigned long long *ct_len);
int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len,
            unsigned char *ss, unsigned long long *ss_len);

#endif
