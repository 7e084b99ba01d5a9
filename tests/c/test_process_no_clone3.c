/* SPDX-License-Identifier: MIT */
/* Spawning where clone3 is refused, as under Docker's default seccomp
 * profile (ENOSYS) or on a kernel before 5.5: the spawner falls back to
 * clone() with every signal blocked and resets the host's handlers in the
 * child itself. This test installs such a filter for the whole process
 * (every thread, the Go runtime's included) and checks what ll_spawn
 * promises still holds: children run and report their codes, a program
 * that cannot run is the spawn's error with nothing left behind, signals
 * reach a child, and the child gets the default action for what the host
 * ignores and no blocked signal of the host's thread. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "no_clone3.h"
#include "proc_helpers.h"

static int exits, bad;

static int count_exit(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    if (ev->kind == LL_PROCESS_EXITED) {
        exits++;
        if (ev->code != (intptr_t)arg)
            bad++;
        ll_release(ev->transport);
    }
    return 0;
}

static int exits_reach(void *arg) { return exits >= *(int *)arg; }

static void test_spawns_without_clone3(void) {
    ll_loop loop = new_loop();
    /* 320 children, 16 at a time, each exiting 0 (true) or 3 (sh). */
    const char *const targv[] = {"true", NULL};
    const char *const sargv[] = {"sh", "-c", "exit 3", NULL};
    for (int r = 0; r < 20; r++) {
        for (int i = 0; i < 16; i++) {
            ll_process_options o;
            memset(&o, 0, sizeof o);
            int sh = i % 4 == 0;
            o.file = sh ? "/bin/sh" : "/bin/true";
            o.argv = sh ? sargv : targv;
            o.stdio[0] = o.stdio[1] = o.stdio[2] = LL_STDIO_DEVNULL;
            ll_process p = 0;
            CHECK_EQ_INT(ll_spawn(loop, &o, count_exit, (void *)(intptr_t)(sh ? 3 : 0), &p), 0);
        }
        int want = (r + 1) * 16;
        RUN_UNTIL(loop, exits_reach, &want, 20);
    }
    CHECK_EQ_INT(exits, 320);
    CHECK_EQ_INT(bad, 0);
    ll_release(loop);
}

static void test_exec_failure_without_clone3(void) { check_failed_execs_leave_nothing(41, LL_STDIO_DEVNULL); }

static void test_signals_without_clone3(void) {
    ll_loop loop = new_loop();
    check_child_signals_clean(loop);

    /* A running child takes a signal (pidfd_send_signal) and dies of it. */
    struct plog k;
    memset(&k, 0, sizeof k);
    const char *const sleeper[] = {"sleep", "30", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, sleeper, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, &k, &p), 0);
    CHECK_EQ_INT(ll_process_kill(p), 0);
    RUN_UNTIL(loop, plog_exited, &k, 10);
    CHECK_EQ_INT(k.code, -SIGKILL);
    CHECK_EQ_INT(ll_process_kill(p), -ESRCH);
    ll_release(p);
    ll_release(loop);
}

int main(void) {
    /* The filter must be in place, and refusing clone3, before any spawn
     * of this process: a test that could not install it would test the
     * ordinary path and prove nothing, so that is a failure. */
    CHECK_EQ_INT(refuse_clone3(), 0);
    errno = 0;
    CHECK_EQ_INT(syscall(NR_CLONE3, NULL, 0), -1);
    CHECK_EQ_INT(errno, ENOSYS);
    RUN_TEST(test_spawns_without_clone3);
    RUN_TEST(test_exec_failure_without_clone3);
    RUN_TEST(test_signals_without_clone3);
    return CHECK_REPORT();
}
