#define _GNU_SOURCE
#include "harness.h"
#include "affinityseal.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the result channel (docs/native-protocol.md#the-channel) ---- */

#define CHANNEL_FD 3
#define SECRET_MIN 32
#define SECRET_MAX 64
#define LINE_MAX_BYTES 2048

/* Where lines go and what precedes each: stdout and nothing until proto_open() finds a channel.
 * The secret is kept masked (secret XOR a random mask held apart), so a plain search of the
 * process's memory for a hex string finds nothing; each line unmasks it on the stack and wipes it. */
static int proto_fd = STDOUT_FILENO;
static void proto_emit(const char *text, size_t len, int in_signal);
static int proto_channel;
static unsigned char proto_masked[SECRET_MAX + 2];
static size_t proto_prefix_len;
static unsigned char *proto_mask;

/* The job the parent sent after the secret (docs/native-protocol.md#the-channel). */
#define JOB_MAX_BYTES 1024
#define JOB_MAX_FIELDS 16
static char job_line[JOB_MAX_BYTES + 1];

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* the parent is gone: nobody left to tell */
        p += w;
        n -= (size_t)w;
    }
}

static void channel_broken(const char *why) {
    static const char head[] = "ngcc driver: result channel unusable: ";
    write_all(STDERR_FILENO, head, sizeof head - 1);
    write_all(STDERR_FILENO, why, strlen(why));
    write_all(STDERR_FILENO, "\n", 1);
    _exit(EXIT_IOERROR);
}

static unsigned random_u32(void) {
    unsigned v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, &v, sizeof v);
        close(fd);
        if (r == (ssize_t)sizeof v) return v;
    }
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned)t.tv_nsec ^ ((unsigned)getpid() << 16);
}

/* A free descriptor at a random place below the soft limit (valgrind lowers the limit it reports
 * and keeps the range above for itself), capped so the kernel's table stays small. */
static int move_high(int fd) {
    struct rlimit rl;
    unsigned long hi = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) hi = (unsigned long)rl.rlim_cur;
    if (hi > 4096) hi = 4096;
    for (int attempt = 0; attempt < 32 && hi > 128; attempt++) {
        int target = 64 + (int)(random_u32() % (unsigned)(hi - 64));
        if (fcntl(target, F_GETFD) != -1 || errno != EBADF) continue; /* taken */
        if (dup2(fd, target) == target) return target;
    }
    return fcntl(fd, F_DUPFD, 10);
}

/* One line from the channel, byte by byte so nothing after it is consumed; 0 at its end. */
static size_t channel_read_line(int fd, char *buf, size_t cap, const char *what) {
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r != 1) channel_broken(what);
        if (c == '\n') break;
        if (n == cap) channel_broken(what);
        buf[n++] = c;
    }
    buf[n] = '\0';
    return n;
}

void proto_open(void) {
    struct stat st;
    if (fstat(CHANNEL_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) return; /* run by hand: stdout */
    /* The secret, then the job, arrive on the channel itself before the library is loaded: in
     * neither the command line nor the environment, which the library can read. */
    char secret[SECRET_MAX + 1];
    size_t n = channel_read_line(CHANNEL_FD, secret, SECRET_MAX, "no secret, or a malformed one");
    if (n < SECRET_MIN) channel_broken("secret too short");
    for (size_t i = 0; i < n; i++)
        if (!((secret[i] >= '0' && secret[i] <= '9') || (secret[i] >= 'a' && secret[i] <= 'f'))) channel_broken("malformed secret");
    channel_read_line(CHANNEL_FD, job_line, JOB_MAX_BYTES, "no job");
    int fd = move_high(CHANNEL_FD);
    if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) channel_broken("cannot move the descriptor");
    close(CHANNEL_FD);
    proto_mask = malloc(SECRET_MAX + 2);
    if (!proto_mask) channel_broken("out of memory");
    for (size_t i = 0; i < SECRET_MAX + 2; i += sizeof(unsigned)) {
        unsigned r = random_u32();
        memcpy(proto_mask + i, &r, SECRET_MAX + 2 - i < sizeof r ? SECRET_MAX + 2 - i : sizeof r);
    }
    secret[n] = '\t';
    for (size_t i = 0; i <= n; i++) proto_masked[i] = (unsigned char)secret[i] ^ proto_mask[i];
    proto_prefix_len = n + 1;
    explicit_bzero(secret, sizeof secret); /* memset of a dead buffer is optimised away */
    proto_fd = fd;
    proto_channel = 1;
}

int proto_has_channel(void) { return proto_channel; }

