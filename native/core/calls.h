/* Every timed call's own inputs and outputs, and the transcript of what the calls returned
 * (docs/method.md#proof-of-work).
 *
 * The timing job no longer calls an operation over and over on the same buffers. Each call of a
 * trial has its own slot: its own input (a fresh ciphertext for dec, a fresh message for sign and
 * hash) and its own output space, all prepared the same way before the counted loop, from a seed
 * the parent sends once the library is loaded. The library's generator is seeded with it too, so
 * keygen, enc and sign draw fresh randomness in every call. After the loop every output is folded
 * into a transcript, which a separate process (the `replay` job) recomputes from the same seed:
 * a call that skipped its work, or answered from a cache, or whose line was forged, leaves a
 * transcript that differs. Which calls are also checked in this process (a signature verifies) is
 * drawn after the loop that ran them. dec's timed inputs come from another process (calls_take_inputs),
 * whose transcript stands for its replay.
 *
 * Calls run in batches of slots that fit CALLS_BATCH_BYTES; each batch is one window between
 * MARK begin and MARK end, so the parent's kernel check sees the calls and nothing else. A trial's
 * calls fall into segments of about an eighth of them; before a segment's inputs are made, and
 * again right before its first call, the library's generator and the input generator are seeded
 * afresh from the trial seed and the segment's index. So the replay can make one segment alone, in
 * a process whose history (warm-ups, calls before) differs from the trial's: a library that cheats
 * by position, time or job gives other outputs there. */
#ifndef NGCC_CALLS_H
#define NGCC_CALLS_H
#include "ops.h"
#include <stdint.h>

/* Slot memory of one batch: keeps a process near 32 MiB whatever the operation's sizes. */
#define CALLS_BATCH_BYTES (32u << 20)
/* The seeding uses besides the segments' (calls.c seed_batch). */
#define USE_WARMUP (~0ull - 1)
#define USE_POOL (~0ull)
/* The transcript has about this many blocks of consecutive calls, one digest each; more when a
 * batch holds fewer calls than a block would (operations with outputs of megabytes). */
#define TRANSCRIPT_BLOCKS 256
/* verify: signed messages prepared once, half of them then altered so the right answer is "reject";
 * reused round robin. The repeated-input audit asks for a pool of one entry per call, up to the most. */
#define VERIFY_POOL 16
#define MAX_VERIFY_POOL 4096
/* Bytes of the trial seed (the NIST DRBG's and the ICCS DRNG's seed length). */
#define SEED_BYTES 48
/* Bytes of the trusted half's window key (native/core/held.h): mixed into every segment's seeds, so no
 * input or generator stream of a timed call can be known before the window that makes it opens. */
#define WINDOW_KEY_BYTES 16

/* dec's timed inputs, where the trusted half holds them: the descriptor only it keeps (the child closes
 * it at the fork), and the child's given_fd meanwhile (calls_inputs_held). */
#define HELD_INPUTS_FD 4
#define GIVEN_HELD (-2)

/* The book: memory the trusted half maps shared before the fork (native/core/held.h). The untrusted
 * half lays its slots out in it and says how (the fields up to pool_fold, written once); at each
 * window's start the trusted half writes the window's inputs into the slots and the generator seeds
 * of the segments that start in it (first_segment, seeds), and at its end reads the outputs, the
 * reported lengths, the return codes and a key exchange's secrets from it. Everything in it is
 * untrusted input to the trusted half. */
#define BOOK_MAGIC 0x6e67636b6f6f6231ull
#define BOOK_SEEDS 16
#define BOOK_SLAB_OFFSET 4096u
#define BOOK_SLAB_BYTES ((size_t)CALLS_BATCH_BYTES + 2u * GUARD_BYTES)
#define BOOK_MOST_CALLS ((size_t)CALLS_BATCH_BYTES / 64u) /* a slot has 64 bytes at least */
#define BOOK_LENS_OFFSET ((size_t)BOOK_SLAB_OFFSET + BOOK_SLAB_BYTES)
#define BOOK_RC_OFFSET (BOOK_LENS_OFFSET + 2u * BOOK_MOST_CALLS * sizeof(unsigned long long))
#define BOOK_KEXD_OFFSET (BOOK_RC_OFFSET + BOOK_MOST_CALLS * sizeof(int))
#define BOOK_BYTES (BOOK_KEXD_OFFSET + BOOK_MOST_CALLS * sizeof(uint64_t))
typedef struct {
    uint64_t magic;
    uint32_t kind, nout;
    uint64_t in_len, out_len[2], stride, batch, segment, per_block, calls;
    uint64_t pool_fold;
    uint64_t first_segment;
    uint32_t nseeds;
    unsigned char seeds[BOOK_SEEDS][SEED_BYTES];
} book_t;

