/* Shared pieces of the native drivers: loading the library under test, guarded buffers,
 * and the line protocol (tab-separated "KEY value" lines) that TypeScript parses.
 * The drivers report facts; every policy decision is taken in TypeScript.
 * Lines go to the result channel (docs/native-protocol.md#the-channel) when the parent gave one,
 * never to the stdout the measured library shares; without one (a driver run by hand) to stdout. */
#ifndef NGCC_HARNESS_H
#define NGCC_HARNESS_H
#include <stddef.h>
#include <stdint.h>

/* Exit codes shared by every driver (documented in README "Native protocol"). */
enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_LOADFAIL = 3, EXIT_CRYPTOFAIL = 4, EXIT_OVERFLOW = 5, EXIT_IOERROR = 6 };

/* A page on each side: a write well past the claimed length (a wrong length constant, an
 * off-by-a-block loop) lands in the guard rather than in another buffer unseen. */
#define GUARD_BYTES 4096
#define GUARD_VALUE 0xA5

typedef int (*kem_keygen_fn)(unsigned char *, unsigned long long *, unsigned char *, unsigned long long *);
typedef int (*kem_enc_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long *, unsigned char *,
                          unsigned long long *);
typedef int (*kem_dec_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long, unsigned char *, unsigned long long *);
typedef int (*sig_keygen_fn)(unsigned char *, unsigned long long *, unsigned char *, unsigned long long *);
typedef int (*sig_sign_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long, unsigned char *, unsigned long long *);
typedef int (*sig_verify_fn)(unsigned char *, unsigned long long, unsigned char *, unsigned long long, unsigned char *, unsigned long long);
typedef unsigned long long (*len_fn)(void);
typedef int (*crypt_hash_fn)(int, const unsigned char *, unsigned long long, unsigned char *);
typedef int (*drng_init_fn)(void *, const unsigned char *, unsigned long long);
typedef int (*drng_get_fn)(void *, unsigned char *, unsigned long long);
typedef void (*nist_rng_init_fn)(unsigned char *, unsigned char *, int);
typedef int (*nist_rng_fn)(unsigned char *, unsigned long long);

/* The ICCS API of one library, plus whichever randomness hooks it has. */
typedef struct {
    void *handle;
    int is_sig;
    int is_kex; /* type kex: its API is resolved by kex_load (kex_ops.h) */
    unsigned long long pk_len, sk_len, ct_len, ss_len, sn_len;
    kem_keygen_fn kem_keygen;
    kem_enc_fn kem_enc;
    kem_dec_fn kem_dec;
    sig_keygen_fn sig_keygen;
    sig_sign_fn sig_sign;
    sig_verify_fn sig_verify;
    drng_init_fn drng_init;         /* init_random_number (ICCS) */
    drng_get_fn drng_get;           /* get_random_number (ICCS) */
    void *drng_algorithm;           /* &drng_algorithm (ICCS) */
    nist_rng_init_fn nist_rng_init; /* randombytes_init (NIST DRBG) */
    nist_rng_fn nist_rng;           /* randombytes (NIST DRBG) */
    unsigned long long *nist_draws; /* ngcc_rng_draws of the harness's NIST generators (native/linked/nist) */
    int is_hash;                    /* type hash:BITS (native/core/hash_ops.h) */
    int digest_bits;                /* the BITS of hash:BITS: DIGEST_BIT_LENGTH, which no symbol carries */
    crypt_hash_fn crypt_hash;       /* CryptHash */
} api_t;

/* Loads LIB and resolves the ICCS API for type "kem", "sig" or "hash:BITS" ("kex": the randomness hooks only); on failure reports
 * "STATUS LOADFAIL <reason>" and exits EXIT_LOADFAIL. */
void api_load(api_t *api, const char *lib, const char *type);
void *api_optional(const api_t *api, const char *name);

/* Seeds the library's randomness with bytes 00..2f: ICCS DRNG if present, else the NIST DRBG. */
const char *api_seed_default(const api_t *api, const char *rng);
/* The same with the given 48-byte seed (a timing trial's, from the parent). */
const char *api_seed(const api_t *api, const char *rng, const unsigned char seed[48]);

/* The calls the library's generator `rng` (as api_seed named it) has served so far, into *out: the
 * ICCS DRNG's reseed_counter (init sets it to 1, each get_random_number adds 1), or the harness's NIST
 * generators' own count. 0 when known, -1 when the generator keeps no count this can read. Only
 * differences of two readings with no seeding between them mean anything. */
