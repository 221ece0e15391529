/*
 * The ICCS helper baseline (docs/method.md#the-iccs-helper-baseline): one helper of the ICCS helper
 * library (../auxfunc.c) at one output length, behind CryptHash, so that the hash timing job times
 * it exactly as it times a candidate. The build chooses both with -D macros, one library per
 * (helper, length):
 *   ICCS_BASELINE_HELPER  sm3hash, pseudohash or pseudoXOF
 *   ICCS_BASELINE_BITS    the output length in bits (the instance's digest_bits)
 * The helpers take whole bytes only, so this is no CryptHash for the official KAT (its KAT_2_12 has
 * partial bytes): the baseline is timed, not KAT-checked.
 */
#include "auxfunc.h"

#ifndef ICCS_BASELINE_HELPER
#error "define ICCS_BASELINE_HELPER (sm3hash, pseudohash or pseudoXOF)"
#endif
#ifndef ICCS_BASELINE_BITS
#error "define ICCS_BASELINE_BITS (the output length in bits)"
#endif

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest);

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest) {
    /* A caller asking for another length would time another instance under this label. */
    if (digest_len_bits != ICCS_BASELINE_BITS) return -1;
    return ICCS_BASELINE_HELPER(digest_len_bits, msg, msg_len_bits, digest);
}
