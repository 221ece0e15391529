/* The trusted half of a timing driver (native/core/trusted.h, docs/method.md#the-trusted-half). */
#define _GNU_SOURCE
#include "trusted.h"
#include "canary.h"
#include "cpucycles.h"
#include "harness.h"
#include "held.h"
#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the guard: what the untrusted half may not call (docs/security.md#the-trusted-half) ---- */

/* How a guarded call is judged: refused whatever its arguments; refused when its first argument
 * (a pid or thread-group id) names the parent, and for kill also 0 and negative values (the process
 * group, which holds the parent, and every process); or refused when its second argument is a
 * command that names a process to signal when a descriptor is ready (fcntl's F_SETOWN, F_SETOWN_EX
 * and F_SETSIG; ioctl's FIOSETOWN and SIOCSPGRP), whoever that process is. */
enum { REFUSE_ALWAYS, REFUSE_AT_PARENT, REFUSE_KILL, REFUSE_FCNTL, REFUSE_IOCTL };
typedef struct {
    unsigned nr;
    int rule;
} guarded_call_t;

#define GUARD_REFUSE (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define GUARD_LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, field))
/* The low word of args[0]: pids are ints, whatever the upper half of the register holds. */
#define GUARD_LOAD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, args[0]))
#define GUARD_LOAD_ARG1 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, args[1]))
#define GUARD_SIZE 200
/* fcntl: F_SETOWN, F_SETSIG, F_SETOWN_EX; ioctl: FIOSETOWN, SIOCSPGRP. */
#define CMD_F_SETOWN 8
#define CMD_F_SETSIG 10
#define CMD_F_SETOWN_EX 15
#define CMD_FIOSETOWN 0x8901
#define CMD_SIOCSPGRP 0x8902

/* ptrace, process_vm_readv, process_vm_writev, pidfd_send_signal, pidfd_getfd; kill; tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo; fcntl (and i386's fcntl64); ioctl: by each entry's own numbers
 * (the kernel's syscall tables). The x32 entry is refused whole: its numbers are its own. */
/* clang-format off */
#if defined(__x86_64__)
static const guarded_call_t guarded_x86_64[] = {
    {101, REFUSE_ALWAYS},    {310, REFUSE_ALWAYS},    {311, REFUSE_ALWAYS},    {424, REFUSE_ALWAYS}, {438, REFUSE_ALWAYS}, {62, REFUSE_KILL},
    {200, REFUSE_AT_PARENT}, {234, REFUSE_AT_PARENT}, {129, REFUSE_AT_PARENT}, {297, REFUSE_AT_PARENT}, {72, REFUSE_FCNTL}, {16, REFUSE_IOCTL}};
static const guarded_call_t guarded_i386[] = {
    {26, REFUSE_ALWAYS},     {347, REFUSE_ALWAYS},    {348, REFUSE_ALWAYS},    {424, REFUSE_ALWAYS},    {438, REFUSE_ALWAYS}, {37, REFUSE_KILL},
    {238, REFUSE_AT_PARENT}, {270, REFUSE_AT_PARENT}, {178, REFUSE_AT_PARENT}, {335, REFUSE_AT_PARENT}, {55, REFUSE_FCNTL},  {221, REFUSE_FCNTL},
    {54, REFUSE_IOCTL}};
_Static_assert(SYS_ptrace == 101 && SYS_process_vm_writev == 311 && SYS_kill == 62 && SYS_tgkill == 234 && SYS_fcntl == 72 && SYS_ioctl == 16,
               "x86-64 numbers");
#elif defined(__aarch64__)
static const guarded_call_t guarded_aarch64[] = {
    {117, REFUSE_ALWAYS},    {270, REFUSE_ALWAYS},    {271, REFUSE_ALWAYS},    {424, REFUSE_ALWAYS},    {438, REFUSE_ALWAYS}, {129, REFUSE_KILL},
    {130, REFUSE_AT_PARENT}, {131, REFUSE_AT_PARENT}, {138, REFUSE_AT_PARENT}, {240, REFUSE_AT_PARENT}, {25, REFUSE_FCNTL},  {29, REFUSE_IOCTL}};
