/* Memory driver: peak stack and peak heap of ONE call of one operation.
 *   ngcc_mem LIB mem TYPE OP [RNG|auto]   (after LIB, the job: on the channel, as for ngcc_driver)
 * TYPE kem|sig; OP keygen|enc|dec (kem) or keygen|sign|verify (sig).
 * Inputs are prepared as the time job (jobs/time.c) does; after one warm-up call (on the main thread) the
 * operation runs once on a thread whose stack this driver allocates (NGCC_MEM_STACK_MB MiB,
 * default 64, with a guard page). Just before the call the thread paints everything below
 * its own stack pointer; after the call it scans from the far end for the first
 * overwritten word: the distance to the top of the region is stack_bytes. The same run with
 * an empty function gives stack_baseline_bytes (glibc keeps the thread descriptor and static
 * TLS at the top of a user-supplied stack, and the thread's frames sit below them), so the
 * operation alone is the difference (also printed as stack_net_bytes). Heap: malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc (and memalign, valloc, pvalloc, reallocarray) are defined
 * here and forwarded to glibc's __libc_* functions; the library's calls reach them because
 * the executable exports them: ld exports an executable's definitions of symbols that a
 * linked shared library (libc) also defines, so a plain link is enough; -rdynamic works too
 * but exports every driver function. The driver checks the binding and fails with LOADFAIL
 * if it is not in effect. Link with -Wl,-z,now as well (see prebind()).
 * Current and peak bytes (malloc_usable_size) are tracked only while the measured call runs.
 * Prints (tab-separated, as every driver):
 *   META stack_bytes N            deepest stack use of the thread running the operation
 *   META stack_baseline_bytes N   the same for an empty function (net = difference)
 *   META stack_net_bytes N        stack_bytes - stack_baseline_bytes
 *   META stack_callsite_bytes N   top of the region down to the stack pointer at the call
 *   META heap_peak_bytes N        peak of (allocated - freed) during the call, usable sizes
 *   META heap_allocations N       allocation calls during the call
 *   META vmhwm_bytes N            VmHWM after the call (peak reset just before it if possible)
 *   STATUS complete, then END (docs/native-protocol.md)
 * plus META rng, stack_region_bytes, heap_frees, heap_end_bytes, vmrss_before_bytes,
 * vmhwm_reset. Exit codes are those of harness.h. Linux/glibc only. */
#define _GNU_SOURCE
#include "core/harness.h"
#include "core/ops.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define DEFAULT_STACK_MB 64
#define PAINT_WORD ((uintptr_t)0x5AC3E17D9B2F4C61ull)
/* Bytes below the measuring frame's stack pointer left unpainted. 0 is safe: run_job is
 * not a leaf (no red zone), its frame lies above its stack pointer, and the paint loop
 * keeps everything in registers. */
#define REPAINT_MARGIN 0

/* ------------------------------------------------------------------ heap interposition */

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t alignment, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

static volatile int heap_tracking;  /* on exactly around the measured call */
static void *volatile prebind_sink; /* keeps warm-up allocations observable */
static long long heap_current;      /* signed: the call may free older blocks */
static long long heap_peak;
static unsigned long long heap_allocs, heap_frees;

static void heap_raise(long long now) {
    long long seen = __atomic_load_n(&heap_peak, __ATOMIC_RELAXED);
    while (now > seen && !__atomic_compare_exchange_n(&heap_peak, &seen, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}

static void note_alloc(void *p) {
    if (!p || !heap_tracking) return;
    __atomic_add_fetch(&heap_allocs, 1, __ATOMIC_RELAXED);
    heap_raise(__atomic_add_fetch(&heap_current, (long long)malloc_usable_size(p), __ATOMIC_RELAXED));
}

void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    note_alloc(p);
    return p;
}

void *calloc(size_t n, size_t size) {
    void *p = __libc_calloc(n, size);
    note_alloc(p);
    return p;
}

void free(void *p) {
    if (p && heap_tracking) {
        __atomic_add_fetch(&heap_frees, 1, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&heap_current, (long long)malloc_usable_size(p), __ATOMIC_RELAXED);
    }
    __libc_free(p);
}

/* A moving realloc holds the old and the new block at once: the peak sees both. */
void *realloc(void *p, size_t n) {
    int track = heap_tracking;
    long long old = track && p ? (long long)malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, n);
    if (!track) return q;
    if (q) {
        long long now = (long long)malloc_usable_size(q);
        __atomic_add_fetch(&heap_allocs, 1, __ATOMIC_RELAXED);
        if (q != p) {
            heap_raise(__atomic_add_fetch(&heap_current, now, __ATOMIC_RELAXED));
            __atomic_sub_fetch(&heap_current, old, __ATOMIC_RELAXED);
        } else {
            heap_raise(__atomic_add_fetch(&heap_current, now - old, __ATOMIC_RELAXED));
        }
    } else if (p && n == 0) {
        /* glibc's realloc(p, 0) frees p and returns NULL. */
        __atomic_add_fetch(&heap_frees, 1, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&heap_current, old, __ATOMIC_RELAXED);
    }
    return q;
}

