/* SPDX-License-Identifier: MIT */
/* Internal: clone3(CLONE_VM | CLONE_VFORK | CLONE_PIDFD |
 * CLONE_CLEAR_SIGHAND) for vfork_linux.c. Not installed. */
#ifndef LIBLOOP_SPAWN_CLONE3_H
#define LIBLOOP_SPAWN_CLONE3_H

#include <stddef.h>

/* Runs fn(arg) in a child on [stack, stack + size) sharing our memory,
 * every signal handler of the child back at SIG_DFL (ignored ones stay
 * ignored), and returns once it has exec'd or exited: its pid (*pidfd set),
 * or -errno (-ENOSYS where the kernel, a seccomp filter or this
 * architecture has no clone3; -EINVAL before Linux 5.5). fn must exec or
 * _exit. */
long ll__clone3_vfork(void *stack, size_t size, int (*fn)(void *), void *arg, int *pidfd);

#endif
