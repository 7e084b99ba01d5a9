/* SPDX-License-Identifier: MIT */
/* Spawning on Linux without posix_spawn's per-call setup: one
 * clone3(CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_CLEAR_SIGHAND) onto a
 * stack kept per thread (clone3.c), whose child sets up its stdio and
 * execs. What posix_spawn also does, minus what a profile of 500 spawns showed it
 * costs here: a stack mmap and munmap per call, four getrlimit calls (from
 * its file-action checks), a separate pidfd_open (CLONE_PIDFD returns the
 * pidfd with the pid), blocking every signal around the clone and, in the
 * child, a sigaction query per signal (the kernel has reset the handlers).
 *
 * The child shares the parent's memory until it execs (the parent thread
 * is suspended meanwhile, the other threads run on), so it runs only
 * async-signal-safe calls on its own stack, and no handler of the parent
 * (a Go handler) may ever run in it. Where clone3 or CLONE_CLEAR_SIGHAND is
 * missing (Linux < 5.5, a seccomp filter, valgrind, not x86-64) it is
 * clone() with every signal blocked until the child has put back the
 * default action of each signal the parent handles. An exec that fails reports its errno
 * through the shared arguments: ll__posix_spawn returns it, having reaped
 * the child. Where the child turns out not to share our memory (valgrind
 * runs such a clone as a fork), the errno comes through a close-on-exec
 * pipe instead: the first spawn of the process always has one and finds
 * out which case holds (see report_mode). */
#ifdef __linux__
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "clone3.h"
#include "slice.h"

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
    int cleared; /* the kernel reset the child's handlers (clone3) */
    const struct ll__spawn_x *x;
    int err;     /* the child's errno if it could not exec */
    int ran;     /* set by the child: it saw this memory, so it shares it */
    int errpipe; /* the write end of the report pipe, or -1 */
    const struct ll__sattr *slice_back; /* the attributes to exec with (slice.c), or NULL */
};

/* How an exec failure reaches the parent: REPORT_UNKNOWN until the first
 * spawn shows whether the child shares our memory (REPORT_SHARED: through
 * spawn_args alone) or not (REPORT_PIPE: a pipe on every spawn). */
enum { REPORT_UNKNOWN, REPORT_SHARED, REPORT_PIPE };
static int report_mode;

/* Set once clone3 turns out unusable here: clone() from then on. */
static int no_clone3;

/* close_range(lo, hi), or close() one by one where the kernel lacks it. */
static void close_fds(unsigned lo, unsigned hi) {
    if (lo > hi || syscall(SYS_close_range, lo, hi, 0) == 0)
        return;
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = lo; fd < max && fd <= (long)hi; fd++)
        close((int)fd);
}

/* Closes every fd from 3 up but the kept ones (sorted) and the report
 * pipe's write end: one close_range per gap. */
static void close_others(const struct ll__spawn_x *x, int errpipe) {
    unsigned lo = 3;
    int i = 0;
    for (;;) {
        long next = -1; /* the next fd to keep, >= lo */
        while (i < x->nkeep && (unsigned)x->keep[i] < lo)
            i++;
        if (i < x->nkeep)
            next = x->keep[i];
        if (errpipe >= 0 && (unsigned)errpipe >= lo && (next < 0 || errpipe < next))
            next = errpipe;
        if (next < 0) {
            close_fds(lo, ~0U);
            return;
        }
        close_fds(lo, (unsigned)next - 1);
        lo = (unsigned)next + 1;
    }
}

/* The process-wide credential calls of glibc (setuid, setgroups ...)
 * signal every thread of the parent, whose memory this child shares:
 * raw syscalls act on the child alone (as glibc's posix_spawn does). */
static int set_ids(const struct ll__spawn_x *x) {
    if (x->ngroups >= 0 && syscall(SYS_setgroups, (long)x->ngroups, x->groups) != 0)
        return -1;
    if (x->gid >= 0 && syscall(SYS_setresgid, (long)x->gid, (long)x->gid, (long)x->gid) != 0)
        return -1;
    if (x->uid >= 0 && syscall(SYS_setresuid, (long)x->uid, (long)x->uid, (long)x->uid) != 0)
        return -1;
    return 0;
}

/* Kernel sigset for rt_sigprocmask: 64 signals. */
typedef unsigned long long ksigset;

