/* The timing job of ngcc_driver: one trial of one operation in this process, and its replay.
 *   ngcc_driver LIB time TYPE OP ITERS WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS] [VERIFY_POOL]
 *   ngcc_driver LIB replay TYPE OP ITERS WARMUPS CPU|-1 RNG|auto SPOT_CHECKS SEED SEGMENT [KEY]
 * TYPE kem|sig|kex; OP keygen|enc|dec (kem), keygen|sign|verify (sig), exchange|init_a|init_b|passK|
 * derive_a|derive_b (kex: each a full exchange of which only that span is counted; then a LOOP line).
 * Reports META lines, MARK seed (answered with the trial's seed), MARK begin / MARK end around
 * each batch of calls (calls.h), one TRIAL line (count seconds cycles), one OS line, one CALLS line
 * with per-call cycle quantiles (n min q1 median q3 max), the TRANSCRIPT lines, "STATUS complete",
 * then END (docs/native-protocol.md). The replay job makes the calls of one SEGMENT of such a trial
 * again from its SEED, without marks and after WARMUPS of its own, and reports that segment's
 * TRANSCRIPT lines, to be compared with the trial's (src/measure/replay.ts). */
#include "core/cpucycles.h"
#include "core/harness.h"
#include "core/ops.h"
#include "core/calls.h"
#include "jobs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The trial's seed: the replay's from its job; a trial's from the parent, asked once the library
 * is loaded (docs/native-protocol.md#marks); by hand, from the kernel. Reported as META seed. */
static void trial_seed(const char *given, unsigned char seed[SEED_BYTES]) {
    char hex[2 * SEED_BYTES + 1];
    if (given) {
        if (!calls_seed_from_hex(given, seed)) fail(EXIT_USAGE, "USAGE", "SEED must be %d lowercase hex digits", 2 * SEED_BYTES);
    } else if (proto_ask("seed", hex, sizeof hex)) {
        if (!calls_seed_from_hex(hex, seed)) fail(EXIT_USAGE, "USAGE", "the parent's seed is not %d lowercase hex digits", 2 * SEED_BYTES);
    } else {
        random_fill(seed, SEED_BYTES);
    }
    for (int i = 0; i < SEED_BYTES; i++) snprintf(hex + 2 * i, 3, "%02x", seed[i]);
    meta_str("seed", hex);
}

typedef struct {
    double cpu, wall;
    long involuntary, voluntary;
} os_sum_t;

static void os_add(os_sum_t *s, const os_mark_t *a, const os_mark_t *b) {
    s->cpu += b->cpu - a->cpu;
    s->wall += b->wall - a->wall;
    s->involuntary += b->involuntary - a->involuntary;
    s->voluntary += b->voluntary - a->voluntary;
}

static int run_trial(int n, char **fields, const char *usage, int replay) {
    loop_args_t a;
    parse_loop_args(n, fields, usage, "ITERS", &a);
    if (replay && n < 11) fail(EXIT_USAGE, "USAGE", "usage: %s", usage);
    const char *op = a.op;
    unsigned long long iters = a.n, warmups = a.warmups;
    meta_str("counter", cpucycles_init());
    meta_u64("cpu", (unsigned long long)(a.cpu >= 0 ? a.cpu : -1));

    ctx_t c;
    memset(&c, 0, sizeof c);
    /* The parent's clock here and at the seed splits the start: sandbox and exec before, the
     * library's load after (src/measure/processCost.ts). */
    if (!replay) proto_mark("start");
    api_load(&c.api, a.lib, a.type);
    unsigned char seed[SEED_BYTES];
    trial_seed(replay ? fields[9] : NULL, seed);
    const char *rng = api_seed(&c.api, a.rng, seed);
    meta_str("rng", rng);
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

    /* dec's inputs come from another process (the inputs job), its warm-ups' too: asked right after
     * the seed, so this process makes no key pair and calls no enc. "-": make them here. */
    char path[256];
    int warm_given = !replay && calls_op_takes_inputs(&c, op) && proto_ask("warmups", path, sizeof path) && strcmp(path, "-") != 0;
    if (warm_given) ops_name(&c, op);
    else (void)ops_prepare(&c, op);
    if (c.api.is_hash) {
        meta_u64("input_bytes", c.msg_bytes);
        meta_u64("digest_bytes", c.digest_len);
    }
    calls_t t;
    /* verify's pool: VERIFY_POOL entries, or as many as the job asks (time: field 9, after SPOT_CHECKS). */
    int pool = !replay && n > 9 ? atoi(fields[9]) : 0;
    if (pool < 0 || pool > MAX_VERIFY_POOL) fail(EXIT_USAGE, "USAGE", "VERIFY_POOL must be 0 to %d", MAX_VERIFY_POOL);
    calls_init(&t, &c, seed, rng, iters, (int)a.spot_checks, pool);
    if (replay && n > 11) {
        /* The trial's window key (native/core/held.h): its segments' inputs and seeds are then these. */
        unsigned char key[WINDOW_KEY_BYTES];
        if (!calls_key_from_hex(fields[11], key)) fail(EXIT_USAGE, "USAGE", "KEY must be %d lowercase hex digits", 2 * WINDOW_KEY_BYTES);
        calls_set_key(&t, key);
    }
    if (t.pool_n > 0) {
        meta_u64("verify_pool", (unsigned long long)t.pool_n);
        char signed_s[32];
        snprintf(signed_s, sizeof signed_s, "%.6f", t.pool_sign_s);
        meta_str("verify_pool_sign_s", signed_s);
    }
    meta_u64("calls_per_batch", t.batch);
    meta_u64("calls_per_segment", t.segment);
    unsigned long long first = 0, last = iters; /* the calls this process makes: a replay's are one segment */
    if (replay) {
        unsigned long long segment = strtoull(fields[10], NULL, 10);
        first = segment * t.segment;
        if (first >= iters)
            fail(EXIT_USAGE, "USAGE", "SEGMENT %llu: the trial has %llu calls in segments of %llu", segment, iters, t.segment);
        last = first + t.segment < iters ? first + t.segment : iters;
    }
    if (warm_given) calls_take_warmups(&t, path, calls_warmup_slots(&t, warmups));
    if (warmups > 0) {
        /* Warm-ups on inputs of their own, as many as a batch holds: a cache of answers learns nothing. */
        size_t slots = calls_warmup_slots(&t, warmups);
        calls_prepare(&t, USE_WARMUP, slots);
        calls_reseed(&t, USE_WARMUP);
        for (unsigned long long i = 0; i < warmups; i++) {
            int rc = calls_run(&t, (size_t)(i % slots));
            if (rc != 0 && !(c.api.is_sig && strcmp(op, "verify") == 0)) ops_must(rc, op);
        }
    }

    if (!replay && calls_op_takes_inputs(&c, op)) {
        /* The timed inputs: asked only now, after the warm-ups, so the library has run no code since
         * they exist but inside the windows. */
        calls_touch(&t);
        int given = proto_ask("inputs", path, sizeof path) && strcmp(path, "-") != 0;
        if (warm_given && !given) fail(EXIT_USAGE, "USAGE", "the parent gave the warm-ups' inputs but not the timed calls'");
        if (given && strcmp(path, "unheld") == 0) fail(EXIT_USAGE, "USAGE", "the trusted half could not take the timed calls' inputs");
        if (given && strcmp(path, "held") == 0) calls_inputs_held(&t);
        else if (given) calls_take_inputs(&t, path);
        meta_str("inputs", given ? "given" : "made");
    }

    /* One counter read per call boundary: the loop total and every per-call sample come from the
     * same reads, so the per-call overhead is a single counter read. Between the marks of a batch
     * are its calls and nothing else; its slots are prepared before and checked after. */
    os_sum_t os = {0, 0, 0, 0};
    double seconds_all = 0;
    uint64_t total = 0, loop = 0;
    /* The generator's draws over the timed calls (api_draws), read outside the counted span: a
     * segment's reseed restarts the ICCS DRNG's count, so each reading closes the span before it. */
    unsigned long long drawn = 0, draw_mark = 0, draw_now = 0;
    int draws_known = api_draws(&c.api, rng, &draw_mark) == 0;
    for (unsigned long long done = first; done < last;) {
        size_t nb = (size_t)(last - done < t.batch ? last - done : t.batch);
        calls_prepare(&t, done, nb);
        fflush(stdout); /* the library's buffered output, before the measured loop rather than in it */
        if (!replay) proto_mark("begin");
        os_mark_t os0, os1;
        os_mark(&os0);
        if (draws_known) (void)api_draws(&c.api, rng, &draw_mark);
        double s0 = wallclock_seconds();
        uint64_t prev = cpucycles();
        unsigned long long reseed = done; /* the next segment's first call */
        for (size_t i = 0; i < nb; i++) {
            if (done + i == reseed) {
                /* Outside the counted span: the generators' state for this segment's calls. */
                if (draws_known && api_draws(&c.api, rng, &draw_now) == 0) drawn += draw_now - draw_mark;
                calls_reseed(&t, reseed);
                if (draws_known) (void)api_draws(&c.api, rng, &draw_mark);
                reseed += t.segment;
                prev = cpucycles();
            }
            calls_run(&t, i);
            uint64_t now = cpucycles();
            /* A key exchange counts only its timed span, read inside the exchange (kex_ops.h). */
            uint64_t spent = c.kex ? c.kex->timed_cycles : now - prev;
            if (done - first + i < nsamples) samples[done - first + i] = spent;
            total += spent;
            loop += now - prev;
            prev = now;
        }
        double s1 = wallclock_seconds();
        os_mark(&os1);
        if (draws_known && api_draws(&c.api, rng, &draw_now) == 0) drawn += draw_now - draw_mark;
        if (!replay) proto_mark("end");
        seconds_all += s1 - s0;
        os_add(&os, &os0, &os1);
        calls_settle(&t, done, nb);
        done += nb;
    }
    calls_verify_spots(&t);
    ops_check_guards(&c);

    meta_u64("peak_rss_bytes", proc_status_bytes("VmHWM"));
    if (draws_known) meta_u64("draws", drawn);
    double seconds = seconds_all;
    if (c.kex) {
        /* The span's seconds at the loop's own rate; the whole loop's cycles for the kernel's view. */
        kex_meta(c.kex);
        meta_u64("span_overhead_cycles", kex_span_overhead());
        seconds = loop > 0 ? seconds * (double)total / (double)loop : 0;
        proto_line("LOOP\t%llu\t%.9f", (unsigned long long)loop, seconds_all);
    }
    proto_line("TRIAL\t%llu\t%.9f\t%llu", last - first, seconds, (unsigned long long)total);
    proto_line("OS\t%.9f\t%.9f\t%ld\t%ld", os.cpu, os.wall, os.involuntary, os.voluntary);
    if (nsamples > last - first) nsamples = (size_t)(last - first);
    qsort(samples, nsamples, sizeof *samples, cmp_u64);
    proto_line("CALLS\t%zu\t%llu\t%.1f\t%.1f\t%.1f\t%llu", nsamples, (unsigned long long)samples[0], quantile(samples, nsamples, 0.25),
               quantile(samples, nsamples, 0.5), quantile(samples, nsamples, 0.75), (unsigned long long)samples[nsamples - 1]);
    calls_report(&t, first, last - first);
    proto_line("STATUS\tcomplete");
    free(samples);
    return EXIT_OK;
}

int time_main(int n, char **fields) {
    return run_trial(n, fields, "ngcc_driver LIB time TYPE OP ITERS WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS] [VERIFY_POOL]", 0);
}

int replay_main(int n, char **fields) {
    return run_trial(n, fields, "ngcc_driver LIB replay TYPE OP ITERS WARMUPS CPU|-1 RNG|auto SPOT_CHECKS SEED SEGMENT [KEY]", 1);
}
