/* The operations the drivers run, with their inputs prepared the same way everywhere:
 * enc after a keygen, dec after an enc, signatures on a 64-byte message (the guide's). */
#ifndef NGCC_OPS_H
#define NGCC_OPS_H
#include "harness.h"
#include "kex_ops.h"

#define MESSAGE_BYTES 64

typedef struct {
    api_t api;
    const char *op; /* the operation ops_prepare set up */
    guarded_t pk, sk, ct, ss, ss2, sn, msg;
    unsigned long long pk_len, sk_len, ct_len, ss_len, sn_len;
    guarded_t digest; /* hash (native/core/hash_ops.c): msg holds the message */
    unsigned long long msg_bytes, digest_len;
    kex_t *kex; /* type kex: every operation is a full exchange, one span of it counted (kex_ops.h) */
} ctx_t;

typedef int (*op_fn)(ctx_t *);

/* Guarded buffers for the loaded API's sizes (api must be loaded). */
void ops_alloc(ctx_t *c);
/* Runs the operations OP depends on and returns OP; USAGE failure for an unknown name. */
op_fn ops_prepare(ctx_t *c, const char *op);
/* Names the operation without preparing anything for it: its inputs come from elsewhere (dec's file). */
void ops_name(ctx_t *c, const char *op);
/* OVERFLOW failure if any guard byte was touched. */
void ops_check_guards(ctx_t *c);
/* CRYPTOFAIL failure on a non-zero return code. */
void ops_must(int rc, const char *what);

/* Spot checks (docs/method.md#spot-checks): a few calls of the measured loop, chosen at random
 * before the library is loaded, have their outputs overwritten with random bytes before the call,
 * and after it must have written them; a copy is kept, and once the loop is over (outside the
 * counted time and the marks) each copy must be consistent: dec recovers enc's secret, a
 * signature verifies and one flipped message bit is refused. A library that skips work, or does
 * other work, whenever it guesses it is being timed rather than KAT-checked is CRYPTOFAIL. */
#define MAX_SPOT_CHECKS 8
typedef struct {
    unsigned long long call;
    unsigned char *bytes[2];
    unsigned long long len[2];
} snapshot_t;
typedef struct {
    unsigned long long at[MAX_SPOT_CHECKS];
    int count, next;
    unsigned char *fill[2];
    snapshot_t snap[MAX_SPOT_CHECKS];
} spots_t;
/* Chooses min(wanted, calls, MAX_SPOT_CHECKS) distinct calls among 0..calls-1. */
void spots_plan(spots_t *s, unsigned long long calls, unsigned long long wanted);
static inline int spots_due(const spots_t *s, unsigned long long call) { return s->next < s->count && s->at[s->next] == call; }
/* Before the chosen call: its outputs become random bytes. */
void spots_before(ctx_t *c, spots_t *s);
/* After it: each output must have been written; a copy is kept for spots_verify. */
void spots_after(ctx_t *c, spots_t *s, unsigned long long call);
/* After the loop: the copies' consistency; CRYPTOFAIL naming the call and the check. */
void spots_verify(ctx_t *c, spots_t *s);
#endif