typedef struct {
    ctx_t *c;
    int kind;
    /* Per call: the outputs' claimed sizes, the input's size, and the slot that holds them. */
    int nout;
    size_t out_len[2], in_len, stride;
    size_t batch;
    unsigned long long first;   /* the trial's index of slot 0's call (USE_WARMUP for the warm-ups) */
    unsigned long long segment; /* calls between two seedings of the generators: what a replay makes */
    unsigned char *slab;
    size_t slab_len;
    /* dec: the secret enc gave with each slot's ciphertext, when this process made them (warm-ups, a
     * call by hand, the inputs job); never beside the ciphertext, where the call could read it. */
    unsigned char *expect;
    /* dec: the parent's file of inputs (calls_take_inputs), or -1 while this process makes its own;
     * and the warm-ups' (calls_take_warmups), until the timed inputs are taken. */
    int given_fd, warm_fd;
    unsigned char *staging;   /* a batch's given ciphertexts, read at once */
    unsigned long long *lens; /* two per call: the lengths the call reported */
    int *rc;
    uint64_t *kexd; /* kex: each exchange's secret, folded right after it (its buffers are not slots) */
    unsigned char fill;
    uint64_t prng;
    unsigned char seed[SEED_BYTES];
    /* The window key, where the trusted half made one (a replay of its trial is given it); held:
     * this process lays its slots out in the book and takes each segment's seeds from it. */
    unsigned char key[WINDOW_KEY_BYTES];
    int keyed, held;
    book_t *book;
    uint64_t warm_salt; /* this process's own, for the warm-ups: no part of the transcript */
    const char *rng;    /* the generator api_seed chose ("none": the library has none the harness can seed) */
    /* verify: the pool of (message, signature) and which entries are genuine. */
    unsigned char *pool;
    unsigned long long *pool_sig_len;
    int pool_n;
    double pool_sign_s; /* the wall seconds signing the pool took (sizes the repeated-input audit) */
    /* verify: the public key, messages and signatures of the pool, folded into every call's entry of
     * the transcript: accept/reject alone is the same for any scheme that verifies its own signatures,
     * so another library's replay of the segment (a pull request's base) would agree with a toy one. */
    uint64_t pool_fold;
    /* The transcript: block digests of consecutive calls. */
    unsigned long long calls, per_block, nblocks;
    uint64_t *blocks;
    /* Spot checks: copies of calls chosen after the window that ran them, checked at the end. */
    int spot_count, spot_wanted;
    unsigned long long spot_call[MAX_SPOT_CHECKS], spot_len[MAX_SPOT_CHECKS];
    unsigned char *spot_copy[MAX_SPOT_CHECKS];
} calls_t;

/* Sets up the slots for `calls` calls of the operation ops_prepare(c, op) named, after the library
 * was seeded with `seed` through generator `rng` (api_seed's answer): prepares what the operation
 * needs once (a key pair, the verify pool of `verify_pool` entries, 0 for VERIFY_POOL). Batches hold a whole number of transcript blocks. */
void calls_init(calls_t *t, ctx_t *c, const unsigned char seed[SEED_BYTES], const char *rng, unsigned long long calls, int spot_checks,
                int verify_pool);
/* The untrusted half of a timing trial: calls_init lays the slots out in this book (native/core/held.h). */
void calls_use_book(unsigned char *book, size_t len);
/* A replay of a trial whose trusted half made window key `key`: its segments' seeds are the trial's. */
void calls_set_key(calls_t *t, const unsigned char key[WINDOW_KEY_BYTES]);
/* Prepares slots 0..n-1 for calls first..first+n-1 (first: a segment's start, or USE_WARMUP): makes
 * the inputs, the generators seeded afresh at each segment's start, then fills the output space the
 * same way in every slot. */
void calls_prepare(calls_t *t, unsigned long long first, size_t n);
/* Right before call `first`, a segment's first (or the warm-ups): seeds the generators for its calls,
 * when they draw randomness (keygen, enc, sign, a key exchange); dec, verify and hash need none. */