void *reallocarray(void *p, size_t n, size_t size) {
    if (size != 0 && n > (size_t)-1 / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

void *memalign(size_t alignment, size_t n) {
    void *p = __libc_memalign(alignment, n);
    note_alloc(p);
    return p;
}

void *aligned_alloc(size_t alignment, size_t n) {
    void *p = __libc_memalign(alignment, n);
    note_alloc(p);
    return p;
}

int posix_memalign(void **out, size_t alignment, size_t n) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, n);
    if (!p) return ENOMEM;
    note_alloc(p);
    *out = p;
    return 0;
}

void *valloc(size_t n) {
    void *p = __libc_valloc(n);
    note_alloc(p);
    return p;
}

void *pvalloc(size_t n) {
    void *p = __libc_pvalloc(n);
    note_alloc(p);
    return p;
}

/* ------------------------------------------------------------------ operations */

/* The baseline: same thread, same call path, no operation. */
static int do_nothing(ctx_t *c) {
    (void)c;
    return 0;
}

/* ------------------------------------------------------------------ painted stack */

typedef struct {
    unsigned char *map; /* mapping: guard page + stack */
    size_t map_len;
    uintptr_t *lo, *hi; /* usable stack [lo, hi), grows down from hi */
    size_t page;
} stack_region_t;

static stack_region_t region;

/* Stack pointer of the interrupted code, or 0 if this platform is not known. */
static uintptr_t interrupted_sp(void *uc) {
    const ucontext_t *u = uc;
#if defined(__x86_64__)
    return (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)u->uc_mcontext.sp;
#else
    (void)u;
    return 0;
#endif
}

/* Stack overflow (the stack pointer left the region, or a fault in the guard page; a big
 * frame can jump past the guard page): report it instead of dying silently. Any other
 * SIGSEGV goes back to the default action and re-faults. */
static void on_segv(int sig, siginfo_t *si, void *uc) {
    unsigned char *a = si->si_addr;
    uintptr_t sp = interrupted_sp(uc);
    int below = sp != 0 && sp < (uintptr_t)region.lo && (uintptr_t)region.lo - sp < ((uintptr_t)1 << 40);
    if (region.map && (below || (a >= region.map && a < region.map + region.page))) {
        proto_fail_now(EXIT_IOERROR, "ERROR", "the operation used more stack than NGCC_MEM_STACK_MB allows");
    }
    signal(sig, SIG_DFL);
}

