/* SPDX-License-Identifier: MIT */
/* ll_loop_walk (libuv's uv_walk): each kind is listed with the id the host
 * holds, in LL_KIND_* order; a nonzero return stops the walk; a callback
 * that closes, cancels or releases the object it is given and others is
 * safe (the walk skips what an earlier call ended); from a callback of the
 * running loop it works, from another thread it is refused; bad input gets
 * codes. */
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static void nop(ll_loop loop, void *arg) { (void)loop, (void)arg; }
static int proto_nop(ll_loop loop, const ll_event *ev, void *arg) { return (void)loop, (void)ev, (void)arg, 0; }
static void fs_nop(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg) {
    (void)loop, (void)w, (void)path, (void)events, (void)status, (void)arg;
}

struct seen {
    int n;
    uint64_t ids[32];
    int kinds[32];
    int stop_after; /* 0: never */
};

static int record(ll_loop loop, uint64_t id, int kind, void *arg) {
    (void)loop;
    struct seen *s = arg;
    if (s->n < 32) {
        s->ids[s->n] = id;
        s->kinds[s->n] = kind;
    }
    s->n++;
    return s->stop_after != 0 && s->n >= s->stop_after;
}

static int find(const struct seen *s, uint64_t id, int kind) {
    for (int i = 0; i < s->n && i < 32; i++)
        if (s->ids[i] == id)
            return s->kinds[i] == kind;
    return 0;
}

struct objs {
    ll_handle slab, timer, hook, sig, fsw;
    ll_transport t;
    ll_server srv;
    ll_process p;
};

static void make_all(ll_loop loop, struct objs *o, int sp[2]) {
    const char *argv[] = {"sh", "-c", "sleep 5", NULL};
    ll_process_options po = {.file = "/bin/sh", .argv = argv,
                             .stdio = {LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL}};
    CHECK_EQ_INT(ll_call_later(loop, 60, nop, NULL, &o->slab), 0);
    CHECK_EQ_INT(ll_timer_start(loop, 60, 1, nop, NULL, &o->timer), 0);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_PREPARE, nop, NULL, &o->hook), 0);
    CHECK_EQ_INT(ll_add_signal_handler_ex(loop, SIGUSR2, nop, NULL, &o->sig), 0);
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    CHECK_EQ_INT(ll_transport_open(loop, sp[0], LL_STREAM, proto_nop, NULL, &o->t), 0);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 16, 0, proto_nop, NULL, &o->srv), 0);
    CHECK_EQ_INT(ll_spawn(loop, &po, proto_nop, NULL, &o->p), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, "/", 0, fs_nop, NULL, &o->fsw), 0);
}

