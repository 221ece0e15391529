/* The canary (docs/method.md#the-canary): a fixed piece of reference work the trusted half times on
 * the trial's core, before the first window and after the last, where the library cannot reach it.
 * The host's invisible slowdowns (a hypervisor's, a sibling thread's, a shared cache's) stretch it as
 * they stretch the calls, and the kernel's view of the child sees none of them. */
#ifndef NGCC_CANARY_H
#define NGCC_CANARY_H
#include <stdint.h>

/* Permutations of one canary run: each absorbs a rate's worth (168 bytes) of an 8 KiB buffer, at
 * 16 places 504 bytes apart, and writes it back, so the work loads the ALU and L1 as a Keccak-based
 * call does (50-120 k counter ticks, 20-50 µs at 2.5 GHz). */
#define CANARY_PERMUTATIONS 16

/* The counter's ticks for one run of the reference work. */
uint64_t canary_run(void);
/* The first lane of Keccak-f[1600] applied to the zero state, for the test that it is that permutation. */
uint64_t canary_self_test(void);
#endif
