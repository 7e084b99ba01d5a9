/* SPDX-License-Identifier: MIT */
/* The process side of the fault campaign (issue 13): 1,000 spawn/kill
 * cycles, 16 children alive at a time, each with a stdout pipe, killed at
 * a random moment (before or after it wrote), its exit and its pipe's end
 * delivered exactly once, no zombie left and the fd count flat. A child
 * that exits on its own in between must report 0. LIBLOOP_LONG_TESTS=1:
 * 10,000 cycles. */
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <errno.h>

#include "proc_helpers.h"

#define LIVE 16

static double now_monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct slot {
    ll_process p;
    int pid;
    int kill_at; /* iterations before the kill; -1: let it exit */
    int was_killed;
    struct plog log;
};

static const char *const sleeper[] = {"/bin/sh", "-c", "echo up; exec sleep 30", NULL};
static const char *const quick[] = {"/bin/sh", "-c", "echo up", NULL};

static int start(ll_loop loop, struct slot *s, int i) {
    memset(s, 0, sizeof *s);
    s->kill_at = i % 7 == 0 ? -1 : rand() % 6;
    int rc = spawn3(loop, s->kill_at < 0 ? quick : sleeper, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL,
                    &s->log, &s->p);
    if (rc == 0)
        ll_process_pid(s->p, &s->pid);
    return rc;
}

static int finished(const struct slot *s) { return s->log.exited && s->log.lost[1]; }

struct stats {
    int ended, bad, killed, zombies;
};

static void tick_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

/* Runs n cycles, LIVE at a time, until every child of them has ended. */
static void run_cycles(ll_loop loop, int n, struct stats *st) {
    struct slot *slots = calloc(LIVE, sizeof *slots);
    int started = 0, ended = 0;
    double t0 = now_monotonic();
    for (int i = 0; i < LIVE && started < n; i++)
        st->bad += start(loop, &slots[i], started++) != 0;
    while (ended < n && now_monotonic() - t0 < 120) {
        /* A short timer keeps iterations coming while every child left
         * waits for its kill (which counts iterations), however slow the
         * build (ASan) makes the events. */
        ll_call_later(loop, 0.002, tick_cb, NULL, NULL);
        ll_loop_run_once(loop, LL_RUN_ONCE);
        for (int i = 0; i < LIVE; i++) {
            struct slot *s = &slots[i];
            if (s->p == 0)
                continue;
            if (s->kill_at >= 0 && !s->log.exited && s->kill_at-- == 0) {
                int rc = ll_process_kill(s->p);
                st->bad += rc != 0 && rc != -ESRCH;
                st->killed += rc == 0;
                s->was_killed = rc == 0;
            }
            if (!finished(s))
                continue;
            /* exactly one exit, one end per pipe, the right code */
            st->bad += s->log.exited != 1 || s->log.lost[1] != 1 || s->log.made[1] != 1 || s->log.bad_fd != 0;
            /* A killed sleeper must report SIGKILL. (Before the tick above
             * a loop with nothing else to do slept in poll until `sleep 30`
             * ended on its own, and the kill counted down after that hit a
             * zombie: code 0 at age 30.0 s, once mistaken for an early exit.) */
            st->bad += s->log.code != (s->was_killed ? -SIGKILL : 0);
            st->zombies += pid_exists(s->pid);
            ll_release(s->p);
            s->p = 0;
            ended++;
            if (started < n)
                st->bad += start(loop, s, started++) != 0;
        }
    }
    st->ended += ended;
    free(slots);
}

static void test_spawn_kill_cycles(void) {
    int cycles = getenv("LIBLOOP_LONG_TESTS") ? 10000 : 1000;
    ll_loop loop = new_loop();
    struct stats st = {0};
    /* a few cycles first: the loop's lazily made fds (/dev/null) are counted */
    run_cycles(loop, 4, &st);
    int fds0 = count_fds();
    double t0 = now_monotonic();
    run_cycles(loop, cycles / 2, &st);
    int fds_mid = count_fds();
    run_cycles(loop, cycles / 2, &st);
    fprintf(stderr, "%d spawn/kill cycles (%d killed) in %.1f s; fds %d -> %d -> %d\n", st.ended - 4, st.killed,
            now_monotonic() - t0, fds0, fds_mid, count_fds());
    CHECK_EQ_INT(st.ended, cycles + 4);
    CHECK_EQ_INT(st.bad, 0);
    CHECK(st.killed > cycles / 2);
    CHECK_EQ_INT(fds_mid, fds0);
    CHECK_EQ_INT(count_fds(), fds0);
    CHECK_EQ_INT(st.zombies, 0);
    /* no child of ours is left, reaped or not */
    CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), -1);
    check_still_runs(loop);
    ll_release(loop);
}

int main(void) {
    srand(7);
    RUN_TEST(test_spawn_kill_cycles);
    return CHECK_REPORT();
}