_Static_assert(SYS_ptrace == 117 && SYS_process_vm_writev == 271 && SYS_kill == 129 && SYS_tgkill == 131 && SYS_fcntl == 25 && SYS_ioctl == 29,
               "aarch64 numbers");
#else
#error "trusted.c: no guard for this architecture"
#endif
/* clang-format on */

static void guard_put(struct sock_filter *f, int *n, struct sock_filter insn) {
    if (*n >= GUARD_SIZE) fail(EXIT_IOERROR, "ERROR", "the trusted half's guard has more than %d instructions", GUARD_SIZE);
    f[(*n)++] = insn;
}

/* With the call's number in A: one block per guarded call, each ending in a return, so a block that
 * loads an argument never falls through to the next comparison of numbers. */
static void guard_table(struct sock_filter *f, int *n, const guarded_call_t *calls, size_t count, unsigned parent) {
    const struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), refuse = BPF_STMT(BPF_RET | BPF_K, GUARD_REFUSE);
    for (size_t i = 0; i < count; i++) {
        const guarded_call_t *c = &calls[i];
        unsigned char body = c->rule == REFUSE_ALWAYS ? 1 : c->rule == REFUSE_AT_PARENT ? 4 : c->rule == REFUSE_IOCTL ? 5 : 6;
        guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, c->nr, 0, body));
        if (c->rule == REFUSE_ALWAYS) {
            guard_put(f, n, refuse);
            continue;
        }
        if (c->rule == REFUSE_FCNTL || c->rule == REFUSE_IOCTL) {
            guard_put(f, n, (struct sock_filter)GUARD_LOAD_ARG1);
            if (c->rule == REFUSE_FCNTL) {
                guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CMD_F_SETOWN, 3, 0));
                guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CMD_F_SETSIG, 2, 0));
                guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CMD_F_SETOWN_EX, 1, 0));
            } else {
                guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CMD_FIOSETOWN, 2, 0));
                guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CMD_SIOCSPGRP, 1, 0));
            }
            guard_put(f, n, allow);
            guard_put(f, n, refuse);
            continue;
        }
        guard_put(f, n, (struct sock_filter)GUARD_LOAD_ARG0);
        if (c->rule == REFUSE_KILL) {
            guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0));
            guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 2, 0));
        }
        guard_put(f, n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, parent, 1, 0));
        guard_put(f, n, allow);
        guard_put(f, n, refuse);
    }
    guard_put(f, n, allow);
}

/* Installs the guard in this process (the untrusted half, before the library is loaded). Returns 0,
 * or the errno of the call that failed: where no filter can be made (qemu-user) the driver goes on,
 * as with the seal (affinityseal.h). */
static int guard_install(pid_t parent) {
    struct sock_filter f[GUARD_SIZE];
    int n = 0;
    const struct sock_filter refuse = BPF_STMT(BPF_RET | BPF_K, GUARD_REFUSE);
    guard_put(f, &n, (struct sock_filter)GUARD_LOAD(arch));
#if defined(__x86_64__)
    guard_put(f, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 2, 0));
    const int at_is_32 = n;
    guard_put(f, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 0));
    guard_put(f, &n, refuse);
    guard_put(f, &n, (struct sock_filter)GUARD_LOAD(nr));
    guard_put(f, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x40000000u, 0, 1)); /* x32: refused whole */
    guard_put(f, &n, refuse);
    guard_table(f, &n, guarded_x86_64, sizeof guarded_x86_64 / sizeof guarded_x86_64[0], (unsigned)parent);
    f[at_is_32].jt = (unsigned char)(n - at_is_32 - 1);
    guard_put(f, &n, (struct sock_filter)GUARD_LOAD(nr));
    guard_table(f, &n, guarded_i386, sizeof guarded_i386 / sizeof guarded_i386[0], (unsigned)parent);
#else
    guard_put(f, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0));
    guard_put(f, &n, refuse);
    guard_put(f, &n, (struct sock_filter)GUARD_LOAD(nr));
    guard_table(f, &n, guarded_aarch64, sizeof guarded_aarch64 / sizeof guarded_aarch64[0], (unsigned)parent);
#endif
    struct sock_fprog prog = {(unsigned short)n, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
    return 0;
}

