#include "ops.h"
#include "hash_ops.h"
#include <stdlib.h>
#include <string.h>

static int do_kem_keygen(ctx_t *c) { return c->api.kem_keygen(c->pk.p, &c->pk_len, c->sk.p, &c->sk_len); }
static int do_kem_enc(ctx_t *c) { return c->api.kem_enc(c->pk.p, c->pk_len, c->ss.p, &c->ss_len, c->ct.p, &c->ct_len); }
static int do_kem_dec(ctx_t *c) {
    unsigned long long len = 0;
    return c->api.kem_dec(c->sk.p, c->sk_len, c->ct.p, c->ct_len, c->ss2.p, &len);
}
static int do_sig_keygen(ctx_t *c) { return c->api.sig_keygen(c->pk.p, &c->pk_len, c->sk.p, &c->sk_len); }
static int do_sig_sign(ctx_t *c) { return c->api.sig_sign(c->sk.p, c->sk_len, c->msg.p, MESSAGE_BYTES, c->sn.p, &c->sn_len); }
static int do_sig_verify(ctx_t *c) { return c->api.sig_verify(c->pk.p, c->pk_len, c->sn.p, c->sn_len, c->msg.p, MESSAGE_BYTES); }

/* Every key-exchange operation is one full honest exchange; which span of it counts was set by ops_prepare. */
static int do_kex(ctx_t *c) {
    kex_exchange(c->kex, "");
    return 0;
}

