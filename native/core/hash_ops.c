#include "hash_ops.h"
#include <stdlib.h>
#include <string.h>

static int do_hash(ctx_t *c) { return c->api.crypt_hash(c->api.digest_bits, c->msg.p, 8ull * c->msg_bytes, c->digest.p); }

void hash_alloc(ctx_t *c) {
    c->digest_len = ((unsigned long long)c->api.digest_bits + 7) / 8;
    guarded_alloc(&c->digest, (size_t)c->digest_len, "digest");
}

void hash_fill_message(unsigned char *p, unsigned long long bytes) {
    for (unsigned long long i = 0; i < bytes; i++) p[i] = (unsigned char)((i * 131 + bytes) % 256);
}

op_fn hash_prepare(ctx_t *c, const char *op) {
    char *end = NULL;
    unsigned long long bytes = strncmp(op, "hash_", 5) == 0 ? strtoull(op + 5, &end, 10) : 0;
    if (!end || *end || end == op + 5 || bytes > HASH_MAX_MESSAGE_BYTES)
        fail(EXIT_USAGE, "USAGE", "unknown hash operation %s (hash_<bytes>, at most %d bytes)", op, HASH_MAX_MESSAGE_BYTES);
    c->msg_bytes = bytes;
    guarded_alloc(&c->msg, (size_t)bytes, "message");
    hash_fill_message(c->msg.p, bytes);
    return do_hash;
}

void hash_spot_agrees(ctx_t *c, unsigned long long call) {
    unsigned char *kept = malloc((size_t)c->digest_len);
    if (!kept) fail(EXIT_IOERROR, "ERROR", "out of memory for a spot check");
    memcpy(kept, c->digest.p, (size_t)c->digest_len);
    random_fill(c->digest.p, (size_t)c->digest_len);
    int rc = do_hash(c);
    int differs = memcmp(kept, c->digest.p, (size_t)c->digest_len) != 0;
    free(kept);
    if (rc != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "spot check of call %llu: CryptHash of the same message returned %d", call, rc);
    if (differs) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "spot check of call %llu: CryptHash gave another digest for the same message", call);
}
