/* ngcc_ct: the constant-time check's driver, run under valgrind memcheck (docs/method.md#constant-time-check).
 *   valgrind --tool=memcheck --xml=yes --xml-fd=4 … ngcc_ct LIB      (the job on the channel, as for ngcc_driver)
 *   ngcc_ct LIB ct TYPE OP CALLS [RNG|auto]                          (by hand)
 * TYPE kem|sig|kex; OP keygen|enc|dec, keygen|sign|verify, or a key exchange's step or `exchange`.
 * The inputs are prepared as every driver prepares them (ops.c), with memcheck's error reporting
 * off; then OP runs CALLS times with reporting on, and only then. Secret: the secret key before an
 * operation takes it, every byte the library's generator hands out (ct_wrap.c, linked into the ct
 * build), a key exchange's secret keys and states. Public (declassified): public keys after key
 * generation, ciphertexts and signatures once produced, messages. Memcheck then reports every
 * branch, address and system-call argument that depends on a secret, as XML on the descriptor
 * the parent gave it; this driver reports only what it ran: META lines, `CT calls N`, STATUS
 * complete, END (docs/native-protocol.md). */
#include "core/harness.h"
#include "core/cpucycles.h"
#include "core/ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/memcheck.h>

/* The descriptor valgrind writes its XML to (--xml-fd): valgrind keeps its own copy in its reserved
 * range, so this one is closed before the library is loaded, which then cannot write into it. */
#define XML_FD 4

#define SECRET(p, n) (void)VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) (void)VALGRIND_MAKE_MEM_DEFINED((p), (n))

/* The division check's gdb breaks here (src/ct/divisionCheck.ts): its division breakpoints are
 * enabled only while the measured operation runs, as memcheck's reporting is. Not inlined, so that
 * the symbol and its argument (on) are there at the call. */
__attribute__((noinline, used)) void ngcc_ct_window(int on) { __asm__ volatile("" : : "r"(on) : "memory"); }

/* Error reporting is a counter (valgrind.h): on while the measured operation runs, off otherwise. */
static void reporting(int on) {
    ngcc_ct_window(on);
    if (on) VALGRIND_ENABLE_ERROR_REPORTING;
    else VALGRIND_DISABLE_ERROR_REPORTING;
}

typedef struct {
    int target; /* the measured step, or KEX_STEP_EXCHANGE */
} kex_plan_t;

/* After each step of an exchange: its public outputs declassified, the keys and states secret
 * again, and reporting on for the next step only when it is the measured one. */
static void kex_after(kex_t *k, int step, void *arg) {
    const kex_plan_t *plan = arg;
    int last = kex_steps(k) - 1;
    if (plan->target != KEX_STEP_EXCHANGE && plan->target == step) reporting(0);
    if (step == 0) PUBLIC(k->pka.p, k->pka.len);
    if (step == 1) PUBLIC(k->pkb.p, k->pkb.len);
    if (step >= 2 && step < last - 1) PUBLIC(k->m[step - 1].p, k->m[step - 1].len);
    SECRET(k->ska.p, k->ska.len);
    SECRET(k->skb.p, k->skb.len);
    SECRET(k->sta.p, k->sta.len);
    SECRET(k->stb.p, k->stb.len);
    if (plan->target != KEX_STEP_EXCHANGE && plan->target == step + 1 && step < last) reporting(1);
}

static void run_kex(ctx_t *c, const char *op, unsigned long long calls) {
    kex_t *k = c->kex;
    int step = kex_step_of(k, op);
    if (step == -2) fail(EXIT_USAGE, "USAGE", "unknown operation %s of a key exchange with %llu passes", op, k->passes);
    kex_plan_t plan = {step};
    k->after = kex_after;
    k->after_arg = &plan;
    for (unsigned long long i = 0; i < calls; i++) {
        if (step == KEX_STEP_EXCHANGE || step == 0) reporting(1);
        kex_exchange(k, "");
        if (step == KEX_STEP_EXCHANGE) reporting(0);
    }
}

