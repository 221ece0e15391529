/* What the trusted half holds of a timing trial's windows besides the clock (docs/method.md#the-trusted-half).
 *
 * Before the fork it maps the book (native/core/calls.h), memory it shares with the untrusted half, and
 * after it makes a window key of its own. The untrusted half lays its call slots out in the book.
 * At each window's start the trusted half makes the window's inputs from the trial seed and the key
 * (sign's and hash's messages, and the generator seed of each segment that starts in it), or reads
 * dec's from the file only it holds, in memory
 * of its own while the parent's side has not yet answered the mark, and copies them into the book
 * only then, right before it reads the counter and lets the child go: no input or random stream of
 * a timed call exists anywhere the library can read before its window opens. At the window's end,
 * right after the counter, it copies the outputs, lengths and return codes out of the book, and,
 * once the parent's side has answered, folds them into the transcript as the untrusted half would
 * (calls_fold): work done after the window is not in it. At the end it writes that transcript, and
 *   HELD key kind stride batch segment per_block calls in_len out_len0 out_len1 cpu_ns beside_ns
 * the key (for the replay, which is given it), the layout it read, which TypeScript holds to the
 * one the job and the instance's sizes give (src/measure/trustedClock.ts), the CPU its copies took
 * inside the parent's side's windows, and the CPU it spent on the book between them (making a
 * window's inputs, folding the one before's outputs), which the kernel's view leaves out: neither is
 * the library's. A trial it could not hold ends with "UNHELD reason" instead. The book is untrusted input: read
 * once, checked, copied; a layout calls_init could not have made leaves the trial unheld. */
#ifndef NGCC_HELD_H
#define NGCC_HELD_H
#include "calls.h"

typedef struct {
    unsigned char *book; /* BOOK_BYTES, shared; NULL where it could not be mapped */
    int state;           /* 0: the book not read yet; 1: held; -1: not held, for `why` */
    const char *why;
    calls_t t;           /* the trial as the book lays it out, over `mine` */
    unsigned char *mine; /* the batch's slots, the trusted half's own: a window's inputs, then its outputs */
    unsigned char key[WINDOW_KEY_BYTES], seed[SEED_BYTES];
    int seed_known;
    int inputs_fd;                     /* dec's timed inputs, when the parent's side gave them to this half; else -1 */
    unsigned long long inputs_sk;      /* the secret key's bytes before the ciphertexts there */
    unsigned long long windows, first; /* windows begun; the open one's first call */
    size_t n;                          /* its calls (0: none to serve) */
    long long cpu_ns;                  /* this thread's CPU in the windows' copies (held_reveal, held_snapshot) */
    long long beside_ns;               /* and between them: each window's inputs made, its outputs folded */
    long long last_fold_ns;            /* the last fold's, after the last window: not between two */
    uint64_t first_segment;
    uint32_t nseeds;
    unsigned char seeds[BOOK_SEEDS][SEED_BYTES];
} held_t;

/* Before the fork: maps the book. */
void held_map(held_t *h);
/* In the untrusted half: lays the slots out in the book. */
void held_in_child(held_t *h);
/* In the trusted half: makes the window key. */
void held_in_parent(held_t *h);
/* The parent's answer to the child's `seed` mark ("GO\t" and the seed's hex). */
void held_seed(held_t *h, const char *answer);
/* Once the book is laid out (the `inputs` mark, else the first window's start), before the mark goes
 * to the parent's side: reads and checks the layout, and maps the pages it will copy, whose first
 * touch would otherwise fall in the windows. */
void held_ready(held_t *h);
/* The parent's answer to the child's `inputs` mark: "GO\theld" gives dec's timed inputs to this half,
 * as HELD_INPUTS_FD (native/core/calls.h). 0 when it does and this half cannot take them (the trial is
 * then unheld, and the child must not wait for inputs that will not come). */
int held_inputs(held_t *h, const char *answer);
/* At a window's start, before the mark goes to the parent's side: the window's inputs, in its own memory. */
void held_prepare(held_t *h);
/* Right before the counter and the child's go: the inputs into the book. */
void held_reveal(held_t *h);
/* Right after the counter at a window's end: the outputs out of the book. */
void held_snapshot(held_t *h);
/* Once the end mark is answered: the outputs into the transcript. */
void held_fold(held_t *h);
/* Whether every window the layout gives has begun and its outputs are folded: the last one has ended. */
int held_windows_done(const held_t *h);
/* Whether the trial is held (the child's TRANSCRIPT lines are then dropped). */
int held_on(const held_t *h);
/* At the child's END: the transcript and the HELD line, when held; UNHELD and why, when not. */
void held_report(const held_t *h);
#endif
