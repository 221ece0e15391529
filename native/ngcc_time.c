/* The timing job of ngcc_driver: one trial of one operation in this process.
 *   ngcc_driver LIB time TYPE OP ITERS WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS]
 * TYPE kem|sig|kex; OP keygen|enc|dec (kem), keygen|sign|verify (sig), exchange|init_a|init_b|passK|
 * derive_a|derive_b (kex: each a full exchange of which only that span is counted; then a LOOP line).
 * Reports META lines, MARK begin / MARK end around the loop, one TRIAL line (count seconds
 * cycles), one CALLS line with per-call cycle quantiles (n min q1 median q3 max),
 * "STATUS complete", then END (docs/native-protocol.md). */
#include "cpucycles.h"
#include "harness.h"
#include "ops.h"
#include "jobs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALL_SAMPLES (1u << 21) /* per-call samples kept; the trial total covers every call */





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


int time_main(int n, char **fields) {
    loop_args_t a;
    parse_loop_args(n, fields, "ngcc_driver LIB time TYPE OP ITERS WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS]", "ITERS", &a);
    spots_t spots;
    spots_plan(&spots, a.n, a.spot_checks); /* before the library is loaded */
    const char *lib = a.lib, *type = a.type, *op = a.op, *rng = a.rng;
    unsigned long long iters = a.n, warmups = a.warmups;
    int cpu = a.cpu;
    meta_str("counter", cpucycles_init());
    meta_u64("cpu", (unsigned long long)(cpu >= 0 ? cpu : -1));

    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, lib, type);
    meta_str("rng", api_seed_default(&c.api, rng));
    ops_alloc(&c);
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

    op_fn fn = ops_prepare(&c, op);
    if (c.api.is_hash) {
        meta_u64("input_bytes", c.msg_bytes);
        meta_u64("digest_bytes", c.digest_len);
    }
    for (unsigned long long i = 0; i < warmups; i++) ops_must(fn(&c), op);
    fflush(stdout); /* the library's buffered output, before the measured loop rather than in it */

    /* One counter read per call boundary: the loop total and every per-call sample come from
     * the same reads, so the per-call overhead is a single counter read. A spot-checked call's
     * preparation and check fall between reads that are not counted. */
    proto_mark("begin");
    os_mark_t os0, os1;
    os_mark(&os0);
    double s0 = wallclock_seconds();
    uint64_t prev = cpucycles(), total = 0, loop = 0;
    int rc = 0;
    for (unsigned long long i = 0; i < iters; i++) {
        int spot = spots_due(&spots, i);
        if (spot) {
            spots_before(&c, &spots);
            prev = cpucycles();
        }
        rc |= fn(&c);
        uint64_t now = cpucycles();
        /* A key exchange counts only its timed span, read inside the exchange (kex_ops.h). */
        uint64_t spent = c.kex ? c.kex->timed_cycles : now - prev;
        if (i < nsamples) samples[i] = spent;
        total += spent;
        loop += now - prev;
        if (spot) {
            spots_after(&c, &spots, i);
            now = cpucycles();
        }
        prev = now;
    }
    double s1 = wallclock_seconds();
    os_mark(&os1);
    proto_mark("end");
    ops_must(rc, op);
    spots_verify(&c, &spots);
    ops_check_guards(&c);

    meta_u64("peak_rss_bytes", proc_status_bytes("VmHWM"));
    double seconds = s1 - s0;
    if (c.kex) {
        /* The span's seconds at the loop's own rate; the whole loop's cycles for the kernel's view. */
        kex_meta(c.kex);
        meta_u64("span_overhead_cycles", kex_span_overhead());
        seconds = loop > 0 ? seconds * (double)total / (double)loop : 0;
        proto_line("LOOP\t%llu\t%.9f", (unsigned long long)loop, s1 - s0);
    }
    proto_line("TRIAL\t%llu\t%.9f\t%llu", iters, seconds, (unsigned long long)total);
    os_report(&os0, &os1);
    qsort(samples, nsamples, sizeof *samples, cmp_u64);
    proto_line("CALLS\t%zu\t%llu\t%.1f\t%.1f\t%.1f\t%llu", nsamples, (unsigned long long)samples[0],
           quantile(samples, nsamples, 0.25), quantile(samples, nsamples, 0.5),
           quantile(samples, nsamples, 0.75), (unsigned long long)samples[nsamples - 1]);
    proto_line("STATUS\tcomplete");
    free(samples);
    return EXIT_OK;
}