void ops_must(int rc, const char *what) {
    if (rc != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s returned %d", what, rc);
}

void ops_alloc(ctx_t *c) {
    if (c->api.is_hash) {
        hash_alloc(c);
        return;
    }
    if (c->api.is_kex) {
        static kex_t kex;
        c->kex = &kex;
        kex_load(c->kex, &c->api);
        kex_alloc(c->kex);
        return;
    }
    c->pk_len = c->api.pk_len;
    c->sk_len = c->api.sk_len;
    guarded_alloc(&c->pk, c->api.pk_len, "pk");
    guarded_alloc(&c->sk, c->api.sk_len, "sk");
    if (c->api.is_sig) {
        guarded_alloc(&c->sn, c->api.sn_len, "signature");
        guarded_alloc(&c->msg, MESSAGE_BYTES, "message");
        c->sn_len = c->api.sn_len;
    } else {
        guarded_alloc(&c->ct, c->api.ct_len, "ct");
        guarded_alloc(&c->ss, c->api.ss_len, "ss");
        guarded_alloc(&c->ss2, c->api.ss_len, "ss");
    }
}

void ops_name(ctx_t *c, const char *op) { c->op = op; }

op_fn ops_prepare(ctx_t *c, const char *op) {
    c->op = op;
    if (c->api.is_hash) return hash_prepare(c, op);
    if (c->kex) {
        int step = kex_step_of(c->kex, op);
        if (step == -2) fail(EXIT_USAGE, "USAGE", "unknown operation %s of a key exchange with %llu passes", op, c->kex->passes);
        c->kex->timed = step;
        c->kex->counting = 1;
        return do_kex;
    }
    if (!c->api.is_sig) {
        if (strcmp(op, "keygen") == 0) return do_kem_keygen;
        ops_must(do_kem_keygen(c), "kem_keygen");
        if (strcmp(op, "enc") == 0) return do_kem_enc;
        ops_must(do_kem_enc(c), "kem_enc");
        if (strcmp(op, "dec") == 0) return do_kem_dec;
    } else {
        for (int i = 0; i < MESSAGE_BYTES; i++) c->msg.p[i] = (unsigned char)i;
        if (strcmp(op, "keygen") == 0) return do_sig_keygen;
        ops_must(do_sig_keygen(c), "sig_keygen");
        if (strcmp(op, "sign") == 0) return do_sig_sign;
        ops_must(do_sig_sign(c), "sig_sign");
        if (strcmp(op, "verify") == 0) return do_sig_verify;
    }
    fail(EXIT_USAGE, "USAGE", "unknown operation %s", op);
    return NULL;
}

void ops_check_guards(ctx_t *c) {
    char why[160];
    if (c->kex) kex_check_guards(c->kex);
    guarded_t *all[] = {&c->pk, &c->sk, &c->ct, &c->ss, &c->ss2, &c->sn, &c->msg, &c->digest};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->base && guarded_violated(all[i], why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", why);
}

/* ---- spot checks ---- */

void spots_plan(spots_t *s, unsigned long long calls, unsigned long long wanted) {
    memset(s, 0, sizeof *s);
    if (wanted > MAX_SPOT_CHECKS) wanted = MAX_SPOT_CHECKS;
    if (wanted > calls) wanted = calls;
    while ((unsigned long long)s->count < wanted) {
        unsigned long long r;
        random_fill((unsigned char *)&r, sizeof r);
        r %= calls;
        int seen = 0;
        for (int i = 0; i < s->count; i++) seen |= s->at[i] == r;
        if (!seen) s->at[s->count++] = r;
    }
    for (int i = 1; i < s->count; i++) /* ascending: the loop meets them in order */
        for (int j = i; j > 0 && s->at[j - 1] > s->at[j]; j--) {
            unsigned long long t = s->at[j];
            s->at[j] = s->at[j - 1];
            s->at[j - 1] = t;
        }
}

/* The buffers an operation writes, by operation. */
static int outputs_of(ctx_t *c, guarded_t **out, unsigned long long **lens) {
    int kem = !c->api.is_sig;
    if (c->api.is_hash) {
        out[0] = &c->digest, lens[0] = &c->digest_len;
        return 1;
    }
    if (c->kex) { /* both secrets: each overwritten with other random bytes, so equal means both written */
        out[0] = &c->kex->ssa, lens[0] = &c->kex->ssa_n;
        out[1] = &c->kex->ssb, lens[1] = &c->kex->ssb_n;
        return 2;
    }
    if (strcmp(c->op, "keygen") == 0) {
        out[0] = &c->pk, lens[0] = &c->pk_len;
        out[1] = &c->sk, lens[1] = &c->sk_len;
        return 2;
    }
    if (kem && strcmp(c->op, "enc") == 0) {
        out[0] = &c->ct, lens[0] = &c->ct_len;
        out[1] = &c->ss, lens[1] = &c->ss_len;
        return 2;
    }
    if (kem && strcmp(c->op, "dec") == 0) {
        out[0] = &c->ss2, lens[0] = &c->ss_len; /* dec's own length output is not kept by ops.c */
        return 1;
    }
    if (!kem && strcmp(c->op, "sign") == 0) {
        out[0] = &c->sn, lens[0] = &c->sn_len;
        return 1;
    }
    return 0; /* verify writes nothing */
}

static unsigned char *dup_or_fail(const unsigned char *p, size_t n) {
    unsigned char *q = malloc(n ? n : 1);
    if (!q) fail(EXIT_IOERROR, "ERROR", "out of memory for a spot check");
    memcpy(q, p, n);
    return q;
}

static void refill(guarded_t *g, unsigned char **copy) {
    random_fill(g->p, g->len);
    free(*copy);
    *copy = dup_or_fail(g->p, g->len);
}

/* Whether the first n bytes of g differ from the fill: a correct output equals random bytes by chance 2^-8n. */
static int written(const guarded_t *g, const unsigned char *fill, unsigned long long n) {
    if (n > g->len) fail(EXIT_OVERFLOW, "OVERFLOW", "%s: reported length %llu exceeds the claimed %zu", g->name, n, g->len);
    return n > 0 && memcmp(g->p, fill, (size_t)n) != 0;
}

#define SPOT_FAIL(fmt, ...) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "spot check of call %llu: " fmt, __VA_ARGS__)

void spots_before(ctx_t *c, spots_t *s) {
    guarded_t *out[2];
    unsigned long long *lens[2];
    int n = outputs_of(c, out, lens);
    for (int i = 0; i < n; i++) refill(out[i], &s->fill[i]);
}

void spots_after(ctx_t *c, spots_t *s, unsigned long long call) {
    guarded_t *out[2];
    unsigned long long *lens[2];
    int n = outputs_of(c, out, lens);
    snapshot_t *snap = &s->snap[s->next++];
    snap->call = call;
    for (int i = 0; i < n; i++) {
        if (!written(out[i], s->fill[i], *lens[i])) SPOT_FAIL("%s did not write its %s", call, c->op, out[i]->name);
        snap->bytes[i] = dup_or_fail(out[i]->p, out[i]->len);
        snap->len[i] = *lens[i];
    }
}

/* The shared secret enc put in c->ss must come back from dec of c->ct with c->sk. */
static void spot_dec_agrees(ctx_t *c, unsigned long long call, const char *what) {
    unsigned long long len = 0;
    unsigned char *fill = NULL;
    refill(&c->ss2, &fill);
    int rc = c->api.kem_dec(c->sk.p, c->sk_len, c->ct.p, c->ct_len, c->ss2.p, &len);
    int same = !written(&c->ss2, fill, c->ss_len) || memcmp(c->ss2.p, c->ss.p, (size_t)c->ss_len) != 0;
    free(fill);
    if (rc != 0) SPOT_FAIL("kem_dec of %s returned %d", call, what, rc);
    if (same) SPOT_FAIL("kem_dec of %s did not give enc's shared secret", call, what);
}

/* c->sn must verify for the message and be refused once one message bit is flipped. */
static void spot_signature_holds(ctx_t *c, unsigned long long call, const char *what) {
    int rc = c->api.sig_verify(c->pk.p, c->pk_len, c->sn.p, c->sn_len, c->msg.p, MESSAGE_BYTES);
    if (rc != 0) SPOT_FAIL("sig_verify rejected %s (%d)", call, what, rc);
    c->msg.p[MESSAGE_BYTES - 1] ^= 1;
    rc = c->api.sig_verify(c->pk.p, c->pk_len, c->sn.p, c->sn_len, c->msg.p, MESSAGE_BYTES);
    c->msg.p[MESSAGE_BYTES - 1] ^= 1;
    if (rc == 0) SPOT_FAIL("sig_verify accepted %s for a message with one flipped bit", call, what);
}

void spots_verify(ctx_t *c, spots_t *s) {
    guarded_t *out[2];
    unsigned long long *lens[2];
    int n = outputs_of(c, out, lens);
    int kem = !c->api.is_sig;
    for (int k = 0; k < s->next; k++) {
        snapshot_t *snap = &s->snap[k];
        unsigned long long call = snap->call;
        for (int i = 0; i < n; i++) {
            memcpy(out[i]->p, snap->bytes[i], out[i]->len);
            *lens[i] = snap->len[i];
        }
        if (c->kex) {
            if (snap->len[0] != snap->len[1] || memcmp(snap->bytes[0], snap->bytes[1], (size_t)snap->len[0]) != 0)
                SPOT_FAIL("the shared secrets of A and B differ", call);
        } else if (kem && strcmp(c->op, "keygen") == 0) {
            unsigned char *fill = NULL;
            refill(&c->ss, &fill);
            int rc = c->api.kem_enc(c->pk.p, c->pk_len, c->ss.p, &c->ss_len, c->ct.p, &c->ct_len);
            int none = !written(&c->ss, fill, c->ss_len);
            free(fill);
            if (rc != 0) SPOT_FAIL("kem_enc to its public key returned %d", call, rc);
            if (none) SPOT_FAIL("kem_enc to its public key wrote no shared secret", call);
            spot_dec_agrees(c, call, "a ciphertext to its public key");
        } else if (kem && strcmp(c->op, "enc") == 0) {
            spot_dec_agrees(c, call, "its ciphertext");
        } else if (kem && strcmp(c->op, "dec") == 0) {
            if (memcmp(c->ss2.p, c->ss.p, (size_t)c->ss_len) != 0) SPOT_FAIL("kem_dec did not give enc's shared secret", call);
        } else if (!kem && strcmp(c->op, "keygen") == 0) {
            unsigned char *fill = NULL;
            refill(&c->sn, &fill);
            int rc = c->api.sig_sign(c->sk.p, c->sk_len, c->msg.p, MESSAGE_BYTES, c->sn.p, &c->sn_len);
            int none = !written(&c->sn, fill, c->sn_len);
            free(fill);
            if (rc != 0) SPOT_FAIL("sig_sign with its secret key returned %d", call, rc);
            if (none) SPOT_FAIL("sig_sign with its secret key wrote no signature", call);
            spot_signature_holds(c, call, "a signature with its keys");
        } else if (!kem && strcmp(c->op, "sign") == 0) {
            spot_signature_holds(c, call, "its signature");
        } else if (!kem && strcmp(c->op, "verify") == 0) {
            spot_signature_holds(c, call, "the signature");
        } else if (c->api.is_hash) {
            hash_spot_agrees(c, call);
        }
        for (int i = 0; i < n; i++) free(snap->bytes[i]);
    }
}
