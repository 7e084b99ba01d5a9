/* SPDX-License-Identifier: MIT */
/*
 * spawn_ll.c — libloop, driven from C through include/libloop.h, for the
 * subprocess workload W8 (and W8-1g): N x /bin/true, at most PAR running.
 * Modes and the result line: see bench/spawn_common.h.
 *
 * Each child: ll_spawn(loop, &opts, on_event, NULL, &p) with file
 * "/bin/true", argv {"true", NULL}, env NULL (inherited), stdio
 * {LL_STDIO_DEVNULL x 3} (the loop's one /dev/null, dup2'd in the child).
 * libloop starts it with clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD|
 * CLONE_CLEAR_SIGHAND) (capi/spawn/vfork_linux.c), so the parent's page
 * tables are not copied, and the child goes straight to execve. Its exit
 * is watched through the pidfd in the loop's epoll set, one-shot (no
 * SIGCHLD). The protocol gets LL_PROCESS_EXITED (ev->code = the return
 * code, ev->transport = the process id): it checks the code, releases the
 * id and spawns the next child from inside the callback; after the Nth
 * exit it stops the loop. ll_loop_run_forever runs it all.
 */
#include "spawn_common.h"
#include <libloop.h>

static const char *IMPL = "libloop";
static ll_process_options opts;
static const char *const child_argv[] = {"true", NULL};

static void die_rc(const char *what, int rc) {
    fprintf(stderr, "%s: %s failed: %s (%d)\n", IMPL, what, ll_err_name(rc), rc);
    exit(2);
}

static int on_event(ll_loop loop, const ll_event *ev, void *arg);

static void spawn_one(ll_loop loop) {
    ll_process p = 0;
    int rc = ll_spawn(loop, &opts, on_event, NULL, &p);
    if (rc != 0)
        die_rc("ll_spawn", rc);
    w8_spawned();
}

static int on_event(ll_loop loop, const ll_event *ev, void *arg) {
    (void)arg;
    if (ev->kind != LL_PROCESS_EXITED)
        return 0; /* no pipes: nothing else comes */
    int more = w8_exit(ev->code);
    ll_release(ev->transport);
    if (more)
        spawn_one(loop);
    else if (w8_done())
        ll_loop_stop(loop);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", ll_version_string());
        return 0;
    }
    w8_setup(IMPL, argc, argv);
    opts.file = W8_PROGRAM;
    opts.argv = child_argv;
    opts.stdio[0] = opts.stdio[1] = opts.stdio[2] = LL_STDIO_DEVNULL;
    ll_loop loop;
    int rc;
    if ((rc = ll_loop_new(&loop)) != 0)
        die_rc("ll_loop_new", rc);

    bench_mark t0 = w8_begin();
    for (long i = 0; i < w8_par && i < w8_n; i++)
        spawn_one(loop);
    if ((rc = ll_loop_run_forever(loop)) != 0)
        die_rc("ll_loop_run_forever", rc);
    w8_report(t0);
    ll_release(loop);
    return 0;
}
