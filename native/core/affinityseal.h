/* affinityseal.h: keeps the code a driver loads on the cores it was given.
 *
 * A run builds and KAT-checks one submission on a pool core while it times another on the timing
 * core (docs/campaign.md#parallel-preparation). `taskset` and the driver's own pinning only set a
 * mask that the process may widen again: a competitor's library, loaded for its KAT, could move
 * itself onto the timing core and spin there while a rival is timed, or have a kernel thread do it
 * for it (io_uring's SQPOLL thread, pinned with IORING_SETUP_SQ_AFF). affinity_seal() installs a seccomp
 * filter, inherited by every thread and child, that refuses sched_setaffinity, io_uring and the
 * calls that move memory with EPERM. The driver calls it after pinning itself and before the library is loaded, so the
 * library's constructors already run under it (docs/security.md).
 *
 * It also refuses the futex calls that wake or requeue through a shared futex. A shared futex on a
 * page of a file is keyed by the file, and every sandbox maps the host's libc.so.6 read-only: a
 * FUTEX_WAKE there wakes a waiter in another sandbox, a channel between two submissions. Private
 * futexes (what glibc uses within a process) and shared waits go on: a wait alone carries nothing
 * unless somebody may wake it.
 *
 * Header-only: the probe (ngcc_probe, no harness.c) checks at the start of a run that the seal
 * holds where drivers run. Returns 0, or the errno of the call that failed (a kernel without
 * seccomp filters, or qemu-user, which refuses them). */
#ifndef NGCC_SEAL_H
#define NGCC_SEAL_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Refused, by number per system-call table: sched_setaffinity first, then io_uring (setup, enter,
 * register: its SQPOLL thread can be pinned anywhere), futex_wake and futex_requeue (futex2, whose
 * flags glibc does not use), then what moves a process's memory and so sets kernel workers going
 * on other cores (mbind, set_mempolicy, migrate_pages, move_pages, set_mempolicy_home_node), then
 * bpf and userfaultfd, which a library has no use for. */
#define SEAL_COMMON 425, 426, 427, 454, 456, 450
#define SEAL_REFUSE (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define SEAL_LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, field))

/* With the call's number in A: refuse those of `nrs`, allow the rest. Returns the next free slot. */
static inline int seal_refuse_list(struct sock_filter *f, int at, const unsigned *nrs, int count) {
    for (int i = 0; i < count; i++) {
        struct sock_filter jump = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], (unsigned char)(count - i), 0);
        f[at++] = jump;
    }
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), refuse = BPF_STMT(BPF_RET | BPF_K, SEAL_REFUSE);
    f[at++] = allow;
    f[at++] = refuse;
    return at;
}

/* futex(2)'s op (args[1]): private (FUTEX_PRIVATE_FLAG), or FUTEX_WAIT / FUTEX_WAIT_BITSET, goes on;
 * any other shared op (wake, requeue, wake-op, lock) is refused. Seven instructions. */
static inline int seal_futex_block(struct sock_filter *f, int at) {
    /* clang-format off */
    struct sock_filter load_op = SEAL_LOAD(args[1]),
                       is_private = BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80, 4, 0),
                       cmd = BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x7f),
                       is_wait = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
                       is_wait_bitset = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 9, 1, 0),
                       refuse = BPF_STMT(BPF_RET | BPF_K, SEAL_REFUSE), allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    /* clang-format on */
    f[at++] = load_op;
    f[at++] = is_private;
    f[at++] = cmd;
    f[at++] = is_wait;
    f[at++] = is_wait_bitset;
    f[at++] = refuse;
    f[at++] = allow;
    return at;
}

/* With the call's number in A: the futex numbers of `futex` to the futex block, those of `nrs`
 * refused, the rest allowed. Returns the next free slot. */
static inline int seal_table(struct sock_filter *f, int at, const unsigned *nrs, int count, const unsigned *futex, int nfutex) {
    for (int i = 0; i < nfutex; i++) {
        struct sock_filter jump = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, futex[i], (unsigned char)(nfutex - 1 - i + count + 2), 0);
        f[at++] = jump;
    }
    at = seal_refuse_list(f, at, nrs, count);
    return seal_futex_block(f, at);
}

static inline int affinity_seal(void) {
    struct sock_filter filter[96];
    struct sock_filter load_arch = SEAL_LOAD(arch), load_nr = SEAL_LOAD(nr), refuse = BPF_STMT(BPF_RET | BPF_K, SEAL_REFUSE);
    int n = 0;
    filter[n++] = load_arch;
#if defined(__x86_64__)
    /* A 64-bit process can still make i386 system calls (int 0x80), numbered apart, and x32 ones,
     * marked by bit 30: both are covered. */
    static const unsigned x86_64[] = {203, SEAL_COMMON, 237, 238, 256, 279, 321, 323}, futex64[] = {202};
    /* i386: futex and futex_time64. */
    static const unsigned i386[] = {241, SEAL_COMMON, 274, 276, 294, 317, 357, 374}, futex32[] = {240, 422};
    struct sock_filter is_64 = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 2, 0);
    struct sock_filter is_32 = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 0);
    struct sock_filter no_x32_bit = BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~0x40000000u);
    filter[n++] = is_64;
    const int at_is_32 = n;
    filter[n++] = is_32;
    filter[n++] = refuse; /* an architecture this filter cannot read */
    filter[n++] = load_nr;
    filter[n++] = no_x32_bit;
    n = seal_table(filter, n, x86_64, (int)(sizeof x86_64 / sizeof x86_64[0]), futex64, 1);
    /* is_32 jumps past the refusal and the whole x86-64 block, to the i386 block. */
    filter[at_is_32].jt = (unsigned char)(n - at_is_32 - 1);
    filter[n++] = load_nr;
    n = seal_table(filter, n, i386, (int)(sizeof i386 / sizeof i386[0]), futex32, 2);
#elif defined(__aarch64__)
    static const unsigned aarch64[] = {122, SEAL_COMMON, 235, 237, 238, 239, 280, 282}, futex64[] = {98};
    struct sock_filter is_64 = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0);
    filter[n++] = is_64;
    filter[n++] = refuse;
    filter[n++] = load_nr;
    n = seal_table(filter, n, aarch64, (int)(sizeof aarch64 / sizeof aarch64[0]), futex64, 1);
#else
#error "affinityseal.h: no filter for this architecture"
#endif
    struct sock_fprog prog = {(unsigned short)n, filter};
    /* Needed to install a filter without privileges; bwrap sets it already. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    /* prctl rather than seccomp(2): valgrind (the ct phase) passes this prctl to the kernel but has
     * no handler for seccomp(2). The filter binds this thread and what it starts; the drivers start
     * no thread before loading the library. */
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
    return 0;
}

#endif