void proto_handoff(int fd) {
    if (!proto_channel) return;
    close(proto_fd);
    /* At a random high descriptor, as the channel was: no fixed number for a library to write to. */
    int high = move_high(fd);
    if (high >= 0 && fcntl(high, F_SETFD, FD_CLOEXEC) == 0) {
        close(fd);
        fd = high;
    }
    volatile unsigned char *masked = proto_masked, *mask = proto_mask;
    for (size_t i = 0; i < SECRET_MAX + 2; i++) masked[i] = mask[i] = 0;
    free(proto_mask);
    proto_mask = NULL;
    proto_prefix_len = 0;
    proto_fd = fd;
}

size_t proto_exchange(const char *text, char *answer, size_t cap) {
    proto_emit(text, strlen(text), 0);
    return channel_read_line(proto_fd, answer, cap - 1, "no answer to a mark");
}

int job_fields(int argc, char **argv, char **fields, int max) {
    int n = 0;
    if (argc > 1 && n < max) fields[n++] = argv[1]; /* LIB: the one argument, whatever the job */
    if (proto_channel) {
        char *save = NULL;
        for (char *f = strtok_r(job_line, "\t", &save); f && n < max; f = strtok_r(NULL, "\t", &save)) fields[n++] = f;
    } else {
        for (int i = 2; i < argc && n < max; i++) fields[n++] = argv[i];
    }
    return n;
}

void proto_mark(const char *name) {
    if (!proto_channel) return;
    proto_line("MARK\t%s", name);
    char ack[8];
    channel_read_line(proto_fd, ack, sizeof ack - 1, "no answer to a mark");
}

int proto_ask(const char *name, char *answer, size_t cap) {
    if (!proto_channel) return 0;
    proto_line("MARK\t%s", name);
    char line[256];
    channel_read_line(proto_fd, line, sizeof line - 1, "no answer to a mark");
    if (strcmp(line, "GO") == 0) return 0; /* the parent has nothing to give: as when run by hand */
    if (strncmp(line, "GO\t", 3) != 0 || strlen(line + 3) >= cap) channel_broken("a malformed answer to a mark");
    strcpy(answer, line + 3);
    return 1;
}

/* prefix + text + newline in one write, so lines never interleave with another writer's.
 * in_signal: called from a signal handler, where stdio must not be touched. */
static void proto_emit(const char *text, size_t len, int in_signal) {
    char buf[SECRET_MAX + 2 + LINE_MAX_BYTES + 1];
    if (len > LINE_MAX_BYTES) len = LINE_MAX_BYTES;
    for (size_t i = 0; i < proto_prefix_len; i++) buf[i] = (char)(proto_masked[i] ^ proto_mask[i]);
    memcpy(buf + proto_prefix_len, text, len);
    buf[proto_prefix_len + len] = '\n';
    if (!proto_channel && !in_signal) fflush(stdout); /* by hand: keep the order with buffered stdout */
    write_all(proto_fd, buf, proto_prefix_len + len + 1);
    volatile char *wipe = buf;
    for (size_t i = 0; i < proto_prefix_len; i++) wipe[i] = 0;
}

void proto_data(const char *kind, const unsigned char *p, size_t n) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    /* 1500 bytes become 2000 characters: a chunk and its kind fit one line. */
    char text[16 + 2000 + 1];
    size_t k = strlen(kind);
    if (k > 15) k = 15;
    for (size_t off = 0; off < n; off += 1500) {
        size_t len = n - off < 1500 ? n - off : 1500, t = 0;
        memcpy(text, kind, k);
        t = k;
        text[t++] = '\t';
        for (size_t i = 0; i < len; i += 3) {
            unsigned v = (unsigned)p[off + i] << 16;
            if (i + 1 < len) v |= (unsigned)p[off + i + 1] << 8;
            if (i + 2 < len) v |= p[off + i + 2];
            text[t++] = b64[(v >> 18) & 63];
            text[t++] = b64[(v >> 12) & 63];
            text[t++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
            text[t++] = i + 2 < len ? b64[v & 63] : '=';
        }
        proto_emit(text, t, 0);
    }
}

