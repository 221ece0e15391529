/* Timing driver: one trial of one operation in this process.
 *   ngcc_time LIB TYPE OP ITERS WARMUPS [CPU|-1] [RNG|auto]
 * TYPE kem|sig; OP keygen|enc|dec (kem) or keygen|sign|verify (sig).
 * Prints META lines, one TRIAL line (count seconds cycles), one CALLS line with
 * per-call cycle quantiles (n min q1 median q3 max), then "STATUS complete". */
#include "cpucycles.h"
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MESSAGE_BYTES 64            /* the guide times signatures on a 64-byte message */
#define MAX_CALL_SAMPLES (1u << 21) /* per-call samples kept; the trial total covers every call */

typedef struct {
    api_t api;
    guarded_t pk, sk, ct, ss, ss2, sn, msg;
    unsigned long long pk_len, sk_len, ct_len, ss_len, sn_len;
} ctx_t;

typedef int (*op_fn)(ctx_t *);

static int do_kem_keygen(ctx_t *c) { return c->api.kem_keygen(c->pk.p, &c->pk_len, c->sk.p, &c->sk_len); }
static int do_kem_enc(ctx_t *c) {
    return c->api.kem_enc(c->pk.p, c->pk_len, c->ss.p, &c->ss_len, c->ct.p, &c->ct_len);
}
static int do_kem_dec(ctx_t *c) {
    unsigned long long len = 0;
    return c->api.kem_dec(c->sk.p, c->sk_len, c->ct.p, c->ct_len, c->ss2.p, &len);
}
static int do_sig_keygen(ctx_t *c) { return c->api.sig_keygen(c->pk.p, &c->pk_len, c->sk.p, &c->sk_len); }
static int do_sig_sign(ctx_t *c) {
    return c->api.sig_sign(c->sk.p, c->sk_len, c->msg.p, MESSAGE_BYTES, c->sn.p, &c->sn_len);
}
static int do_sig_verify(ctx_t *c) {
    return c->api.sig_verify(c->pk.p, c->pk_len, c->sn.p, c->sn_len, c->msg.p, MESSAGE_BYTES);
}

