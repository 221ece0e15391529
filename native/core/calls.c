#include "calls.h"
#include "hash_ops.h"
#include "cpucycles.h"
#include "iccs/auxfunc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

enum { K_KEM_KEYGEN, K_KEM_ENC, K_KEM_DEC, K_SIG_KEYGEN, K_SIG_SIGN, K_SIG_VERIFY, K_HASH, K_KEX };

/* Between a slot's regions: a write past a claimed length lands here, not in the next region. */
#define GAP 256

/* A slot: input 0, input 1, output 0, output 1 (those of non-zero size), each followed by a gap.
 * No operation has an input 1: dec's expected secret is kept apart (calls_t.expect), not where a
 * call could find it beside its ciphertext. */
typedef struct {
    unsigned char *in[2], *out[2];
} slot_t;

static int all_fill(const unsigned char *p, size_t n, unsigned char fill);

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The input lengths of a slot, by kind: dec's ciphertext; a message. */
static size_t in_len_of(const calls_t *t, int k) {
    const ctx_t *c = t->c;
    if (t->kind == K_KEM_DEC) return k == 0 ? c->api.ct_len : 0;
    if (t->kind == K_SIG_SIGN) return k == 0 ? MESSAGE_BYTES : 0;
    if (t->kind == K_HASH) return k == 0 ? c->msg_bytes : 0;
    return 0;
}

static size_t region_len(const calls_t *t, int r) { return r == 0 ? t->in_len : r == 1 ? 0 : t->out_len[r - 2]; }
static size_t region_span(const calls_t *t, int r) { return region_len(t, r) ? round64(region_len(t, r)) + GAP : 0; }

static slot_t slot_at(const calls_t *t, size_t i) {
    slot_t s;
    unsigned char *p = t->slab + GUARD_BYTES + i * t->stride;
    for (int r = 0; r < 4; r++) {
        if (r < 2) s.in[r] = p;
        else s.out[r - 2] = p;
        p += region_span(t, r);
    }
    return s;
}

/* The harness's own generator for inputs (splitmix64): seeded from the trial seed, so the replay
 * job makes the same inputs. It is not the library's generator, whose stream the calls consume. */
static uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void prng_fill(uint64_t *s, unsigned char *p, size_t n) {
    while (n > 0) {
        uint64_t v = next_u64(s);
        size_t k = n < 8 ? n : 8;
        memcpy(p, &v, k);
        p += k;
        n -= k;
    }
}

/* The transcript's mixing step. Not a cryptographic hash, and it needs not be: a library that did
 * not compute an output does not know the digest of the right one. */
static uint64_t fold(uint64_t h, uint64_t w) {
    h ^= w * 0x9E3779B97F4A7C15ull;
    h = (h << 27) | (h >> 37);
    return h * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
}

static uint64_t fold_bytes(uint64_t h, const unsigned char *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = fold(h, w);
    }
    uint64_t w = 0;
    memcpy(&w, p + i, n - i);
    return fold(h, w ^ ((uint64_t)n << 56));
}

static int kind_of(const ctx_t *c) {
    const char *op = c->op;
    if (c->kex) return K_KEX;
    if (c->api.is_hash) return K_HASH;
    if (c->api.is_sig) return strcmp(op, "keygen") == 0 ? K_SIG_KEYGEN : strcmp(op, "sign") == 0 ? K_SIG_SIGN : K_SIG_VERIFY;
    return strcmp(op, "keygen") == 0 ? K_KEM_KEYGEN : strcmp(op, "enc") == 0 ? K_KEM_ENC : K_KEM_DEC;
}

static const char *out_name(const calls_t *t, int k) {
    switch (t->kind) {
    case K_KEM_KEYGEN:
    case K_SIG_KEYGEN: return k == 0 ? "pk" : "sk";
    case K_KEM_ENC: return k == 0 ? "ct" : "ss";
    case K_KEM_DEC: return "ss";
    case K_SIG_SIGN: return "signature";
    case K_HASH: return "digest";
    default: return "output";
    }
}

static unsigned char *pool_msg(const calls_t *t, int e) { return t->pool + (size_t)e * (MESSAGE_BYTES + t->c->api.sn_len); }
static unsigned char *pool_sig(const calls_t *t, int e) { return pool_msg(t, e) + MESSAGE_BYTES; }

/* Both generators for one use: the library's seeded with 48 bytes drawn from (seed, use), the input
 * generator with the next word. The uses: a segment's inputs (2k), its calls (2k + 1), the warm-ups,
 * the verify pool. */
/* A segment's seeds under the trusted half's window key: SM3 of (key, trial seed, use, counter), one
 * way, so that neither the generator seeds nor the messages a window shows give the key, or another
 * segment's (the splitmix steps below can be undone: from two segments' seeds, the key). */