void proto_line(const char *fmt, ...) {
    char text[LINE_MAX_BYTES + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    /* Library-supplied text (a profiled function's name) must not start a line of its own. */
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n' || text[i] == '\r') text[i] = ' ';
    proto_emit(text, len, 0);
}

static size_t end_text(char *buf, int code) {
    char digits[12];
    size_t n = 0, len = 0;
    unsigned v = code < 0 ? 0u : (unsigned)code;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    memcpy(buf, "END\t", 4);
    len = 4;
    while (n > 0) buf[len++] = digits[--n];
    return len;
}

int proto_end(int code) {
    if (proto_channel) {
        char text[20];
        proto_emit(text, end_text(text, code), 0);
    }
    return code;
}

void proto_fail_now(int code, const char *status, const char *detail) {
    char text[LINE_MAX_BYTES];
    size_t len = 0, s = strlen(status), d = strlen(detail);
    if (s + d + 8 > sizeof text) d = sizeof text - s - 8;
    memcpy(text, "STATUS\t", 7);
    len = 7;
    memcpy(text + len, status, s);
    len += s;
    text[len++] = '\t';
    memcpy(text + len, detail, d);
    len += d;
    proto_emit(text, len, 1);
    if (proto_channel) proto_emit(text, end_text(text, code), 1);
    _exit(code);
}

void fail(int code, const char *status, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line only: the detail becomes a field in build.json. */
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\t') *c = ' ';
    proto_line("STATUS\t%s\t%s", status, msg);
    exit(proto_end(code));
}

void meta_str(const char *key, const char *value) { proto_line("META\t%s\t%s", key, value); }
void meta_u64(const char *key, unsigned long long value) { proto_line("META\t%s\t%llu", key, value); }

static void *need(const api_t *api, const char *name) {
    void *sym = dlsym(api->handle, name);
    if (!sym) fail(EXIT_LOADFAIL, "LOADFAIL", "missing symbol %s", name);
    return sym;
}

void *api_optional(const api_t *api, const char *name) { return dlsym(api->handle, name); }

/* The driver allocates what the library claims its buffers need: a bound keeps a hostile or broken
 * claim from exhausting the runner's memory before anything runs, and names the function. */
#define MAX_CLAIMED_BYTES (64ull << 20)

static size_t claimed_len(const api_t *api, const char *fn) {
    unsigned long long n = ((len_fn)need(api, fn))();
    if (n > MAX_CLAIMED_BYTES)
        fail(EXIT_LOADFAIL, "LOADFAIL", "%s() claims %llu bytes, above the bound of %llu (64 MiB)", fn, n, MAX_CLAIMED_BYTES);
    return (size_t)n;
}

void api_load(api_t *api, const char *lib, const char *type) {
    memset(api, 0, sizeof *api);
    /* Before the library's first instruction (its constructors run inside dlopen), after any
     * pinning: from here on nothing in this process moves to another core (affinityseal.h). Where the
     * seal cannot be made (qemu-user) the driver goes on; a run's start check refuses such a host. */
    (void)affinity_seal();
    /* RTLD_NOW: an unresolved symbol is a load failure here, not a crash mid-measurement. */
    api->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) fail(EXIT_LOADFAIL, "LOADFAIL", "dlopen: %s", dlerror());
    if (strcmp(type, "kem") == 0) {
        api->pk_len = claimed_len(api, "kem_get_pk_len_bytes");
        api->sk_len = claimed_len(api, "kem_get_sk_len_bytes");
        api->ct_len = claimed_len(api, "kem_get_ct_len_bytes");
        api->ss_len = claimed_len(api, "kem_get_ss_len_bytes");
        api->kem_keygen = (kem_keygen_fn)need(api, "kem_keygen");
        api->kem_enc = (kem_enc_fn)need(api, "kem_enc");
        api->kem_dec = (kem_dec_fn)need(api, "kem_dec");
    } else if (strcmp(type, "sig") == 0) {
        api->is_sig = 1;
        api->pk_len = claimed_len(api, "sig_get_pk_len_bytes");
        api->sk_len = claimed_len(api, "sig_get_sk_len_bytes");
        api->sn_len = claimed_len(api, "sig_get_sn_len_bytes");
        api->sig_keygen = (sig_keygen_fn)need(api, "sig_keygen");
        api->sig_sign = (sig_sign_fn)need(api, "sig_sign");
        api->sig_verify = (sig_verify_fn)need(api, "sig_verify");
    } else if (strncmp(type, "hash:", 5) == 0) {
        char *end = NULL;
        long bits = strtol(type + 5, &end, 10);
        if (!end || *end || bits < 8 || bits > 65536 || bits % 8)
            fail(EXIT_USAGE, "USAGE", "type %s: the digest length must be a multiple of 8 bits, 8 to 65536", type);
        api->is_hash = 1;
        api->digest_bits = (int)bits;
        api->crypt_hash = (crypt_hash_fn)need(api, "CryptHash");
    } else if (strcmp(type, "kex") == 0) {
        api->is_kex = 1;
    } else {
        fail(EXIT_USAGE, "USAGE", "unknown type %s", type);
    }
    api->drng_init = (drng_init_fn)api_optional(api, "init_random_number");
    api->drng_get = (drng_get_fn)api_optional(api, "get_random_number");
    api->drng_algorithm = api_optional(api, "drng_algorithm");
    api->nist_rng_init = (nist_rng_init_fn)api_optional(api, "randombytes_init");
    api->nist_rng = (nist_rng_fn)api_optional(api, "randombytes");
    api->nist_draws = (unsigned long long *)api_optional(api, "ngcc_rng_draws");
}

