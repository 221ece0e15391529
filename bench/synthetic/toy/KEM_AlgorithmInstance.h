/* The ICCS KEM API, as the synthetic toy implements it (bench/synthetic/toy/toy_kem.c). */
#ifndef KEM_ALGORITHM_INSTANCE_H
#define KEM_ALGORITHM_INSTANCE_H

#define ALGORITHM_INSTANCE "Synthetic-KEM"
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