static void derive_keyed(calls_t *t, unsigned long long use, unsigned char derived[SEED_BYTES]) {
    unsigned char in[WINDOW_KEY_BYTES + SEED_BYTES + 9], out[64];
    memcpy(in, t->key, WINDOW_KEY_BYTES);
    memcpy(in + WINDOW_KEY_BYTES, t->seed, SEED_BYTES);
    for (int i = 0; i < 8; i++) in[WINDOW_KEY_BYTES + SEED_BYTES + i] = (unsigned char)(use >> (8 * i));
    for (int c = 0; c < 2; c++) {
        in[sizeof in - 1] = (unsigned char)c;
        if (sm3hash(256, in, 8ull * sizeof in, out + 32 * c) != 0) memset(out + 32 * c, 0, 32);
    }
    memcpy(derived, out, SEED_BYTES);
    memcpy(&t->prng, out + SEED_BYTES, sizeof t->prng);
}

static void derive_use(calls_t *t, unsigned long long use, unsigned char derived[SEED_BYTES]) {
    if (t->keyed && use < USE_WARMUP) {
        derive_keyed(t, use, derived);
        return;
    }
    /* The warm-ups' from this process's own random word: a library that hands out a warm-up's
     * output again gives another one in the replay. */
    uint64_t s = fold(use == USE_WARMUP ? t->warm_salt : 0, use + 1);
    for (int i = 0; i < SEED_BYTES; i += 8) {
        uint64_t w;
        memcpy(&w, t->seed + i, 8);
        s = fold(s, w);
    }
    prng_fill(&s, derived, SEED_BYTES);
    t->prng = next_u64(&s);
}

static void seed_batch(calls_t *t, unsigned long long use) {
    unsigned char derived[SEED_BYTES];
    derive_use(t, use, derived);
    if (t->c && strcmp(t->rng, "none") != 0) api_seed(&t->c->api, t->rng, derived);
}

static book_t *given_book;
static size_t given_book_len;

void calls_use_book(unsigned char *book, size_t len) {
    given_book = (book_t *)book;
    given_book_len = len;
}

void calls_set_key(calls_t *t, const unsigned char key[WINDOW_KEY_BYTES]) {
    memcpy(t->key, key, WINDOW_KEY_BYTES);
    t->keyed = 1;
}

/* The slot memory and the per-call arrays of a batch: in the book when it holds them (the trusted
 * half then reads them), else this process's own. */
static void lay_out(calls_t *t) {
    unsigned char *b = (unsigned char *)given_book;
    t->held = b && given_book_len >= BOOK_BYTES && t->slab_len <= BOOK_SLAB_BYTES && t->batch <= BOOK_MOST_CALLS;
    if (t->held) {
        t->book = given_book;
        t->slab = b + BOOK_SLAB_OFFSET;
        t->lens = (unsigned long long *)(b + BOOK_LENS_OFFSET);
        t->rc = (int *)(b + BOOK_RC_OFFSET);
        t->kexd = (uint64_t *)(b + BOOK_KEXD_OFFSET);
        memset(t->lens, 0, 2 * t->batch * sizeof *t->lens);
        memset(t->rc, 0, t->batch * sizeof *t->rc);
        memset(t->kexd, 0, t->batch * sizeof *t->kexd);
        return;
    }
    t->slab = malloc(t->slab_len);
    t->lens = calloc(2 * t->batch, sizeof *t->lens);
    t->rc = calloc(t->batch, sizeof *t->rc);
    t->kexd = calloc(t->batch, sizeof *t->kexd);
}

/* The layout, for the trusted half: written once, its mark last. */
static void write_book(const calls_t *t) {
    if (!t->held) return;
    book_t *b = t->book;
    b->kind = (uint32_t)t->kind;
    b->nout = (uint32_t)t->nout;
    b->in_len = t->in_len;
    b->out_len[0] = t->out_len[0];
    b->out_len[1] = t->out_len[1];
    b->stride = t->stride;
    b->batch = t->batch;
    b->segment = t->segment;
    b->per_block = t->per_block;
    b->calls = t->calls;
    b->pool_fold = t->pool_fold;
    __atomic_store_n(&b->magic, BOOK_MAGIC, __ATOMIC_RELEASE);
}

