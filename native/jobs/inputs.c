/* The inputs jobs of ngcc_driver: dec's inputs, made in processes of their own
 * (docs/method.md#inputs-made-elsewhere).
 *   ngcc_driver LIB keys kem dec 1 0 CPU|-1 RNG|auto 0 DIR
 *   ngcc_driver LIB inputs kem dec ITERS WARMUPS CPU|-1 RNG|auto 0 SEED DIR PK
 * `keys` makes a key pair from the kernel's randomness and writes DIR/pk.bin and DIR/sk.bin.
 * `inputs` is given only that public key (the file PK): it makes the warm-ups' ciphertexts (as many
 * as the trial's warm-ups go round) and ITERS ciphertexts to it, made by enc, the timed calls' with
 * the generators seeded from SEED as a trial's calls_prepare seeds them. It writes DIR/warmup.bin
 * and DIR/inputs.bin, each a secret key's length of zeros (where the parent puts the secret key
 * from `keys`), then the ciphertexts in call order; and it reports, as TRANSCRIPT lines, the
 * transcript that the dec trial given those files must give: the secrets enc gave, folded as
 * calls_settle folds dec's outputs. So no process but `keys` ever holds the secret key beside enc:
 * an enc cannot take its message from the key (its implicit-rejection value, say), where a dec
 * would find it again; and the trial's process, which gets the key and the ciphertexts, never holds
 * the secrets, nor runs keygen or enc at all. */
#include "core/harness.h"
#include "core/ops.h"
#include "core/calls.h"
#include "jobs.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define INPUTS_MAX_BYTES (1ull << 30)

/* A new file NAME in DIR, for this job alone. */
static int create_in(const char *dir, const char *name) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) fail(EXIT_USAGE, "USAGE", "DIR is too long");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) fail(EXIT_IOERROR, "ERROR", "cannot create the inputs file in DIR");
    return fd;
}

static void write_bytes(int fd, const unsigned char *p, size_t n) {
    for (const unsigned char *end = p + n; p < end;) {
        ssize_t w = write(fd, p, (size_t)(end - p));
        if (w <= 0) fail(EXIT_IOERROR, "ERROR", "cannot write the inputs");
        p += w;
    }
}

/* Where the secret key goes: the parent writes it there, from the `keys` job's file. */
static void write_key_room(const ctx_t *c, int fd) {
    unsigned char zeros[4096] = {0};
    for (unsigned long long left = c->api.sk_len; left > 0;) {
        size_t n = left < sizeof zeros ? (size_t)left : sizeof zeros;
        write_bytes(fd, zeros, n);
        left -= n;
    }
}

/* The public key from the file at `path`: exactly the library's pk length. */
static void read_public_key(ctx_t *c, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(EXIT_IOERROR, "ERROR", "cannot open the public key PK");
    ssize_t r = read(fd, c->pk.p, (size_t)c->api.pk_len);
    unsigned char more;
    if (r != (ssize_t)c->api.pk_len || read(fd, &more, 1) != 0)
        fail(EXIT_IOERROR, "ERROR", "PK is not a public key of %llu bytes", c->api.pk_len);
    close(fd);
    c->pk_len = c->api.pk_len;
}

