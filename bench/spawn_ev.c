/* SPDX-License-Identifier: MIT */
/*
 * spawn_ev.c — the libev rival for the subprocess workload W8 (and W8-1g):
 * N x /bin/true, at most PAR running. Modes and the result line: see
 * bench/spawn_common.h. libev has no spawn call: it watches children
 * (ev_child, on the default loop only: ev_default_loop(EVBACKEND_EPOLL),
 * whose SIGCHLD handler calls waitpid(-1) and dispatches on the pid) and
 * the host starts them. Built twice:
 *
 *  - spawn_ev (impl "libev"): fork() + execve, what libev's documentation
 *    shows and what libev hosts (and libuv 1.44) do. The child dup2()s one
 *    /dev/null fd the parent opened once (O_RDWR|O_CLOEXEC) onto 0, 1, 2,
 *    execve("/bin/true", {"true"}, environ), _exit(127) if that fails (the
 *    exit check then fails the run). fork() copies the parent's page
 *    tables: the cost grows with the parent's RSS (W8-1g).
 *  - spawn_evps (impl "libev-posix_spawn", -DW8_POSIX_SPAWN): posix_spawn
 *    with three adddup2 file actions of the same /dev/null fd. glibc (2.24
 *    and later) runs it as clone(CLONE_VM|CLONE_VFORK) on a separate stack
 *    and reports an exec failure as posix_spawn's error: the same
 *    mechanism as libloop's Go ForkExec, so this row separates the loop's
 *    cost from the cost of fork().
 *
 * Each child gets its own ev_child (one malloc'd array of N),
 * ev_child_init(w, cb, pid, 0) + ev_child_start right after the spawn; the
 * callback checks rstatus (exited, status 0), ev_child_stop()s it and
 * spawns the next child; after the Nth, ev_break.
 */
#include "spawn_common.h"
#include <ev.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#ifdef W8_POSIX_SPAWN
static const char *IMPL = "libev-posix_spawn";
static posix_spawn_file_actions_t actions;
#else
static const char *IMPL = "libev";
#endif
extern char **environ;
static struct ev_loop *loop;
static ev_child *watchers;
static int devnull = -1;
static char *child_argv[] = {"true", NULL};

static void die_err(const char *what, int err) {
    fprintf(stderr, "%s: %s failed: %s\n", IMPL, what, strerror(err));
    exit(2);
}

static void on_child(struct ev_loop *l, ev_child *w, int revents);

static void spawn_one(void) {
    pid_t pid;
#ifdef W8_POSIX_SPAWN
    int err = posix_spawn(&pid, W8_PROGRAM, &actions, NULL, child_argv, environ);
    if (err != 0)
        die_err("posix_spawn", err);
#else
    pid = fork();
    if (pid < 0)
        die_err("fork", errno);
    if (pid == 0) { /* the child: async-signal-safe calls only */
        if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
            _exit(126);
        execve(W8_PROGRAM, child_argv, environ);
        _exit(127);
    }
#endif
    ev_child *w = &watchers[w8_started];
    ev_child_init(w, on_child, pid, 0);
    ev_child_start(loop, w);
    w8_spawned();
}

static void on_child(struct ev_loop *l, ev_child *w, int revents) {
    (void)revents;
    int st = w->rstatus;
    long code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? -WTERMSIG(st) : 1000;
    ev_child_stop(l, w);
    if (w8_exit(code))
        spawn_one();
    else if (w8_done())
        ev_break(l, EVBREAK_ALL);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%d.%d\n", ev_version_major(), ev_version_minor());
        return 0;
    }
    w8_setup(IMPL, argc, argv);
    loop = ev_default_loop(EVBACKEND_EPOLL);
    if (loop == NULL)
        die_err("ev_default_loop", ENOSYS);
    watchers = calloc((size_t)w8_n, sizeof *watchers);
    if (watchers == NULL)
        die_err("calloc", ENOMEM);
    devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0)
        die_err("open /dev/null", errno);
#ifdef W8_POSIX_SPAWN
    posix_spawn_file_actions_init(&actions);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_adddup2(&actions, devnull, fd);
#endif

    bench_mark t0 = w8_begin();
    for (long i = 0; i < w8_par && i < w8_n; i++)
        spawn_one();
    ev_run(loop, 0);
    w8_report(t0);
    close(devnull);
    free(watchers);
    return 0;
}
