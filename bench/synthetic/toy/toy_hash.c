/*
 * Synthetic hash (NOT SECURE): digest = mix(message bits), after a spin of SYNTH_HASH_BASE
 * iterations plus SYNTH_HASH_PER_KIB per 1024 message bytes (the instance's defines), so the cost
 * grows with the message as a real hash's does.
 */
#include "CryptHash_AlgorithmInstance.h"
#include "synth_toy.h"

#ifndef SYNTH_HASH_BASE
#define SYNTH_HASH_BASE 0
#endif
#ifndef SYNTH_HASH_PER_KIB
#define SYNTH_HASH_PER_KIB 0
#endif

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest) {
    synth_spin(SYNTH_HASH_BASE + (unsigned long long)SYNTH_HASH_PER_KIB * (msg_len_bits / 8) / 1024);
    if (digest_len_bits != DIGEST_BIT_LENGTH || digest == NULL || (msg == NULL && msg_len_bits > 0)) return -1;
    synth_mix(7, msg, msg_len_bits, digest);
    return 0;
}
