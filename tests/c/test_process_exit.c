/* SPDX-License-Identifier: MIT */
/* Processes: the exit (LL_PROCESS_EXITED once, return codes as asyncio's,
 * every exit status 0..255 reported exactly, ll_process_returncode, ll_process_wait, ll_process_pid), signalling a
 * child (and -ESRCH once it has exited), and reaping: no zombie is left,
 * also when the process id or the loop is released while the child runs. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_helpers.h"

static int future_done(void *arg) { return ll_future_done(*(ll_future *)arg) == 1; }

static ll_process spawn_quiet(ll_loop loop, const char *const *argv, struct plog *l) {
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_INHERIT, l, &p), 0);
    return p;
}

static void test_exit_status(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "sleep 0.05; exit 5", NULL};
    ll_process p = spawn_quiet(loop, argv, &l);
    int pid = 0, rc = 1234;
    CHECK_EQ_INT(ll_process_pid(p, &pid), 0);
    CHECK(pid > 0 && pid != getpid());
    CHECK_EQ_INT(ll_process_returncode(p, &rc), LL_ESTATE);
    CHECK_EQ_INT(rc, 1234);

    ll_future before = 0, after = 0;
    CHECK_EQ_INT(ll_process_wait(p, &before), 0);
    CHECK_EQ_INT(ll_future_done(before), 0);
    RUN_UNTIL(loop, future_done, &before, 10);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(before, &v), 0);
    CHECK_EQ_INT((intptr_t)v, 5);
    CHECK_EQ_INT(l.exited, 1);
    CHECK_EQ_INT(l.code, 5);
    CHECK_EQ_INT(l.exit_id, p);
    CHECK_EQ_INT(ll_process_returncode(p, &rc), 0);
    CHECK_EQ_INT(rc, 5);

    /* A wait made after the exit completes too, with the same code. */
    CHECK_EQ_INT(ll_process_wait(p, &after), 0);
    RUN_UNTIL(loop, future_done, &after, 1);
    v = 0;
    CHECK_EQ_INT(ll_future_result(after, &v), 0);
    CHECK_EQ_INT((intptr_t)v, 5);

    /* LL_PROCESS_EXITED came once, whatever runs next. */
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.exited, 1);
    /* The pid stays readable after the exit. */
    int pid2 = 0;
    CHECK_EQ_INT(ll_process_pid(p, &pid2), 0);
    CHECK_EQ_INT(pid2, pid);
    ll_release(before);
    ll_release(after);
    ll_release(p);
    ll_release(loop);
}

/* Every exit status 0..255 comes back exactly, in LL_PROCESS_EXITED and
 * from ll_process_returncode (32 children at a time). */
struct code_rec { int exited, code; };

static int code_fn(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    struct code_rec *r = arg;
    if (ev->kind == LL_PROCESS_EXITED) {
        r->exited++;
        r->code = ev->code;
    }
    return 0;
}

struct batch { struct code_rec *recs; int n; };
static int batch_exited(void *arg) {
    struct batch *b = arg;
    for (int i = 0; i < b->n; i++)
        if (!b->recs[i].exited)
            return 0;
    return 1;
}

static void test_every_exit_code(void) {
    ll_loop loop = new_loop();
    enum { CODES = 256, AT_ONCE = 32 };
    static struct code_rec recs[CODES];
    memset(recs, 0, sizeof recs);
    int wrong = 0, wrong_rc = 0, spawn_failed = 0;
    for (int base = 0; base < CODES; base += AT_ONCE) {
        ll_process ps[AT_ONCE];
        for (int i = 0; i < AT_ONCE; i++) {
            char script[32];
            snprintf(script, sizeof script, "exit %d", base + i);
            const char *const argv[] = {"sh", "-c", script, NULL};
            ll_process_options o = {.file = "sh", .argv = argv,
                                    .stdio = {LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_INHERIT}};
            ps[i] = 0;
            if (ll_spawn(loop, &o, code_fn, &recs[base + i], &ps[i]) != 0) {
                spawn_failed++;
                recs[base + i].exited = -1; /* never comes: do not wait for it */
            }
        }
        struct batch b = {recs + base, AT_ONCE};
        RUN_UNTIL(loop, batch_exited, &b, 10);
        for (int i = 0; i < AT_ONCE; i++) {
            int rc = -1000;
            if (recs[base + i].exited != 1 || recs[base + i].code != base + i) {
                if (wrong++ < 5)
                    fprintf(stderr, "exit %d: exited %d times, code %d\n", base + i, recs[base + i].exited,
                            recs[base + i].code);
            }
            if (ps[i] != 0 && (ll_process_returncode(ps[i], &rc) != 0 || rc != base + i))
                wrong_rc++;
            ll_release(ps[i]);
        }
    }
    CHECK_EQ_INT(spawn_failed, 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(wrong_rc, 0);
    errno = 0;
    CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), -1); /* every one reaped */
    CHECK_EQ_INT(errno, ECHILD);
    ll_release(loop);
}

