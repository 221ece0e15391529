/*
 * Synthetic KEM (NOT SECURE). keygen: r <- DRNG, pk = mix(r), sk = r || pk; enc: m <- DRNG,
 * ct = m XOR mix(pk), ss = mix(pk || m); dec recovers m from ct and sk's pk. Each operation first
 * spins SYNTH_KEYGEN, SYNTH_ENC or SYNTH_DEC iterations (the instance's defines).
 */
#include "KEM_AlgorithmInstance.h"
#include "synth_toy.h"

#ifndef SYNTH_KEYGEN
#define SYNTH_KEYGEN 0
#endif
#ifndef SYNTH_ENC
#define SYNTH_ENC 0
#endif
#ifndef SYNTH_DEC
#define SYNTH_DEC 0
#endif

#define N SYNTH_MIX_BYTES

unsigned long long kem_get_pk_len_bytes(void) { return N; }
unsigned long long kem_get_sk_len_bytes(void) { return 2 * N; }
unsigned long long kem_get_ct_len_bytes(void) { return N; }
unsigned long long kem_get_ss_len_bytes(void) { return N; }

static void secret_of(const unsigned char *pk, const unsigned char *m, unsigned char *ss) {
    unsigned char buf[2 * N];
    size_t i;
    for (i = 0; i < N; i++) buf[i] = pk[i], buf[N + i] = m[i];
    synth_mix(3, buf, 8 * sizeof buf, ss);
}

static void mask(const unsigned char *pk, const unsigned char *in, unsigned char *out) {
    unsigned char k[N];
    size_t i;
    synth_mix(2, pk, 8 * N, k);
    for (i = 0; i < N; i++) out[i] = (unsigned char)(in[i] ^ k[i]);
}

int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    size_t i;
    synth_spin(SYNTH_KEYGEN);
    if (pk == NULL || pk_len == NULL || sk == NULL || sk_len == NULL) return -2;
    if (synth_random(sk, N) != 0) return -3;
    synth_mix(1, sk, 8 * N, pk);
    for (i = 0; i < N; i++) sk[N + i] = pk[i];
    *pk_len = N;
    *sk_len = 2 * N;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len,
            unsigned char *ct, unsigned long long *ct_len) {
    unsigned char m[N];
    synth_spin(SYNTH_ENC);
    if (pk == NULL || ss == NULL || ss_len == NULL || ct == NULL || ct_len == NULL || pk_len != N) return -2;
    if (synth_random(m, N) != 0) return -3;
    mask(pk, m, ct);
    secret_of(pk, m, ss);
    *ct_len = N;
    *ss_len = N;
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len,
            unsigned char *ss, unsigned long long *ss_len) {
    unsigned char m[N];
    synth_spin(SYNTH_DEC);
    if (sk == NULL || ct == NULL || ss == NULL || ss_len == NULL || sk_len != 2 * N || ct_len != N) return -1;
    mask(sk + N, ct, m);
    secret_of(sk + N, m, ss);
    *ss_len = N;
    return 0;
}
