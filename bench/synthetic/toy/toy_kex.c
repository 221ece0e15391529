/*
 * Synthetic two-pass key exchange (NOT SECURE). init_a / init_b: sk <- DRNG, pk = mix(sk);
 * pass1 (A): a <- DRNG, M1 = Sta = a; pass2 (B): b <- DRNG, M2 = b, Stb = mix(M1 || b);
 * derive_a: SS = mix(Sta || M2); derive_b: SS = Stb. Each step first spins its SYNTH_<STEP>
 * iterations (the instance's defines).
 */
#include <string.h>

#include "KEX_AlgorithmInstance.h"
#include "synth_toy.h"

#ifndef SYNTH_INIT_A
#define SYNTH_INIT_A 0
#endif
#ifndef SYNTH_INIT_B
#define SYNTH_INIT_B 0
#endif
#ifndef SYNTH_PASS1
#define SYNTH_PASS1 0
#endif
#ifndef SYNTH_PASS2
#define SYNTH_PASS2 0
#endif
#ifndef SYNTH_DERIVE_A
#define SYNTH_DERIVE_A 0
#endif
#ifndef SYNTH_DERIVE_B
#define SYNTH_DERIVE_B 0
#endif

#define N SYNTH_MIX_BYTES

unsigned long long kex_get_passes_num(void) { return 2; }
unsigned long long kex_get_pk_len_bytes(void) { return N; }
unsigned long long kex_get_sk_len_bytes(void) { return N; }
unsigned long long kex_get_sta_len_bytes(void) { return N; }
unsigned long long kex_get_stb_len_bytes(void) { return N; }
unsigned long long kex_get_ss_len_bytes(void) { return N; }
unsigned long long kex_get_total_msg_len_bytes(void) { return 2 * N; }

static int keys(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    if (synth_random(sk, N) != 0) return -1;
    synth_mix(8, sk, 8 * N, pk);
    *pk_len = N;
    *sk_len = N;
    return 0;
}

static void join_mix(uint64_t tag, const unsigned char *x, const unsigned char *y, unsigned char *out) {
    unsigned char in[2 * N];
    memcpy(in, x, N);
    memcpy(in + N, y, N);
    synth_mix(tag, in, 8 * sizeof in, out);
}

int kex_init_a(unsigned char *pka, unsigned long long *pka_len, unsigned char *ska, unsigned long long *ska_len,
               unsigned char *sta, unsigned long long *sta_len) {
    synth_spin(SYNTH_INIT_A);
    memset(sta, 0, N);
    *sta_len = N;
    return keys(pka, pka_len, ska, ska_len);
}

int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len, unsigned char *skb, unsigned long long *skb_len,
               unsigned char *stb, unsigned long long *stb_len) {
    synth_spin(SYNTH_INIT_B);
    memset(stb, 0, N);
    *stb_len = N;
    return keys(pkb, pkb_len, skb, skb_len);
}

int kex_generate_pass1_msg_a(unsigned char *ska, unsigned long long ska_len, unsigned char *pkb, unsigned long long pkb_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m1, unsigned long long *m1_len) {
    (void)ska, (void)ska_len, (void)pkb, (void)pkb_len;
    synth_spin(SYNTH_PASS1);
    if (synth_random(sta, N) != 0) return -1;
    memcpy(m1, sta, N);
    *sta_len = N;
    *m1_len = N;
    return 0;
}

int kex_generate_pass2_msg_b(unsigned char *skb, unsigned long long skb_len, unsigned char *pka, unsigned long long pka_len,
                             unsigned char *m1, unsigned long long m1_len, unsigned char *stb, unsigned long long *stb_len,
                             unsigned char *m2, unsigned long long *m2_len) {
    (void)skb, (void)skb_len, (void)pka, (void)pka_len;
    synth_spin(SYNTH_PASS2);
    if (m1_len != N) return -2;
    if (synth_random(m2, N) != 0) return -1;
    join_mix(9, m1, m2, stb);
    *stb_len = N;
    *m2_len = N;
    return 1;
}

int kex_derive_ss_a(unsigned char *ska, unsigned long long ska_len, unsigned char *pkb, unsigned long long pkb_len,
                    unsigned char *mb, unsigned long long mb_len, unsigned char *sta, unsigned long long sta_len,
                    unsigned char *ssa, unsigned long long *ssa_len) {
    (void)ska, (void)ska_len, (void)pkb, (void)pkb_len;
    synth_spin(SYNTH_DERIVE_A);
    if (mb_len != N || sta_len != N) return -2;
    join_mix(9, sta, mb, ssa);
    *ssa_len = N;
    return 0;
}

int kex_derive_ss_b(unsigned char *skb, unsigned long long skb_len, unsigned char *pka, unsigned long long pka_len,
                    unsigned char *ma, unsigned long long ma_len, unsigned char *stb, unsigned long long stb_len,
                    unsigned char *ssb, unsigned long long *ssb_len) {
    (void)skb, (void)skb_len, (void)pka, (void)pka_len, (void)ma, (void)ma_len;
    synth_spin(SYNTH_DERIVE_B);
    if (stb_len != N) return -2;
    memcpy(ssb, stb, N);
    *ssb_len = N;
    return 0;
}