static int child_main(void *p) {
    struct spawn_args *a = p;
    a->ran = 1;
    /* Each signal the parent handles back at its default (the kernel did
     * it already after clone3), and SIGPIPE and SIGXFSZ too (Python's
     * restore_signals); other ignored ones stay ignored. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < 65; sig++) {
        struct sigaction cur;
        if (sig == SIGPIPE || sig == SIGXFSZ) {
            sigaction(sig, &dfl, NULL);
            continue;
        }
        if (a->cleared || sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &cur) != 0)
            continue;
        if (cur.sa_handler != SIG_IGN && cur.sa_handler != SIG_DFL)
            sigaction(sig, &dfl, NULL);
    }
    /* Popen's order: cwd and umask as the parent, then the session or
     * group, then groups, gid and uid (uid last: it may take away the
     * right to change the others), then the fds. */
    const struct ll__spawn_x *x = a->x;
    if (a->dir != NULL && a->dir[0] != 0 && chdir(a->dir) != 0)
        goto fail;
    if (x->umask >= 0)
        umask((mode_t)x->umask);
    if (a->flags & 1) {
        if (setsid() < 0)
            goto fail;
    } else if (x->pgid >= 0 && setpgid(0, x->pgid) != 0) {
        goto fail;
    }
    if (set_ids(x) != 0)
        goto fail;
    for (int i = 0; i < 3; i++) {
        /* dup2 clears close-on-exec on the copy; an fd already in place
         * gets it cleared by hand (the host may have set it). No source
         * below 3 is another's target (the core moved those up). */
        if (a->fd[i] == i ? fcntl(i, F_SETFD, 0) != 0 : dup2(a->fd[i], i) < 0)
            goto fail;
    }
    for (int i = 0; i < x->nkeep; i++) {
        if (fcntl(x->keep[i], F_SETFD, 0) != 0)
            goto fail;
    }
    /* The report pipe, if any, stays until exec closes it. */
    if (!x->inherit)
        close_others(x, a->errpipe);
    ksigset none = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
    if (a->slice_back != NULL)
        ll__slice_restore(a->slice_back);
    execve(a->path, a->argv, a->envp);
fail:
    a->err = errno;
    if (a->errpipe >= 0) {
        int e = a->err;
        while (write(a->errpipe, &e, sizeof e) < 0 && errno == EINTR)
            ;
    }
    _exit(127);
}

/* A close-on-exec pipe whose ends are both above the child's stdio (so
 * its dup2s cannot overwrite the write end); 0 or -1 with errno. */
static int open_report_pipe(int *r, int *w) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (p[i] < 3) {
            int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
            int e = errno;
            close(p[i]);
            p[i] = moved;
            errno = e;
        }
    }
    if (p[0] < 0 || p[1] < 0) {
        int e = errno;
        if (p[0] >= 0)
            close(p[0]);
        if (p[1] >= 0)
            close(p[1]);
        errno = e;
        return -1;
    }
    *r = p[0];
    *w = p[1];
    return 0;
}

/* Reads the child's errno from the report pipe: EOF (exec closed the
 * write end) means it ran the program and leaves *err as it is. */
static void read_report(int fd, int *err) {
    int e;
    ssize_t n;
    while ((n = read(fd, &e, sizeof e)) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof e)
        *err = e;
}

/* One stack per thread that spawns, kept: a vfork child is done with it
 * (exec'd or exited) before clone returns to the parent. */
static __thread char *tls_stack;

int ll__posix_spawn(const char *path, char *const argv[], char *const envp[], const char *dir, int fd0, int fd1,
                    int fd2, int flags, const struct ll__spawn_x *x, int *pid_out, int *pidfd_out) {
    if (tls_stack == NULL) {
        /* cppcheck-suppress invalidFunctionArg ; MAP_ANONYMOUS takes fd -1 (mmap(2)); cppcheck's POSIX rules want >= 0 */
        void *s = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED)
            return -errno;
        tls_stack = s;
    }
    struct spawn_args a = {path, argv, envp, dir, {fd0, fd1, fd2}, flags, 0, x, 0, 0, -1, NULL};
    int mode = __atomic_load_n(&report_mode, __ATOMIC_RELAXED);
    int rpipe = -1;
    if (mode != REPORT_SHARED && open_report_pipe(&rpipe, &a.errpipe) != 0)
        return -errno;
    int pidfd = -1, saved = 0;
    pid_t pid = -1;
    struct ll__sattr slice_back;
    if (ll__slice_shorten(&slice_back))
        a.slice_back = &slice_back;
    int fallback = __atomic_load_n(&no_clone3, __ATOMIC_RELAXED);
    if (!fallback) {
        a.cleared = 1;
        long r = ll__clone3_vfork(tls_stack, CHILD_STACK, child_main, &a, &pidfd);
        if (r >= 0) {
            pid = (pid_t)r;
        } else if (r == -ENOSYS || r == -EINVAL || r == -EPERM) {
            /* No clone3 (or a filter refusing it): never again. Nothing
             * ran, so the report pipe and the arguments are untouched. */
            __atomic_store_n(&no_clone3, 1, __ATOMIC_RELAXED);
            a.cleared = 0;
            pidfd = -1;
            fallback = 1;
        } else {
            saved = (int)-r;
        }
    }
    if (fallback) {
        /* Every signal blocked (glibc's internal ones too, hence the raw
         * call) while the child shares this memory. */
        ksigset all = ~0ULL, old;
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof all);
        char *top = tls_stack + CHILD_STACK;
        pid = clone(child_main, top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &a, &pidfd);
        if (pid < 0 && errno == EINVAL) { /* a kernel before 5.2: no CLONE_PIDFD */
            pidfd = -1;
            pid = clone(child_main, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
        }
        saved = errno;
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
    }
    if (a.slice_back != NULL)
        ll__slice_restore(&slice_back);
    if (rpipe >= 0) {
        close(a.errpipe);
        if (pid >= 0) {
            read_report(rpipe, &a.err);
            if (mode == REPORT_UNKNOWN)
                __atomic_store_n(&report_mode, a.ran ? REPORT_SHARED : REPORT_PIPE, __ATOMIC_RELAXED);
        }
        close(rpipe);
    }
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