/* Before each call: what the operation takes that is secret. */
/* The secret key's first bytes that are a public format header (candidate.yml ct.public_sk_bytes:
 * Falcon's 0x50 + logn): not secret, so a check of the format is no finding. */
static unsigned long long public_sk_bytes;

static void mark_inputs(ctx_t *c, const char *op) {
    if (strcmp(op, "dec") == 0 || strcmp(op, "sign") == 0) {
        SECRET(c->sk.p, c->sk_len);
        if (public_sk_bytes > 0) PUBLIC(c->sk.p, public_sk_bytes < c->sk_len ? public_sk_bytes : c->sk_len);
    }
    if (c->api.is_sig) PUBLIC(c->msg.p, MESSAGE_BYTES);
}

/* After each call: what it produced that is public by definition. */
static void declassify_outputs(ctx_t *c, const char *op) {
    if (strcmp(op, "keygen") == 0) PUBLIC(c->pk.p, c->pk.len);
    if (!c->api.is_sig && strcmp(op, "enc") == 0) PUBLIC(c->ct.p, c->ct.len);
    if (c->api.is_sig && strcmp(op, "sign") == 0) PUBLIC(c->sn.p, c->sn.len);
}

int main(int argc, char **argv) {
    proto_open();
    close(XML_FD);
    /* The driver's own setup (dlopen, constructors, preparing inputs) is not the library's operation. */
    reporting(0);
    char *f[8];
    int n = job_fields(argc, argv, f, 8);
    if (n < 5 || strcmp(f[1], "ct") != 0) {
        fprintf(stderr, "usage: ngcc_ct LIB ct TYPE OP CALLS [RNG|auto] [PUBLIC_SK_BYTES]\n");
        return proto_end(EXIT_USAGE);
    }
    const char *lib = f[0], *type = f[2], *op = f[3];
    char *end = NULL;
    unsigned long long calls = strtoull(f[4], &end, 10);
    if (*end != '\0' || calls < 1 || calls > 1000) fail(EXIT_USAGE, "USAGE", "CALLS must be an integer in 1..1000");
    const char *rng = n > 5 && strcmp(f[5], "auto") != 0 ? f[5] : NULL;
    if (n > 6) {
        public_sk_bytes = strtoull(f[6], &end, 10);
        if (*end != '\0') fail(EXIT_USAGE, "USAGE", "PUBLIC_SK_BYTES must be a whole number");
    }
    if (strncmp(type, "hash", 4) == 0) fail(EXIT_USAGE, "USAGE", "a hash has no secret input: nothing to check");
    meta_u64("running_on_valgrind", (unsigned long long)RUNNING_ON_VALGRIND);

    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, lib, type);
    meta_str("rng", api_seed_default(&c.api, rng));
    ops_alloc(&c);
    /* The calls' own seconds under memcheck, without its start: the slowdown the parent measures
     * against the native call (src/campaign/ctPhase.ts). */
    double started = 0;
    if (c.kex) {
        started = wallclock_seconds();
        run_kex(&c, op, calls);
    } else {
        op_fn fn = ops_prepare(&c, op);
        /* What the preparation produced that is public (the key pair's public half, the ciphertext). */
        if (strcmp(op, "keygen") != 0) {
            PUBLIC(c.pk.p, c.pk.len);
            if (c.ct.base) PUBLIC(c.ct.p, c.ct.len);
            if (c.sn.base) PUBLIC(c.sn.p, c.sn.len);
        }
        started = wallclock_seconds();
        for (unsigned long long i = 0; i < calls; i++) {
            mark_inputs(&c, op);
            reporting(1);
            int rc = fn(&c);
            reporting(0);
            /* The return code is the API's public verdict; a value derived from a secret is declassified to check it. */
            PUBLIC(&rc, sizeof rc);
            declassify_outputs(&c, op);
            ops_must(rc, op);
        }
    }
    double calls_s = wallclock_seconds() - started;
    ops_check_guards(&c);
    proto_line("CT\tcalls\t%llu", calls);
    proto_line("CT\tcalls_s\t%.6f", calls_s);
    proto_line("STATUS\tcomplete");
    return proto_end(EXIT_OK);
}
