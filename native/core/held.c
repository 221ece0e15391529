/* The trusted half's hold on a timing trial's inputs and outputs (native/core/held.h). */
#define _GNU_SOURCE
#include "held.h"
#include "harness.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

/* This thread's CPU (ns): what the parent's work on the book costs (held_t.cpu_ns, beside_ns). */
static long long thread_cpu_ns(void) {
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? (long long)t.tv_sec * 1000000000ll + t.tv_nsec : 0;
}

void held_map(held_t *h) {
    memset(h, 0, sizeof *h);
    h->inputs_fd = -1;
    /* Untouched pages cost nothing: the slab is used as far as the trial's batch reaches. */
    void *p = mmap(NULL, BOOK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    h->book = p == MAP_FAILED ? NULL : p;
}

void held_in_child(held_t *h) {
    if (h->book) calls_use_book(h->book, BOOK_BYTES);
}

void held_in_parent(held_t *h) {
    size_t got = 0;
    while (got < sizeof h->key) {
        ssize_t n = getrandom(h->key + got, sizeof h->key - got, 0);
        if (n <= 0) {
            h->state = -1, h->why = "no window key could be drawn"; /* the parent's side refuses the trial */
            return;
        }
        got += (size_t)n;
    }
}

void held_seed(held_t *h, const char *answer) {
    char hex[2 * SEED_BYTES + 1];
    if (strncmp(answer, "GO\t", 3) != 0 || strlen(answer + 3) < 2 * SEED_BYTES) return;
    memcpy(hex, answer + 3, 2 * SEED_BYTES);
    hex[2 * SEED_BYTES] = '\0';
    h->seed_known = calls_seed_from_hex(hex, h->seed);
}

/* Maps every page of [p, p + n) of the book into this process, writable, without changing a byte:
 * the first touch of a page costs microseconds, which would otherwise fall in the windows. */
static void populate(unsigned char *p, size_t n) {
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095, end = (uintptr_t)(p + n);
#ifdef MADV_POPULATE_WRITE
    if (madvise((void *)start, end - start, MADV_POPULATE_WRITE) == 0) return;
#endif
    for (uintptr_t a = start; a < end; a += 4096) __atomic_fetch_add((unsigned char *)a, 0, __ATOMIC_RELAXED);
}

static void ready_layout(held_t *h) {
    if (h->state != 0) return;
    h->state = -1;
    if (!h->book) {
        h->why = "the book could not be mapped";
        return;
    }
    if (!h->seed_known) {
        h->why = "the trial seed was not given before the windows";
        return;
    }
    book_t copy; /* the book's layout is read once: a copy is checked, never the shared bytes themselves */
    memcpy(&copy, h->book, sizeof copy);
    if (!calls_from_book(&h->t, &copy, NULL, h->seed, h->key)) {
        h->why = "the book holds no layout native/core/calls.c makes";
        return;
    }
    h->state = 1;
    calls_t *t = &h->t;
    /* As much of its own as the batch's slots take: a campaign's address-space cap binds this process too. */
    size_t used = 2u * GUARD_BYTES + t->batch * t->stride;
    h->mine = t->slab = malloc(used);
    if (!h->mine) {
        h->state = -1, h->why = "no memory for its copy of a batch's slots (planning.memory_limit_mb)";
        return;
    }
    memset(h->mine, 0, used);
    memset(t->lens, 0, 2 * t->batch * sizeof *t->lens);
    memset(t->rc, 0, t->batch * sizeof *t->rc);
    memset(t->kexd, 0, t->batch * sizeof *t->kexd);
    populate(h->book, BOOK_SLAB_OFFSET + used);
    populate(h->book + BOOK_LENS_OFFSET, 2 * t->batch * sizeof *t->lens);
    populate(h->book + BOOK_RC_OFFSET, t->batch * sizeof *t->rc);
    populate(h->book + BOOK_KEXD_OFFSET, t->batch * sizeof *t->kexd);
}

int held_inputs(held_t *h, const char *answer) {
    if (strcmp(answer, "GO\theld") != 0) return 1;
    if (h->state != 1) return 0;
    struct stat st;
    const calls_t *t = &h->t;
    unsigned long long cts = t->calls * (unsigned long long)t->in_len;
    if (!calls_takes_ciphertexts(t) || fstat(HELD_INPUTS_FD, &st) != 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size < cts) {
        h->state = -1, h->why = "dec's inputs were not a file of its calls' ciphertexts";
        return 0;
    }
    h->inputs_fd = HELD_INPUTS_FD;
    h->inputs_sk = (unsigned long long)st.st_size - cts;
    return 1;
}

static void prepare_window(held_t *h) {
    h->n = 0;
    if (h->state != 1) return;
    calls_t *t = &h->t;
    unsigned long long w = h->windows++;
    if (w >= (t->calls + t->batch - 1) / t->batch) return; /* a window too many: the parent's side counts them */
    h->first = w * t->batch;
    h->n = (size_t)(t->calls - h->first < t->batch ? t->calls - h->first : t->batch);
    calls_make_messages(t, h->first, h->n);
    if (h->inputs_fd >= 0 && !calls_read_ciphertexts(t, h->inputs_fd, h->inputs_sk, h->first, h->n)) {
        h->state = -1, h->why = "dec's inputs could not be read", h->n = 0;
        return;
    }
    h->first_segment = h->first / t->segment;
    h->nseeds = 0;
    for (unsigned long long c = h->first; c < h->first + h->n; c++)
        if (c % t->segment == 0 && h->nseeds < BOOK_SEEDS) calls_segment_seed(t, c / t->segment, h->seeds[h->nseeds++]);
}

/* Reading the layout (once) is before the `inputs` mark or the first `begin`: outside every span the
 * parent's side sums CPU over, so not counted. */
void held_ready(held_t *h) { ready_layout(h); }

void held_prepare(held_t *h) {
    ready_layout(h);
    long long started = thread_cpu_ns();
    prepare_window(h);
    h->beside_ns += thread_cpu_ns() - started;
}

void held_reveal(held_t *h) {
    if (h->n == 0) return;
    long long started = thread_cpu_ns();
    book_t *b = (book_t *)h->book;
    if (calls_makes_messages(&h->t) || h->inputs_fd >= 0) calls_copy_regions(&h->t, h->book + BOOK_SLAB_OFFSET, h->mine, h->n, 1);
    memcpy(b->seeds, h->seeds, sizeof h->seeds);
    b->first_segment = h->first_segment;
    b->nseeds = h->nseeds;
    h->cpu_ns += thread_cpu_ns() - started;
}

void held_snapshot(held_t *h) {
    if (h->n == 0) return;
    long long started = thread_cpu_ns();
    calls_t *t = &h->t;
    calls_copy_regions(t, h->mine, h->book + BOOK_SLAB_OFFSET, h->n, 0);
    memcpy(t->lens, h->book + BOOK_LENS_OFFSET, 2 * h->n * sizeof *t->lens);
    memcpy(t->rc, h->book + BOOK_RC_OFFSET, h->n * sizeof *t->rc);
    memcpy(t->kexd, h->book + BOOK_KEXD_OFFSET, h->n * sizeof *t->kexd);
    h->cpu_ns += thread_cpu_ns() - started;
}

void held_fold(held_t *h) {
    if (h->n == 0) return;
    long long started = thread_cpu_ns();
    calls_fold(&h->t, h->first, h->n);
    h->n = 0;
    /* The last window's fold comes after the last `end` is answered, outside the spans: only the
     * folds before it are counted (held_report). */
    h->last_fold_ns = thread_cpu_ns() - started;
    h->beside_ns += h->last_fold_ns;
}

int held_on(const held_t *h) { return h->state == 1; }

int held_windows_done(const held_t *h) {
    return h->state == 1 && h->n == 0 && h->t.batch > 0 && h->windows >= (h->t.calls + h->t.batch - 1) / h->t.batch;
}

void held_report(const held_t *h) {
    if (h->state == -1) proto_line("UNHELD\t%s", h->why ? h->why : "?");
    if (h->state != 1) return;
    const calls_t *t = &h->t;
    calls_report(t, 0, t->calls);
    char key[2 * WINDOW_KEY_BYTES + 1];
    for (int i = 0; i < WINDOW_KEY_BYTES; i++) snprintf(key + 2 * i, 3, "%02x", h->key[i]);
    proto_line("HELD\t%s\t%s\t%zu\t%zu\t%llu\t%llu\t%llu\t%zu\t%zu\t%zu\t%lld\t%lld", key, calls_kind_name(t), t->stride, t->batch,
               t->segment, t->per_block, t->calls, t->in_len, t->out_len[0], t->out_len[1], h->cpu_ns, h->beside_ns - h->last_fold_ns);
}