void calls_reseed(calls_t *t, unsigned long long first);
/* SEED_BYTES from 2 * SEED_BYTES lowercase hex digits; 0 when they are not. */
int calls_seed_from_hex(const char *hex, unsigned char seed[SEED_BYTES]);
/* WINDOW_KEY_BYTES from 2 * WINDOW_KEY_BYTES lowercase hex digits; 0 when they are not. */
int calls_key_from_hex(const char *hex, unsigned char key[WINDOW_KEY_BYTES]);
/* Whether operation `op` takes its inputs from the parent (the `warmups` and `inputs` marks): kem dec. */
int calls_op_takes_inputs(const ctx_t *c, const char *op);
/* How many slots `warmups` warm-up calls go round: a batch's at most. */
size_t calls_warmup_slots(const calls_t *t, unsigned long long warmups);
/* Writes every byte of the slots and the staging buffer again, as calls_init left them: whatever the
 * warm-ups did to their pages (a library that forked shares them copy-on-write), the first write to
 * each is paid now, not after the timed inputs exist, where CPU beside the windows is judged. */
void calls_touch(calls_t *t);
/* dec: the warm-ups' inputs come from the file at `path` that the `inputs` job wrote: the secret key
 * of the timed calls, then `slots` ciphertexts of their own. This process then makes no key pair and
 * calls no enc at all. */
void calls_take_warmups(calls_t *t, const char *path, size_t slots);
/* dec: the timed calls' inputs come from the file at `path` that the `inputs` job wrote in another
 * process (docs/method.md#inputs-made-elsewhere): its secret key, then each call's ciphertext, in
 * order. This process then never holds the secrets they decapsulate to, and cannot check them. */
void calls_take_inputs(calls_t *t, const char *path);
/* dec: the timed calls' inputs come from the trusted half, at each window's start (native/core/held.h):
 * this process never holds them before. */
void calls_inputs_held(calls_t *t);
/* The inputs job: slots 0..n-1, just prepared, answered with the secrets enc gave (as if dec gave
 * them), so calls_settle folds the transcript an honest trial's dec outputs must give. */
void calls_answer_expected(calls_t *t, size_t n);
/* The inputs job: writes slots 0..n-1's ciphertexts to fd. */
void calls_write_inputs(const calls_t *t, size_t n, int fd);
/* Runs the call of slot i and returns its return code (also kept). The timed loop's one call. */
int calls_run(calls_t *t, size_t i);
/* After a batch's window: checks its slots (guards, return codes, dec's secrets, verify's answers),
 * folds them into the transcript as calls first..first+n-1, and draws which of them to check. */
void calls_settle(calls_t *t, unsigned long long first, size_t n);
/* After the last batch: the drawn calls' consistency (CRYPTOFAIL naming the call). */
void calls_verify_spots(calls_t *t);
/* TRANSCRIPT lines for calls first..first+n-1 (whole blocks): "TRANSCRIPT per_block first_block hex hex …"
 * (docs/native-protocol.md). */
void calls_report(const calls_t *t, unsigned long long first, unsigned long long n);

/* ---- for the trusted half (native/core/held.c), which has no library: a calls_t from a book ---- */
/* A calls_t laid out as `b` says, over `slab` (2 * GUARD_BYTES + batch * stride of the trusted half's own, set
 * once the layout is known), making the
 * inputs of trial seed `seed` under window key `key`; 0 when the book is not one calls_init could
 * have written (then it is not used). */
int calls_from_book(calls_t *t, const book_t *b, unsigned char *slab, const unsigned char seed[SEED_BYTES],
                    const unsigned char key[WINDOW_KEY_BYTES]);
/* The operation t makes, as HELD names it: kem-keygen, kem-enc, kem-dec, sig-keygen, sig-sign, sig-verify, hash, kex. */
const char *calls_kind_name(const calls_t *t);
/* Whether the harness makes the operation's inputs (sign's and hash's messages), or dec's come from a file (1 and 2). */
int calls_makes_messages(const calls_t *t);
int calls_takes_ciphertexts(const calls_t *t);
/* dec: calls first..first+n-1's ciphertexts into t's slots, from `fd` (a secret key of sk_len bytes,
 * then one ciphertext a call); 0 when they cannot all be read. */
int calls_read_ciphertexts(calls_t *t, int fd, unsigned long long sk_len, unsigned long long first, size_t n);
/* Calls first..first+n-1's inputs made by the harness (sign's and hash's messages), into t's slots. */
void calls_make_messages(calls_t *t, unsigned long long first, size_t n);
/* The library generator's seed for the calls of segment `segment`. */
void calls_segment_seed(calls_t *t, unsigned long long segment, unsigned char out[SEED_BYTES]);
/* Copies slots 0..n-1's inputs (with inputs 0, the outputs) from slab `from` to slab `to`, both laid
 * out as t's. */
void calls_copy_regions(const calls_t *t, unsigned char *to, const unsigned char *from, size_t n, int inputs);
/* Folds slots 0..n-1 of t, as calls first..first+n-1, into the transcript: what calls_settle folds. */
void calls_fold(calls_t *t, unsigned long long first, size_t n);
#endif
