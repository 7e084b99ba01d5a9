/* SPDX-License-Identifier: MIT */
/* Processes: bad input for every ll_spawn / ll_process_* call returns its
 * documented code, leaves *out alone, starts no child, and the loop goes
 * on running callbacks. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_helpers.h"

static const char *const true_argv[] = {"true", NULL};

static ll_process_options good_opts(void) {
    ll_process_options o;
    memset(&o, 0, sizeof o);
    o.file = "true";
    o.argv = true_argv;
    o.stdio[0] = o.stdio[1] = o.stdio[2] = LL_STDIO_DEVNULL;
    return o;
}

/* No child of ours exists (every earlier one was reaped). */
static void check_no_child(void) {
    errno = 0;
    CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), -1);
    CHECK_EQ_INT(errno, ECHILD);
}

static void test_spawn_bad_input(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    ll_process p = 99;
    ll_process_options o = good_opts();

    CHECK_EQ_INT(ll_spawn(loop, NULL, plog_fn, &l, &p), LL_EINVAL);
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, NULL), LL_EINVAL);
    o.file = NULL;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), LL_EINVAL);
    o = good_opts();
    o.argv = NULL;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), LL_EINVAL);
    const char *const empty[] = {NULL};
    o.argv = empty;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), LL_EINVAL);
    const int bad_stdio[] = {-7, -5, -100, LL_STDIO_STDOUT};
    for (int fd = 0; fd < 3; fd++) {
        for (size_t i = 0; i < sizeof bad_stdio / sizeof bad_stdio[0]; i++) {
            if (bad_stdio[i] == LL_STDIO_STDOUT && fd == 2)
                continue; /* the one place it is allowed */
            o = good_opts();
            o.stdio[fd] = bad_stdio[i];
            CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), LL_EINVAL);
        }
    }
    o = good_opts();
    o.flags = 4;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), LL_EINVAL);
    o.flags = -1;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), LL_EINVAL);
    CHECK_EQ_INT(p, 99);

    /* Ids: 0, a stale loop, a loop-shaped id of another kind. */
    o = good_opts();
    CHECK_EQ_INT(ll_spawn(0, &o, plog_fn, &l, &p), LL_EBADHANDLE);
    ll_future f = 0;
    CHECK_EQ_INT(ll_future_new(loop, &f), 0);
    CHECK_EQ_INT(ll_spawn(f, &o, plog_fn, &l, &p), LL_EBADHANDLE);
    ll_release(f);
    ll_loop stale = new_loop();
    ll_release(stale);
    CHECK_EQ_INT(ll_spawn(stale, &o, plog_fn, &l, &p), LL_EBADHANDLE);
    CHECK_EQ_INT(p, 99);

    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(l.exited + l.made[0] + l.made[1] + l.made[2], 0);
    check_no_child();
    check_still_runs(loop);

    /* A NULL protocol fn is allowed: the events go to the batch sink (or
     * nowhere); the child runs and is reaped. */
    CHECK_EQ_INT(ll_spawn(loop, &o, NULL, NULL, &p), 0);
    ll_future w = 0;
    CHECK_EQ_INT(ll_process_wait(p, &w), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(loop, w), 0);
    uintptr_t v = 1;
    CHECK_EQ_INT(ll_future_result(w, &v), 0);
    CHECK_EQ_INT(v, 0);
    ll_release(w);
    ll_release(p);
    ll_release(loop);
}

static void test_process_calls_bad_ids(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    ll_future fut = 0;
    CHECK_EQ_INT(ll_future_new(loop, &fut), 0);
    /* A stale process id: spawned, exited, released. */
    ll_process_options o = good_opts();
    ll_process stale = 0;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &stale), 0);
    RUN_UNTIL(loop, plog_exited, &l, 10);
    CHECK_EQ_INT(ll_release(stale), 0);
    CHECK_EQ_INT(ll_release(stale), LL_EBADHANDLE);

    const uint64_t bad[] = {0, stale, fut, loop, (uint64_t)1 << 40};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int pid = 77, rc = 77;
        ll_transport t = 77;
        ll_future w = 77;
        CHECK_EQ_INT(ll_process_pid(bad[i], &pid), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_process_pipe(bad[i], 1, &t), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_process_send_signal(bad[i], SIGTERM), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_process_terminate(bad[i]), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_process_kill(bad[i]), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_process_returncode(bad[i], &rc), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_process_wait(bad[i], &w), LL_EBADHANDLE);
        CHECK_EQ_INT(pid + rc, 154);
        CHECK_EQ_INT(t, 77);
        CHECK_EQ_INT(w, 77);
    }
    /* The future and loop were not touched by being passed as a process. */
    CHECK_EQ_INT(ll_future_done(fut), 0);
    ll_release(fut);
    check_still_runs(loop);
    ll_release(loop);
}

static void test_process_calls_bad_args(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sleep", "10", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_PIPE, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l, &p), 0);
    ll_transport t = 77;
    CHECK_EQ_INT(ll_process_pid(p, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_process_returncode(p, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_process_wait(p, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_process_pipe(p, 1, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_process_pipe(p, 5, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_process_pipe(p, -1, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_process_pipe(p, 3, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_process_pipe(p, 2, &t), LL_EINVAL); /* /dev/null: not a pipe */
    CHECK_EQ_INT(t, 77);
    CHECK_EQ_INT(ll_process_send_signal(p, -1), LL_EINVAL);
    CHECK_EQ_INT(ll_process_send_signal(p, 65), LL_EINVAL);
    /* A process id is not a transport, nor a transport id a process. */
    ll_transport in = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 0, &in), 0);
    CHECK_EQ_INT(ll_transport_write(p, "x", 1), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_process_kill(in), LL_EBADHANDLE);
    /* ... and the child is still running after all that. */
    int rc = 0;
    CHECK_EQ_INT(ll_process_returncode(p, &rc), LL_ESTATE);
    CHECK_EQ_INT(ll_process_kill(p), 0);
    RUN_UNTIL(loop, plog_exited, &l, 10);
    CHECK_EQ_INT(l.code, -SIGKILL);
    check_still_runs(loop);
    ll_release(p);
    ll_release(loop);
}

int main(void) {
    alarm(60); /* a hang is a failure, never a stuck suite */
    RUN_TEST(test_spawn_bad_input);
    RUN_TEST(test_process_calls_bad_ids);
    RUN_TEST(test_process_calls_bad_args);
    return CHECK_REPORT();
}
