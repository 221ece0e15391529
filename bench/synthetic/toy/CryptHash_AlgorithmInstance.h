/* The ICCS hash API, as the synthetic toy implements it (bench/synthetic/toy/toy_hash.c). */
#ifndef CRYPTHASH_ALGORITHMINSTANCE_H
#define CRYPTHASH_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "Synthetic-Hash"
#define DIGEST_BIT_LENGTH 256
#define OUTPUT_BLANK_TEST_VECTORS 0

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest);

#endif