static void must(int rc, const char *what) {
    if (rc != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s returned %d", what, rc);
}

/* Prepares the inputs the timed operation consumes and returns the operation. */
static op_fn prepare(ctx_t *c, const char *op) {
    if (!c->api.is_sig) {
        if (strcmp(op, "keygen") == 0) return do_kem_keygen;
        must(do_kem_keygen(c), "kem_keygen");
        if (strcmp(op, "enc") == 0) return do_kem_enc;
        must(do_kem_enc(c), "kem_enc");
        if (strcmp(op, "dec") == 0) return do_kem_dec;
    } else {
        for (int i = 0; i < MESSAGE_BYTES; i++) c->msg.p[i] = (unsigned char)i;
        if (strcmp(op, "keygen") == 0) return do_sig_keygen;
        must(do_sig_keygen(c), "sig_keygen");
        if (strcmp(op, "sign") == 0) return do_sig_sign;
        must(do_sig_sign(c), "sig_sign");
        if (strcmp(op, "verify") == 0) return do_sig_verify;
    }
    fail(EXIT_USAGE, "USAGE", "unknown operation %s", op);
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Quantile by linear interpolation between order statistics (type 7, as numpy's default). */
static double quantile(const uint64_t *sorted, size_t n, double q) {
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return (double)sorted[lo] + frac * ((double)sorted[hi] - (double)sorted[lo]);
}

static void check_guards(ctx_t *c) {
    char why[160];
    guarded_t *all[] = {&c->pk, &c->sk, &c->ct, &c->ss, &c->ss2, &c->sn, &c->msg};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->base && guarded_violated(all[i], why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", why);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: ngcc_time LIB TYPE OP ITERS WARMUPS [CPU|-1] [RNG|auto]\n");
        return EXIT_USAGE;
    }
    const char *lib = argv[1], *type = argv[2], *op = argv[3];
    unsigned long long iters = strtoull(argv[4], NULL, 10);
    unsigned long long warmups = strtoull(argv[5], NULL, 10);
    int cpu = argc > 6 ? atoi(argv[6]) : -1;
    const char *rng = argc > 7 && strcmp(argv[7], "auto") != 0 ? argv[7] : NULL;
    if (iters == 0) fail(EXIT_USAGE, "USAGE", "ITERS must be at least 1");

    if (cpu >= 0 && pin_to_cpu(cpu) != 0) fail(EXIT_USAGE, "USAGE", "cannot pin to cpu %d", cpu);
    meta_str("counter", cpucycles_init());
    meta_u64("cpu", (unsigned long long)(cpu >= 0 ? cpu : -1));

    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, lib, type);
    meta_str("rng", api_seed_default(&c.api, rng));
    c.pk_len = c.api.pk_len;
    c.sk_len = c.api.sk_len;
    guarded_alloc(&c.pk, c.api.pk_len, "pk");
    guarded_alloc(&c.sk, c.api.sk_len, "sk");
    if (c.api.is_sig) {
        guarded_alloc(&c.sn, c.api.sn_len, "signature");
        guarded_alloc(&c.msg, MESSAGE_BYTES, "message");
        c.sn_len = c.api.sn_len;
    } else {
        guarded_alloc(&c.ct, c.api.ct_len, "ct");
        guarded_alloc(&c.ss, c.api.ss_len, "ss");
        guarded_alloc(&c.ss2, c.api.ss_len, "ss");
    }
    meta_u64("pk_bytes", c.api.pk_len);
    meta_u64("sk_bytes", c.api.sk_len);
    meta_u64("ct_bytes", c.api.ct_len);
    meta_u64("ss_bytes", c.api.ss_len);
    meta_u64("signature_bytes", c.api.sn_len);
    meta_u64("message_bytes", c.api.is_sig ? MESSAGE_BYTES : 0);

    size_t nsamples = iters < MAX_CALL_SAMPLES ? (size_t)iters : MAX_CALL_SAMPLES;
    uint64_t *samples = malloc(nsamples * sizeof *samples);
    if (!samples) fail(EXIT_IOERROR, "ERROR", "out of memory for %zu samples", nsamples);
    meta_u64("baseline_rss_bytes", proc_status_bytes("VmRSS"));

    op_fn fn = prepare(&c, op);
    for (unsigned long long i = 0; i < warmups; i++) must(fn(&c), op);
    fflush(stdout);

    /* One counter read per call boundary: the loop total and every per-call sample
     * come from the same reads, so the per-call overhead is a single counter read. */
    double s0 = wallclock_seconds();
    uint64_t c0 = cpucycles(), prev = c0;
    int rc = 0;
    for (unsigned long long i = 0; i < iters; i++) {
        rc |= fn(&c);
        uint64_t now = cpucycles();
        if (i < nsamples) samples[i] = now - prev;
        prev = now;
    }
    double s1 = wallclock_seconds();
    must(rc, op);
    check_guards(&c);

    meta_u64("peak_rss_bytes", proc_status_bytes("VmHWM"));
    printf("TRIAL\t%llu\t%.9f\t%llu\n", iters, s1 - s0, (unsigned long long)(prev - c0));
    qsort(samples, nsamples, sizeof *samples, cmp_u64);
    printf("CALLS\t%zu\t%llu\t%.1f\t%.1f\t%.1f\t%llu\n", nsamples, (unsigned long long)samples[0],
           quantile(samples, nsamples, 0.25), quantile(samples, nsamples, 0.5),
           quantile(samples, nsamples, 0.75), (unsigned long long)samples[nsamples - 1]);
    printf("STATUS\tcomplete\n");
    free(samples);
    return EXIT_OK;
}
