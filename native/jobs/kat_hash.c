/* The hash KAT job of ngcc_driver: one file of the official KAT_CryptHash.c generator per run.
 *   ngcc_driver LIB kat hash:BITS iccs FILE [LIMIT]
 * FILE KAT_2_12 | KAT_2_23 | KAT_2_33 | KAT_Loop; BITS the instance's DIGEST_BIT_LENGTH. LIMIT (0 or
 * absent: the generator's own) is the number of KAT_2_12 records or KAT_Loop iterations, as a
 * kat.sha256 `:N` asks (docs/evidence-format.md#katsha256).
 * Each file draws its messages from its own ICCS DRNG seeded with the file's 8-character name
 * repeated 8 times; the DRNG is the harness's (native/iccs/drng.c), not the library's: the messages
 * are the same for every submission, and a library need not carry a DRNG to be hashed.
 * Record layouts as kex-hash.md gives them from the ICCS file: KAT_2_12 `Msg_Len`, `Msg`, `Dst_Len`,
 * `Dst` for 0..4096 bits; KAT_2_23 / KAT_2_33 three 2^23 / 2^33-bit messages (zeros, ones, the file
 * DRNG's first output) with `Msg_Seed` and `Msg_Exp`; KAT_Loop an 8192-bit
 * message hashed, then rotated and XORed with the digest LIMIT times.
 * Then two fresh messages the library cannot know in advance (getrandom), only with KAT_2_12: each
 * hashed twice must give one digest, and one flipped bit another.
 * A field `piece=FROM:TO` (native/jobs/kat.c) computes records FROM..TO-1 of KAT_2_12 (the earlier
 * lengths' messages still drawn; the fresh messages in the piece marked `:fresh`) or of the three
 * messages of KAT_2_23 / KAT_2_33 (only the third draws, and nothing before it). KAT_Loop refuses it:
 * each iteration hashes the last one's output. */
#include "core/harness.h"
#include "jobs.h"
#include "iccs/drng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KAT_2_12_MAX_BITS 4096
#define LOOP_MESSAGE_BITS 8192
#define LOOP_ITERATIONS 1000000ull

static FILE *out;
static api_t a;
static guarded_t digest;

static void put_hex(const char *key, const unsigned char *p, unsigned long long n) {
    fprintf(out, "%s = ", key);
    for (unsigned long long i = 0; i < n; i++) fprintf(out, "%02X", p[i]);
    fputc('\n', out);
}

static void seed_file_drng(DRNG_ctx *d, const char *file) {
    unsigned char seed[64];
    for (int i = 0; i < 64; i++) seed[i] = (unsigned char)file[i % 8] ^ (kat_unseen ? kat_unseen_seed[i] : 0);
    if (init_random_number(d, seed, sizeof seed) != 0) fail(EXIT_IOERROR, "ERROR", "the harness DRNG refused its seed");
}

static void draw(DRNG_ctx *d, unsigned char *p, unsigned long long bits) {
    if (get_random_number(d, p, bits) != 0) fail(EXIT_IOERROR, "ERROR", "the harness DRNG refused %llu bits", bits);
}

