/* SPDX-License-Identifier: MIT */
/* ll_loop_run and references (libuv's uv_run, uv_ref, uv_unref): LL_RUN_DEFAULT
 * returns when the last referenced thing ends; an unreferenced timer,
 * repeating timer, hook, transport, server, process or signal handler
 * still works but does not keep the loop; ll_ref undoes ll_unref;
 * ll_loop_stop with referenced work left returns 1; executor work and file
 * calls keep the loop alive; a file-system watcher keeps it until
 * unreferenced; bad ids, modes and threads get codes. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void count(ll_loop loop, void *arg) { (void)loop, ++*(int *)arg; }
static void stop_loop(ll_loop loop, void *arg) { (void)arg, ll_loop_stop(loop); }
static void fail_cb(ll_loop loop, void *arg) {
    (void)loop, (void)arg;
    CHECK(!"an unreferenced far timer ran");
}

static int proto_count(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    if (ev->kind == LL_DATA_RECEIVED)
        *(int *)arg += (int)ev->len;
    if (ev->kind == LL_PROCESS_EXITED)
        *(int *)arg = 1000;
    return 0;
}

/* The loop returns when its last referenced timer has run, and at once when
 * nothing is left. */
static void test_default_ends_with_last_timer(void) {
    ll_loop loop = 0;
    int n = 0;
    ll_handle h = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0); /* empty: returns at once */
    CHECK_EQ_INT(ll_call_later(loop, 0.01, count, &n, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.02, count, &n, &h), 0);
    CHECK_EQ_INT(ll_has_ref(h), 1);
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(n, 2);
    CHECK(now_s() - t0 >= 0.019);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_loop_run(loop, 7), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_run(0, LL_RUN_DEFAULT), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Unreferenced timers (a handle timer, a repeating one) run while the loop
 * runs but do not keep it; a re-referenced one does. */
