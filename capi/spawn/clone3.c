/* SPDX-License-Identifier: MIT */
/* clone3 for the spawner (vfork_linux.c): a vfork-style child on its
 * own stack whose signal handlers the kernel has already reset
 * (CLONE_CLEAR_SIGHAND, Linux 5.5). With no handler of the parent left in
 * the child, the parent need not block its signals around the clone (two
 * rt_sigprocmask calls) and the child need not query and reset every
 * signal's action before it execs (~62 sigaction calls, ~10 µs here, spent
 * while the parent waits for the exec).
 *
 * glibc has no clone3 wrapper, and a child that returns from a system call
 * onto a new stack cannot continue in C: the few instructions below call
 * fn on that stack and exit with its value. x86-64 only; elsewhere
 * ll__clone3_vfork is -ENOSYS and the caller uses clone(). */
#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "clone3.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

#define CL_VM 0x00000100ULL
#define CL_VFORK 0x00004000ULL
#define CL_PIDFD 0x00001000ULL
#define CL_CLEAR_SIGHAND 0x100000000ULL

/* The kernel's struct clone_args, first version (64 bytes). */
struct cl_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

long ll__clone3_vfork(void *stack, size_t size, int (*fn)(void *), void *arg, int *pidfd) {
#if defined(__x86_64__)
    struct cl_args ca = {CL_VM | CL_VFORK | CL_PIDFD | CL_CLEAR_SIGHAND, (uint64_t)(uintptr_t)pidfd, 0, 0, SIGCHLD,
                         (uint64_t)(uintptr_t)stack, size, 0};
    long ret;
    /* Callee-saved registers: the child starts with the parent's registers
     * (rax 0, rsp at the top of the new stack, 16-byte aligned), so fn and
     * arg are there for it. The parent resumes after the exec with rax the
     * pid or -errno; syscall clobbers only rcx and r11. */
    register int (*r_fn)(void *) __asm__("r12") = fn;
    register void *r_arg __asm__("r13") = arg;
    __asm__ volatile("syscall\n\t"
                     "testq %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xorl %%ebp, %%ebp\n\t"
                     "movq %%r13, %%rdi\n\t"
                     "callq *%%r12\n\t"
                     "movl %%eax, %%edi\n\t"
                     "movl $60, %%eax\n\t" /* SYS_exit: fn returned (it should not) */
                     "syscall\n\t"
                     "ud2\n"
                     "1:"
                     : "=a"(ret)
                     : "0"((long)SYS_clone3), "D"(&ca), "S"(sizeof ca), "r"(r_fn), "r"(r_arg)
                     : "rcx", "r11", "memory", "cc");
    return ret;
#else
    (void)stack, (void)size, (void)fn, (void)arg, (void)pidfd;
    return -ENOSYS;
#endif
}
#endif
