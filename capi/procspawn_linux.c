/* SPDX-License-Identifier: MIT */
/* Spawning on Linux without posix_spawn's per-call setup: one
 * clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) onto a stack kept per thread,
 * whose child sets up its stdio and signals and execs. What posix_spawn
 * also does, minus what W8's profile showed it costs here: a stack mmap and
 * munmap per call, four getrlimit calls (from its file-action checks), and
 * a separate pidfd_open (CLONE_PIDFD returns the pidfd with the pid).
 *
 * The child shares the parent's memory until it execs (the parent thread
 * is suspended meanwhile, the other threads run on), so it runs only
 * async-signal-safe calls on its own stack, with every signal blocked until
 * it has put back the default action of each signal the parent handles (a
 * Go handler must never run in it). An exec that fails reports its errno
 * through the shared arguments: ll__posix_spawn returns it, having reaped
 * the child. */
#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procspawn.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* The child's stack: it runs a few calls, then execs. */
#define CHILD_STACK (64 * 1024)

struct spawn_args {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *dir;
    int fd[3];
    int flags;
    int err; /* the child's errno if it could not exec */
};

/* Kernel sigset for rt_sigprocmask: 64 signals. */
typedef unsigned long long ksigset;

static int child_main(void *p) {
    struct spawn_args *a = p;
    /* Each signal the parent handles back at its default, and SIGPIPE and
     * SIGXFSZ too (Python's restore_signals); ignored ones stay ignored. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < 65; sig++) {
        struct sigaction cur;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &cur) != 0)
            continue;
        if (sig == SIGPIPE || sig == SIGXFSZ || (cur.sa_handler != SIG_IGN && cur.sa_handler != SIG_DFL))
            sigaction(sig, &dfl, NULL);
    }
    if (a->flags & 1) {
        if (setsid() < 0)
            goto fail;
    } else if ((a->flags & 2) && setpgid(0, 0) != 0) {
        goto fail;
    }
    if (a->dir != NULL && a->dir[0] != 0 && chdir(a->dir) != 0)
        goto fail;
    for (int i = 0; i < 3; i++) {
        /* dup2 clears close-on-exec on the copy; an fd already in place
         * gets it cleared by hand (the host may have set it). */
        if (a->fd[i] == i ? fcntl(i, F_SETFD, 0) != 0 : dup2(a->fd[i], i) < 0)
            goto fail;
    }
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = 3; fd < max; fd++)
            close((int)fd);
    }
    ksigset none = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
    execve(a->path, a->argv, a->envp);
fail:
    a->err = errno;
    _exit(127);
}

/* One stack per thread that spawns, kept: a vfork child is done with it
 * (exec'd or exited) before clone returns to the parent. */
static __thread char *tls_stack;

int ll__posix_spawn(const char *path, char *const argv[], char *const envp[], const char *dir, int fd0, int fd1,
                    int fd2, int flags, int *pid_out, int *pidfd_out) {
    if (tls_stack == NULL) {
        void *s = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED)
            return -errno;
        tls_stack = s;
    }
    struct spawn_args a = {path, argv, envp, dir, {fd0, fd1, fd2}, flags, 0};
    /* Every signal blocked (glibc's internal ones too, hence the raw call)
     * while the child shares this memory. */
    ksigset all = ~0ULL, old;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof all);
    int pidfd = -1;
    char *top = tls_stack + CHILD_STACK;
    pid_t pid = clone(child_main, top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &a, &pidfd);
    if (pid < 0 && errno == EINVAL) { /* a kernel before 5.2: no CLONE_PIDFD */
        pidfd = -1;
        pid = clone(child_main, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
    }
    int saved = errno;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
    if (pid < 0)
        return -saved;
    if (a.err != 0) { /* it never ran the program: reap it, say why */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (pidfd >= 0)
            close(pidfd);
        return -a.err;
    }
    if (pidfd < 0) {
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
            pidfd = -1;
    }
    *pid_out = (int)pid;
    *pidfd_out = pidfd;
    return 0;
}
#endif
