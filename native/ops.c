#include "ops.h"
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

void ops_must(int rc, const char *what) {
    if (rc != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s returned %d", what, rc);
}

void ops_alloc(ctx_t *c) {
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

op_fn ops_prepare(ctx_t *c, const char *op) {
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
    guarded_t *all[] = {&c->pk, &c->sk, &c->ct, &c->ss, &c->ss2, &c->sn, &c->msg};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->base && guarded_violated(all[i], why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", why);
}
