/*
 * ICCS helper functions. All lengths are in BITS.
 * Each function returns 0 on success and -1 on an invalid argument.
 */
#ifndef ICCS_AUXFUNC_H
#define ICCS_AUXFUNC_H

/* SM3 (GB/T 32905); digest_len_bits must be 256. */
int sm3hash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest);

/* Wide placeholder hash (HMAC-SM3 cascade); digest_len_bits in {512, 768, 1024}. */
int pseudohash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest);

/* Placeholder XOF: the SM2 key-derivation function over msg. */
int pseudoXOF(unsigned long long out_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *out);

#endif
