#include "kex_ops.h"
#include "cpucycles.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The same bound harness.c puts on KEM and signature lengths: a claim is allocated before anything runs. */
#define KEX_MAX_CLAIMED_BYTES (64ull << 20)

static void *kex_need(const api_t *api, const char *name) {
    void *sym = api_optional(api, name);
    if (!sym) fail(EXIT_LOADFAIL, "LOADFAIL", "missing symbol %s", name);
    return sym;
}

static unsigned long long kex_claim(const api_t *api, const char *fn) {
    unsigned long long n = ((len_fn)kex_need(api, fn))();
    if (n > KEX_MAX_CLAIMED_BYTES)
        fail(EXIT_LOADFAIL, "LOADFAIL", "%s() claims %llu bytes, above the bound of %llu (64 MiB)", fn, n, KEX_MAX_CLAIMED_BYTES);
    return n;
}

void kex_load(kex_t *k, const api_t *api) {
    memset(k, 0, sizeof *k);
    k->timed = KEX_STEP_EXCHANGE;
    k->passes = ((len_fn)kex_need(api, "kex_get_passes_num"))();
    if (k->passes < 1 || k->passes > KEX_MAX_PASSES)
        fail(EXIT_LOADFAIL, "LOADFAIL", "kex_get_passes_num() is %llu; the KEX API has passes 1 to %d", k->passes, KEX_MAX_PASSES);
    k->pk_len = kex_claim(api, "kex_get_pk_len_bytes");
    k->sk_len = kex_claim(api, "kex_get_sk_len_bytes");
    k->sta_len = kex_claim(api, "kex_get_sta_len_bytes");
    k->stb_len = kex_claim(api, "kex_get_stb_len_bytes");
    k->ss_len = kex_claim(api, "kex_get_ss_len_bytes");
    k->total_len = kex_claim(api, "kex_get_total_msg_len_bytes");
    k->init_a = (kex_init_fn)kex_need(api, "kex_init_a");
    k->init_b = (kex_init_fn)kex_need(api, "kex_init_b");
    k->pass1 = (kex_pass1_fn)kex_need(api, "kex_generate_pass1_msg_a");
    for (unsigned long long p = 2; p <= k->passes; p++) {
        char name[64];
        snprintf(name, sizeof name, "kex_generate_pass%llu_msg_%c", p, p % 2 ? 'a' : 'b');
        k->pass[p] = (kex_pass_fn)kex_need(api, name);
    }
    k->derive_a = (kex_derive_fn)kex_need(api, "kex_derive_ss_a");
    k->derive_b = (kex_derive_fn)kex_need(api, "kex_derive_ss_b");
}

static const char *const MESSAGE_NAMES[KEX_MAX_PASSES + 1] = {"", "M1", "M2", "M3", "M4", "M5"};

void kex_alloc(kex_t *k) {
    guarded_alloc(&k->pka, k->pk_len, "PKa");
    guarded_alloc(&k->ska, k->sk_len, "SKa");
    guarded_alloc(&k->pkb, k->pk_len, "PKb");
    guarded_alloc(&k->skb, k->sk_len, "SKb");
    guarded_alloc(&k->sta, k->sta_len, "Sta");
    guarded_alloc(&k->stb, k->stb_len, "Stb");
    guarded_alloc(&k->ssa, k->ss_len, "SS (A)");
    guarded_alloc(&k->ssb, k->ss_len, "SS (B)");
    /* KAT_KEX.c gives every message a buffer of kex_get_total_msg_len_bytes(). */
    for (unsigned long long p = 1; p <= k->passes; p++) guarded_alloc(&k->m[p], k->total_len, MESSAGE_NAMES[p]);
}

int kex_steps(const kex_t *k) { return (int)k->passes + 4; }

const char *kex_step_name(const kex_t *k, int step, char *buf, size_t len) {
    int last = kex_steps(k) - 1;
    if (step == KEX_STEP_EXCHANGE) snprintf(buf, len, "exchange");
    else if (step == 0) snprintf(buf, len, "init_a");
    else if (step == 1) snprintf(buf, len, "init_b");
    else if (step == last - 1) snprintf(buf, len, "derive_a");
    else if (step == last) snprintf(buf, len, "derive_b");
    else snprintf(buf, len, "pass%d", step - 1);
    return buf;
}

