/* SPDX-License-Identifier: MIT */
/*
 * proc_helpers.h — shared helpers of the process and signal C tests:
 * a protocol that records a child's events, running a loop until a
 * condition holds (with a timeout that fails the test instead of hanging),
 * and spawning with a few lines.
 */
#ifndef LIBLOOP_TEST_PROC_HELPERS_H
#define LIBLOOP_TEST_PROC_HELPERS_H

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static inline ll_loop new_loop(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    return loop;
}

static inline void count_cb(ll_loop loop, void *arg) {
    (void)loop;
    *(int *)arg += 1;
}

/* The loop still runs a plain callback (after a failed call, say). */
static inline void check_still_runs(ll_loop loop) {
    int ran = 0;
    CHECK_EQ_INT(ll_call_soon(loop, count_cb, &ran, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 1);
}

/* Runs iterations until cond(arg) is true; a timer ends the wait after
 * timeout seconds. Returns 1 if cond came true, else fails and returns 0. */
static inline int run_until_at(const char *file, int line, ll_loop loop, int (*cond)(void *), void *arg, double timeout) {
    int fired = 0;
    ll_handle timer = 0;
    if (ll_call_later(loop, timeout, count_cb, &fired, &timer) != 0) {
        CHECK_FAIL_AT(file, line, "cannot schedule the timeout timer");
        return 0;
    }
    while (!cond(arg) && !fired)
        if (ll_loop_run_once(loop, LL_RUN_ONCE) != 0)
            break;
    ll_handle_cancel(timer);
    ll_release(timer);
    if (!cond(arg)) {
        CHECK_FAIL_AT(file, line, "timed out after %.1f s", timeout);
        return 0;
    }
    check_passed++;
    return 1;
}
#define RUN_UNTIL(loop, cond, arg, timeout) run_until_at(__FILE__, __LINE__, (loop), (cond), (arg), (timeout))

/* Everything a child's protocol saw. */
#define PLOG_MAX 8192
struct plog {
    ll_loop loop;
    int made[3], eof[3], lost[3], lost_code[3], pause[3], resume[3];
    char out[3][PLOG_MAX];
    size_t nout[3];      /* bytes kept in out (at most PLOG_MAX - 1) */
    uint64_t total[3];   /* every byte received */
    uint64_t sum[3];     /* a running checksum of every byte received */
    ll_transport pipe_id[3];
    int exited;          /* LL_PROCESS_EXITED count */
    int code;
    ll_transport exit_id;
    int bad_fd;          /* an event whose fd was not what its kind allows */
    int keep_open_on_eof;
};

/* A checksum sensitive to order: each byte mixed with its position. */
static inline uint64_t sum_bytes(uint64_t sum, uint64_t pos, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        sum += (uint64_t)p[i] * ((pos + i) % 251 + 1);
    return sum;
}

static inline int plog_fn(ll_loop loop, const ll_event *ev, void *arg) {
    struct plog *l = arg;
    l->loop = loop;
    if (ev->kind == LL_PROCESS_EXITED) {
        l->exited++;
        l->code = ev->code;
        l->exit_id = ev->transport;
        return 0;
    }
    if (ev->fd < 0 || ev->fd > 2) {
        l->bad_fd++;
        return 0;
    }
    int fd = ev->fd;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        l->made[fd]++;
        l->pipe_id[fd] = ev->transport;
        break;
    case LL_DATA_RECEIVED: {
        size_t room = PLOG_MAX - 1 - l->nout[fd];
        size_t n = ev->len < room ? ev->len : room;
        memcpy(l->out[fd] + l->nout[fd], ev->data, n);
        l->nout[fd] += n;
        l->out[fd][l->nout[fd]] = '\0';
        l->sum[fd] = sum_bytes(l->sum[fd], l->total[fd], ev->data, ev->len);
        l->total[fd] += ev->len;
        break;
    }
    case LL_EOF_RECEIVED:
        l->eof[fd]++;
        return l->keep_open_on_eof;
    case LL_CONNECTION_LOST:
        l->lost[fd]++;
        l->lost_code[fd] = ev->code;
        break;
    case LL_PAUSE_WRITING:
        l->pause[fd]++;
        break;
    case LL_RESUME_WRITING:
        l->resume[fd]++;
        break;
    }
    return 0;
}

static inline int plog_exited(void *arg) { return ((struct plog *)arg)->exited > 0; }

/* Exited, and every pipe in want (bit i: child fd i) lost. */
struct plog_done { struct plog *l; int want; };
static inline int plog_all_done(void *arg) {
    struct plog_done *d = arg;
    if (!d->l->exited)
        return 0;
    for (int i = 0; i < 3; i++)
        if ((d->want >> i & 1) && !d->l->lost[i])
            return 0;
    return 1;
}