static void stack_map(size_t bytes) {
    long page = sysconf(_SC_PAGESIZE);
    region.page = page > 0 ? (size_t)page : 4096;
    bytes = (bytes + region.page - 1) / region.page * region.page;
    region.map_len = bytes + region.page;
    region.map = mmap(NULL, region.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (region.map == MAP_FAILED) fail(EXIT_IOERROR, "ERROR", "cannot map a %zu-byte stack", bytes);
    if (mprotect(region.map, region.page, PROT_NONE) != 0) fail(EXIT_IOERROR, "ERROR", "cannot protect the stack guard page");
    region.lo = (uintptr_t *)(void *)(region.map + region.page);
    region.hi = (uintptr_t *)(void *)(region.map + region.map_len);
}

/* Bytes between the top of the region and the deepest overwritten word. */
static size_t stack_used(void) {
    for (const uintptr_t *w = region.lo; w < region.hi; w++)
        if (*w != PAINT_WORD) return (size_t)((const unsigned char *)region.hi - (const unsigned char *)w);
    return 0;
}

typedef struct {
    op_fn fn;
    ctx_t *c;
    int rc;
    size_t used;
    size_t callsite; /* top of the region down to the stack pointer at the call */
} job_t;

/* The stack pointer of the caller (inline, so it is the caller's own). */
static inline uintptr_t current_sp(void) {
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__ __volatile__("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    __asm__ __volatile__("mov %0, sp" : "=r"(sp));
#else
    volatile char here = 0;
    sp = (uintptr_t)&here;
#endif
    return sp;
}

static void *run_job(void *arg) {
    job_t *j = arg;
    /* sigaltstack is per thread: the overflow handler needs a stack of its own. */
    static unsigned char alt[1 << 16];
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    sigaltstack(&ss, NULL);
    /* The first malloc of a thread attaches it to an arena and sets up its tcache, a deep
     * path of glibc's own: do it here, untracked, so it is not charged to the operation. */
    prebind_sink = malloc(1);
    free(prebind_sink);
    /* Paint everything below our stack pointer:
     * thread start-up and the warm-up above went deeper than the call site, and must
     * not be mistaken for the operation's stack. Plain stores, no calls, no spills. */
    uintptr_t sp = current_sp();
    for (uintptr_t *w = region.lo; (uintptr_t)w < sp - REPAINT_MARGIN; w++) *w = PAINT_WORD;
    j->callsite = (size_t)((uintptr_t)region.hi - sp);
    heap_tracking = 1;
    j->rc = j->fn(j->c);
    heap_tracking = 0;
    /* Scan here, before the thread exits: glibc's thread-exit path (TLS destructors,
     * freeing the thread's resources) runs on this stack and reaches deeper than the
     * call site, which would inflate the baseline and hide small operations. */
    j->used = stack_used();
    return NULL;
}

/* Runs fn once on a new thread over the region (painted by the thread itself just
 * before the call); returns the stack bytes used, from the top of the region. */
static size_t run_on_painted_stack(op_fn fn, ctx_t *c, int *rc, size_t *callsite, void (*just_before)(void)) {
    pthread_attr_t attr;
    pthread_t t;
    job_t job = {fn, c, 0, 0, 0};
    if (pthread_attr_init(&attr) != 0 ||
        pthread_attr_setstack(&attr, region.lo, (size_t)((unsigned char *)region.hi - (unsigned char *)region.lo)) != 0)
        fail(EXIT_IOERROR, "ERROR", "cannot set up the measurement thread's stack");
    if (just_before) just_before();
    if (pthread_create(&t, &attr, run_job, &job) != 0) fail(EXIT_IOERROR, "ERROR", "cannot start the measurement thread");
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    *rc = job.rc;
    *callsite = job.callsite;
    return job.used;
}

/* ------------------------------------------------------------------ VmHWM */

static int vmhwm_reset_ok;
static unsigned long long vmrss_before;

/* Writing 5 to clear_refs resets the peak RSS to the current RSS (Linux >= 4.0). */
static void reset_vmhwm(void) {
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    vmhwm_reset_ok = 0;
    if (fd >= 0) {
        vmhwm_reset_ok = write(fd, "5", 1) == 1;
        close(fd);
    }
    vmrss_before = proc_status_bytes("VmRSS");
}

static void reset_heap_counters(void) {
    heap_current = heap_peak = 0;
    heap_allocs = heap_frees = 0;
}

/* Calls every allocator path and sigaltstack once with tracking on, so that the lazy
 * binding of this executable's PLT entries (malloc_usable_size, __libc_*, sigaltstack)
 * cannot happen inside a measured call: _dl_runtime_resolve saves the vector registers
 * on the stack (kilobytes with AVX-512) and would be counted as the operation's stack.
 * Linking with -Wl,-z,now has the same effect. */
static void prebind(void) {
    stack_t old;
    heap_tracking = 1;
    prebind_sink = malloc(16);
    prebind_sink = realloc(prebind_sink, 4096);
    free(prebind_sink);
    prebind_sink = calloc(1, 16);
    free(prebind_sink);
    prebind_sink = memalign(64, 16);
    free(prebind_sink);
    prebind_sink = aligned_alloc(64, 64);
    free(prebind_sink);
    void *p = NULL;
    if (posix_memalign(&p, 64, 16) == 0) prebind_sink = p;
    free(prebind_sink);
    prebind_sink = valloc(16);
    free(prebind_sink);
    prebind_sink = pvalloc(16);
    free(prebind_sink);
    prebind_sink = reallocarray(NULL, 2, 8);
    free(prebind_sink);
    heap_tracking = 0;
    sigaltstack(NULL, &old);
    reset_heap_counters();
}

static void before_measured_call(void) {
    reset_heap_counters();
    reset_vmhwm();
}

int main(int argc, char **argv) {
    proto_open();
    char *f[8];
    int n = job_fields(argc, argv, f, 8);
    if (n < 4 || strcmp(f[1], "mem") != 0) {
        fprintf(stderr, "usage: ngcc_mem LIB mem TYPE OP [RNG|auto]\n");
        return proto_end(EXIT_USAGE);
    }
    const char *lib = f[0], *type = f[2], *op = f[3];
    const char *rng = n > 4 && strcmp(f[4], "auto") != 0 ? f[4] : NULL;
    unsigned long long stack_mb = DEFAULT_STACK_MB;
    const char *env = getenv("NGCC_MEM_STACK_MB");
    if (env && *env) {
        char *end = NULL;
        stack_mb = strtoull(env, &end, 10);
        if (*end != '\0' || stack_mb < 1 || stack_mb > 65536) fail(EXIT_USAGE, "USAGE", "NGCC_MEM_STACK_MB must be an integer in 1..65536");
    }

    ctx_t c;
    memset(&c, 0, sizeof c);
    api_load(&c.api, lib, type);
    /* The library's malloc references resolve through the global scope (this executable
     * first): it must find our definitions there, or the heap figures mean nothing. */
    void *(*seen_malloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
    void (*seen_free)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
    if (seen_malloc != malloc || seen_free != free)
        fail(EXIT_LOADFAIL, "LOADFAIL",
             "malloc interposition not in effect (ngcc_mem must export malloc/free: plain link, -rdynamic or --export-dynamic-symbol)");
    meta_str("rng", api_seed_default(&c.api, rng));

    ops_alloc(&c);

    op_fn fn = ops_prepare(&c, op);
    ops_must(fn(&c), op); /* warm-up: lazy initialisation, first-touch page faults */

    stack_map((size_t)stack_mb << 20);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);

    int rc = 0;
    prebind();
    size_t callsite = 0;
    size_t baseline = run_on_painted_stack(do_nothing, &c, &rc, &callsite, NULL);
    size_t used = run_on_painted_stack(fn, &c, &rc, &callsite, before_measured_call);
    unsigned long long vmhwm = proc_status_bytes("VmHWM");
    ops_must(rc, op);
    ops_check_guards(&c);
    if (used >= (size_t)((unsigned char *)region.hi - (unsigned char *)region.lo))
        fail(EXIT_IOERROR, "ERROR", "the operation used the whole %llu MiB stack; raise NGCC_MEM_STACK_MB", stack_mb);

    meta_u64("stack_region_bytes", (unsigned long long)((unsigned char *)region.hi - (unsigned char *)region.lo));
    meta_u64("stack_bytes", used);
    meta_u64("stack_baseline_bytes", baseline);
    meta_u64("stack_net_bytes", used > baseline ? used - baseline : 0);
    meta_u64("stack_callsite_bytes", callsite);
    meta_u64("heap_peak_bytes", heap_peak > 0 ? (unsigned long long)heap_peak : 0);
    meta_u64("heap_allocations", heap_allocs);
    meta_u64("heap_frees", heap_frees);
    proto_line("META\theap_end_bytes\t%lld", heap_current);
    meta_u64("vmrss_before_bytes", vmrss_before);
    meta_u64("vmhwm_reset", (unsigned long long)vmhwm_reset_ok);
    meta_u64("vmhwm_bytes", vmhwm);
    proto_line("STATUS\tcomplete");
    return proto_end(EXIT_OK);
}
