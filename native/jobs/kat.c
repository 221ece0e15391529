/* The KAT job of ngcc_driver: replays the official KAT generators against a built library.
 *   ngcc_driver LIB kat TYPE MODE RECORDS [NIST_PREFIX]
 * TYPE kem|sig|kex (kex: native/jobs/kat_kex.c). MODE iccs: the ICCS KAT_KEM.c / KAT_SIG.c logic (ICCS DRNG, KAT_*.txt format).
 * MODE nist: NIST PQCgenKAT logic (AES-256-CTR DRBG seeded with 00..2f, .rsp format), calling the
 * NIST entry points NIST_PREFIX crypto_kem_* / crypto_sign_* directly.
 * Every output buffer has 4096 guard bytes (a page) of 0xA5 on both sides.
 * The KAT text goes to the parent as KAT lines (base64, docs/native-protocol.md), never to a file
 * the library could reach. Reports META lines and finally "STATUS PASS" (the TypeScript side
 * compares digests), or
 * "STATUS CRYPTOFAIL|OVERFLOW|LOADFAIL detail" with the matching exit code; then END
 * (docs/native-protocol.md).
 * After the official records, FRESH_RECORDS more run from seeds the library cannot know in advance
 * (getrandom): KEM enc/dec must agree and a flipped ciphertext bit must change the secret or be
 * refused; a signature must verify and a flipped bit must be refused; fresh keys must differ. They
 * are not part of the KAT text: precomputed answers to the official seeds pass the digest, not these.
 * With a field `unseen=HEX` (128 hex digits, anywhere after TYPE) the same procedure starts from that
 * seed instead of the published one (docs/method.md#unseen-seeds): the ICCS seed DRNG's nonce (the
 * message DRNG's keeps its published difference from it), NIST's first 48 bytes of entropy, a hash
 * file's DRNG seed XOR the file's name. The published seed given as unseen gives the published KAT.
 * With a field `piece=FROM:TO` (anywhere after TYPE) only records FROM..TO-1 are computed and sent
 * (docs/method.md#kat-in-pieces): the earlier records' seeds and messages are still drawn, in the
 * official order, so each computed record is the serial run's; the NIST header and the fresh seeds
 * only in the piece that starts at 0, the fresh seeds only in the piece marked `:fresh`
 * (`piece=FROM:TO:fresh`; `piece=N:N:fresh`, after the last of N records, runs them alone). The
 * pieces' texts, joined in order, are the serial text. */
#include "core/harness.h"
#include "jobs.h"
#include "core/kex_ops.h"
#include "core/cpucycles.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRNG_CTX_BYTES 512 /* DRNG_ctx is 3*55 bytes; room to spare for variants */

static FILE *out;
unsigned char kat_unseen_seed[KAT_UNSEEN_BYTES];
int kat_unseen;

static void take_unseen(const char *hex) {
    if (strlen(hex) != 2 * KAT_UNSEEN_BYTES) fail(EXIT_USAGE, "USAGE", "unseen= takes %d hex digits", 2 * KAT_UNSEEN_BYTES);
    for (int k = 0; k < KAT_UNSEEN_BYTES; k++) {
        unsigned v;
        if (sscanf(hex + 2 * k, "%2x", &v) != 1) fail(EXIT_USAGE, "USAGE", "unseen= takes hex digits");
        kat_unseen_seed[k] = (unsigned char)v;
    }
    kat_unseen = 1;
}

unsigned long long kat_from, kat_to;
int kat_piece, kat_fresh = 1;
static unsigned long long piece_from, piece_to;
static int piece_fresh;

static void take_piece(const char *range) {
    char *end = NULL;
    if (range[0] < '0' || range[0] > '9') fail(EXIT_USAGE, "USAGE", "piece= takes FROM:TO[:fresh], record numbers");
    piece_from = strtoull(range, &end, 10);
    if (*end != ':' || end[1] < '0' || end[1] > '9') fail(EXIT_USAGE, "USAGE", "piece= takes FROM:TO[:fresh], record numbers");
    piece_to = strtoull(end + 1, &end, 10);
    piece_fresh = strcmp(end, ":fresh") == 0;
    if (*end != '\0' && !piece_fresh) fail(EXIT_USAGE, "USAGE", "piece= takes FROM:TO[:fresh], record numbers");
    kat_piece = 1;
}

