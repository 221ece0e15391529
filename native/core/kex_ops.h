/* Key exchange (type kex): the API of KEX_AlgorithmInstance.h and one honest exchange between
 * an initiator A and a responder B, used by every job (KAT, timing, profile, memory).
 * The rules follow the ICCS KAT_KEX.c generator (docs/method.md#key-exchange): init_a, init_b,
 * then passes (odd ones A's, even ones B's) until one returns 1, then derive_a with B's last
 * message and derive_b with A's last message. On top of the generator, every exchange checks that
 * the pass that completes is pass kex_get_passes_num(), that no reported length exceeds its
 * buffer, and that both shared secrets are equal; every buffer has guard pages (harness.h). */
#ifndef NGCC_KEX_OPS_H
#define NGCC_KEX_OPS_H
#include "harness.h"
#include <stdint.h>

/* The API declares pass1_msg_a … pass5_msg_b-style functions; the generator's pattern ends there. */
#define KEX_MAX_PASSES 5

typedef int (*kex_init_fn)(unsigned char *, unsigned long long *, unsigned char *, unsigned long long *, unsigned char *,
                           unsigned long long *);
typedef int (*kex_pass1_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long, unsigned char *, unsigned long long *,
                            unsigned char *, unsigned long long *);
typedef int (*kex_pass_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long, unsigned char *, unsigned long long,
                           unsigned char *, unsigned long long *, unsigned char *, unsigned long long *);
typedef int (*kex_derive_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long, unsigned char *, unsigned long long,
                             unsigned char *, unsigned long long, unsigned char *, unsigned long long *);

/* The steps of one exchange, in order: init_a, init_b, pass1 … passN, derive_a, derive_b. */
enum { KEX_STEP_EXCHANGE = -1 };

typedef struct kex_s {
    /* What the library claims. */
    unsigned long long passes, pk_len, sk_len, sta_len, stb_len, ss_len, total_len;
    kex_init_fn init_a, init_b;
    kex_pass1_fn pass1;
    kex_pass_fn pass[KEX_MAX_PASSES + 1]; /* pass[2] … pass[5] */
    kex_derive_fn derive_a, derive_b;
    /* The buffers, each at its claimed size (messages at the claimed total), with guard pages. */
    guarded_t pka, ska, pkb, skb, sta, stb, ssa, ssb, m[KEX_MAX_PASSES + 1];
    /* What the last exchange reported. */
    unsigned long long pka_n, ska_n, pkb_n, skb_n, sta_n, stb_n, ssa_n, ssb_n, m_n[KEX_MAX_PASSES + 1];
    unsigned long long passes_run;
    /* The timed span of each exchange: one step's index (kex_step_name), or KEX_STEP_EXCHANGE for
     * the whole exchange; its counter ticks land in timed_cycles when counting is on. */
    int timed;
    int counting;
    uint64_t timed_cycles;
    /* Called after each step when set (the KAT job prints the step's outputs). */
    void (*after)(struct kex_s *, int step, void *arg);
    void *after_arg;
} kex_t;

/* Resolves the KEX API in an opened library; LOADFAIL naming the missing symbol, a claimed length
 * above the harness's bound, or a number of passes outside 1..KEX_MAX_PASSES. */
void kex_load(kex_t *k, const api_t *api);
void kex_alloc(kex_t *k);
/* Number of steps of one exchange (passes + 4) and each step's name ("init_a", "pass2", …). */
int kex_steps(const kex_t *k);
const char *kex_step_name(const kex_t *k, int step, char *buf, size_t len);
/* The step called NAME, KEX_STEP_EXCHANGE for "exchange", -2 for no such step. */
int kex_step_of(const kex_t *k, const char *name);
/* One full exchange. Fails the process (CRYPTOFAIL or OVERFLOW, with the reason) when a step
 * returns a negative code, the passes disagree with kex_get_passes_num(), a reported length
 * exceeds its buffer, or the shared secrets differ; `context` prefixes the reason ("record 3"). */
void kex_exchange(kex_t *k, const char *context);
/* OVERFLOW failure if any guard byte of any buffer was touched. */
void kex_check_guards(const kex_t *k);
/* Counter ticks of an empty span (two reads back to back), the median of many: what each counted
 * span carries besides its step, so the steps of an exchange add up to it within this per step. */
uint64_t kex_span_overhead(void);
/* META lines: the claimed sizes and those of the last exchange (kex_passes, msgN_bytes, …). */
void kex_meta(const kex_t *k);
#endif
