/* The KAT job for type kex: the ICCS KAT_KEX.c generator (docs/method.md#key-exchange).
 * Seed DRNG from "seed"x16; per record: Count, Seed_Len, Seed (64 bytes from the seed DRNG), the
 * algorithm DRNG re-seeded with it, Pass_Num, then the outputs of every step in order (PKa, SKa,
 * Init_Sta; PKb, SKb, Init_Stb; PassK_Sta or PassK_Stb and MK for each pass), SS, a blank line.
 * Every record is an honest exchange (kex_exchange): passes, return codes, lengths, equal secrets.
 * After the records, FRESH_EXCHANGES more from seeds the library cannot know (getrandom), written
 * to no file: each must be honest, and their secrets must differ, so precomputed answers to the
 * official seeds do not pass. A field `piece=FROM:TO` splits it as the KEM and signature KATs
 * (native/jobs/kat.c): every record's seed is drawn, records FROM..TO-1 exchanged and written, the
 * fresh exchanges only in the piece marked `:fresh`. */
#include "core/kex_ops.h"
#include "jobs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEX_DRNG_CTX_BYTES 512 /* DRNG_ctx is 3*55 bytes; room to spare, as in kat.c */
#define FRESH_EXCHANGES 2

static void hex(FILE *out, const char *key, const unsigned char *p, unsigned long long n) {
    fprintf(out, "%s = ", key);
    for (unsigned long long i = 0; i < n; i++) fprintf(out, "%02X", p[i]);
    fputc('\n', out);
}

static void both(FILE *out, const char *key, const unsigned char *p, unsigned long long n) {
    char len_key[48];
    snprintf(len_key, sizeof len_key, "%s_Len", key);
    fprintf(out, "%s = %llu\n", len_key, n);
    hex(out, key, p, n);
}

/* The generator's lines for one step, right after it ran. */
static void print_step(kex_t *k, int step, void *arg) {
    FILE *out = arg;
    int last = kex_steps(k) - 1;
    if (step == 0) {
        both(out, "PKa", k->pka.p, k->pka_n);
        both(out, "SKa", k->ska.p, k->ska_n);
        both(out, "Init_Sta", k->sta.p, k->sta_n);
    } else if (step == 1) {
        both(out, "PKb", k->pkb.p, k->pkb_n);
        both(out, "SKb", k->skb.p, k->skb_n);
        both(out, "Init_Stb", k->stb.p, k->stb_n);
    } else if (step < last - 1) {
        int p = step - 1;
        char st[24], m[16];
        snprintf(st, sizeof st, "Pass%d_St%c", p, p % 2 ? 'a' : 'b');
        snprintf(m, sizeof m, "M%d", p);
        if (p % 2) both(out, st, k->sta.p, k->sta_n);
        else both(out, st, k->stb.p, k->stb_n);
        both(out, m, k->m[p].p, k->m_n[p]);
    } else if (step == last) {
        both(out, "SS", k->ssa.p, k->ssa_n);
        fputc('\n', out);
    }
}

int kat_kex_main(const api_t *a, const char *mode) {
    if (strcmp(mode, "iccs") != 0) fail(EXIT_USAGE, "USAGE", "a key exchange has only the ICCS KAT (mode iccs), not %s", mode);
    if (!a->drng_init || !a->drng_get || !a->drng_algorithm)
        fail(EXIT_LOADFAIL, "LOADFAIL", "ICCS KAT needs init_random_number, get_random_number and drng_algorithm");
    kex_t k;
    kex_load(&k, a);
    kex_alloc(&k);
    kex_meta(&k);
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out) fail(EXIT_IOERROR, "ERROR", "cannot hold the KAT text");
    unsigned char nonce[64], seed[64], drng_seed[KEX_DRNG_CTX_BYTES];
    for (int i = 0; i < 16; i++) memcpy(nonce + 4 * i, "seed", 4);
    if (kat_unseen) memcpy(nonce, kat_unseen_seed, 64);
    if (a->drng_init(drng_seed, nonce, 64) != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "init_random_number(seed DRNG) failed");
    k.after = print_step;
    k.after_arg = out;
    for (unsigned long long i = 0; i < kat_to; i++) {
        char context[40];
        snprintf(context, sizeof context, "record %llu", i);
        if (a->drng_get(drng_seed, seed, 512) != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s: get_random_number(seed DRNG) failed", context);
        if (i < kat_from) continue; /* another piece's record: its seed drawn, as in the serial run */
        fprintf(out, "Count = %llu\n", i);
        both(out, "Seed", seed, 64);
        if (a->drng_init(a->drng_algorithm, seed, 64) != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s: init_random_number failed", context);
        fprintf(out, "Pass_Num = %llu\n", k.passes);
        kex_exchange(&k, context);
        kex_check_guards(&k);
    }
    k.after = NULL;
    unsigned char *prev = malloc(k.ss_len ? k.ss_len : 1);
    if (!prev) fail(EXIT_IOERROR, "ERROR", "out of memory");
    unsigned long long prev_n = 0;
    for (int f = 0; f < (kat_fresh ? FRESH_EXCHANGES : 0); f++) {
        kat_fresh_started(f);
        char context[40];
        snprintf(context, sizeof context, "fresh seed %d", f);
        random_fill(seed, sizeof seed);
        if (a->drng_init(a->drng_algorithm, seed, 64) != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s: init_random_number failed", context);
        kex_exchange(&k, context);
        kex_check_guards(&k);
        if (f > 0 && prev_n == k.ssa_n && memcmp(prev, k.ssa.p, (size_t)k.ssa_n) == 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "%s: the same shared secret as from another fresh seed", context);
        memcpy(prev, k.ssa.p, (size_t)k.ssa_n);
        prev_n = k.ssa_n;
    }
    free(prev);
    kex_meta(&k);
    if (fclose(out) != 0) fail(EXIT_IOERROR, "ERROR", "cannot hold the KAT text");
    proto_data("KAT", (const unsigned char *)text, text_len);
    free(text);
    meta_u64("records", kat_to - kat_from);
    proto_line("STATUS\tPASS");
    return EXIT_OK;
}