void calls_init(calls_t *t, ctx_t *c, const unsigned char seed[SEED_BYTES], const char *rng, unsigned long long calls, int spot_checks,
                int verify_pool) {
    memset(t, 0, sizeof *t);
    t->c = c;
    t->rng = rng;
    memcpy(t->seed, seed, SEED_BYTES);
    t->kind = kind_of(c);
    t->in_len = in_len_of(t, 0);
    t->calls = calls;
    t->per_block = (calls + TRANSCRIPT_BLOCKS - 1) / TRANSCRIPT_BLOCKS;
    t->spot_wanted = spot_checks < 0 ? 0 : spot_checks > MAX_SPOT_CHECKS ? MAX_SPOT_CHECKS : spot_checks;
    random_fill((unsigned char *)&t->warm_salt, sizeof t->warm_salt);
    seed_batch(t, USE_POOL);
    const api_t *a = &c->api;
    switch (t->kind) {
    case K_KEM_KEYGEN:
    case K_SIG_KEYGEN: t->nout = 2, t->out_len[0] = a->pk_len, t->out_len[1] = a->sk_len; break;
    case K_KEM_ENC: t->nout = 2, t->out_len[0] = a->ct_len, t->out_len[1] = a->ss_len; break;
    case K_KEM_DEC: t->nout = 1, t->out_len[0] = a->ss_len; break;
    case K_SIG_SIGN: t->nout = 1, t->out_len[0] = a->sn_len; break;
    case K_HASH: t->nout = 1, t->out_len[0] = c->digest_len; break;
    default: t->nout = 0; break;
    }
    t->stride = 64;
    for (int r = 0; r < 4; r++) t->stride += region_span(t, r);
    /* A segment is an eighth of the trial (at least 16 calls) in whole blocks: what one replay makes
     * again. A batch is as many whole segments as fit its memory (one at least). */
    unsigned long long fit = CALLS_BATCH_BYTES / t->stride, segment = (calls + 7) / 8;
    if (segment < 16) segment = 16;
    if (fit < 1) fit = 1;
    if (segment > fit) segment = fit;
    if (segment >= t->per_block) segment -= segment % t->per_block;
    else t->per_block = segment;
    t->segment = segment;
    fit -= fit % segment;
    t->batch = (size_t)(fit < calls ? fit : calls);
    t->nblocks = (calls + t->per_block - 1) / t->per_block;
    t->blocks = calloc(t->nblocks, sizeof *t->blocks);
    t->slab_len = t->batch * t->stride + 2 * GUARD_BYTES;
    lay_out(t);
    t->given_fd = t->warm_fd = -1;
    if (t->kind == K_KEM_DEC) t->expect = calloc(t->batch, a->ss_len ? a->ss_len : 1);
    if (!t->slab || !t->lens || !t->rc || !t->kexd || !t->blocks || (t->kind == K_KEM_DEC && !t->expect))
        fail(EXIT_IOERROR, "ERROR", "out of memory for %zu call slots of %zu bytes", t->batch, t->stride);
    memset(t->slab, GUARD_VALUE, t->slab_len);
    random_fill(&t->fill, 1);
    if (t->fill == GUARD_VALUE) t->fill ^= 1;
    if (t->kind == K_SIG_VERIFY) {
        /* Signing is the costly part: a pool, reused round robin. Odd entries get one message bit
         * flipped after signing, so a verify that always accepts cannot match the transcript. */
        unsigned long long want = verify_pool > 0 ? (unsigned long long)verify_pool : VERIFY_POOL;
        if (want > MAX_VERIFY_POOL) want = MAX_VERIFY_POOL;
        t->pool_n = (int)(calls < want ? calls : want);
        t->pool = malloc((size_t)t->pool_n * (MESSAGE_BYTES + a->sn_len));
        t->pool_sig_len = calloc((size_t)t->pool_n, sizeof *t->pool_sig_len);
        if (!t->pool || !t->pool_sig_len) fail(EXIT_IOERROR, "ERROR", "out of memory for the verify pool");
        double started = wallclock_seconds();
        for (int e = 0; e < t->pool_n; e++) {
            prng_fill(&t->prng, pool_msg(t, e), MESSAGE_BYTES);
            t->pool_sig_len[e] = a->sn_len;
            ops_must(a->sig_sign(c->sk.p, c->sk_len, pool_msg(t, e), MESSAGE_BYTES, pool_sig(t, e), &t->pool_sig_len[e]), "sig_sign");
            if (t->pool_sig_len[e] > a->sn_len)
                fail(EXIT_OVERFLOW, "OVERFLOW", "signature: reported length %llu exceeds the claimed %llu", t->pool_sig_len[e], a->sn_len);
            if (e % 2) pool_msg(t, e)[e % MESSAGE_BYTES] ^= 1;
        }
        t->pool_sign_s = wallclock_seconds() - started;
        size_t pk_len = (size_t)(c->pk_len < a->pk_len ? c->pk_len : a->pk_len);
        t->pool_fold = fold_bytes(fold(0, pk_len), c->pk.p, pk_len);
        for (int e = 0; e < t->pool_n; e++)
            t->pool_fold = fold_bytes(fold_bytes(fold(t->pool_fold, t->pool_sig_len[e]), pool_msg(t, e), MESSAGE_BYTES), pool_sig(t, e),
                                      (size_t)t->pool_sig_len[e]);
    }
    write_book(t);
}

/* The operations that draw randomness in their calls: only theirs is reseeded between two calls. */
static int draws(const calls_t *t) {
    return t->kind == K_KEM_KEYGEN || t->kind == K_KEM_ENC || t->kind == K_SIG_KEYGEN || t->kind == K_SIG_SIGN || t->kind == K_KEX;
}

/* A held trial's segment seed, as the trusted half wrote it at its window's start; a segment it
 * gave none for gets one the replay will not agree with. */
static void seed_from_book(calls_t *t, unsigned long long segment) {
    unsigned char seed[SEED_BYTES];
    uint64_t at = segment - t->book->first_segment;
    memset(seed, 0, sizeof seed);
    if (segment >= t->book->first_segment && at < t->book->nseeds && at < BOOK_SEEDS) memcpy(seed, t->book->seeds[at], SEED_BYTES);
    if (strcmp(t->rng, "none") != 0) api_seed(&t->c->api, t->rng, seed);
}