/* No capability left, CAP_SYS_PTRACE out of the bounding set too: root of a user namespace (the
 * unshare sandbox) could otherwise ptrace or open /proc/<pid>/mem of a parent that is not dumpable,
 * and an exec would give the capabilities back. */
static void drop_capabilities(void) {
    (void)prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0); /* fails without CAP_SETPCAP: then nothing to drop */
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &head, none) != 0)
        fail(EXIT_IOERROR, "ERROR", "the untrusted half cannot drop its capabilities: %s", strerror(errno));
}

/* ---- the relay: the parent's side ---- */

#define RELAY_LINE_MAX 4096
#define ANSWER_MAX 512

typedef struct {
    int sock;
    pid_t child;
    int ended;          /* the code of the END the parent wrote for the child, or -1 before it */
    int status, reaped; /* the child's wait status, once reaped */
    uint64_t window_start, cycles;
    unsigned long long windows;
    int in_window;
    const char *forged; /* the parent's line the child wrote (CLOCK, HELD), or NULL */
    held_t *held;       /* the window's inputs and outputs (native/core/held.h) */
    /* The canary's ticks before the first window and after the last (native/core/canary.h); ran: which have. */
    uint64_t canary[2];
    int canary_ran[2];
    /* What the kernel says of the child's main thread over the windows (docs/method.md#the-trusted-half):
     * the time it waited, runnable, for the core, less the CPU its own other threads and processes
     * ran meanwhile: what others held the core for. waited_known is 0 once it could not be read. */
    long long waited_ns;
    int waited_known, view_due;
    int own_pid_namespace; /* /proc shows the sandbox's processes only: every other one is the library's */
    struct core_view {
        long long wait, others, tasks, last_pid;
    } start;
} relay_t;

/* The run and wait times (ns) of a /proc schedstat file; 0 when it cannot be read. */
static int read_schedstat(const char *path, long long *run, long long *wait) {
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    int ok = fscanf(f, "%lld %lld", run, wait) == 2;
    fclose(f);
    return ok;
}

/* CPU (ns) of every thread of `pid` and of the processes below it but the thread `skip`, and how
 * many threads that is (into *tasks). */
static long long tree_cpu_ns(pid_t pid, pid_t skip, int depth, long long *tasks) {
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir) return 0;
    long long sum = 0;
    for (struct dirent *t; (t = readdir(dir)) != NULL;) {
        if (t->d_name[0] < '0' || t->d_name[0] > '9') continue;
        long long run = 0, wait = 0;
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/schedstat", (int)pid, t->d_name);
        if (atoi(t->d_name) != (int)skip && read_schedstat(path, &run, &wait)) sum += run, (*tasks)++;
        if (depth >= 8) continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/children", (int)pid, t->d_name);
        FILE *kids = fopen(path, "re");
        for (int kid; kids && fscanf(kids, "%d", &kid) == 1;) sum += tree_cpu_ns(kid, skip, depth + 1, tasks);
        if (kids) fclose(kids);
    }
    closedir(dir);
    return sum;
}

/* CPU (ns) of every thread in this pid namespace but the parent's and `skip`, and how many. */
static long long namespace_cpu_ns(pid_t skip, long long *tasks) {
    DIR *proc = opendir("/proc");
    if (!proc) return 0;
    long long sum = 0;
    for (struct dirent *p; (p = readdir(proc)) != NULL;) {
        if (p->d_name[0] < '0' || p->d_name[0] > '9' || atoi(p->d_name) == (int)getpid()) continue;
        sum += tree_cpu_ns(atoi(p->d_name), skip, 8, tasks); /* depth 8: its own threads, no descent */
    }
    closedir(proc);
    return sum;
}

/* The last pid the kernel gave in this namespace, or -1. */
static long long last_pid(void) {
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "re");
    long long v = -1;
    if (f && fscanf(f, "%lld", &v) != 1) v = -1;
    if (f) fclose(f);
    return v;
}

/* Whether /proc shows a pid namespace of the sandbox's own (NSpid names more than one level, and
 * /proc/self is this process by its pid here): then every process in it but the parent is the
 * library's, its orphans included. */