int api_draws(const api_t *api, const char *rng, unsigned long long *out) {
    if (rng && strcmp(rng, "iccs-drng") == 0 && api->drng_algorithm) {
        /* DRNG_ctx is V, C, reseed_counter: 55 bytes each, big-endian (native/iccs/drng.h). */
        const unsigned char *counter = (const unsigned char *)api->drng_algorithm + 2 * 55;
        unsigned long long v = 0;
        for (int i = 55 - 8; i < 55; i++) v = v << 8 | counter[i];
        *out = v;
        return 0;
    }
    if (rng && (strcmp(rng, "nist-ctr-drbg") == 0 || strcmp(rng, "hqc") == 0) && api->nist_draws) {
        *out = *api->nist_draws;
        return 0;
    }
    return -1;
}

const char *api_seed_default(const api_t *api, const char *rng) {
    unsigned char seed[48];
    for (int i = 0; i < 48; i++) seed[i] = (unsigned char)i;
    return api_seed(api, rng, seed);
}

const char *api_seed(const api_t *api, const char *rng, const unsigned char seed[48]) {
    int want_iccs = rng == NULL || strcmp(rng, "iccs-drng") == 0;
    /* kat_rng hqc builds HQC's SHAKE-256 generator behind the same randombytes_init (native/linked/nist/hqc_rng.c). */
    int want_hqc = rng != NULL && strcmp(rng, "hqc") == 0;
    int want_nist = rng == NULL || strcmp(rng, "nist-ctr-drbg") == 0 || want_hqc;
    if (want_iccs && api->drng_init && api->drng_algorithm) {
        if (api->drng_init(api->drng_algorithm, seed, 48) != 0) fail(EXIT_CRYPTOFAIL, "CRYPTOFAIL", "init_random_number failed");
        return "iccs-drng";
    }
    if (want_nist && api->nist_rng_init) {
        api->nist_rng_init((unsigned char *)seed, NULL, 256);
        return want_hqc ? "hqc" : "nist-ctr-drbg";
    }
    if (rng != NULL) fail(EXIT_LOADFAIL, "LOADFAIL", "library has no %s entry points", rng);
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

void guarded_free(guarded_t *g) {
    free(g->base);
    g->base = g->p = NULL;
}

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

void os_mark(os_mark_t *m) {
    struct timespec w, c;
    struct rusage ru;
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    memset(&ru, 0, sizeof ru);
    getrusage(RUSAGE_THREAD, &ru);
    m->wall = (double)w.tv_sec + (double)w.tv_nsec * 1e-9;
    m->cpu = (double)c.tv_sec + (double)c.tv_nsec * 1e-9;
    m->involuntary = ru.ru_nivcsw;
    m->voluntary = ru.ru_nvcsw;
}

void os_report(const os_mark_t *a, const os_mark_t *b) {
    proto_line("OS\t%.9f\t%.9f\t%ld\t%ld", b->cpu - a->cpu, b->wall - a->wall, b->involuntary - a->involuntary,
               b->voluntary - a->voluntary);
}

void random_fill(unsigned char *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) fail(EXIT_IOERROR, "ERROR", "getrandom failed");
        got += (size_t)r;
    }
}

int pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

void parse_loop_args(int n, char **f, const char *usage, const char *n_name, loop_args_t *a) {
    if (n < 6) {
        fprintf(stderr, "usage: %s\n", usage);
        exit(proto_end(EXIT_USAGE));
    }
    a->lib = f[0];
    a->type = f[2];
    a->op = f[3];
    a->n = strtoull(f[4], NULL, 10);
    a->warmups = strtoull(f[5], NULL, 10);
    a->cpu = n > 6 ? atoi(f[6]) : -1;
    a->rng = n > 7 && strcmp(f[7], "auto") != 0 ? f[7] : NULL;
    a->spot_checks = n > 8 ? strtoull(f[8], NULL, 10) : DEFAULT_SPOT_CHECKS;
    if (a->n == 0) fail(EXIT_USAGE, "USAGE", "%s must be at least 1", n_name);
    if (a->cpu >= 0 && pin_to_cpu(a->cpu) != 0) fail(EXIT_USAGE, "USAGE", "cannot pin to cpu %d", a->cpu);
}