static void test_unref_timers(void) {
    ll_loop loop = 0;
    ll_handle far = 0, near = 0, rep = 0;
    int fired = 0, ticks = 0, dummy = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_call_later(loop, 60, fail_cb, NULL, &far), 0);
    CHECK_EQ_INT(ll_unref(far), 0);
    CHECK_EQ_INT(ll_unref(far), 0); /* idempotent */
    CHECK_EQ_INT(ll_has_ref(far), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.005, count, &fired, &near), 0);
    CHECK_EQ_INT(ll_unref(near), 0);
    CHECK_EQ_INT(ll_timer_start(loop, 0.002, 0.002, count, &ticks, &rep), 0);
    CHECK_EQ_INT(ll_unref(rep), 0);
    CHECK_EQ_INT(ll_has_ref(rep), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.03, count, &dummy, NULL), 0); /* the referenced one */
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK(now_s() - t0 < 5);
    CHECK_EQ_INT(fired, 1);
    CHECK(ticks >= 3);
    CHECK_EQ_INT(dummy, 1);
    /* Only unreferenced timers left: every mode returns 0 without running. */
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_ONCE), 0);
    /* Re-referenced, the repeating timer keeps the loop until its callback
     * stops it (here: a stop after a few ticks). */
    CHECK_EQ_INT(ll_ref(rep), 0);
    CHECK_EQ_INT(ll_has_ref(rep), 1);
    CHECK_EQ_INT(ll_call_later(loop, 0.02, stop_loop, NULL, NULL), 0);
    ticks = 0;
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 1); /* stopped with rep still armed */
    CHECK(ticks >= 3);
    CHECK_EQ_INT(ll_release(rep), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0); /* rep gone: only `far` is left */
    /* Stale ids. */
    CHECK_EQ_INT(ll_unref(rep), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_has_ref(rep), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(far), 0);
    CHECK_EQ_INT(ll_ref(far), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(near), 0);
    CHECK_EQ_INT(ll_ref(0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_unref(12345), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_has_ref(loop), LL_EBADHANDLE); /* a loop has no reference */
    ll_future f = 0;
    CHECK_EQ_INT(ll_future_new(loop, &f), 0);
    CHECK_EQ_INT(ll_unref(f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A stop with a referenced timer left reports it. */
static void test_stop_reports_alive(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_call_later(loop, 60, count, NULL, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, stop_loop, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 1);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_NOWAIT), 1);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* An unreferenced hook, transport, server and signal handler all work
 * while a referenced timer keeps the loop, and none keeps it after. */
static void test_unref_io(void) {
    ll_loop loop = 0;
    ll_handle hook = 0, sig = 0;
    ll_transport t = 0;
    ll_server srv = 0;
    int checks = 0, got = 0, sigs = 0, dummy = 0;
    int sp[2];
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_CHECK, count, &checks, &hook), 0);
    CHECK_EQ_INT(ll_unref(hook), 0);
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    CHECK_EQ_INT(ll_transport_open(loop, sp[0], LL_STREAM, proto_count, &got, &t), 0);
    CHECK_EQ_INT(ll_unref(t), 0);
    CHECK_EQ_INT(ll_has_ref(t), 0);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 16, 0, proto_count, &dummy, &srv), 0);
    CHECK_EQ_INT(ll_unref(srv), 0);
    CHECK_EQ_INT(ll_add_signal_handler_ex(loop, SIGUSR2, count, &sigs, &sig), 0);
    CHECK_EQ_INT(ll_unref(sig), 0);
    CHECK_EQ_INT(ll_has_ref(sig), 0);
    CHECK_EQ_INT(ll_add_signal_handler_ex(loop, SIGUSR2, count, &sigs, NULL), LL_EINVAL);
    CHECK_EQ_INT(write(sp[1], "hello", 5), 5);
    kill(getpid(), SIGUSR2);
    CHECK_EQ_INT(ll_call_later(loop, 0.03, count, &dummy, NULL), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(got, 5);
    CHECK_EQ_INT(sigs, 1);
    CHECK(checks > 0);
    CHECK_EQ_INT(dummy, 1);
    /* Re-referenced, the transport keeps the loop until it is lost: the
     * peer's close ends it. */
    CHECK_EQ_INT(ll_ref(t), 0);
    CHECK_EQ_INT(ll_has_ref(t), 1);
    close(sp[1]);
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK(now_s() - t0 < 5);
    CHECK_EQ_INT(ll_has_ref(t), LL_EBADHANDLE); /* lost: its id went stale */
    /* A replaced signal handler's id goes stale; remove the new one. */
    ll_handle sig2 = 0;
    CHECK_EQ_INT(ll_add_signal_handler_ex(loop, SIGUSR2, count, &sigs, &sig2), 0);
    CHECK_EQ_INT(ll_has_ref(sig), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_has_ref(sig2), 1); /* a new handler is referenced */
    CHECK_EQ_INT(ll_release(sig2), 0);  /* removes it */
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR2), 0);
    CHECK_EQ_INT(ll_server_close(srv), 0);
    CHECK_EQ_INT(ll_release(srv), 0);
    CHECK_EQ_INT(ll_release(hook), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A referenced process keeps the loop until it exits; an unreferenced one
 * does not. */
static void test_process(void) {
    ll_loop loop = 0;
    ll_process p = 0, q = 0;
    int st = 0, st2 = 0;
    const char *argv[] = {"sh", "-c", "sleep 0.05", NULL};
    const char *argv2[] = {"sh", "-c", "sleep 2", NULL};
    ll_process_options o = {.file = "/bin/sh", .argv = argv,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL}};
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_spawn(loop, &o, proto_count, &st, &p), 0);
    CHECK_EQ_INT(ll_has_ref(p), 1);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(st, 1000);
    o.argv = argv2;
    CHECK_EQ_INT(ll_spawn(loop, &o, proto_count, &st2, &q), 0);
    CHECK_EQ_INT(ll_unref(q), 0);
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK(now_s() - t0 < 1.0);
    CHECK_EQ_INT(st2, 0);
    CHECK_EQ_INT(ll_process_kill(q), 0);
    CHECK_EQ_INT(ll_ref(q), 0); /* now it keeps the loop until the kill is reaped */
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(st2, 1000);
    CHECK_EQ_INT(ll_release(p), 0);
    CHECK_EQ_INT(ll_release(q), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static uintptr_t slow_work(void *arg, int *err) {
    (void)arg, (void)err;
    usleep(30000);
    return 7;
}

static void on_done(ll_future f, void *arg) {
    uintptr_t v = 0;
    ll_future_result(f, &v);
    *(uintptr_t *)arg = v;
}

/* Executor work in flight keeps the loop (libuv's pending requests). */
static void test_executor(void) {
    ll_loop loop = 0;
    ll_future f = 0;
    uintptr_t got = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_run_in_executor(loop, slow_work, NULL, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, on_done, &got), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(got, 7);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A file call in flight keeps the loop, as executor work does. */
static void test_file_call(void) {
    ll_loop loop = 0;
    ll_future f = 0;
    uintptr_t got = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_open(loop, "/dev/null", O_RDONLY, 0, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, on_done, &got), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK(got > 2); /* the fd: the done callback ran before the run returned */
    close((int)got);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static void on_fs_event(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg) {
    (void)loop, (void)w, (void)path, (void)events, (void)status;
    ++*(int *)arg;
}

/* Stops the loop once the watcher has heard something (a referenced
 * repeating timer: the only thing keeping the loop while it waits). */
struct fs_wait {
    int *events;
    ll_handle timer;
};

static void check_events(ll_loop loop, void *arg) {
    struct fs_wait *fw = arg;
    (void)loop;
    if (*fw->events > 0)
        ll_handle_cancel(fw->timer);
}

/* A watcher (notifying or polling) keeps the loop while referenced; an
 * unreferenced one keeps nothing (not its inotify fd, not its poll timer)
 * yet still reports. */
static void test_fs_watchers(void) {
    char dir[] = "/tmp/ll_refs_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char file[64];
    snprintf(file, sizeof file, "%s/f", dir);
    ll_loop loop = 0;
    ll_handle w = 0, p = 0;
    int events = 0, polls = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, dir, 0, on_fs_event, &events, &w), 0);
    CHECK_EQ_INT(ll_fs_poll(loop, dir, 0.01, on_fs_event, &polls, &p), 0);
    CHECK_EQ_INT(ll_has_ref(w), 1);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_NOWAIT), 1); /* both keep it */
    CHECK_EQ_INT(ll_unref(w), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_NOWAIT), 1); /* the poll still does */
    CHECK_EQ_INT(ll_unref(p), 0);
    CHECK_EQ_INT(ll_has_ref(p), 0);
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0); /* nothing referenced left */
    CHECK(now_s() - t0 < 1.0);
    /* Unreferenced, it still reports: a referenced timer waits for it. */
    struct fs_wait fw = {&events, 0};
    CHECK_EQ_INT(ll_timer_start(loop, 0.005, 0.005, check_events, &fw, &fw.timer), 0);
    int fd = open(file, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0);
    CHECK_EQ_INT((int)write(fd, "x", 1), 1);
    close(fd);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK(events > 0);
    CHECK_EQ_INT(ll_ref(w), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_NOWAIT), 1);
    CHECK_EQ_INT(ll_handle_cancel(w), 0); /* stopped: keeps nothing, even referenced */
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_release(w), 0);
    CHECK_EQ_INT(ll_release(p), 0);
    CHECK_EQ_INT(ll_release(fw.timer), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    unlink(file);
    rmdir(dir);
}