void calls_reseed(calls_t *t, unsigned long long first) {
    if (!draws(t)) return;
    if (t->held && first != USE_WARMUP) seed_from_book(t, first / t->segment);
    else seed_batch(t, first == USE_WARMUP ? USE_WARMUP : 2 * (first / t->segment) + 1);
}

void calls_prepare(calls_t *t, unsigned long long first, size_t n) {
    ctx_t *c = t->c;
    t->first = first;
    if (first == USE_WARMUP) seed_batch(t, USE_WARMUP);
    /* dec's given inputs: the batch's ciphertexts in one read, then into their slots. The warm-ups'
     * come from a file of their own (calls_take_warmups), after the same secret key. */
    int warm = first == USE_WARMUP;
    int fd = warm ? t->warm_fd : t->given_fd;
    int given = t->kind == K_KEM_DEC && fd >= 0;
    int held_in = t->kind == K_KEM_DEC && !warm && t->given_fd == GIVEN_HELD; /* the trusted half writes them */
    size_t ct_bytes = (size_t)c->api.ct_len;
    if (given && pread(fd, t->staging, n * ct_bytes, (off_t)(c->api.sk_len + (warm ? 0 : first) * ct_bytes)) != (ssize_t)(n * ct_bytes)) {
        if (warm) fail(EXIT_IOERROR, "ERROR", "cannot read the warm-ups' ciphertexts from their inputs");
        fail(EXIT_IOERROR, "ERROR", "cannot read calls %llu to %llu's ciphertexts from the inputs", first, first + n - 1);
    }
    for (size_t i = 0; i < n; i++) {
        /* Held: the trusted half makes the timed calls' messages and seeds, at each window's start. */
        int timed_held = t->held && first != USE_WARMUP;
        if (!given && !timed_held && first != USE_WARMUP && (first + i) % t->segment == 0) seed_batch(t, 2 * ((first + i) / t->segment));
        slot_t s = slot_at(t, i);
        if (given) {
            memcpy(s.in[0], t->staging + i * ct_bytes, ct_bytes);
        } else if (held_in) {
            /* at the window's start */
        } else if (t->kind == K_KEM_DEC) {
            unsigned long long ct_len = c->api.ct_len, ss_len = c->api.ss_len;
            unsigned char *ss = t->expect + i * c->api.ss_len;
            memset(s.in[0], t->fill, (size_t)ct_len);
            memset(ss, t->fill, (size_t)ss_len);
            ops_must(c->api.kem_enc(c->pk.p, c->pk_len, ss, &ss_len, s.in[0], &ct_len), "kem_enc");
            /* An enc that wrote nothing would leave dec an input whose answer is already known. */
            if (all_fill(s.in[0], (size_t)c->api.ct_len, t->fill) || all_fill(ss, (size_t)c->api.ss_len, t->fill))
                fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "call %llu: kem_enc did not write the ciphertext or secret of dec's input",
                     first == USE_WARMUP ? (unsigned long long)i : first + i);
        } else if ((t->kind == K_SIG_SIGN || t->kind == K_HASH) && !timed_held) {
            prng_fill(&t->prng, s.in[0], t->in_len);
        }
        for (int k = 0; k < t->nout; k++) {
            memset(s.out[k], t->fill, t->out_len[k]);
            t->lens[2 * i + (size_t)k] = t->out_len[k];
        }
    }
}

static int from_hex(const char *hex, unsigned char *out, size_t bytes) {
    if (strlen(hex) != 2 * bytes) return 0;
    for (size_t i = 0; i < bytes; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char ch = hex[2 * i + k];
            v <<= 4;
            if (ch >= '0' && ch <= '9') v |= (unsigned)(ch - '0');
            else if (ch >= 'a' && ch <= 'f') v |= (unsigned)(ch - 'a' + 10);
            else return 0;
        }
        out[i] = (unsigned char)v;
    }
    return 1;
}

int calls_seed_from_hex(const char *hex, unsigned char seed[SEED_BYTES]) { return from_hex(hex, seed, SEED_BYTES); }
int calls_key_from_hex(const char *hex, unsigned char key[WINDOW_KEY_BYTES]) { return from_hex(hex, key, WINDOW_KEY_BYTES); }

int calls_op_takes_inputs(const ctx_t *c, const char *op) { return !c->kex && !c->api.is_hash && !c->api.is_sig && strcmp(op, "dec") == 0; }

size_t calls_warmup_slots(const calls_t *t, unsigned long long warmups) { return warmups < t->batch ? (size_t)warmups : t->batch; }

