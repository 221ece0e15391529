/* The trusted half of a timing driver (docs/method.md#the-trusted-half).
 *
 * A timing trial's cycles are read in the process that runs the library, which can rewrite them
 * (a hook on the driver's write, an edit of its variables): the kernel's view bounded such an
 * under-report only to its tolerance, 4 %. So the `time` job forks before the library is loaded.
 * The parent, the trusted half, keeps the result channel and its secret, and relays the lines of
 * the child, the untrusted half, which never holds either: they are its claims. At each timed
 * window (MARK begin, MARK end) the parent reads the counter itself, right before it lets the child
 * go and right after the child says it is done; and, from the kernel, how long the child's main
 * thread waited for the core meanwhile, less what its own other threads and processes ran: the time
 * other processes held it. It reports the sums on a line of its own:
 *   CLOCK counter windows cycles waited_ns|-
 * which the child cannot write (one from the child fails the trial as FORGED). TypeScript refuses a
 * trial whose claimed cycles fall short of the count less that wait, and calls one disturbed that
 * needs the wait to reach the count (src/measure/trustedClock.ts). The floor is the counter, not the
 * CPU the kernel charged the child: an honest claim holds the time the child was off the core (to
 * another process, or to the host of a virtual machine), as the counter does and the CPU does not.
 *
 * The child cannot reach the parent: it drops its capabilities, the parent is not dumpable (no
 * ptrace, /proc/<pid>/mem or process_vm_* from the same user), and a seccomp filter in the child
 * refuses ptrace, process_vm_readv/writev, pidfd_send_signal, pidfd_getfd and any signal sent to
 * the parent, its process group or every process, by each system-call entry of the machine. */
#ifndef NGCC_TRUSTED_H
#define NGCC_TRUSTED_H
/* Forks the trusted half, pinned with the child to `cpu` (when >= 0) so each hand-over is a switch
 * on one core. Returns in the child only; the parent relays until the child ends, then exits with
 * its code (or dies of its signal). Without a channel (a driver run by hand) it does nothing. */
void trusted_split(int cpu);
#endif
