/* The operations the drivers run, with their inputs prepared the same way everywhere:
 * enc after a keygen, dec after an enc, signatures on a 64-byte message (the guide's). */
#ifndef NGCC_OPS_H
#define NGCC_OPS_H
#include "harness.h"

#define MESSAGE_BYTES 64

typedef struct {
    api_t api;
    guarded_t pk, sk, ct, ss, ss2, sn, msg;
    unsigned long long pk_len, sk_len, ct_len, ss_len, sn_len;
} ctx_t;

typedef int (*op_fn)(ctx_t *);

/* Guarded buffers for the loaded API's sizes (api must be loaded). */
void ops_alloc(ctx_t *c);
/* Runs the operations OP depends on and returns OP; USAGE failure for an unknown name. */
op_fn ops_prepare(ctx_t *c, const char *op);
/* OVERFLOW failure if any guard byte was touched. */
void ops_check_guards(ctx_t *c);
/* CRYPTOFAIL failure on a non-zero return code. */
void ops_must(int rc, const char *what);
#endif