static void test_lists_each_kind(void) {
    ll_loop loop = 0;
    struct objs o = {0};
    int sp[2];
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    struct seen s = {0};
    CHECK_EQ_INT(ll_loop_walk(loop, record, &s), 0);
    CHECK_EQ_INT(s.n, 0);
    make_all(loop, &o, sp);
    ll_handle cancelled = 0;
    CHECK_EQ_INT(ll_call_later(loop, 60, nop, NULL, &cancelled), 0);
    CHECK_EQ_INT(ll_handle_cancel(cancelled), 0);
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(ll_loop_walk(loop, record, &s), 0);
    CHECK_EQ_INT(s.n, 8);
    CHECK(find(&s, o.slab, LL_KIND_HANDLE));
    CHECK(find(&s, o.fsw, LL_KIND_FS_WATCH));
    CHECK(find(&s, o.timer, LL_KIND_TIMER));
    CHECK(find(&s, o.hook, LL_KIND_HOOK));
    CHECK(find(&s, o.sig, LL_KIND_SIGNAL));
    CHECK(find(&s, o.t, LL_KIND_TRANSPORT));
    CHECK(find(&s, o.srv, LL_KIND_SERVER));
    CHECK(find(&s, o.p, LL_KIND_PROCESS));
    CHECK(!find(&s, cancelled, LL_KIND_HANDLE));
    for (int i = 1; i < s.n; i++)
        CHECK(s.kinds[i - 1] <= s.kinds[i]); /* in kind order */
    /* A nonzero return stops it. */
    struct seen one = {.stop_after = 2};
    CHECK_EQ_INT(ll_loop_walk(loop, record, &one), 0);
    CHECK_EQ_INT(one.n, 2);
    /* Bad input. */
    CHECK_EQ_INT(ll_loop_walk(loop, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_walk(0, record, &s), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_walk(o.t, record, &s), LL_EBADHANDLE); /* not a loop */
    ll_process_kill(o.p);
    CHECK_EQ_INT(ll_release(cancelled), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_loop_walk(loop, record, &s), LL_ECLOSED);
    close(sp[1]);
    ll_release(o.slab), ll_release(o.timer), ll_release(o.hook), ll_release(o.srv), ll_release(o.p);
    ll_release(o.fsw);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* The first call closes, releases and cancels everything: nothing else is
 * handed over, and nothing crashes (ASan watches the ids and records). */
static struct objs *victims;

static int end_all(ll_loop loop, uint64_t id, int kind, void *arg) {
    (void)id, (void)kind;
    if (++*(int *)arg > 1)
        return 0; /* what the first call left: the aborted transport, the killed process */
    CHECK_EQ_INT(ll_handle_cancel(victims->slab), 0); /* a released one-shot handle still runs */
    CHECK_EQ_INT(ll_release(victims->slab), 0);
    CHECK_EQ_INT(ll_release(victims->timer), 0);
    CHECK_EQ_INT(ll_release(victims->hook), 0);
    CHECK_EQ_INT(ll_release(victims->fsw), 0);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR2), 1);
    CHECK_EQ_INT(ll_transport_abort(victims->t), 0);
    CHECK_EQ_INT(ll_server_close(victims->srv), 0);
    CHECK_EQ_INT(ll_release(victims->srv), 0);
    CHECK_EQ_INT(ll_process_kill(victims->p), 0);
    return 0;
}

static void test_survives_closes(void) {
    ll_loop loop = 0;
    struct objs o = {0};
    int sp[2], calls = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    make_all(loop, &o, sp);
    victims = &o;
    CHECK_EQ_INT(ll_loop_walk(loop, end_all, &calls), 0);
    /* The slab timer's call, then only the transport (aborted: its id
     * lives until its LL_CONNECTION_LOST is delivered) and the process
     * (killed, not yet reaped) may still be handed over. */
    CHECK(calls >= 1 && calls <= 3);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0); /* the transport's loss, the exit */
    struct seen s = {0};
    CHECK_EQ_INT(ll_loop_walk(loop, record, &s), 0);
    CHECK_EQ_INT(s.n, 0);
    close(sp[1]);
    CHECK_EQ_INT(ll_release(o.p), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* From a callback of the running loop: allowed; from another thread while
 * it runs: LL_EWRONGTHREAD. */
static int other_rc;
static ll_loop other_loop;

static void *walk_other(void *arg) {
    (void)arg;
    struct seen s = {0};
    other_rc = ll_loop_walk(other_loop, record, &s);
    return NULL;
}

static void walk_inside(ll_loop loop, void *arg) {
    struct seen *s = arg;
    CHECK_EQ_INT(ll_loop_walk(loop, record, s), 0);
    pthread_t th;
    pthread_create(&th, NULL, walk_other, NULL);
    pthread_join(th, NULL);
}

static void test_threads(void) {
    ll_loop loop = 0;
    ll_handle h = 0;
    struct seen s = {0};
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    other_loop = loop;
    CHECK_EQ_INT(ll_call_later(loop, 0.01, nop, NULL, &h), 0);
    CHECK_EQ_INT(ll_call_soon(loop, walk_inside, &s, NULL), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(s.n, 1);
    CHECK(find(&s, h, LL_KIND_HANDLE));
    CHECK_EQ_INT(other_rc, LL_EWRONGTHREAD);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    RUN_TEST(test_lists_each_kind);
    RUN_TEST(test_survives_closes);
    RUN_TEST(test_threads);
    return CHECK_REPORT();
}