/* CryptHash into the guarded digest; the message must come back untouched where guarded. */
static void hash(const unsigned char *msg, unsigned long long bits, const char *what) {
    int rc = a.crypt_hash(a.digest_bits, msg, bits, digest.p);
    char why[200];
    if (rc != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s: CryptHash returned %d", what, rc);
    if (guarded_violated(&digest, why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s: %s", what, why);
}

static void put_digest(void) {
    fprintf(out, "Dst_Len = %d\n", a.digest_bits);
    put_hex("Dst", digest.p, digest.len);
}

static void kat_2_12(unsigned long long limit) {
    DRNG_ctx d;
    guarded_t msg;
    char what[64];
    seed_file_drng(&d, "KAT_2_12");
    guarded_alloc(&msg, KAT_2_12_MAX_BITS / 8, "message");
    unsigned long long records = limit && limit < KAT_2_12_MAX_BITS + 1 ? limit : KAT_2_12_MAX_BITS + 1;
    kat_piece_range(records);
    for (unsigned long long len = 0; len < kat_to; len++) {
        memset(msg.p, 0, msg.len);
        draw(&d, msg.p, len);
        if (len < kat_from) continue; /* another piece's record: its message drawn, as in the serial run */
        snprintf(what, sizeof what, "Msg_Len = %llu", len);
        hash(msg.p, len, what);
        if (guarded_violated(&msg, what, sizeof what)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", what);
        fprintf(out, "Msg_Len = %llu\n", len);
        put_hex("Msg", msg.p, (len + 7) / 8);
        put_digest();
        fputc('\n', out);
    }
    /* Fresh messages: a table of answers to the official ones passes the digest, not these. */
    unsigned char *first = malloc(digest.len);
    if (!first) fail(EXIT_IOERROR, "ERROR", "out of memory");
    for (int f = 0; f < (kat_fresh ? 2 : 0); f++) {
        unsigned long long len = 8 + (unsigned long long)f * 1000;
        random_fill(msg.p, (len + 7) / 8);
        hash(msg.p, len, "fresh message");
        memcpy(first, digest.p, digest.len);
        hash(msg.p, len, "fresh message");
        if (memcmp(first, digest.p, digest.len) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh message %d: two digests of the same %llu bits differ", f, len);
        msg.p[0] ^= 0x80;
        hash(msg.p, len, "fresh message");
        if (memcmp(first, digest.p, digest.len) == 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh message %d: one flipped bit gave the same digest", f);
    }
    free(first);
    guarded_free(&msg);
}

/* The 2^23- and 2^33-bit messages: all zero, all 0xFF, then the first 2^23 (2^33) bits of the file's
 * own DRNG, whose seed (the file name repeated) is what Msg_Seed prints: the official generator draws
 * nothing before that message and seeds no second DRNG. */
static void kat_long(const char *file, unsigned long long bits) {
    DRNG_ctx d;
    unsigned char seed[64];
    size_t bytes = (size_t)(bits / 8);
    for (int i = 0; i < 64; i++) seed[i] = (unsigned char)file[i % 8];
    seed_file_drng(&d, file);
    /* mmap: the 1 GiB of KAT_2_33 is asked of the kernel, and a refusal is said as such. */
    unsigned char *msg = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (msg == MAP_FAILED) fail(EXIT_IOERROR, "ERROR", "%s needs %zu bytes for its message, which the memory limit refuses", file, bytes);
    kat_piece_range(3);
    for (int k = (int)kat_from; k < (int)kat_to; k++) {
        if (k < 2) memset(msg, k == 0 ? 0x00 : 0xFF, bytes);
        else draw(&d, msg, bits);
        char what[64];
        snprintf(what, sizeof what, "%s message %d", file, k);
        hash(msg, bits, what);
        fprintf(out, "Msg_Len = %llu\n", bits);
        if (k < 2) fputs("Msg_Seed = \n", out);
        else put_hex("Msg_Seed", seed, sizeof seed);
        fputs("Msg_Exp = ", out);
        for (int i = 0; i < 8; i++) fprintf(out, "%02X", msg[i]);
        fputs(" .... ", out);
        for (int i = 8; i > 0; i--) fprintf(out, "%02X", msg[bytes - (size_t)i]);
        fputc('\n', out);
        put_digest();
        fputc('\n', out);
    }
    munmap(msg, bytes);
}

static void kat_loop(unsigned long long limit) {
    DRNG_ctx d;
    guarded_t msg;
    size_t n = LOOP_MESSAGE_BITS / 8, dl = digest.len;
    if (dl > n) fail(EXIT_USAGE, "USAGE", "KAT_Loop: a %d-bit digest is longer than the message", a.digest_bits);
    unsigned char *tmp = malloc(dl);
    if (!tmp) fail(EXIT_IOERROR, "ERROR", "out of memory");
    if (kat_piece) fail(EXIT_USAGE, "USAGE", "KAT_Loop cannot be split into pieces: each iteration hashes the last one's output");
    seed_file_drng(&d, "KAT_Loop");
    guarded_alloc(&msg, n, "message");
    draw(&d, msg.p, LOOP_MESSAGE_BITS);
    fprintf(out, "Msg_Len = %d\n", LOOP_MESSAGE_BITS);
    put_hex("Msg", msg.p, n);
    hash(msg.p, LOOP_MESSAGE_BITS, "KAT_Loop");
    unsigned long long iterations = limit ? limit : LOOP_ITERATIONS;
    for (unsigned long long i = 0; i < iterations; i++) {
        memcpy(tmp, msg.p, dl); /* rotate left by the digest's length */
        memmove(msg.p, msg.p + dl, n - dl);
        memcpy(msg.p + n - dl, tmp, dl);
        for (size_t k = 0; k < dl; k++) msg.p[k] ^= digest.p[k];
        hash(msg.p, LOOP_MESSAGE_BITS, "KAT_Loop");
    }
    char why[200];
    if (guarded_violated(&msg, why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", why);
    put_digest();
    fputc('\n', out);
    meta_u64("loop_iterations", iterations);
    free(tmp);
    guarded_free(&msg);
}

int kat_hash_main(int n, char **f) {
    if (n < 5) {
        fprintf(stderr, "usage: ngcc_driver LIB kat hash:BITS iccs KAT_2_12|KAT_2_23|KAT_2_33|KAT_Loop [LIMIT]\n");
        return EXIT_USAGE;
    }
    const char *lib = f[0], *type = f[2], *file = f[4];
    unsigned long long limit = n > 5 ? strtoull(f[5], NULL, 10) : 0;
    api_load(&a, lib, type);
    guarded_alloc(&digest, (size_t)(a.digest_bits / 8), "digest");
    meta_u64("digest_bits", (unsigned long long)a.digest_bits);
    meta_u64("digest_bytes", digest.len);
    char *text = NULL;
    size_t text_len = 0;
    out = open_memstream(&text, &text_len);
    if (!out) fail(EXIT_IOERROR, "ERROR", "cannot hold the KAT text");
    if (strcmp(file, "KAT_2_12") == 0) kat_2_12(limit);
    else if (strcmp(file, "KAT_2_23") == 0) kat_long(file, 1ull << 23);
    else if (strcmp(file, "KAT_2_33") == 0) kat_long(file, 1ull << 33);
    else if (strcmp(file, "KAT_Loop") == 0) kat_loop(limit);
    else fail(EXIT_USAGE, "USAGE", "unknown hash KAT file %s", file);
    if (fclose(out) != 0) fail(EXIT_IOERROR, "ERROR", "cannot hold the KAT text");
    proto_data("KAT", (const unsigned char *)text, text_len);
    free(text);
    proto_line("STATUS\tPASS");
    return EXIT_OK;
}
