#define _GNU_SOURCE
#include "harness.h"
#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fail(int code, const char *status, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line only: the detail becomes a field in build.json. */
    for (char *c = msg; *c; c++) if (*c == '\n' || *c == '\t') *c = ' ';
    fflush(stdout);
    printf("STATUS\t%s\t%s\n", status, msg);
    fflush(stdout);
    exit(code);
}

void meta_str(const char *key, const char *value) { printf("META\t%s\t%s\n", key, value); }
void meta_u64(const char *key, unsigned long long value) { printf("META\t%s\t%llu\n", key, value); }

static void *need(const api_t *api, const char *name) {
    void *sym = dlsym(api->handle, name);
    if (!sym) fail(EXIT_LOADFAIL, "LOADFAIL", "missing symbol %s", name);
    return sym;
}

void *api_optional(const api_t *api, const char *name) { return dlsym(api->handle, name); }

void api_load(api_t *api, const char *lib, const char *type) {
    memset(api, 0, sizeof *api);
    /* RTLD_NOW: an unresolved symbol is a load failure here, not a crash mid-measurement. */
    api->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) fail(EXIT_LOADFAIL, "LOADFAIL", "dlopen: %s", dlerror());
    if (strcmp(type, "kem") == 0) {
        api->pk_len = ((len_fn)need(api, "kem_get_pk_len_bytes"))();
        api->sk_len = ((len_fn)need(api, "kem_get_sk_len_bytes"))();
        api->ct_len = ((len_fn)need(api, "kem_get_ct_len_bytes"))();
        api->ss_len = ((len_fn)need(api, "kem_get_ss_len_bytes"))();
        api->kem_keygen = (kem_keygen_fn)need(api, "kem_keygen");
        api->kem_enc = (kem_enc_fn)need(api, "kem_enc");
        api->kem_dec = (kem_dec_fn)need(api, "kem_dec");
    } else if (strcmp(type, "sig") == 0) {
        api->is_sig = 1;
        api->pk_len = ((len_fn)need(api, "sig_get_pk_len_bytes"))();
        api->sk_len = ((len_fn)need(api, "sig_get_sk_len_bytes"))();
        api->sn_len = ((len_fn)need(api, "sig_get_sn_len_bytes"))();
        api->sig_keygen = (sig_keygen_fn)need(api, "sig_keygen");
        api->sig_sign = (sig_sign_fn)need(api, "sig_sign");
        api->sig_verify = (sig_verify_fn)need(api, "sig_verify");
    } else {
        fail(EXIT_USAGE, "USAGE", "unknown type %s", type);
    }
    api->drng_init = (drng_init_fn)api_optional(api, "init_random_number");
    api->drng_get = (drng_get_fn)api_optional(api, "get_random_number");
    api->drng_algorithm = api_optional(api, "drng_algorithm");
    api->nist_rng_init = (nist_rng_init_fn)api_optional(api, "randombytes_init");
    api->nist_rng = (nist_rng_fn)api_optional(api, "randombytes");
}

const char *api_seed_default(const api_t *api, const char *rng) {
    unsigned char seed[48];
    for (int i = 0; i < 48; i++) seed[i] = (unsigned char)i;
    int want_iccs = rng == NULL || strcmp(rng, "iccs-drng") == 0;
    int want_nist = rng == NULL || strcmp(rng, "nist-ctr-drbg") == 0;
    if (want_iccs && api->drng_init && api->drng_algorithm) {
        if (api->drng_init(api->drng_algorithm, seed, sizeof seed) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "init_random_number failed");
        return "iccs-drng";
    }
    if (want_nist && api->nist_rng_init) {
        api->nist_rng_init(seed, NULL, 256);
        return "nist-ctr-drbg";
    }
    if (rng != NULL)
        fail(EXIT_LOADFAIL, "LOADFAIL", "library has no %s entry points", rng);
    return "none";
}

void guarded_alloc(guarded_t *g, size_t len, const char *name) {
    g->base = malloc(len + 2 * GUARD_BYTES);
    if (!g->base) fail(EXIT_IOERROR, "ERROR", "out of memory allocating %s", name);
    memset(g->base, GUARD_VALUE, len + 2 * GUARD_BYTES);
    g->p = g->base + GUARD_BYTES;
    g->len = len;
    g->name = name;
}

void guarded_free(guarded_t *g) { free(g->base); g->base = g->p = NULL; }

int guarded_violated(const guarded_t *g, char *why, size_t why_len) {
    for (size_t i = 0; i < GUARD_BYTES; i++) {
        if (g->base[i] != GUARD_VALUE) {
            snprintf(why, why_len, "%s: write %zu bytes before the buffer", g->name, GUARD_BYTES - i);
            return 1;
        }
    }
    for (size_t i = GUARD_BYTES; i-- > 0;) {
        if (g->p[g->len + i] != GUARD_VALUE) {
            snprintf(why, why_len, "%s: write %zu bytes past the claimed %zu", g->name, i + 1, g->len);
            return 1;
        }
    }
    return 0;
}

unsigned long long proc_status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    size_t n = strlen(field);
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            kib = strtoull(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib * 1024ull;
}

int pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

void parse_loop_args(int argc, char **argv, const char *usage, const char *n_name, loop_args_t *a) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s\n", usage);
        exit(EXIT_USAGE);
    }
    a->lib = argv[1];
    a->type = argv[2];
    a->op = argv[3];
    a->n = strtoull(argv[4], NULL, 10);
    a->warmups = strtoull(argv[5], NULL, 10);
    a->cpu = argc > 6 ? atoi(argv[6]) : -1;
    a->rng = argc > 7 && strcmp(argv[7], "auto") != 0 ? argv[7] : NULL;
    if (a->n == 0) fail(EXIT_USAGE, "USAGE", "%s must be at least 1", n_name);
    if (a->cpu >= 0 && pin_to_cpu(a->cpu) != 0) fail(EXIT_USAGE, "USAGE", "cannot pin to cpu %d", a->cpu);
}
