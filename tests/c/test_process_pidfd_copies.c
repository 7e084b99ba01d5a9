/* SPDX-License-Identifier: MIT */
/* A child's pidfd is watched once (EPOLLONESHOT) and, once its exit has
 * fired, closed with no EPOLL_CTL_DEL. Where a forked copy of the host
 * still holds the pidfd the file stays open, and so does its epoll
 * registration: it must be disarmed, or the loop would see the exited
 * (forever readable) pidfd in every poll and spin. 1,000 spawns, a fork of
 * the host holding every one of their pidfds; afterwards the loop must
 * block quietly (no event, a handful of iterations in 200 ms), watch no fd,
 * and have leaked no fd. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_helpers.h"

#define ROUNDS 63 /* x 16 = 1,008 spawns */
#define BATCH 16

static int exits, bad_codes;

static int on_exit_ev(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop, (void)arg;
    if (ev->kind == LL_PROCESS_EXITED) {
        exits++;
        if (ev->code != 0)
            bad_codes++;
        ll_release(ev->transport);
    }
    return 0;
}

static int exits_reach(void *arg) { return exits >= *(int *)arg; }

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

static struct ll_loop_stats stats_of(ll_loop loop) {
    struct ll_loop_stats s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    CHECK_EQ_INT(ll_loop_stats(loop, &s), 0);
    return s;
}

static void test_exited_pidfds_held_by_a_fork(void) {
    signal(SIGPIPE, SIG_IGN);
    ll_loop loop = new_loop();
    int fds_before = count_fds();
    int release[2];
    CHECK_EQ_INT(pipe(release), 0);
    pid_t holders[ROUNDS];
    const char *const argv[] = {"true", NULL};
    ll_process_options o;
    memset(&o, 0, sizeof o);
    o.file = "/bin/true";
    o.argv = argv;
    o.stdio[0] = o.stdio[1] = o.stdio[2] = LL_STDIO_DEVNULL;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < BATCH; i++) {
            ll_process p = 0;
            CHECK_EQ_INT(ll_spawn(loop, &o, on_exit_ev, NULL, &p), 0);
        }
        /* The loop has not run: all 16 pidfds are open and registered.
         * The fork holds a copy of each until the release pipe closes. */
        holders[r] = fork();
        if (holders[r] == 0) {
            char c;
            close(release[1]);
            while (read(release[0], &c, 1) < 0 && errno == EINTR)
                ;
            _exit(0);
        }
        CHECK(holders[r] > 0);
        int want = (r + 1) * BATCH;
        RUN_UNTIL(loop, exits_reach, &want, 20);
    }
    CHECK_EQ_INT(exits, ROUNDS * BATCH);
    CHECK_EQ_INT(bad_codes, 0);

    /* Every exit delivered: the loop watches nothing, and 200 ms of
     * running sees no readiness and blocks instead of spinning. */
    struct ll_loop_stats a = stats_of(loop);
    CHECK_EQ_INT(a.fds, 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.2, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    struct ll_loop_stats b = stats_of(loop);
    CHECK_EQ_INT(b.events - a.events, 0);
    CHECK(b.iterations - a.iterations < 20);
    CHECK(b.idle_ns - a.idle_ns > 150000000ULL);
    /* The pidfds are closed on our side (the holders' copies are theirs):
     * only the release pipe and the loop's /dev/null (opened by its first
     * spawn) are new. */
    CHECK_EQ_INT(count_fds(), fds_before + 3);

    close(release[1]);
    close(release[0]);
    for (int r = 0; r < ROUNDS; r++) {
        int st = -1;
        CHECK_EQ_INT(waitpid(holders[r], &st, 0), holders[r]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    /* With the last copy gone the registrations go too; the loop still
     * works: one more child comes and goes. */
    ll_process p = 0;
    CHECK_EQ_INT(ll_spawn(loop, &o, on_exit_ev, NULL, &p), 0);
    int want = ROUNDS * BATCH + 1;
    RUN_UNTIL(loop, exits_reach, &want, 10);
    CHECK_EQ_INT(exits, want);
    CHECK_EQ_INT(stats_of(loop).fds, 0);
    CHECK_EQ_INT(count_fds(), fds_before + 1);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_exited_pidfds_held_by_a_fork);
    return CHECK_REPORT();
}