/* Opens a file the parent gave: a secret key and `calls` ciphertexts, exactly; reads the key. */
static int take_file(calls_t *t, const char *path, unsigned long long calls, const char *what) {
    ctx_t *c = t->c;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail(EXIT_IOERROR, "ERROR", "cannot open the %s the parent gave", what);
    unsigned long long want = c->api.sk_len + calls * c->api.ct_len;
    if ((unsigned long long)st.st_size != want)
        fail(EXIT_IOERROR, "ERROR", "the %s have %lld bytes, not the %llu of a secret key and %llu ciphertexts", what,
             (long long)st.st_size, want, calls);
    if (pread(fd, c->sk.p, (size_t)c->api.sk_len, 0) != (ssize_t)c->api.sk_len)
        fail(EXIT_IOERROR, "ERROR", "cannot read the %s' secret key", what);
    if (!t->staging) {
        t->staging = malloc(t->batch * (size_t)c->api.ct_len);
        if (!t->staging) fail(EXIT_IOERROR, "ERROR", "out of memory for a batch of ciphertexts");
        /* Touched now, with the warm-ups' file, before the timed inputs exist: a fresh page costs some
         * microseconds at its first touch (docs/benchmarks.md (af)), which would otherwise count as
         * CPU beside the windows, where the library's work is looked for. Not with zeros: the
         * compiler makes malloc and a zeroing memset one calloc, which touches nothing. */
        memset(t->staging, GUARD_VALUE, t->batch * (size_t)c->api.ct_len);
    }
    return fd;
}

void calls_touch(calls_t *t) {
    memset(t->slab, GUARD_VALUE, t->slab_len);
    if (t->staging) memset(t->staging, GUARD_VALUE, t->batch * (size_t)t->c->api.ct_len);
}

void calls_take_warmups(calls_t *t, const char *path, size_t slots) { t->warm_fd = take_file(t, path, slots, "warm-ups' inputs"); }

void calls_take_inputs(calls_t *t, const char *path) {
    if (t->warm_fd >= 0) close(t->warm_fd);
    t->warm_fd = -1;
    t->given_fd = take_file(t, path, t->calls, "inputs");
}

void calls_inputs_held(calls_t *t) {
    if (t->warm_fd >= 0) close(t->warm_fd);
    t->warm_fd = -1;
    t->given_fd = GIVEN_HELD;
}

void calls_answer_expected(calls_t *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        memcpy(slot_at(t, i).out[0], t->expect + i * t->c->api.ss_len, t->c->api.ss_len);
        t->rc[i] = 0;
    }
}

void calls_write_inputs(const calls_t *t, size_t n, int fd) {
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = slot_at(t, i).in[0];
        for (size_t left = (size_t)t->c->api.ct_len; left > 0;) {
            ssize_t w = write(fd, p, left);
            if (w <= 0) fail(EXIT_IOERROR, "ERROR", "cannot write the inputs");
            p += w, left -= (size_t)w;
        }
    }
}

int calls_run(calls_t *t, size_t i) {
    ctx_t *c = t->c;
    const api_t *a = &c->api;
    slot_t s = slot_at(t, i);
    unsigned long long *len = t->lens + 2 * i;
    int rc;
    switch (t->kind) {
    case K_KEM_KEYGEN: rc = a->kem_keygen(s.out[0], &len[0], s.out[1], &len[1]); break;
    case K_KEM_ENC: rc = a->kem_enc(c->pk.p, c->pk_len, s.out[1], &len[1], s.out[0], &len[0]); break;
    case K_KEM_DEC: rc = a->kem_dec(c->sk.p, c->sk_len, s.in[0], a->ct_len, s.out[0], &len[0]); break;
    case K_SIG_KEYGEN: rc = a->sig_keygen(s.out[0], &len[0], s.out[1], &len[1]); break;
    case K_SIG_SIGN: rc = a->sig_sign(c->sk.p, c->sk_len, s.in[0], MESSAGE_BYTES, s.out[0], &len[0]); break;
    case K_HASH: rc = a->crypt_hash(a->digest_bits, s.in[0], 8ull * c->msg_bytes, s.out[0]); break;
    case K_SIG_VERIFY: {
        /* By the call's place in the trial, so that a replayed segment checks the same entries. */
        int e = (int)((t->first == USE_WARMUP ? i : t->first + i) % (unsigned long long)t->pool_n);
        rc = a->sig_verify(c->pk.p, c->pk_len, pool_sig(t, e), t->pool_sig_len[e], pool_msg(t, e), MESSAGE_BYTES);
        break;
    }
    default:
        /* An exchange's buffers are its own: its secret is folded here, outside the counted span
         * (kex_ops.h), inside the loop the kernel's view compares with. */
        kex_exchange(c->kex, "");
        t->kexd[i] = fold_bytes(0, c->kex->ssa.p, (size_t)c->kex->ssa_n);
        rc = 0;
        break;
    }
    t->rc[i] = rc;
    return rc;
}

/* The bytes of output k of slot i that count: the reported length, or the claimed one where the
 * API reports none that the harness keeps (dec's). */
static size_t counted_len(calls_t *t, size_t i, int k, unsigned long long call) {
    unsigned long long n = t->kind == K_KEM_DEC ? t->out_len[0] : t->lens[2 * i + (size_t)k];
    if (n > t->out_len[k])
        fail(EXIT_OVERFLOW, "OVERFLOW", "call %llu: %s: reported length %llu exceeds the claimed %zu", call, out_name(t, k), n,
             t->out_len[k]);
    return (size_t)n;
}