static int in_own_pid_namespace(void) {
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    int levels = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "NSpid:", 6) == 0)
            for (char *p = strtok(line + 6, " \t\n"); p; p = strtok(NULL, " \t\n")) levels++;
    if (f) fclose(f);
    char self[32] = "";
    ssize_t n = readlink("/proc/self", self, sizeof self - 1);
    if (n > 0) self[n] = '\0';
    return levels > 1 && atoi(self) == (int)getpid();
}

/* The child's main thread's wait for the core, the CPU of every other thread the library may run
 * (in the sandbox's pid namespace, else the child's tree) and their number, and the namespace's last
 * pid; read while the child waits for the parent, so each figure is settled. 0 when the kernel
 * keeps no schedstat. */
static int core_view(const relay_t *r, struct core_view *v) {
    char path[96];
    long long run = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)r->child, (int)r->child);
    if (!read_schedstat(path, &run, &v->wait)) return 0;
    v->tasks = 0;
    v->others = r->own_pid_namespace ? namespace_cpu_ns(r->child, &v->tasks) : tree_cpu_ns(r->child, r->child, 0, &v->tasks);
    v->last_pid = r->own_pid_namespace ? last_pid() : -1;
    return 1;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* the child is gone: its end shows at waitpid */
        p += w;
        n -= (size_t)w;
    }
}

static void close_window(relay_t *r, uint64_t now) {
    if (!r->in_window) return;
    r->cycles += now - r->window_start;
    r->windows++;
    r->in_window = 0;
    r->view_due = 1;
}

/* The kernel's view of the child over the window just closed (core_view), read once the parent's
 * side has had the mark: a walk of /proc costs the parent CPU, which the parent's side would
 * otherwise see in its own window (src/measure/kernelCheck.ts). The child waits meanwhile, so its
 * wait cannot grow; its other threads' CPU can, which only lessens what is taken off. */
static void account_wait(relay_t *r) {
    if (!r->view_due) return;
    r->view_due = 0;
    struct core_view now;
    if (!r->waited_known || !core_view(r, &now)) {
        r->waited_known = 0;
        return;
    }
    /* No credit for a window in which a thread of the library's began or ended: an ended one takes
     * its CPU with it. In the host's pid namespace (`sandbox: none`) only the child's tree is known. */
    if (now.tasks != r->start.tasks || now.last_pid != r->start.last_pid) return;
    long long held = (now.wait - r->start.wait) - (now.others - r->start.others);
    if (held > 0) r->waited_ns += held;
}

/* One run of the canary, before the windows (0) or after them (1). */
static void canary_time(relay_t *r, int which) {
    r->canary[which] = canary_run();
    r->canary_ran[which] = 1;
}

/* CANARY before after: its ticks on each side of the windows, "-" for a side that did not run. */
static void canary_report(const relay_t *r) {
    char side[2][24];
    for (int i = 0; i < 2; i++)
        if (r->canary_ran[i]) snprintf(side[i], sizeof side[i], "%llu", (unsigned long long)r->canary[i]);
        else snprintf(side[i], sizeof side[i], "-");
    proto_line("CANARY\t%s\t%s", side[0], side[1]);
}

/* A mark of the child: relayed to the parent and its answer back. `end` is read on the counter first
 * thing, `begin` last thing before the child may go: the windows hold every cycle the calls took.
 * The kernel's view of the child is read outside the parent's side's window, before `begin` is
 * relayed and after `end` is answered. */
