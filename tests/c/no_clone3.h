/* SPDX-License-Identifier: MIT */
/*
 * no_clone3.h — makes clone3 fail with ENOSYS for every thread of the test
 * process (a seccomp filter, TSYNC), as Docker's default profile or a
 * kernel before 5.5 does, so the spawner's clone() fallback runs. The
 * filter cannot be removed: call it after the tests that need clone3.
 */
#ifndef LIBLOOP_TEST_NO_CLONE3_H
#define LIBLOOP_TEST_NO_CLONE3_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_CLONE3 435

/* 0, or -1 with errno. */
static inline int refuse_clone3(void) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_CLONE3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

#endif