/* From another thread while the loop runs: refused. */
struct other {
    ll_handle h;
    int unref_rc, has_rc;
};

static void *from_other(void *arg) {
    struct other *o = arg;
    o->unref_rc = ll_unref(o->h);
    o->has_rc = ll_has_ref(o->h);
    return NULL;
}

static void try_other(ll_loop loop, void *arg) {
    (void)loop;
    pthread_t th;
    pthread_create(&th, NULL, from_other, arg);
    pthread_join(th, NULL);
}

static void test_wrong_thread(void) {
    ll_loop loop = 0;
    struct other o = {0};
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_call_later(loop, 60, count, NULL, &o.h), 0);
    CHECK_EQ_INT(ll_call_soon(loop, try_other, &o, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, stop_loop, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 1);
    CHECK_EQ_INT(o.unref_rc, LL_EWRONGTHREAD);
    CHECK_EQ_INT(o.has_rc, LL_EWRONGTHREAD);
    CHECK_EQ_INT(ll_has_ref(o.h), 1);
    CHECK_EQ_INT(ll_release(o.h), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    RUN_TEST(test_default_ends_with_last_timer);
    RUN_TEST(test_unref_timers);
    RUN_TEST(test_stop_reports_alive);
    RUN_TEST(test_unref_io);
    RUN_TEST(test_process);
    RUN_TEST(test_executor);
    RUN_TEST(test_file_call);
    RUN_TEST(test_fs_watchers);
    RUN_TEST(test_wrong_thread);
    return CHECK_REPORT();
}