static int all_fill(const unsigned char *p, size_t n, unsigned char fill) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != fill) return 0;
    return 1;
}

static void check_gaps(const calls_t *t, size_t n) {
    const unsigned char *end = t->slab + GUARD_BYTES + t->batch * t->stride;
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (t->slab[i] != GUARD_VALUE || end[i] != GUARD_VALUE) fail(EXIT_OVERFLOW, "OVERFLOW", "a write outside the calls' slots");
    for (size_t i = 0; i < n; i++) {
        slot_t s = slot_at(t, i);
        const unsigned char *start[4] = {s.in[0], s.in[1], s.out[0], s.out[1]};
        for (int r = 0; r < 4; r++)
            for (size_t k = region_len(t, r); k < region_span(t, r); k++)
                if (start[r][k] != GUARD_VALUE)
                    fail(EXIT_OVERFLOW, "OVERFLOW", "call %zu of a batch: %s: a write past its claimed %zu bytes", i,
                         r >= 2 ? out_name(t, r - 2) : "its input", region_len(t, r));
    }
}

static uint64_t spot_rng;

static void keep_spot(calls_t *t, int at, size_t i, unsigned long long call) {
    slot_t s = slot_at(t, i);
    free(t->spot_copy[at]);
    t->spot_copy[at] = malloc(t->stride);
    if (!t->spot_copy[at]) fail(EXIT_IOERROR, "ERROR", "out of memory for a spot check");
    memcpy(t->spot_copy[at], s.in[0], t->stride);
    t->spot_call[at] = call;
    t->spot_len[at] = t->lens[2 * i];
}

/* Call `call`'s entry of the transcript, from slot i: its return code, each output's length and bytes
 * (a length above the claimed one is cut there: calls_settle has refused it already), a key
 * exchange's secret, verify's pool. */
static void fold_call(calls_t *t, size_t i, unsigned long long call) {
    slot_t s = slot_at(t, i);
    uint64_t h = fold(0, (uint64_t)(t->rc[i] != 0));
    for (int k = 0; k < t->nout; k++) {
        unsigned long long n = t->kind == K_KEM_DEC ? t->out_len[0] : t->lens[2 * i + (size_t)k];
        size_t len = (size_t)(n < t->out_len[k] ? n : t->out_len[k]);
        h = fold_bytes(fold(h, len), s.out[k], len);
    }
    if (t->kind == K_KEX) h = fold(h, t->kexd[i]);
    if (t->kind == K_SIG_VERIFY) h = fold(h, t->pool_fold);
    uint64_t *b = &t->blocks[call / t->per_block];
    *b = fold(*b, h);
}

void calls_settle(calls_t *t, unsigned long long first, size_t n) {
    ctx_t *c = t->c;
    check_gaps(t, n);
    if (spot_rng == 0) random_fill((unsigned char *)&spot_rng, sizeof spot_rng);
    for (size_t i = 0; i < n; i++) {
        unsigned long long call = first + i;
        slot_t s = slot_at(t, i);
        int rc = t->rc[i];
        if (t->kind == K_SIG_VERIFY) {
            int genuine = (call % (unsigned long long)t->pool_n) % 2 == 0;
            if (genuine && rc != 0)
                fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "call %llu: sig_verify rejected a genuine signature (%d)", call, rc);
            if (!genuine && rc == 0)
                fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "call %llu: sig_verify accepted a signature for an altered message", call);
        } else if (rc != 0) {
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "call %llu: %s returned %d", call, c->op, rc);
        }
        for (int k = 0; k < t->nout; k++) {
            size_t len = counted_len(t, i, k, call);
            if (len == 0 || all_fill(s.out[k], len, t->fill))
                fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "call %llu: %s did not write its %s", call, c->op, out_name(t, k));
        }
        if (t->kind == K_KEM_DEC && t->given_fd == -1 && memcmp(s.out[0], t->expect + i * c->api.ss_len, c->api.ss_len) != 0)
            fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "call %llu: kem_dec did not give the shared secret enc gave with its ciphertext", call);
        fold_call(t, i, call);
        /* Reservoir sampling: every call of the trial is equally likely to be checked, and the
         * draw happens only now, after the window that ran it. Dec and verify are checked whole above. */
        if (t->kind == K_KEM_DEC || t->kind == K_SIG_VERIFY || t->kind == K_KEX || t->spot_wanted == 0) continue;
        if (t->spot_count < t->spot_wanted) {
            keep_spot(t, t->spot_count++, i, call);
        } else {
            unsigned long long j = next_u64(&spot_rng) % (call + 1);
            if (j < (unsigned long long)t->spot_wanted) keep_spot(t, (int)j, i, call);
        }
    }
}

#define SPOT_FAIL(call, fmt, ...) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "spot check of call %llu: " fmt, call, __VA_ARGS__)

