/* The inputs job of ngcc_driver: dec's inputs, made in a process of their own.
 *   ngcc_driver LIB inputs kem dec ITERS WARMUPS CPU|-1 RNG|auto 0 SEED DIR
 * A key pair from the kernel's randomness, then the warm-ups' ciphertexts (as many as the trial's
 * warm-ups go round) and ITERS ciphertexts to it, made by enc, the timed calls' with the generators
 * seeded from SEED as a trial's calls_prepare seeds them. Writes DIR/warmup.bin (the secret key,
 * then the warm-ups' ciphertexts) and DIR/inputs.bin (the secret key, then the timed calls'
 * ciphertexts in call order), and reports, as TRANSCRIPT lines, the transcript that the dec trial
 * given those files must give: the secrets enc gave, folded as calls_settle folds dec's outputs
 * (docs/method.md#inputs-made-elsewhere). The trial's process never holds those secrets, so a dec
 * cannot read its answer beside its question, nor from what enc recorded; nor does it run keygen or
 * enc at all. */
#include "harness.h"
#include "ops.h"
#include "calls.h"
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

static void write_key(const ctx_t *c, int fd) {
    for (const unsigned char *p = c->sk.p; p < c->sk.p + c->api.sk_len;) {
        ssize_t w = write(fd, p, (size_t)(c->sk.p + c->api.sk_len - p));
        if (w <= 0) fail(EXIT_IOERROR, "ERROR", "cannot write the inputs");
        p += w;
    }
}

int inputs_main(int n, char **fields) {
    const char *usage = "ngcc_driver LIB inputs kem dec ITERS WARMUPS CPU|-1 RNG|auto 0 SEED DIR";
    loop_args_t a;
    parse_loop_args(n, fields, usage, "ITERS", &a);
    if (n < 11) fail(EXIT_USAGE, "USAGE", "usage: %s", usage);
    if (strcmp(a.type, "kem") != 0 || strcmp(a.op, "dec") != 0) fail(EXIT_USAGE, "USAGE", "the inputs job makes kem dec's inputs only");
    unsigned char seed[SEED_BYTES], key_seed[SEED_BYTES];
    if (!calls_seed_from_hex(fields[9], seed)) fail(EXIT_USAGE, "USAGE", "SEED must be %d lowercase hex digits", 2 * SEED_BYTES);

    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, a.lib, a.type);
    /* The key pair from a seed of its own: a secret key that kept its generator's seed would not give
     * away the ciphertexts' randomness, which comes from SEED. */
    random_fill(key_seed, sizeof key_seed);
    const char *rng = api_seed(&c.api, a.rng, key_seed);
    meta_str("rng", rng);
    ops_alloc(&c);
    meta_u64("sk_bytes", c.api.sk_len);
    meta_u64("ct_bytes", c.api.ct_len);
    meta_u64("ss_bytes", c.api.ss_len);
    (void)ops_prepare(&c, "dec");
    calls_t t;
    calls_init(&t, &c, seed, rng, a.n, 0, 0);

    /* A calibration that claimed a tiny cost would ask for more calls than any trial needs: gigabytes of a
     * temporary folder. */
    size_t warm = calls_warmup_slots(&t, a.warmups);
    unsigned long long bytes = c.api.sk_len + a.n * c.api.ct_len;
    if (a.n > INPUTS_MAX_BYTES || bytes > INPUTS_MAX_BYTES)
        fail(EXIT_USAGE, "USAGE", "dec's inputs for %llu calls would take %llu bytes, over the %llu a trial may have", a.n, bytes, (unsigned long long)INPUTS_MAX_BYTES);
    meta_u64("warmup_ciphertexts", warm);
    int wfd = create_in(fields[10], "warmup.bin");
    write_key(&c, wfd);
    if (warm > 0) {
        calls_prepare(&t, USE_WARMUP, warm);
        calls_write_inputs(&t, warm, wfd);
    }
    if (close(wfd) != 0) fail(EXIT_IOERROR, "ERROR", "cannot write the inputs");
    int fd = create_in(fields[10], "inputs.bin");
    write_key(&c, fd);
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
