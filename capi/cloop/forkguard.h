/* SPDX-License-Identifier: MIT */
/* Internal: the fork guard (forkguard.c says why). Not installed. */
#ifndef LIBLOOP_FORKGUARD_H
#define LIBLOOP_FORKGUARD_H

/* Non-zero in a fork() child of the process that loaded the library: set
 * by a pthread_atfork child handler, so a guarded call pays one load of a
 * hidden global (no GOT indirection) and a branch. */
extern __attribute__((visibility("hidden"))) int ll__forked;

/* The guard of calls that go on into Go: LL_EFORKED in a fork child. */
#define LL__FORK_GUARD()                          \
    do {                                          \
        if (__builtin_expect(ll__forked, 0))      \
            return LL_EFORKED;                    \
    } while (0)

/* ll__forked, or a process id other than the loader's: also a child
 * forked without the atfork handlers (glibc's _Fork, a raw clone). One
 * getpid system call: for the calls that make a loop, which make several. */
__attribute__((visibility("hidden"))) int ll__forked_child(void);

#endif