/* sig_verify of (pk, sig) must accept msg and refuse it with one bit flipped. */
static void signature_holds(const api_t *a, unsigned char *pk, unsigned long long pk_len, unsigned char *sig, unsigned long long sig_len,
                            unsigned char *msg, unsigned long long call, const char *what) {
    int rc = a->sig_verify(pk, pk_len, sig, sig_len, msg, MESSAGE_BYTES);
    if (rc != 0) SPOT_FAIL(call, "sig_verify rejected %s (%d)", what, rc);
    msg[MESSAGE_BYTES - 1] ^= 1;
    rc = a->sig_verify(pk, pk_len, sig, sig_len, msg, MESSAGE_BYTES);
    msg[MESSAGE_BYTES - 1] ^= 1;
    if (rc == 0) SPOT_FAIL(call, "sig_verify accepted %s for a message with one flipped bit", what);
}

/* kem_dec of ct with sk must give ss. */
static void dec_agrees(ctx_t *c, unsigned char *sk, unsigned char *ct, const unsigned char *ss, unsigned long long call, const char *what) {
    unsigned long long len = 0;
    memset(c->ss2.p, 0, c->ss2.len);
    int rc = c->api.kem_dec(sk, c->api.sk_len, ct, c->api.ct_len, c->ss2.p, &len);
    if (rc != 0) SPOT_FAIL(call, "kem_dec of %s returned %d", what, rc);
    if (memcmp(c->ss2.p, ss, c->api.ss_len) != 0) SPOT_FAIL(call, "kem_dec of %s did not give enc's shared secret", what);
}

void calls_verify_spots(calls_t *t) {
    ctx_t *c = t->c;
    const api_t *a = &c->api;
    unsigned char *base = t->slab + GUARD_BYTES;
    for (int k = 0; k < t->spot_count; k++) {
        unsigned long long call = t->spot_call[k];
        /* The copy is laid out as slot 0, whose regions' offsets are the same in every slot. */
        slot_t s0 = slot_at(t, 0);
        unsigned char *copy = t->spot_copy[k];
        unsigned char *in0 = copy + (s0.in[0] - base), *out0 = copy + (s0.out[0] - base), *out1 = copy + (s0.out[1] - base);
        switch (t->kind) {
        case K_KEM_KEYGEN: {
            unsigned long long ss_len = a->ss_len, ct_len = a->ct_len;
            int rc = a->kem_enc(out0, a->pk_len, c->ss.p, &ss_len, c->ct.p, &ct_len);
            if (rc != 0) SPOT_FAIL(call, "kem_enc to its public key returned %d", rc);
            dec_agrees(c, out1, c->ct.p, c->ss.p, call, "a ciphertext to its public key");
            break;
        }
        case K_KEM_ENC: dec_agrees(c, c->sk.p, out0, out1, call, "its ciphertext"); break;
        case K_SIG_KEYGEN: {
            unsigned long long sn_len = a->sn_len;
            int rc = a->sig_sign(out1, a->sk_len, c->msg.p, MESSAGE_BYTES, c->sn.p, &sn_len);
            if (rc != 0) SPOT_FAIL(call, "sig_sign with its secret key returned %d", rc);
            signature_holds(a, out0, a->pk_len, c->sn.p, sn_len, c->msg.p, call, "a signature with its keys");
            break;
        }
        case K_SIG_SIGN: signature_holds(a, c->pk.p, c->pk_len, out0, t->spot_len[k], in0, call, "its signature"); break;
        case K_HASH: {
            unsigned char *kept = out0;
            memset(c->digest.p, 0, c->digest.len);
            int rc = a->crypt_hash(a->digest_bits, in0, 8ull * c->msg_bytes, c->digest.p);
            if (rc != 0) SPOT_FAIL(call, "CryptHash of the same message returned %d", rc);
            if (memcmp(kept, c->digest.p, c->digest_len) != 0) SPOT_FAIL(call, "CryptHash gave another digest for the same message%s", "");
            break;
        }
        default: break;
        }
        free(copy);
        t->spot_copy[k] = NULL;
    }
}

void calls_report(const calls_t *t, unsigned long long first, unsigned long long n) {
    unsigned long long from = first / t->per_block, used = (first + n + t->per_block - 1) / t->per_block;
    if (used > t->nblocks) used = t->nblocks;
    /* 100 digests a line: within the protocol's line length. */
    for (unsigned long long b = from; b < used; b += 100) {
        char text[100 * 17 + 64];
        int n = snprintf(text, sizeof text, "TRANSCRIPT\t%llu\t%llu", t->per_block, b);
        for (unsigned long long j = b; j < used && j < b + 100; j++)
            n += snprintf(text + n, sizeof text - (size_t)n, "\t%016llx", (unsigned long long)t->blocks[j]);
        proto_line("%s", text);
    }
}

/* ---- the trusted half's side ---- */