static void relay_mark(relay_t *r, const char *line) {
    const char *name = line + 5;
    int begins = strcmp(name, "begin") == 0 && !r->in_window, ends = strcmp(name, "end") == 0 && r->in_window;
    if (strcmp(name, "end") == 0) close_window(r, cpucycles());
    /* The canary before the first window: at dec's `inputs` mark, before the parent's side starts the
     * span it sums dec's CPU beside the windows over, else at the first `begin`. The child waits. */
    if (!r->canary_ran[0] && (begins || strcmp(name, "inputs") == 0)) canary_time(r, 0);
    /* The outputs as they were when the window closed; the next window's inputs made, not yet shown;
     * the book read once the `inputs` mark says it is laid out, before its CPU is dec's beside the windows. */
    if (ends) held_snapshot(r->held);
    if (begins) held_prepare(r->held);
    if (strcmp(name, "inputs") == 0) held_ready(r->held);
    if (begins && r->waited_known && !core_view(r, &r->start)) r->waited_known = 0;
    char answer[ANSWER_MAX + 1];
    size_t len = proto_exchange(line, answer, sizeof answer - 1);
    if (strcmp(name, "seed") == 0) held_seed(r->held, answer);
    /* dec's inputs given to this half, which cannot take them: the child is told, and fails. */
    if (strcmp(name, "inputs") == 0 && !held_inputs(r->held, answer)) len = (size_t)snprintf(answer, sizeof answer, "GO\tunheld");
    answer[len++] = '\n';
    if (ends) held_fold(r->held);
    /* After the last window, once the parent's side has its end, while the child waits for the answer. */
    if (ends && held_windows_done(r->held)) canary_time(r, 1);
    account_wait(r);
    /* A second begin without an end keeps the first window open: nothing between them is lost. */
    if (begins) {
        held_reveal(r->held);
        r->window_start = cpucycles();
    }
    if (strcmp(name, "begin") == 0) r->in_window = 1;
    write_all(r->sock, answer, len);
}

/* The child's END: the parent's CLOCK line, then the END, in the child's place in the stream, so a
 * line the child writes after it (a destructor's) still comes after END, where src/sandbox/runProcess.ts
 * refuses it. After a CLOCK from the child: FORGED, and END 4. */
static void end_now(relay_t *r, int code) {
    close_window(r, cpucycles());
    account_wait(r);
    /* A trial the trusted half did not hold: its canary after the windows runs here, where the
     * child may still run (its exit), so the library can reach it (docs/security.md#the-limits-today). */
    if (r->windows > 0 && !r->canary_ran[1]) canary_time(r, 1);
    if (r->forged) {
        proto_line("STATUS\tFORGED\tthe library wrote a %s line, which only the trusted half writes", r->forged);
        code = EXIT_CRYPTOFAIL;
    } else if (r->waited_known) {
        canary_report(r);
        held_report(r->held);
        proto_line("CLOCK\t%s\t%llu\t%llu\t%lld", cpucycles_source(), r->windows, (unsigned long long)r->cycles, r->waited_ns);
    } else {
        canary_report(r);
        held_report(r->held);
        proto_line("CLOCK\t%s\t%llu\t%llu\t-", cpucycles_source(), r->windows, (unsigned long long)r->cycles);
    }
    r->ended = proto_end(code);
}

/* One line of the child: its claims relayed, its marks timed, its END closed by the parent's CLOCK,
 * a CLOCK of its own refused. */
static void relay_line(relay_t *r, const char *line) {
    if (strncmp(line, "MARK\t", 5) == 0) relay_mark(r, line);
    else if (strncmp(line, "END\t", 4) == 0 && r->ended < 0) {
        long code = strtol(line + 4, NULL, 10);
        end_now(r, code < 0 || code > 255 ? 255 : (int)code);
    } else if (strncmp(line, "CLOCK", 5) == 0) r->forged = "CLOCK";
    else if (strncmp(line, "HELD", 4) == 0) r->forged = "HELD";
    else if (strncmp(line, "UNHELD", 6) == 0) r->forged = "UNHELD";
    else if (strncmp(line, "CANARY", 6) == 0) r->forged = "CANARY";
    /* Held: the transcript is the trusted half's, written at the END (held_report). */
    else if (!(strncmp(line, "TRANSCRIPT", 10) == 0 && held_on(r->held))) proto_line("%s", line);
}

/* Lines from `buf`, those complete; returns the bytes kept (a line's start). A line longer than any
 * the protocol has is cut: its first RELAY_LINE_MAX bytes go on (proto_line keeps 2048 of them), the
 * rest up to its newline is dropped, never taken for a line of its own. */
static size_t relay_lines(relay_t *r, char *buf, size_t have, int *dropping) {
    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (!nl && have == RELAY_LINE_MAX) {
            buf[have] = '\0';
            if (!*dropping) relay_line(r, buf);
            *dropping = 1;
            return 0;
        }
        if (!nl) return have;
        *nl = '\0';
        if (!*dropping) relay_line(r, buf);
        *dropping = 0;
        size_t used = (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, have - used);
        have -= used;
    }
}