int kex_step_of(const kex_t *k, const char *name) {
    char buf[32];
    if (strcmp(name, "exchange") == 0) return KEX_STEP_EXCHANGE;
    for (int s = 0; s < kex_steps(k); s++)
        if (strcmp(name, kex_step_name(k, s, buf, sizeof buf)) == 0) return s;
    return -2;
}

/* A reported length must fit the buffer the harness gave (the claimed size). */
static void fits(const guarded_t *g, unsigned long long n, const char *context, const char *step) {
    if (n > g->len)
        fail(EXIT_OVERFLOW, "OVERFLOW", "%s%s: %s reported length %llu exceeds the claimed %zu", context, step, g->name, n, g->len);
}

#define KEX_FAIL(fmt, ...) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s" fmt, context, __VA_ARGS__)

/* Counter reads around the timed span only: the other steps run but are not counted. */
static inline void span_begin(kex_t *k, int step, uint64_t *t0) {
    if (k->counting && k->timed == step) *t0 = cpucycles();
}
static inline void span_end(kex_t *k, int step, uint64_t t0) {
    if (k->counting && k->timed == step) k->timed_cycles = cpucycles() - t0;
}

void kex_exchange(kex_t *k, const char *ctx) {
    char context[96];
    snprintf(context, sizeof context, "%s%s", ctx, ctx[0] ? ": " : "");
    uint64_t t0 = 0, all0 = 0;
    int step = 0, rc;
    if (k->counting && k->timed == KEX_STEP_EXCHANGE) all0 = cpucycles();
    /* Lengths go in as the buffers' sizes, as KAT_KEX.c passes them. */
    k->pka_n = k->pkb_n = k->pk_len;
    k->ska_n = k->skb_n = k->sk_len;
    k->sta_n = k->sta_len;
    k->stb_n = k->stb_len;
    k->ssa_n = k->ssb_n = k->ss_len;

    span_begin(k, step, &t0);
    rc = k->init_a(k->pka.p, &k->pka_n, k->ska.p, &k->ska_n, k->sta.p, &k->sta_n);
    span_end(k, step, t0);
    if (rc < 0) KEX_FAIL("kex_init_a returned %d", rc);
    fits(&k->pka, k->pka_n, context, "kex_init_a");
    fits(&k->ska, k->ska_n, context, "kex_init_a");
    fits(&k->sta, k->sta_n, context, "kex_init_a");
    if (k->after) k->after(k, step, k->after_arg);

    step = 1;
    span_begin(k, step, &t0);
    rc = k->init_b(k->pkb.p, &k->pkb_n, k->skb.p, &k->skb_n, k->stb.p, &k->stb_n);
    span_end(k, step, t0);
    if (rc < 0) KEX_FAIL("kex_init_b returned %d", rc);
    fits(&k->pkb, k->pkb_n, context, "kex_init_b");
    fits(&k->skb, k->skb_n, context, "kex_init_b");
    fits(&k->stb, k->stb_n, context, "kex_init_b");
    if (k->after) k->after(k, step, k->after_arg);

    /* Passes until one returns 1 (complete), as KAT_KEX.c runs them; 0 (or another non-negative
     * code) continues. It must complete exactly at pass kex_get_passes_num(). */
    unsigned long long last_a = 0, last_b = 0, p;
    int complete = 0;
    for (p = 1; p <= k->passes && !complete; p++) {
        char name[40];
        snprintf(name, sizeof name, "kex_generate_pass%llu_msg_%c", p, p % 2 ? 'a' : 'b');
        k->m_n[p] = 0; /* KAT_KEX.c starts every message length at 0 */
        step = (int)p + 1;
        span_begin(k, step, &t0);
        if (p == 1) rc = k->pass1(k->ska.p, k->ska_n, k->pkb.p, k->pkb_n, k->sta.p, &k->sta_n, k->m[1].p, &k->m_n[1]);
        else if (p % 2 == 0)
            rc = k->pass[p](k->skb.p, k->skb_n, k->pka.p, k->pka_n, k->m[p - 1].p, k->m_n[p - 1], k->stb.p, &k->stb_n, k->m[p].p,
                            &k->m_n[p]);
        else
            rc = k->pass[p](k->ska.p, k->ska_n, k->pkb.p, k->pkb_n, k->m[p - 1].p, k->m_n[p - 1], k->sta.p, &k->sta_n, k->m[p].p,
                            &k->m_n[p]);
        span_end(k, step, t0);
        if (rc < 0) KEX_FAIL("%s returned %d", name, rc);
        fits(&k->m[p], k->m_n[p], context, name);
        fits(p % 2 ? &k->sta : &k->stb, p % 2 ? k->sta_n : k->stb_n, context, name);
        if (p % 2) last_a = p;
        else last_b = p;
        complete = rc == 1;
        if (complete && p != k->passes)
            KEX_FAIL("%s returned 1 (exchange complete) after %llu passes, but kex_get_passes_num() is %llu", name, p, k->passes);
        if (!complete && p == k->passes)
            KEX_FAIL("%s returned %d (continue), but kex_get_passes_num() is %llu: the exchange did not complete", name, rc, k->passes);
        if (k->after) k->after(k, step, k->after_arg);
    }
    k->passes_run = p - 1;

    /* derive_a takes B's last message, derive_b A's (NULL and 0 when that party sent none). */
    unsigned char *mb = last_b ? k->m[last_b].p : NULL, *ma = last_a ? k->m[last_a].p : NULL;
    unsigned long long mb_n = last_b ? k->m_n[last_b] : 0, ma_n = last_a ? k->m_n[last_a] : 0;
    step = (int)k->passes + 2;
    span_begin(k, step, &t0);
    rc = k->derive_a(k->ska.p, k->ska_n, k->pkb.p, k->pkb_n, mb, mb_n, k->sta.p, k->sta_n, k->ssa.p, &k->ssa_n);
    span_end(k, step, t0);
    if (rc < 0) KEX_FAIL("kex_derive_ss_a returned %d", rc);
    fits(&k->ssa, k->ssa_n, context, "kex_derive_ss_a");
    if (k->after) k->after(k, step, k->after_arg);

    step++;
    span_begin(k, step, &t0);
    rc = k->derive_b(k->skb.p, k->skb_n, k->pka.p, k->pka_n, ma, ma_n, k->stb.p, k->stb_n, k->ssb.p, &k->ssb_n);
    span_end(k, step, t0);
    if (k->counting && k->timed == KEX_STEP_EXCHANGE) k->timed_cycles = cpucycles() - all0;
    if (rc < 0) KEX_FAIL("kex_derive_ss_b returned %d", rc);
    fits(&k->ssb, k->ssb_n, context, "kex_derive_ss_b");
    if (k->ssa_n != k->ssb_n || memcmp(k->ssa.p, k->ssb.p, (size_t)k->ssa_n) != 0)
        fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%sthe shared secrets of A and B differ (%llu and %llu bytes)", context, k->ssa_n, k->ssb_n);
    if (k->ssa_n == 0) KEX_FAIL("the shared secret is empty (%llu bytes)", k->ssa_n);
    if (k->after) k->after(k, step, k->after_arg);
}