int calls_from_book(calls_t *t, const book_t *b, unsigned char *slab, const unsigned char seed[SEED_BYTES],
                    const unsigned char key[WINDOW_KEY_BYTES]) {
    memset(t, 0, sizeof *t);
    if (b->magic != BOOK_MAGIC || b->kind > K_KEX || b->nout > 2 || b->calls < 1 || b->calls > (1ull << 40)) return 0;
    if (b->in_len > CALLS_BATCH_BYTES || b->out_len[0] > CALLS_BATCH_BYTES || b->out_len[1] > CALLS_BATCH_BYTES) return 0;
    if ((b->nout < 2 && b->out_len[1] != 0) || (b->nout < 1 && b->out_len[0] != 0)) return 0;
    static const uint32_t nout_of[] = {2, 2, 1, 2, 1, 0, 1, 0}; /* by kind, as calls_init sets them */
    if (b->nout != nout_of[b->kind]) return 0;
    if (b->per_block < 1 || b->per_block > b->calls || b->segment < 1 || b->segment > (b->calls > 16 ? b->calls : 16)) return 0;
    t->kind = (int)b->kind;
    t->nout = (int)b->nout;
    t->in_len = (size_t)b->in_len;
    t->out_len[0] = (size_t)b->out_len[0];
    t->out_len[1] = (size_t)b->out_len[1];
    size_t stride = 64;
    for (int r = 0; r < 4; r++) stride += region_span(t, r);
    if (b->stride != stride || b->batch < 1 || b->batch > b->calls || b->batch > BOOK_MOST_CALLS) return 0;
    if (b->batch > (BOOK_SLAB_BYTES - 2u * GUARD_BYTES) / stride) return 0;
    if ((b->calls + b->per_block - 1) / b->per_block > (1ull << 20)) return 0;
    /* The segments that start in one window: at most BOOK_SEEDS (calls_init makes nine at most). */
    if ((b->batch + b->segment - 1) / b->segment > BOOK_SEEDS) return 0;
    t->stride = stride;
    t->batch = (size_t)b->batch;
    t->segment = b->segment;
    t->per_block = b->per_block;
    t->calls = b->calls;
    t->nblocks = (b->calls + b->per_block - 1) / b->per_block;
    t->pool_fold = b->pool_fold;
    t->blocks = calloc(t->nblocks, sizeof *t->blocks);
    t->lens = calloc(2 * t->batch, sizeof *t->lens);
    t->rc = calloc(t->batch, sizeof *t->rc);
    t->kexd = calloc(t->batch, sizeof *t->kexd);
    if (!t->blocks || !t->lens || !t->rc || !t->kexd) return 0;
    t->slab = slab;
    t->slab_len = 2u * GUARD_BYTES + t->batch * t->stride;
    t->rng = "none";
    memcpy(t->seed, seed, SEED_BYTES);
    calls_set_key(t, key);
    return 1;
}

const char *calls_kind_name(const calls_t *t) {
    static const char *names[] = {"kem-keygen", "kem-enc", "kem-dec", "sig-keygen", "sig-sign", "sig-verify", "hash", "kex"};
    return t->kind >= 0 && t->kind <= K_KEX ? names[t->kind] : "?";
}

int calls_makes_messages(const calls_t *t) { return t->kind == K_SIG_SIGN || t->kind == K_HASH; }
int calls_takes_ciphertexts(const calls_t *t) { return t->kind == K_KEM_DEC; }

int calls_read_ciphertexts(calls_t *t, int fd, unsigned long long sk_len, unsigned long long first, size_t n) {
    unsigned char buf[1 << 16];
    size_t ct = t->in_len, per = ct > 0 && ct <= sizeof buf ? sizeof buf / ct : 0;
    for (size_t i = 0; i < n;) {
        size_t k = per ? (n - i < per ? n - i : per) : 1;
        unsigned char *to = per ? buf : slot_at(t, i).in[0];
        if (pread(fd, to, k * ct, (off_t)(sk_len + (first + i) * ct)) != (ssize_t)(k * ct)) return 0;
        for (size_t j = 0; per && j < k; j++) memcpy(slot_at(t, i + j).in[0], buf + j * ct, ct);
        i += k;
    }
    return 1;
}

void calls_make_messages(calls_t *t, unsigned long long first, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if ((first + i) % t->segment == 0) seed_batch(t, 2 * ((first + i) / t->segment));
        if (t->kind == K_SIG_SIGN || t->kind == K_HASH) prng_fill(&t->prng, slot_at(t, i).in[0], t->in_len);
    }
}

void calls_segment_seed(calls_t *t, unsigned long long segment, unsigned char out[SEED_BYTES]) {
    uint64_t prng = t->prng; /* the messages' generator goes on where it was */
    derive_use(t, 2 * segment + 1, out);
    t->prng = prng;
}

void calls_copy_regions(const calls_t *t, unsigned char *to, const unsigned char *from, size_t n, int inputs) {
    for (size_t i = 0; i < n; i++) {
        size_t at = GUARD_BYTES + i * t->stride, off = 0;
        for (int r = 0; r < 4; r++) {
            if ((r < 2) == (inputs != 0)) memcpy(to + at + off, from + at + off, region_len(t, r));
            off += region_span(t, r);
        }
    }
}

void calls_fold(calls_t *t, unsigned long long first, size_t n) {
    for (size_t i = 0; i < n; i++) fold_call(t, i, first + i);
}
