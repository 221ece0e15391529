/* affinityseal.h: keeps the code a driver loads on the cores it was given.
 *
 * A run builds and KAT-checks one submission on a pool core while it times another on the timing
 * core (docs/campaign.md#parallel-preparation). `taskset` and the driver's own pinning only set a
 * mask that the process may widen again: a competitor's library, loaded for its KAT, could move
 * itself onto the timing core and spin there while a rival is timed, or have a kernel thread do it
 * for it (io_uring's SQPOLL thread, pinned with IORING_SETUP_SQ_AFF). affinity_seal() installs a seccomp
 * filter, inherited by every thread and child, that refuses sched_setaffinity and io_uring with
 * EPERM. The driver calls it after pinning itself and before the library is loaded, so the
 * library's constructors already run under it (docs/security.md).
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

/* The same numbers on every architecture (the unified table from Linux 5.1). */
#define SEAL_NR_IO_URING_SETUP 425
#define SEAL_NR_IO_URING_ENTER 426
#define SEAL_NR_IO_URING_REGISTER 427

#define SEAL_REFUSE (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define SEAL_LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, field))
/* if A == nr: refuse (the refuse statement is `to_refuse` instructions ahead), else go on. */
#define SEAL_DENY_IF(nr, to_refuse) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (to_refuse), 0)
/* With the call's number in A: refuse sched_setaffinity (numbered per architecture) and io_uring,
 * allow the rest. Six instructions. */
#define SEAL_DENY_CALLS(setaffinity_nr)                                                             \
    SEAL_DENY_IF(setaffinity_nr, 4), SEAL_DENY_IF(SEAL_NR_IO_URING_SETUP, 3),                 \
        SEAL_DENY_IF(SEAL_NR_IO_URING_ENTER, 2), SEAL_DENY_IF(SEAL_NR_IO_URING_REGISTER, 1), \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SEAL_REFUSE)

static inline int affinity_seal(void) {
#if defined(__x86_64__)
    /* A 64-bit process can still make i386 system calls (int 0x80), numbered apart, and x32 ones,
     * marked by bit 30: both are covered. */
    struct sock_filter filter[] = {
        SEAL_LOAD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 9, 0),
        BPF_STMT(BPF_RET | BPF_K, SEAL_REFUSE), /* an architecture this filter cannot read */
        SEAL_LOAD(nr),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~0x40000000u),
        SEAL_DENY_CALLS(203 /* x86_64 sched_setaffinity */),
        SEAL_LOAD(nr),
        SEAL_DENY_CALLS(241 /* i386 sched_setaffinity */),
    };
#elif defined(__aarch64__)
    struct sock_filter filter[] = {
        SEAL_LOAD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SEAL_REFUSE),
        SEAL_LOAD(nr),
        SEAL_DENY_CALLS(122 /* aarch64 sched_setaffinity */),
    };
#else
#error "affinityseal.h: no filter for this architecture"
#endif
    struct sock_fprog prog = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
    /* Needed to install a filter without privileges; bwrap sets it already. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    /* prctl rather than seccomp(2): valgrind (the ct phase) passes this prctl to the kernel but has
     * no handler for seccomp(2). The filter binds this thread and what it starts; the drivers start
     * no thread before loading the library. */
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
    return 0;
}

#endif
