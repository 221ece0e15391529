/*
 * Synthetic signature (NOT SECURE: the public key signs). keygen: r <- DRNG, pk = mix(r),
 * sk = r || pk; sign: sn = mix(pk || mix(m)); verify recomputes it. Each operation first spins
 * SYNTH_KEYGEN, SYNTH_SIGN or SYNTH_VERIFY iterations (the instance's defines).
 */
#include "SIG_AlgorithmInstance.h"
#include "synth_toy.h"

#ifndef SYNTH_KEYGEN
#define SYNTH_KEYGEN 0
#endif
#ifndef SYNTH_SIGN
#define SYNTH_SIGN 0
#endif
#ifndef SYNTH_VERIFY
#define SYNTH_VERIFY 0
#endif

#define N SYNTH_MIX_BYTES

unsigned long long sig_get_pk_len_bytes(void) { return N; }
unsigned long long sig_get_sk_len_bytes(void) { return 2 * N; }
unsigned long long sig_get_sn_len_bytes(void) { return N; }

static int tag(const unsigned char *pk, const unsigned char *m, unsigned long long m_len, unsigned char *sn) {
    unsigned char buf[2 * N];
    size_t i;
    if (m_len > (~0ull) / 8) return -1;
    for (i = 0; i < N; i++) buf[i] = pk[i];
    synth_mix(6, m, 8 * m_len, buf + N);
    synth_mix(5, buf, 8 * sizeof buf, sn);
    return 0;
}

int sig_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    size_t i;
    synth_spin(SYNTH_KEYGEN);
    if (pk == NULL || pk_len == NULL || sk == NULL || sk_len == NULL) return -2;
    if (synth_random(sk, N) != 0) return -3;
    synth_mix(4, sk, 8 * N, pk);
    for (i = 0; i < N; i++) sk[N + i] = pk[i];
    *pk_len = N;
    *sk_len = 2 * N;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len,
             unsigned char *sn, unsigned long long *sn_len) {
    synth_spin(SYNTH_SIGN);
    if (sk == NULL || sn == NULL || sn_len == NULL || (m == NULL && m_len != 0) || sk_len != 2 * N) return -2;
    if (tag(sk + N, m, m_len, sn) != 0) return -3;
    *sn_len = N;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len,
               unsigned char *m, unsigned long long m_len) {
    unsigned char expect[N];
    unsigned char diff = 0;
    size_t i;
    synth_spin(SYNTH_VERIFY);
    if (pk == NULL || sn == NULL || (m == NULL && m_len != 0) || pk_len != N || sn_len != N) return -1;
    if (tag(pk, m, m_len, expect) != 0) return -1;
    for (i = 0; i < N; i++) diff |= (unsigned char)(expect[i] ^ sn[i]);
    return diff == 0 ? 0 : -1;
}
