/* The ICCS KEX API (KEX_AlgorithmInstance.h), as the toy fixture needs it. */
#ifndef KEX_ALGORITHM_INSTANCE_H
#define KEX_ALGORITHM_INSTANCE_H
unsigned long long kex_get_passes_num(void);
unsigned long long kex_get_pk_len_bytes(void);
unsigned long long kex_get_sk_len_bytes(void);
unsigned long long kex_get_sta_len_bytes(void);
unsigned long long kex_get_stb_len_bytes(void);
unsigned long long kex_get_ss_len_bytes(void);
unsigned long long kex_get_total_msg_len_bytes(void);
int kex_init_a(unsigned char *pka, unsigned long long *pka_len, unsigned char *ska, unsigned long long *ska_len,
               unsigned char *sta, unsigned long long *sta_len);
int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len, unsigned char *skb, unsigned long long *skb_len,
               unsigned char *stb, unsigned long long *stb_len);
int kex_generate_pass1_msg_a(unsigned char *ska, unsigned long long ska_len, unsigned char *pkb, unsigned long long pkb_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m1, unsigned long long *m1_len);
int kex_generate_pass2_msg_b(unsigned char *skb, unsigned long long skb_len, unsigned char *pka, unsigned long long pka_len,
                             unsigned char *m1, unsigned long long m1_len, unsigned char *stb, unsigned long long *stb_len,
                             unsigned char *m2, unsigned long long *m2_len);
int kex_derive_ss_a(unsigned char *ska, unsigned long long ska_len, unsigned char *pkb, unsigned long long pkb_len,
                    unsigned char *mb, unsigned long long mb_len, unsigned char *sta, unsigned long long sta_len,
                    unsigned char *ssa, unsigned long long *ssa_len);
int kex_derive_ss_b(unsigned char *skb, unsigned long long skb_len, unsigned char *pka, unsigned long long pka_len,
                    unsigned char *ma, unsigned long long ma_len, unsigned char *stb, unsigned long long stb_len,
                    unsigned char *ssb, unsigned long long *ssb_len);
#endif