static void test_killed_by_signal(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    const int sigs[] = {SIGKILL, SIGTERM, SIGINT, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        memset(&l, 0, sizeof l);
        const char *const argv[] = {"sleep", "10", NULL};
        ll_process p = spawn_quiet(loop, argv, &l);
        ll_future w = 0;
        CHECK_EQ_INT(ll_process_wait(p, &w), 0);
        CHECK_EQ_INT(ll_process_send_signal(p, 0), 0); /* alive: signal 0 checks only */
        if (sigs[i] == SIGKILL)
            CHECK_EQ_INT(ll_process_kill(p), 0);
        else if (sigs[i] == SIGTERM)
            CHECK_EQ_INT(ll_process_terminate(p), 0);
        else
            CHECK_EQ_INT(ll_process_send_signal(p, sigs[i]), 0);
        RUN_UNTIL(loop, future_done, &w, 10);
        CHECK_EQ_INT(l.exited, 1);
        CHECK_EQ_INT(l.code, -sigs[i]);
        uintptr_t v = 0;
        CHECK_EQ_INT(ll_future_result(w, &v), 0);
        CHECK_EQ_INT((intptr_t)v, -sigs[i]);
        int rc = 0;
        CHECK_EQ_INT(ll_process_returncode(p, &rc), 0);
        CHECK_EQ_INT(rc, -sigs[i]);
        ll_release(w);
        ll_release(p);
    }
    ll_release(loop);
}

/* The child gets the very signal sent: a trap turns SIGUSR1 into exit 9. */
static int said_ready(void *arg) { return strstr(((struct plog *)arg)->out[1], "ready") != NULL; }

static void test_signal_reaches_child(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "trap 'exit 9' USR1; echo ready; while :; do sleep 0.02; done", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT, &l, &p), 0);
    RUN_UNTIL(loop, said_ready, &l, 10);
    CHECK_EQ_INT(ll_process_send_signal(p, SIGUSR1), 0);
    RUN_UNTIL(loop, plog_exited, &l, 10);
    CHECK_EQ_INT(l.code, 9);
    ll_release(p);
    ll_release(loop);
}

static void test_esrch_after_exit(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"true", NULL};
    ll_process p = spawn_quiet(loop, argv, &l);
    CHECK_EQ_INT(ll_process_send_signal(p, 65), LL_EINVAL);
    CHECK_EQ_INT(ll_process_send_signal(p, -1), LL_EINVAL);
    RUN_UNTIL(loop, plog_exited, &l, 10);
    CHECK_EQ_INT(l.code, 0);
    CHECK_EQ_INT(ll_process_send_signal(p, SIGTERM), -ESRCH);
    CHECK_EQ_INT(ll_process_send_signal(p, 0), -ESRCH);
    CHECK_EQ_INT(ll_process_terminate(p), -ESRCH);
    CHECK_EQ_INT(ll_process_kill(p), -ESRCH);
    /* Nothing was sent: the recorded code is still the clean exit. */
    int rc = -1;
    CHECK_EQ_INT(ll_process_returncode(p, &rc), 0);
    CHECK_EQ_INT(rc, 0);
    check_still_runs(loop);
    ll_release(p);
    ll_release(loop);
}

/* After the loop has handled an exit, the pid is already reaped. */
static void test_no_zombie_after_exit(void) {
    ll_loop loop = new_loop();
    static struct plog l[3];
    int pids[3];
    ll_process ps[3];
    const char *const quick[] = {"true", NULL};
    const char *const failing[] = {"false", NULL};
    const char *const slow[] = {"sleep", "10", NULL};
    const char *const *argvs[3] = {quick, failing, slow};
    for (int i = 0; i < 3; i++) {
        memset(&l[i], 0, sizeof l[i]);
        ps[i] = spawn_quiet(loop, argvs[i], &l[i]);
        CHECK_EQ_INT(ll_process_pid(ps[i], &pids[i]), 0);
    }
    CHECK_EQ_INT(ll_process_kill(ps[2]), 0);
    for (int i = 0; i < 3; i++) {
        RUN_UNTIL(loop, plog_exited, &l[i], 10);
        errno = 0;
        CHECK_EQ_INT(waitpid(pids[i], NULL, WNOHANG), -1);
        CHECK_EQ_INT(errno, ECHILD);
        ll_release(ps[i]);
    }
    CHECK_EQ_INT(l[0].code, 0);
    CHECK_EQ_INT(l[1].code, 1);
    CHECK_EQ_INT(l[2].code, -SIGKILL);
    ll_release(loop);
}