int api_draws(const api_t *api, const char *rng, unsigned long long *out);

/* Buffers with GUARD_BYTES of GUARD_VALUE on both sides. */
typedef struct {
    unsigned char *base;
    unsigned char *p;
    size_t len;
    const char *name;
} guarded_t;
void guarded_alloc(guarded_t *g, size_t len, const char *name);
void guarded_free(guarded_t *g);
/* Returns 1 if a guard byte was touched, and describes where in `why`. */
int guarded_violated(const guarded_t *g, char *why, size_t why_len);

/* The result channel. proto_open() is every driver's first call: it takes over the channel on
 * fd 3 (reads the run's secret and the job, moves the channel to a random high descriptor) before
 * any of the library's code can run. Without a channel, lines go to stdout unauthenticated. */
void proto_open(void);
int proto_has_channel(void);
/* The untrusted half of a split driver (native/core/trusted.h): from here on its lines go to `fd`, the
 * trusted half's end, without the secret, which is wiped from this process with the channel closed. */
void proto_handoff(int fd);
/* The trusted half's relay of one line of the untrusted half: sends `text` as a line of its own
 * (with the secret) and reads the parent's one answer into `answer` (at most cap - 1 characters). */
size_t proto_exchange(const char *text, char *answer, size_t cap);
/* The driver's arguments, the same whoever started it: LIB (argv[1]) then the job's fields, from
 * the channel's job line when there is a channel, else from the rest of argv (a driver run by
 * hand). Every campaign driver therefore has the command line `driver LIB` whatever it does.
 * Returns the number of fields written to `fields` (at most max). */
int job_fields(int argc, char **argv, char **fields, int max);
/* One protocol line (printf format, tab-separated fields, no newline): prefixed with the secret
 * and written in one write(2). Newlines inside the formatted text become spaces. */
void proto_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Bytes as "KIND <base64>" lines of at most 1500 bytes each, in order (the KAT text). */
void proto_data(const char *kind, const unsigned char *p, size_t n);
/* "MARK name", then waits for the parent's answer: the parent reads, meanwhile, the CPU time the
 * kernel charged this process (docs/native-protocol.md#marks). No-op without a channel. */
void proto_mark(const char *name);
/* "MARK name", then waits for the parent's answer "GO\tVALUE" and copies VALUE into answer (at most
 * cap - 1 characters). Returns 0 without a channel, or when the parent answers a plain "GO" (it has
 * nothing to give): answer untouched. */
int proto_ask(const char *name, char *answer, size_t cap);
/* The driver's last line, "END code"; returns code, for `return proto_end(EXIT_OK);`. */
int proto_end(int code);
/* STATUS status detail, END code, _exit(code): async-signal-safe, for signal handlers. */
void proto_fail_now(int code, const char *status, const char *detail);

/* STATUS status detail, END code, exit(code). */
void fail(int code, const char *status, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));
void meta_str(const char *key, const char *value);
void meta_u64(const char *key, unsigned long long value);
/* VmRSS / VmHWM of this process from /proc/self/status, in bytes (0 if unknown). */
unsigned long long proc_status_bytes(const char *field);
int pin_to_cpu(int cpu);
/* What the OS says about this thread over a span (docs/method.md#disturbed-trials): its CPU time and
 * context switches against the wall clock, to tell a span that had the core to itself from one that
 * shared it. Taken right around a timed loop; the parent judges, the driver only reports. */
typedef struct {
    double wall, cpu;
    long involuntary, voluntary;
} os_mark_t;
void os_mark(os_mark_t *m);
/* "OS thread_cpu_s wall_s involuntary_switches voluntary_switches" for the span from a to b. */
void os_report(const os_mark_t *a, const os_mark_t *b);

/* n bytes from the kernel's generator (getrandom); ERROR failure if it fails. */
void random_fill(unsigned char *p, size_t n);

/* The job of the loop drivers (time, prof), after LIB (see job_fields):
 *   LIB JOB TYPE OP N WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS]
 * N must be at least 1; a CPU >= 0 is pinned here. Prints `usage` and exits EXIT_USAGE when
 * fields are missing; USAGE failures name the problem otherwise. rng is NULL for auto. */
#define DEFAULT_SPOT_CHECKS 2
typedef struct {
    const char *lib, *type, *op, *rng;
    unsigned long long n, warmups, spot_checks;
    int cpu;
} loop_args_t;
void parse_loop_args(int n, char **fields, const char *usage, const char *n_name, loop_args_t *a);
#endif