int keys_main(int n, char **fields) {
    const char *usage = "ngcc_driver LIB keys kem dec 1 0 CPU|-1 RNG|auto 0 DIR";
    loop_args_t a;
    parse_loop_args(n, fields, usage, "1", &a);
    if (n < 10) fail(EXIT_USAGE, "USAGE", "usage: %s", usage);
    if (strcmp(a.type, "kem") != 0 || strcmp(a.op, "dec") != 0) fail(EXIT_USAGE, "USAGE", "the keys job makes kem dec's key pair only");
    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, a.lib, a.type);
    unsigned char key_seed[SEED_BYTES];
    random_fill(key_seed, sizeof key_seed);
    meta_str("rng", api_seed(&c.api, a.rng, key_seed));
    ops_alloc(&c);
    unsigned long long pk_len = c.api.pk_len, sk_len = c.api.sk_len;
    ops_must(c.api.kem_keygen(c.pk.p, &pk_len, c.sk.p, &sk_len), "kem_keygen");
    ops_check_guards(&c);
    meta_u64("pk_bytes", c.api.pk_len);
    meta_u64("sk_bytes", c.api.sk_len);
    int pk = create_in(fields[9], "pk.bin"), sk = create_in(fields[9], "sk.bin");
    write_bytes(pk, c.pk.p, (size_t)c.api.pk_len);
    write_bytes(sk, c.sk.p, (size_t)c.api.sk_len);
    if (close(pk) != 0 || close(sk) != 0) fail(EXIT_IOERROR, "ERROR", "cannot write the key pair");
    proto_line("STATUS\tcomplete");
    return EXIT_OK;
}

int inputs_main(int n, char **fields) {
    const char *usage = "ngcc_driver LIB inputs kem dec ITERS WARMUPS CPU|-1 RNG|auto 0 SEED DIR PK";
    loop_args_t a;
    parse_loop_args(n, fields, usage, "ITERS", &a);
    if (n < 12) fail(EXIT_USAGE, "USAGE", "usage: %s", usage);
    if (strcmp(a.type, "kem") != 0 || strcmp(a.op, "dec") != 0) fail(EXIT_USAGE, "USAGE", "the inputs job makes kem dec's inputs only");
    unsigned char seed[SEED_BYTES];
    if (!calls_seed_from_hex(fields[9], seed)) fail(EXIT_USAGE, "USAGE", "SEED must be %d lowercase hex digits", 2 * SEED_BYTES);

    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, a.lib, a.type);
    const char *rng = api_seed(&c.api, a.rng, seed);
    meta_str("rng", rng);
    ops_alloc(&c);
    read_public_key(&c, fields[11]);
    meta_u64("sk_bytes", c.api.sk_len);
    meta_u64("ct_bytes", c.api.ct_len);
    meta_u64("ss_bytes", c.api.ss_len);
    ops_name(&c, "dec");
    calls_t t;
    calls_init(&t, &c, seed, rng, a.n, 0, 0);

    /* A calibration that claimed a tiny cost would ask for more calls than any trial needs: gigabytes of a
     * temporary folder. */
    size_t warm = calls_warmup_slots(&t, a.warmups);
    unsigned long long bytes = c.api.sk_len + a.n * c.api.ct_len;
    if (a.n > INPUTS_MAX_BYTES || bytes > INPUTS_MAX_BYTES)
        fail(EXIT_USAGE, "USAGE", "dec's inputs for %llu calls would take %llu bytes, over the %llu a trial may have", a.n, bytes,
             (unsigned long long)INPUTS_MAX_BYTES);
    meta_u64("warmup_ciphertexts", warm);
    int wfd = create_in(fields[10], "warmup.bin");
    write_key_room(&c, wfd);
    if (warm > 0) {
        calls_prepare(&t, USE_WARMUP, warm);
        calls_write_inputs(&t, warm, wfd);
    }
    if (close(wfd) != 0) fail(EXIT_IOERROR, "ERROR", "cannot write the inputs");
    int fd = create_in(fields[10], "inputs.bin");
    write_key_room(&c, fd);
    for (unsigned long long done = 0; done < a.n;) {
        size_t nb = (size_t)(a.n - done < t.batch ? a.n - done : t.batch);
        calls_prepare(&t, done, nb);
        calls_write_inputs(&t, nb, fd);
        calls_answer_expected(&t, nb);
        calls_settle(&t, done, nb);
        done += nb;
    }
    if (close(fd) != 0) fail(EXIT_IOERROR, "ERROR", "cannot write the inputs");
    ops_check_guards(&c);
    meta_u64("calls_per_segment", t.segment);
    calls_report(&t, 0, a.n);
    proto_line("STATUS\tcomplete");
    return EXIT_OK;
}