void kat_piece_range(unsigned long long records) {
    kat_from = kat_piece ? piece_from : 0;
    kat_to = kat_piece ? piece_to : records;
    kat_fresh = !kat_piece || piece_fresh;
    /* Empty only as the fresh checks alone, after the last record. */
    int fresh_alone = piece_fresh && piece_from == records && piece_to == records;
    if (kat_piece && !fresh_alone && (piece_from >= piece_to || piece_to > records))
        fail(EXIT_USAGE, "USAGE", "piece=%llu:%llu is not a non-empty range of the %llu records", piece_from, piece_to, records);
}

/* Takes the fields `unseen=HEX` and `piece=FROM:TO` out of f[3..n); returns the fields left. */
static int take_fields(int n, char **f) {
    static const char unseen[] = "unseen=", piece[] = "piece=";
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (i >= 3 && strncmp(f[i], unseen, sizeof unseen - 1) == 0) take_unseen(f[i] + sizeof unseen - 1);
        else if (i >= 3 && strncmp(f[i], piece, sizeof piece - 1) == 0) take_piece(f[i] + sizeof piece - 1);
        else f[kept++] = f[i];
    }
    return kept;
}

/* What the KAT's records show of each operation's calls, reported as META for the parent:
 * draws_<op>, the fewest generator draws (api_draws) one call of keygen, enc or sign made, which a
 * timed call must reach; call_s_<op>, the longest a call took, which the later phases' timeouts
 * follow (src/measure/cost.ts). */
enum { CALL_KEYGEN, CALL_ENC, CALL_SIGN, CALL_DEC, CALL_VERIFY, CALL_OPS };
static const char *const call_names[CALL_OPS] = {"keygen", "enc", "sign", "dec", "verify"};
#define DRAWING_OPS 3 /* keygen, enc, sign: the first three */
static unsigned long long draw_min[CALL_OPS];
static int draw_seen[CALL_OPS];
static double call_max_s[CALL_OPS];
static int call_seen[CALL_OPS];
static const char *draw_rng; /* the generator the records use: "iccs-drng" or "nist-ctr-drbg" */

static void note_call(int op, int known, unsigned long long before, double seconds, const api_t *a) {
    if (!call_seen[op] || seconds > call_max_s[op]) call_max_s[op] = seconds;
    call_seen[op] = 1;
    unsigned long long after;
    if (!known || api_draws(a, draw_rng, &after) != 0 || after < before) return;
    if (!draw_seen[op] || after - before < draw_min[op]) draw_min[op] = after - before;
    draw_seen[op] = 1;
}
/* Runs CALL and notes its time and the draws it made under operation OP. */
#define OBSERVED(op, call)                                                             \
    do {                                                                               \
        unsigned long long draws_before_ = 0;                                          \
        int draws_known_ = api_draws(a, draw_rng, &draws_before_) == 0;                \
        double started_ = wallclock_seconds();                                         \
        call;                                                                          \
        note_call(op, draws_known_, draws_before_, wallclock_seconds() - started_, a); \
    } while (0)

/* After the first record computed: its time tells the parent how long the KAT will take (its timeout). */
static void first_record_done(unsigned long long i) {
    if (i == kat_from) proto_mark("kat-record");
}

void kat_fresh_started(int f) {
    if (f == 1 && kat_from == kat_to) proto_mark("kat-record");
}

static void put_hex(const char *key, const unsigned char *p, unsigned long long n) {
    fprintf(out, "%s = ", key);
    for (unsigned long long i = 0; i < n; i++) fprintf(out, "%02X", p[i]);
    fputc('\n', out);
}

static void put_len(const char *key, unsigned long long n) { fprintf(out, "%s = %llu\n", key, n); }