/* Spawns argv (file = argv[0]) with the given stdio; out gets the id. */
static inline int spawn3(ll_loop loop, const char *const *argv, int in, int out, int err, struct plog *l, ll_process *p) {
    ll_process_options o;
    memset(&o, 0, sizeof o);
    o.file = argv[0];
    o.argv = argv;
    o.stdio[0] = in;
    o.stdio[1] = out;
    o.stdio[2] = err;
    return ll_spawn(loop, &o, plog_fn, l, p);
}

/* Runs argv to completion with stdout/stderr piped as asked, waiting for
 * the exit and every pipe's LL_CONNECTION_LOST. Returns 1 if it finished. */
static inline int run_child(ll_loop loop, const char *const *argv, int in, int out, int err, struct plog *l) {
    ll_process p = 0;
    int rc = spawn3(loop, argv, in, out, err, l, &p);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return 0;
    struct plog_done d = {l, (out == LL_STDIO_PIPE ? 2 : 0) | (err == LL_STDIO_PIPE ? 4 : 0) | (in == LL_STDIO_PIPE ? 1 : 0)};
    int ok = RUN_UNTIL(loop, plog_all_done, &d, 10);
    ll_release(p);
    return ok;
}

/* The hex mask after "name:\t" in /proc/<child>/status (as printed by cat). */
static inline unsigned long long status_mask(const char *status, const char *name) {
    const char *p = strstr(status, name);
    return p == NULL ? ~0ULL : strtoull(p + strlen(name) + 2, NULL, 16);
}

static inline void noop_handler(int sig) { (void)sig; }

/* A child started while the host ignores SIGPIPE and SIGXFSZ, handles
 * SIGUSR1 and blocks SIGUSR2 gets none of it: no handler (cat sets none;
 * the Go runtime's and the host's are gone), both ignored signals at their
 * defaults, nothing blocked. The host's state is put back after. */
static inline void check_child_signals_clean(ll_loop loop) {
    struct sigaction ign, usr1, old_pipe, old_xfsz, old_usr1;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
    sigaction(SIGXFSZ, &ign, &old_xfsz);
    memset(&usr1, 0, sizeof usr1);
    usr1.sa_handler = noop_handler;
    sigaction(SIGUSR1, &usr1, &old_usr1);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &block, &old_mask);

    struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"cat", "/proc/self/status", NULL};
    CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l));
    CHECK_EQ_INT(l.code, 0);
    unsigned long long ign_mask = status_mask(l.out[1], "SigIgn");
    CHECK_EQ_INT(status_mask(l.out[1], "SigCgt"), 0);
    CHECK((ign_mask & (1ULL << (SIGPIPE - 1))) == 0);
    CHECK((ign_mask & (1ULL << (SIGXFSZ - 1))) == 0);
    CHECK((status_mask(l.out[1], "SigBlk") & (1ULL << (SIGUSR2 - 1))) == 0);

    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sigaction(SIGXFSZ, &old_xfsz, NULL);
    sigaction(SIGUSR1, &old_usr1, NULL);
}

/* The number of open fds of this process, leaving out epoll and eventfd
 * instances: the Go runtime inside libloop.so creates its own netpoller
 * (one of each) lazily, at a moment of its choosing (its scavenger's first
 * timer), and a loop's selector is made before any count is taken. Pipes,
 * pidfds and /dev/null, which spawning makes, are all counted. */
static inline int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
            continue;
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        target[len > 0 ? len : 0] = '\0';
        if (strcmp(target, "anon_inode:[eventpoll]") == 0 || strcmp(target, "anon_inode:[eventfd]") == 0)
            continue;
        n++;
    }
    closedir(d);
    return n;
}

/* Whether /proc/<pid> exists (a zombie still has one). */
static inline int pid_exists(int pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", pid);
    return access(path, F_OK) == 0;
}

/* A program that cannot run is the spawn's error (alternately a missing
 * program, -ENOENT, and a file without execute permission, -EACCES), and
 * its child, which got as far as the failed exec, is reaped at once: after
 * n spawns no zombie and no fd is left. err is the children's stderr. */
static inline void check_failed_execs_leave_nothing(int n, int err) {
    ll_loop loop = new_loop();
    int before = -1;
    for (int i = 0; i < n; i++) {
        if (i == 1)
            before = count_fds();
        const char *const argv[] = {"x", NULL};
        ll_process_options o = {.file = i % 2 ? "/nonexistent/prog" : "/etc/passwd", .argv = argv,
                                .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, err}};
        ll_process p = 0;
        CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, NULL, &p), i % 2 ? -ENOENT : -EACCES);
    }
    CHECK_EQ_INT(count_fds(), before);
    errno = 0;
    CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), -1);
    CHECK_EQ_INT(errno, ECHILD);
    ll_release(loop);
}

#endif /* LIBLOOP_TEST_PROC_HELPERS_H */