/* Relays the child's lines until its end of the socket closes, or until the child has ended: a
 * process it left behind may hold the socket open (the parent's side judges a driver by its exit,
 * src/sandbox/runProcess.ts), so what is there when the child ends is read and no more. The parent sleeps
 * until one or the other (a pidfd; where the kernel has none, a look at the child each second). */
static void relay_all(relay_t *r, pid_t child) {
    char buf[RELAY_LINE_MAX + 1];
    size_t have = 0;
    int dropping = 0, ended = 0;
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    for (;;) {
        struct pollfd fds[2] = {{r->sock, POLLIN, 0}, {pidfd, POLLIN, 0}};
        if (!ended) {
            int n = poll(fds, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 1000);
            if (n < 0 && errno == EINTR) continue;
            if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                ended = pidfd >= 0 ? (fds[1].revents & POLLIN) != 0 : waitpid(child, &r->status, WNOHANG) == child;
                if (ended && pidfd < 0) r->reaped = 1;
                continue;
            }
        }
        ssize_t got = recv(r->sock, buf + have, RELAY_LINE_MAX - have, ended ? MSG_DONTWAIT : 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have = relay_lines(r, buf, have + (size_t)got, &dropping);
    }
    if (pidfd >= 0) close(pidfd);
}

/* The child's end: the same signal it died of, or its exit code (4 after a forged CLOCK). A child
 * that ended without its END line gets none from the parent either: src/sandbox/runProcess.ts says so. */
static void finish(relay_t *r, pid_t child) {
    while (!r->reaped && waitpid(child, &r->status, 0) < 0 && errno == EINTR) {}
    int status = r->status;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        kill(getpid(), sig);
        _exit(128 + sig);
    }
    if (r->forged) {
        if (r->ended < 0) {
            proto_line("STATUS\tFORGED\tthe library wrote a %s line, which only the trusted half writes", r->forged);
            proto_end(EXIT_CRYPTOFAIL);
        }
        _exit(EXIT_CRYPTOFAIL);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_IOERROR);
}

/* ---- the split ---- */

static void become_untrusted(int sock, pid_t parent) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(EXIT_IOERROR); /* the parent died before the line above */
    proto_handoff(sock);
    /* Dumpable again, as any process: the kernel's view (src/sandbox/cpuTime.ts) reads it. */
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    drop_capabilities();
    (void)guard_install(parent);
}

void trusted_split(int cpu) {
    if (!proto_has_channel()) return;
    if (cpu >= 0 && pin_to_cpu(cpu) != 0) fail(EXIT_USAGE, "USAGE", "cannot pin to cpu %d", cpu);
    cpucycles_init();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) fail(EXIT_IOERROR, "ERROR", "socketpair: %s", strerror(errno));
    /* Not dumpable from before the fork: no moment in which the child could attach to the parent. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) fail(EXIT_IOERROR, "ERROR", "PR_SET_DUMPABLE: %s", strerror(errno));
    pid_t parent = getpid();
    static held_t held;
    held_map(&held);
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) fail(EXIT_IOERROR, "ERROR", "fork: %s", strerror(errno));
    if (child == 0) {
        close(sv[0]);
        if (sv[1] != HELD_INPUTS_FD) close(HELD_INPUTS_FD); /* dec's timed inputs, where given: the trusted half's alone */
        become_untrusted(sv[1], parent);
        held_in_child(&held);
        return;
    }
    close(sv[1]);
    /* The canary's first run in this process faults its buffer in (copied on write since the
     * fork): done now, before the child's windows, so that the run before them is like the one after. */
    (void)canary_run();
    /* A child gone while its answer is on the way must not end the parent with SIGPIPE: the
     * child's own end is what the parent reports. */
    signal(SIGPIPE, SIG_IGN);
    relay_t r;
    memset(&r, 0, sizeof r);
    r.sock = sv[0];
    r.child = child;
    r.ended = -1;
    r.waited_known = 1;
    r.own_pid_namespace = in_own_pid_namespace();
    held_in_parent(&held);
    r.held = &held;
    relay_all(&r, child);
    close(r.sock);
    finish(&r, child);
}