static void check(const guarded_t *g, unsigned long long used) {
    char why[200];
    if (guarded_violated(g, why, sizeof why)) fail(EXIT_OVERFLOW, "OVERFLOW", "%s", why);
    if (used > g->len) fail(EXIT_OVERFLOW, "OVERFLOW", "%s: reported length %llu exceeds the claimed %zu", g->name, used, g->len);
}

static void must(int rc, const char *what, unsigned long long record) {
    if (rc != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "record %llu: %s returned %d", record, what, rc);
}

static void drng_or_fail(const api_t *api) {
    if (!api->drng_init || !api->drng_get || !api->drng_algorithm)
        fail(EXIT_LOADFAIL, "LOADFAIL", "ICCS KAT needs init_random_number, get_random_number and drng_algorithm");
}

/* ---- Fresh seeds ---- */
#define FRESH_RECORDS 2

/* Checks one fresh KEM record after dec of the ciphertext with one flipped bit wrote `flipped`: it
 * was refused or gave another secret than enc's `ss`; the public key differs from the previous
 * fresh one (kept in prev_pk). */
static void fresh_kem_check(int fresh, const guarded_t *pk, size_t pk_len, unsigned char *prev_pk, const guarded_t *ss, size_t ss_len,
                            int flipped_rc, const unsigned char *flipped) {
    if (flipped_rc == 0 && memcmp(flipped, ss->p, ss_len) == 0)
        fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: dec of a ciphertext with one flipped bit gave the same shared secret", fresh);
    if (fresh > 0 && memcmp(prev_pk, pk->p, pk_len) == 0)
        fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: the same public key as from another fresh seed", fresh);
    memcpy(prev_pk, pk->p, pk_len);
}

static unsigned char *alloc_or_fail(size_t n) {
    unsigned char *p = malloc(n ? n : 1);
    if (!p) fail(EXIT_IOERROR, "ERROR", "out of memory");
    return p;
}

/* ---- ICCS KAT_KEM / KAT_SIG ---- */
static void published_nonce(unsigned char nonce[64], const char *word, const char *tail) {
    size_t w = strlen(word), pos = 0;
    while (pos + w <= 64 - strlen(tail)) {
        memcpy(nonce + pos, word, w);
        pos += w;
    }
    memcpy(nonce + pos, tail, strlen(tail));
}

/* The nonce of a KAT DRNG. From an unseen seed, the seed DRNG's is the seed itself and every other
 * keeps its published difference from the seed DRNG's: the published seed nonce as the unseen seed
 * gives the published KAT exactly. */
static void iccs_nonce(unsigned char nonce[64], const char *word, const char *tail) {
    published_nonce(nonce, word, tail);
    if (!kat_unseen) return;
    unsigned char seed_nonce[64];
    published_nonce(seed_nonce, "seed", "");
    for (int i = 0; i < 64; i++) nonce[i] ^= (unsigned char)(seed_nonce[i] ^ kat_unseen_seed[i]);
}