static int gone_within(int pid, double secs) {
    struct timespec ts = {0, 5 * 1000 * 1000};
    for (int i = 0; i < (int)(secs * 200); i++) {
        if (!pid_exists(pid))
            return 1;
        nanosleep(&ts, NULL);
    }
    return !pid_exists(pid);
}

/* A child still running when the loop is released is reaped when it exits. */
static void test_reaped_after_loop_release(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const slow[] = {"sleep", "10", NULL};
    const char *const quick[] = {"true", NULL};
    ll_process running = spawn_quiet(loop, slow, &l);
    ll_process done = spawn_quiet(loop, quick, &l); /* exits, never seen by the loop */
    int pid_running = 0, pid_done = 0;
    CHECK_EQ_INT(ll_process_pid(running, &pid_running), 0);
    CHECK_EQ_INT(ll_process_pid(done, &pid_done), 0);
    ll_release(running);
    ll_release(done);
    ll_release(loop);
    CHECK(pid_exists(pid_running));
    CHECK_EQ_INT(kill(pid_running, SIGKILL), 0);
    CHECK(gone_within(pid_running, 1.0));
    CHECK(gone_within(pid_done, 1.0));
    CHECK_EQ_INT(l.exited, 0); /* nothing is delivered once the loop is gone */
}

/* Releasing the process id does not kill the child; its exit and its
 * pipes' events still reach the protocol. */
static void test_release_process_id_early(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "sleep 0.05; echo still here; exit 4", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT, &l, &p), 0);
    int pid = 0;
    CHECK_EQ_INT(ll_process_pid(p, &pid), 0);
    CHECK_EQ_INT(ll_release(p), 0);
    CHECK_EQ_INT(ll_process_pid(p, &pid), LL_EBADHANDLE);
    struct plog_done d = {&l, 2};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_STR(l.out[1], "still here\n");
    CHECK_EQ_INT(l.exited, 1);
    CHECK_EQ_INT(l.code, 4);
    errno = 0;
    CHECK_EQ_INT(waitpid(pid, NULL, WNOHANG), -1);
    CHECK_EQ_INT(errno, ECHILD);
    ll_release(loop);
}

/* A closed loop refuses to spawn or wait; the process id still answers. */
static void test_closed_loop(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sleep", "10", NULL};
    ll_process p = spawn_quiet(loop, argv, &l);
    int pid = 0;
    CHECK_EQ_INT(ll_process_pid(p, &pid), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_process q = 99;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_INHERIT, &l, &q), LL_ECLOSED);
    CHECK_EQ_INT(q, 99);
    ll_future w = 99;
    CHECK_EQ_INT(ll_process_wait(p, &w), LL_ECLOSED);
    CHECK_EQ_INT(w, 99);
    int rc = 0;
    CHECK_EQ_INT(ll_process_returncode(p, &rc), LL_ESTATE);
    /* The child can still be killed, and is reaped. */
    CHECK_EQ_INT(ll_process_kill(p), 0);
    CHECK(gone_within(pid, 1.0));
    /* Reaped: its pid may be anyone's now, so nothing is sent. */
    CHECK_EQ_INT(ll_process_send_signal(p, 0), -ESRCH);
    ll_release(p);
    ll_release(loop);
}

int main(void) {
    alarm(60); /* a hang is a failure, never a stuck suite */
    RUN_TEST(test_exit_status);
    RUN_TEST(test_every_exit_code);
    RUN_TEST(test_killed_by_signal);
    RUN_TEST(test_signal_reaches_child);
    RUN_TEST(test_esrch_after_exit);
    RUN_TEST(test_no_zombie_after_exit);
    RUN_TEST(test_reaped_after_loop_release);
    RUN_TEST(test_release_process_id_early);
    RUN_TEST(test_closed_loop);
    return CHECK_REPORT();
}
