/* N calls of one KEM operation on an UNWRAPPED library, in a function callgrind can toggle on:
 *   callgrind_loop LIB keygen|enc|dec N
 * Used by bench/callgrind.mjs to cross-check the wrappers' hash shares. */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static api_t api;
static unsigned char pk[1 << 16], sk[1 << 16], ct[1 << 16], ss[256], ss2[256];
static unsigned long long pkl, skl, ctl, ssl, ssl2;

__attribute__((noinline)) void loop_keygen(int n) { for (int i = 0; i < n; i++) if (api.kem_keygen(pk, &pkl, sk, &skl)) abort(); }
__attribute__((noinline)) void loop_enc(int n) { for (int i = 0; i < n; i++) if (api.kem_enc(pk, pkl, ss, &ssl, ct, &ctl)) abort(); }
__attribute__((noinline)) void loop_dec(int n) { for (int i = 0; i < n; i++) if (api.kem_dec(sk, skl, ct, ctl, ss2, &ssl2)) abort(); }

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    const char *op = argv[2];
    int n = atoi(argv[3]);
    api_load(&api, argv[1], "kem");
    api_seed_default(&api, NULL);
    if (api.kem_keygen(pk, &pkl, sk, &skl) || api.kem_enc(pk, pkl, ss, &ssl, ct, &ctl)) abort();
    if (!strcmp(op, "keygen")) loop_keygen(n);
    else if (!strcmp(op, "enc")) loop_enc(n);
    else loop_dec(n);
    return 0;
}