static void iccs_kem(api_t *a) {
    unsigned char nonce[64], seed[64], drng_seed[DRNG_CTX_BYTES];
    drng_or_fail(a);
    iccs_nonce(nonce, "seed", "");
    must(a->drng_init(drng_seed, nonce, 64), "init_random_number(seed DRNG)", 0);
    guarded_t pk, sk, ct, ss, ss2;
    guarded_alloc(&pk, a->pk_len, "pk");
    guarded_alloc(&sk, a->sk_len, "sk");
    guarded_alloc(&ct, a->ct_len, "ct");
    guarded_alloc(&ss, a->ss_len, "ss (enc)");
    guarded_alloc(&ss2, a->ss_len, "ss (dec)");
    for (unsigned long long i = 0; i < kat_to; i++) {
        unsigned long long pk_len = 0, sk_len = 0, ct_len = 0, ss_len = 0, ss2_len = 0;
        must(a->drng_get(drng_seed, seed, 512), "get_random_number(seed DRNG)", i);
        if (i < kat_from) continue; /* another piece's record: its seed drawn, as in the serial run */
        must(a->drng_init(a->drng_algorithm, seed, 64), "init_random_number", i);
        OBSERVED(CALL_KEYGEN, must(a->kem_keygen(pk.p, &pk_len, sk.p, &sk_len), "kem_keygen", i));
        check(&pk, pk_len);
        check(&sk, sk_len);
        OBSERVED(CALL_ENC, must(a->kem_enc(pk.p, pk_len, ss.p, &ss_len, ct.p, &ct_len), "kem_enc", i));
        check(&ss, ss_len);
        check(&ct, ct_len);
        OBSERVED(CALL_DEC, must(a->kem_dec(sk.p, sk_len, ct.p, ct_len, ss2.p, &ss2_len), "kem_dec", i));
        check(&ss2, ss2_len);
        if (ss_len != ss2_len || memcmp(ss.p, ss2.p, ss_len) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "record %llu: shared secrets of enc and dec differ", i);
        fprintf(out, "Count = %llu\n", i);
        put_len("Seed_Len", 64);
        put_hex("Seed", seed, 64);
        put_len("PK_Len", pk_len);
        put_hex("PK", pk.p, pk_len);
        put_len("SK_Len", sk_len);
        put_hex("SK", sk.p, sk_len);
        put_len("CT_Len", ct_len);
        put_hex("CT", ct.p, ct_len);
        put_len("SS_Len", ss_len);
        put_hex("SS", ss.p, ss_len);
        fputc('\n', out);
        first_record_done(i);
    }
    unsigned char *prev_pk = alloc_or_fail(a->pk_len);
    for (int f = 0; f < (kat_fresh ? FRESH_RECORDS : 0); f++) {
        kat_fresh_started(f);
        unsigned long long pk_len = 0, sk_len = 0, ct_len = 0, ss_len = 0, ss2_len = 0, ss3_len = 0;
        random_fill(seed, sizeof seed);
        must(a->drng_init(a->drng_algorithm, seed, 64), "init_random_number (fresh seed)", (unsigned long long)f);
        must(a->kem_keygen(pk.p, &pk_len, sk.p, &sk_len), "kem_keygen (fresh seed)", (unsigned long long)f);
        check(&pk, pk_len);
        check(&sk, sk_len);
        must(a->kem_enc(pk.p, pk_len, ss.p, &ss_len, ct.p, &ct_len), "kem_enc (fresh seed)", (unsigned long long)f);
        check(&ss, ss_len);
        check(&ct, ct_len);
        must(a->kem_dec(sk.p, sk_len, ct.p, ct_len, ss2.p, &ss2_len), "kem_dec (fresh seed)", (unsigned long long)f);
        check(&ss2, ss2_len);
        if (ss_len != ss2_len || memcmp(ss.p, ss2.p, ss_len) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: shared secrets of enc and dec differ", f);
        ct.p[0] ^= 1;
        int rc = a->kem_dec(sk.p, sk_len, ct.p, ct_len, ss2.p, &ss3_len);
        if (rc == 0) check(&ss2, ss3_len);
        fresh_kem_check(f, &pk, pk_len, prev_pk, &ss, ss_len, rc, ss2.p);
    }
    free(prev_pk);
}

static void iccs_sig(api_t *a, unsigned long long records) {
    unsigned char nonce[64], mnonce[64], seed[64], drng_seed[DRNG_CTX_BYTES], drng_msg[DRNG_CTX_BYTES];
    drng_or_fail(a);
    iccs_nonce(nonce, "seed", "");
    iccs_nonce(mnonce, "msg", "m");
    must(a->drng_init(drng_seed, nonce, 64), "init_random_number(seed DRNG)", 0);
    must(a->drng_init(drng_msg, mnonce, 64), "init_random_number(message DRNG)", 0);
    unsigned long long max_m = 56 + 8 * (records ? records - 1 : 0);
    guarded_t pk, sk, sn, m;
    guarded_alloc(&pk, a->pk_len, "pk");
    guarded_alloc(&sk, a->sk_len, "sk");
    guarded_alloc(&sn, a->sn_len, "signature");
    guarded_alloc(&m, max_m, "message");
    for (unsigned long long i = 0; i < kat_to; i++) {
        unsigned long long pk_len = 0, sk_len = 0, sn_len = 0, m_len = 56 + 8 * i;
        must(a->drng_get(drng_seed, seed, 512), "get_random_number(seed DRNG)", i);
        if (i < kat_from) { /* another piece's record: its seed and message drawn, as in the serial run */
            must(a->drng_get(drng_msg, m.p, 8 * m_len), "get_random_number(message DRNG)", i);
            continue;
        }
        must(a->drng_init(a->drng_algorithm, seed, 64), "init_random_number", i);
        OBSERVED(CALL_KEYGEN, must(a->sig_keygen(pk.p, &pk_len, sk.p, &sk_len), "sig_keygen", i));
        check(&pk, pk_len);
        check(&sk, sk_len);
        must(a->drng_get(drng_msg, m.p, 8 * m_len), "get_random_number(message DRNG)", i);
        OBSERVED(CALL_SIGN, must(a->sig_sign(sk.p, sk_len, m.p, m_len, sn.p, &sn_len), "sig_sign", i));
        check(&sn, sn_len);
        check(&m, m_len);
        int v = 0;
        OBSERVED(CALL_VERIFY, v = a->sig_verify(pk.p, pk_len, sn.p, sn_len, m.p, m_len));
        if (v != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "record %llu: sig_verify rejected a fresh signature (%d)", i, v);
        fprintf(out, "Count = %llu\n", i);
        put_len("Seed_Len", 64);
        put_hex("Seed", seed, 64);
        put_len("PK_Len", pk_len);
        put_hex("PK", pk.p, pk_len);
        put_len("SK_Len", sk_len);
        put_hex("SK", sk.p, sk_len);
        put_len("M_Len", m_len);
        put_hex("M", m.p, m_len);
        put_len("Sn_Len", sn_len);
        put_hex("Sn", sn.p, sn_len);
        fputc('\n', out);
        first_record_done(i);
    }
    unsigned char *prev_pk = alloc_or_fail(a->pk_len);
    for (int f = 0; f < (kat_fresh ? FRESH_RECORDS : 0); f++) {
        kat_fresh_started(f);
        unsigned long long pk_len = 0, sk_len = 0, sn_len = 0, m_len = 56 < max_m ? 56 : max_m;
        random_fill(seed, sizeof seed);
        must(a->drng_init(a->drng_algorithm, seed, 64), "init_random_number (fresh seed)", (unsigned long long)f);
        must(a->sig_keygen(pk.p, &pk_len, sk.p, &sk_len), "sig_keygen (fresh seed)", (unsigned long long)f);
        check(&pk, pk_len);
        check(&sk, sk_len);
        random_fill(m.p, m_len);
        must(a->sig_sign(sk.p, sk_len, m.p, m_len, sn.p, &sn_len), "sig_sign (fresh seed)", (unsigned long long)f);
        check(&sn, sn_len);
        int v = a->sig_verify(pk.p, pk_len, sn.p, sn_len, m.p, m_len);
        if (v != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: sig_verify rejected a fresh signature (%d)", f, v);
        m.p[0] ^= 1;
        if (a->sig_verify(pk.p, pk_len, sn.p, sn_len, m.p, m_len) == 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: sig_verify accepted a message with one flipped bit", f);
        if (f > 0 && memcmp(prev_pk, pk.p, pk_len) == 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: the same public key as from another fresh seed", f);
        memcpy(prev_pk, pk.p, pk_len);
    }
    free(prev_pk);
}

/* ---- NIST PQCgenKAT ---- */
typedef int (*nist_kem_keypair_fn)(unsigned char *, unsigned char *);
typedef int (*nist_kem_enc_fn)(unsigned char *, unsigned char *, const unsigned char *);
typedef int (*nist_kem_dec_fn)(unsigned char *, const unsigned char *, const unsigned char *);
typedef int (*nist_sign_fn)(unsigned char *, size_t *, const unsigned char *, size_t, const unsigned char *);
typedef int (*nist_open_fn)(unsigned char *, size_t *, const unsigned char *, size_t, const unsigned char *);

static void *nist_sym(const api_t *a, const char *prefix, const char *name) {
    char full[256];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    void *s = api_optional(a, full);
    if (!s) fail(EXIT_LOADFAIL, "LOADFAIL", "missing symbol %s", full);
    return s;
}

static void nist_rng_or_fail(const api_t *a) {
    if (!a->nist_rng_init || !a->nist_rng) fail(EXIT_LOADFAIL, "LOADFAIL", "NIST KAT needs randombytes_init and randombytes");
}

static void nist_kem(api_t *a, unsigned long long records, const char *prefix) {
    nist_kem_keypair_fn keypair = (nist_kem_keypair_fn)nist_sym(a, prefix, "crypto_kem_keypair");
    nist_kem_enc_fn enc = (nist_kem_enc_fn)nist_sym(a, prefix, "crypto_kem_enc");
    nist_kem_dec_fn dec = (nist_kem_dec_fn)nist_sym(a, prefix, "crypto_kem_dec");
    nist_rng_or_fail(a);
    unsigned char entropy[48], (*seeds)[48] = malloc((records ? records : 1) * 48);
    if (!seeds) fail(EXIT_IOERROR, "ERROR", "out of memory");
    for (int i = 0; i < 48; i++) entropy[i] = kat_unseen ? kat_unseen_seed[i] : (unsigned char)i;
    a->nist_rng_init(entropy, NULL, 256);
    for (unsigned long long i = 0; i < records; i++) a->nist_rng(seeds[i], 48);
    guarded_t pk, sk, ct, ss, ss2;
    guarded_alloc(&pk, a->pk_len, "pk");
    guarded_alloc(&sk, a->sk_len, "sk");
    guarded_alloc(&ct, a->ct_len, "ct");
    guarded_alloc(&ss, a->ss_len, "ss (enc)");
    guarded_alloc(&ss2, a->ss_len, "ss (dec)");
    for (unsigned long long i = kat_from; i < kat_to; i++) {
        a->nist_rng_init(seeds[i], NULL, 256);
        OBSERVED(CALL_KEYGEN, must(keypair(pk.p, sk.p), "crypto_kem_keypair", i));
        check(&pk, 0);
        check(&sk, 0);
        OBSERVED(CALL_ENC, must(enc(ct.p, ss.p, pk.p), "crypto_kem_enc", i));
        check(&ct, 0);
        check(&ss, 0);
        OBSERVED(CALL_DEC, must(dec(ss2.p, ct.p, sk.p), "crypto_kem_dec", i));
        check(&ss2, 0);
        if (memcmp(ss.p, ss2.p, a->ss_len) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "record %llu: shared secrets of enc and dec differ", i);
        fprintf(out, "count = %llu\n", i);
        put_hex("seed", seeds[i], 48);
        put_hex("pk", pk.p, a->pk_len);
        put_hex("sk", sk.p, a->sk_len);
        put_hex("ct", ct.p, a->ct_len);
        put_hex("ss", ss.p, a->ss_len);
        fputc('\n', out);
        first_record_done(i);
    }
    free(seeds);
    unsigned char fresh[48], *prev_pk = alloc_or_fail(a->pk_len);
    for (int f = 0; f < (kat_fresh ? FRESH_RECORDS : 0); f++) {
        kat_fresh_started(f);
        random_fill(fresh, sizeof fresh);
        a->nist_rng_init(fresh, NULL, 256);
        must(keypair(pk.p, sk.p), "crypto_kem_keypair (fresh seed)", (unsigned long long)f);
        must(enc(ct.p, ss.p, pk.p), "crypto_kem_enc (fresh seed)", (unsigned long long)f);
        must(dec(ss2.p, ct.p, sk.p), "crypto_kem_dec (fresh seed)", (unsigned long long)f);
        check(&pk, 0);
        check(&ct, 0);
        check(&ss2, 0);
        if (memcmp(ss.p, ss2.p, a->ss_len) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: shared secrets of enc and dec differ", f);
        ct.p[0] ^= 1;
        int rc = dec(ss2.p, ct.p, sk.p);
        check(&ss2, 0);
        fresh_kem_check(f, &pk, a->pk_len, prev_pk, &ss, a->ss_len, rc, ss2.p);
    }
    free(prev_pk);
}

static void nist_sig(api_t *a, unsigned long long records, const char *prefix) {
    nist_kem_keypair_fn keypair = (nist_kem_keypair_fn)nist_sym(a, prefix, "crypto_sign_keypair");
    nist_sign_fn sign = (nist_sign_fn)nist_sym(a, prefix, "crypto_sign");
    nist_open_fn open_ = (nist_open_fn)nist_sym(a, prefix, "crypto_sign_open");
    nist_rng_or_fail(a);
    unsigned char entropy[48];
    for (int i = 0; i < 48; i++) entropy[i] = kat_unseen ? kat_unseen_seed[i] : (unsigned char)i;
    a->nist_rng_init(entropy, NULL, 256);
    /* PQCgenKAT_sign draws seed and message of every record first, in this order. */
    unsigned char(*seeds)[48] = malloc((records ? records : 1) * 48);
    unsigned char **msgs = calloc(records ? records : 1, sizeof *msgs);
    if (!seeds || !msgs) fail(EXIT_IOERROR, "ERROR", "out of memory");
    for (unsigned long long i = 0; i < records; i++) {
        a->nist_rng(seeds[i], 48);
        msgs[i] = malloc(33 * (i + 1));
        if (!msgs[i]) fail(EXIT_IOERROR, "ERROR", "out of memory");
        a->nist_rng(msgs[i], 33 * (i + 1));
    }
    unsigned long long max_m = 33 * (records ? records : 1);
    guarded_t pk, sk, sm, m2;
    guarded_alloc(&pk, a->pk_len, "pk");
    guarded_alloc(&sk, a->sk_len, "sk");
    guarded_alloc(&sm, max_m + a->sn_len, "signed message");
    guarded_alloc(&m2, max_m + a->sn_len, "opened message");
    for (unsigned long long i = kat_from; i < kat_to; i++) {
        size_t mlen = 33 * (i + 1), smlen = 0, m2len = 0;
        a->nist_rng_init(seeds[i], NULL, 256);
        OBSERVED(CALL_KEYGEN, must(keypair(pk.p, sk.p), "crypto_sign_keypair", i));
        check(&pk, 0);
        check(&sk, 0);
        OBSERVED(CALL_SIGN, must(sign(sm.p, &smlen, msgs[i], mlen, sk.p), "crypto_sign", i));
        if (smlen > mlen + a->sn_len) fail(EXIT_OVERFLOW, "OVERFLOW", "record %llu: smlen %zu exceeds mlen + CRYPTO_BYTES", i, smlen);
        check(&sm, smlen);
        int v = 0;
        OBSERVED(CALL_VERIFY, v = open_(m2.p, &m2len, sm.p, smlen, pk.p));
        check(&m2, m2len);
        if (v != 0 || m2len != mlen || memcmp(m2.p, msgs[i], mlen) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "record %llu: crypto_sign_open did not return the message", i);
        fprintf(out, "count = %llu\n", i);
        put_hex("seed", seeds[i], 48);
        put_len("mlen", mlen);
        put_hex("msg", msgs[i], mlen);
        put_hex("pk", pk.p, a->pk_len);
        put_hex("sk", sk.p, a->sk_len);
        put_len("smlen", smlen);
        put_hex("sm", sm.p, smlen);
        fputc('\n', out);
        first_record_done(i);
    }
    for (unsigned long long i = 0; i < records; i++) free(msgs[i]);
    free(msgs);
    free(seeds);
    unsigned char fresh[48], msg[33], *prev_pk = alloc_or_fail(a->pk_len);
    for (int f = 0; f < (kat_fresh ? FRESH_RECORDS : 0); f++) {
        kat_fresh_started(f);
        size_t smlen = 0, m2len = 0;
        random_fill(fresh, sizeof fresh);
        random_fill(msg, sizeof msg);
        a->nist_rng_init(fresh, NULL, 256);
        must(keypair(pk.p, sk.p), "crypto_sign_keypair (fresh seed)", (unsigned long long)f);
        must(sign(sm.p, &smlen, msg, sizeof msg, sk.p), "crypto_sign (fresh seed)", (unsigned long long)f);
        if (smlen > sizeof msg + a->sn_len)
            fail(EXIT_OVERFLOW, "OVERFLOW", "fresh seed %d: smlen %zu exceeds mlen + CRYPTO_BYTES", f, smlen);
        check(&sm, smlen);
        int v = open_(m2.p, &m2len, sm.p, smlen, pk.p);
        check(&m2, m2len);
        if (v != 0 || m2len != sizeof msg || memcmp(m2.p, msg, sizeof msg) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: crypto_sign_open did not return the message", f);
        sm.p[smlen - 1] ^= 1;
        if (open_(m2.p, &m2len, sm.p, smlen, pk.p) == 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: crypto_sign_open accepted a signed message with one flipped bit", f);
        check(&m2, m2len);
        if (f > 0 && memcmp(prev_pk, pk.p, a->pk_len) == 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "fresh seed %d: the same public key as from another fresh seed", f);
        memcpy(prev_pk, pk.p, a->pk_len);
    }
    free(prev_pk);
}

int kat_main(int n, char **f) {
    n = take_fields(n, f);
    if (n < 5) {
        fprintf(stderr, "usage: ngcc_driver LIB kat TYPE iccs|nist RECORDS [NIST_PREFIX]\n");
        return EXIT_USAGE;
    }
    if (strncmp(f[2], "hash:", 5) == 0) return kat_hash_main(n, f);
    const char *lib = f[0], *type = f[2], *mode = f[3];
    unsigned long long records = strtoull(f[4], NULL, 10);
    const char *prefix = n > 5 ? f[5] : "";
    kat_piece_range(records);
    api_t a;
    api_load(&a, lib, type);
    if (a.is_kex) return kat_kex_main(&a, mode);
    meta_u64("pk_bytes", a.pk_len);
    meta_u64("sk_bytes", a.sk_len);
    meta_u64("ct_bytes", a.ct_len);
    meta_u64("ss_bytes", a.ss_len);
    meta_u64("signature_bytes", a.sn_len);
    char *text = NULL;
    size_t text_len = 0;
    out = open_memstream(&text, &text_len);
    if (!out) fail(EXIT_IOERROR, "ERROR", "cannot hold the KAT text");
    draw_rng = strcmp(mode, "iccs") == 0 ? "iccs-drng" : "nist-ctr-drbg";
    if (strcmp(mode, "iccs") == 0) {
        if (a.is_sig) iccs_sig(&a, records);
        else iccs_kem(&a);
    } else if (strcmp(mode, "nist") == 0) {
        if (kat_from == 0) fprintf(out, "# %s\n\n", prefix[0] ? prefix : type);
        if (a.is_sig) nist_sig(&a, records, prefix);
        else nist_kem(&a, records, prefix);
    } else {
        fail(EXIT_USAGE, "USAGE", "unknown mode %s", mode);
    }
    if (fclose(out) != 0) fail(EXIT_IOERROR, "ERROR", "cannot hold the KAT text");
    proto_data("KAT", (const unsigned char *)text, text_len);
    free(text);
    meta_u64("records", kat_to - kat_from);
    char key[32], value[32];
    for (int op = 0; op < CALL_OPS; op++) {
        if (op < DRAWING_OPS && draw_seen[op]) {
            snprintf(key, sizeof key, "draws_%s", call_names[op]);
            meta_u64(key, draw_min[op]);
        }
        if (call_seen[op]) {
            snprintf(key, sizeof key, "call_s_%s", call_names[op]);
            snprintf(value, sizeof value, "%.6f", call_max_s[op]);
            meta_str(key, value);
        }
    }
    proto_line("STATUS\tPASS");
    return EXIT_OK;
}