static int cmp_ticks(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t kex_span_overhead(void) {
    uint64_t t[101];
    for (int i = 0; i < 101; i++) {
        uint64_t t0 = cpucycles();
        t[i] = cpucycles() - t0;
    }
    qsort(t, 101, sizeof t[0], cmp_ticks);
    return t[50];
}

void kex_check_guards(const kex_t *k) {
    char why[200];
    const guarded_t *all[] = {&k->pka, &k->ska,  &k->pkb,  &k->skb,  &k->sta,  &k->stb, &k->ssa,
                              &k->ssb, &k->m[1], &k->m[2], &k->m[3], &k->m[4], &k->m[5]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->base && guarded_violated(all[i], why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", why);
}

void kex_meta(const kex_t *k) {
    meta_u64("pk_bytes", k->pk_len);
    meta_u64("sk_bytes", k->sk_len);
    meta_u64("ss_bytes", k->ss_len);
    meta_u64("sta_bytes", k->sta_len);
    meta_u64("stb_bytes", k->stb_len);
    meta_u64("kex_passes", k->passes);
    meta_u64("total_msg_claimed_bytes", k->total_len);
    if (k->passes_run == 0) return;
    unsigned long long total = 0;
    for (unsigned long long p = 1; p <= k->passes_run; p++) {
        char key[32];
        snprintf(key, sizeof key, "msg%llu_bytes", p);
        meta_u64(key, k->m_n[p]);
        total += k->m_n[p];
    }
    meta_u64("kex_passes_run", k->passes_run);
    meta_u64("total_msg_bytes", total);
    meta_u64("ss_actual_bytes", k->ssa_n);
}
