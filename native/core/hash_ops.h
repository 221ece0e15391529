/* The hash operations (type hash:BITS): CryptHash of the guide's S1–S8 messages, one op per length,
 * `hash_<bytes>`; message byte i is (i*131 + bytes) mod 256 (docs/method.md#hash-functions). */
#ifndef NGCC_HASH_OPS_H
#define NGCC_HASH_OPS_H
#include "ops.h"

/* The longest message an op may name: S8 of the guide. */
#define HASH_MAX_MESSAGE_BYTES 65536

/* The digest buffer (api.digest_bits, rounded up to bytes). */
void hash_alloc(ctx_t *c);
/* Parses `hash_<bytes>`, fills the message and returns the op; USAGE failure for another name. */
op_fn hash_prepare(ctx_t *c, const char *op);
/* The guide's message of `bytes` bytes, into p. */
void hash_fill_message(unsigned char *p, unsigned long long bytes);
/* Spot check: the digest kept from a measured call equals a fresh CryptHash of the same message. */
void hash_spot_agrees(ctx_t *c, unsigned long long call);
#endif
