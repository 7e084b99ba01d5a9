/* SPDX-License-Identifier: MIT */
/* Write flow control: the water marks, LL_PAUSE_WRITING and
 * LL_RESUME_WRITING exactly once per crossing, set_write_buffer_limits,
 * get_write_buffer_size and ll_transport_write_async_size's report (and
 * _packed's), and
 * abort with a full buffer. */
#include "net_util.h"

static int in_write;        /* set around ll_transport_write calls */
static int reentered;       /* an event arrived inside ll_transport_write */
static size_t size_at_pause, size_at_resume;

static int flow_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (in_write)
        reentered++;
    if (ev->kind == LL_PAUSE_WRITING)
        ll_transport_get_write_buffer_size(c->t, &size_at_pause);
    if (ev->kind == LL_RESUME_WRITING)
        ll_transport_get_write_buffer_size(c->t, &size_at_resume);
    return 0;
}

static size_t bufsize(ll_transport t) {
    size_t n = (size_t)-1;
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(t, &n), 0);
    return n;
}

/* Connects a client to a server whose connection does not read. */
static void setup(ll_loop loop, struct server *srv, struct conn *cl) {
    server_init(srv, 1);
    server_listen(srv, loop, 0);
    conn_init(cl);
    cl->hook = flow_hook;
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv->port, cl), 0);
    RUN_UNTIL(loop, srv->n == 1, 5.0);
    CHECK_EQ_INT(ll_transport_pause_reading(srv->conns[0].t), 0);
}

/* Writes until the client's buffer holds more than `above` bytes. */
static void fill(ll_loop loop, struct conn *cl, size_t above) {
    static char chunk[256 << 10];
    for (int i = 0; i < 4096 && bufsize(cl->t) <= above; i++) {
        in_write = 1;
        CHECK_EQ_INT(ll_transport_write(cl->t, chunk, sizeof chunk), 0);
        in_write = 0;
        ll_loop_run_once(loop, LL_RUN_NOWAIT); /* let the socket take what it can */
    }
    CHECK(bufsize(cl->t) > above);
}

static void test_default_marks(void) {
    ll_loop loop = new_loop();
    struct server srv;
    struct conn cl;
    setup(loop, &srv, &cl);
    reentered = 0;
    CHECK_EQ_INT(bufsize(cl.t), 0);
    fill(loop, &cl, 64 << 10);
    RUN_UNTIL(loop, cl.npause == 1, 5.0);
    CHECK(size_at_pause > (64 << 10));
    /* More writes while paused: no second LL_PAUSE_WRITING. */
    static char more[100000];
    CHECK_EQ_INT(ll_transport_write(cl.t, more, sizeof more), 0);
    spin(loop, 5);
    CHECK_EQ_INT(cl.npause, 1);
    CHECK_EQ_INT(cl.nresume, 0);
    /* The reader drains: one LL_RESUME_WRITING, at or below 16 KiB. */
    CHECK_EQ_INT(ll_transport_resume_reading(srv.conns[0].t), 0);
    RUN_UNTIL(loop, cl.nresume == 1, 10.0);
    CHECK(size_at_resume <= (16 << 10));
    RUN_UNTIL(loop, bufsize(cl.t) == 0, 10.0);
    spin(loop, 5);
    CHECK_EQ_INT(cl.npause, 1);
    CHECK_EQ_INT(cl.nresume, 1);
    CHECK_EQ_INT(cl.bad_order, 0);
    /* Events come in later callbacks, never from inside ll_transport_write. */
    CHECK_EQ_INT(reentered, 0);
    ll_transport_close(cl.t);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    server_free(&srv, loop);
    ll_release(loop);
}

static void test_custom_marks(void) {
    ll_loop loop = new_loop();
    struct server srv;
    struct conn cl;
    setup(loop, &srv, &cl);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, 1 << 20, 256 << 10), 0);
    fill(loop, &cl, 512 << 10);
    spin(loop, 3);
    CHECK_EQ_INT(cl.npause, 0); /* above 512 KiB but not above 1 MiB */
    /* Lowering the high mark below what is buffered pauses at once. */
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, 128 << 10, 0), 0); /* low = high/4 */
    RUN_UNTIL(loop, cl.npause == 1, 5.0);
    /* Raising it again above the buffer resumes (the buffer is <= new low). */
    size_t now = bufsize(cl.t);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, now * 4 + 4, now + 1), 0);
    RUN_UNTIL(loop, cl.nresume == 1, 5.0);
    CHECK_EQ_INT(cl.npause, 1);
    /* Bad limits are refused and change nothing. */
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, 10, 20), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, (size_t)1 << 63, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, (size_t)-1, (size_t)-1), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(cl.t, NULL), LL_EINVAL);
    /* Back to the defaults with (0, 0): 64 KiB is exceeded, so it pauses. */
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(cl.t, 0, 0), 0);
    RUN_UNTIL(loop, cl.npause == 2, 5.0);
    /* Drain: resume once, at or below the default low mark. */
    CHECK_EQ_INT(ll_transport_resume_reading(srv.conns[0].t), 0);
    RUN_UNTIL(loop, cl.nresume == 2, 10.0);
    CHECK(size_at_resume <= (16 << 10));
    RUN_UNTIL(loop, bufsize(cl.t) == 0, 10.0);
    CHECK_EQ_INT(cl.npause, 2);
    server_free(&srv, loop);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0); /* the server's abort ends us too */
    CHECK_EQ_INT(cl.bad_order, 0);
    ll_release(loop);
}

/* abort drops a full buffer: LL_CONNECTION_LOST with 0 at once, no flush,
 * nothing leaked; the peer sees the end. */
static void test_abort_full_buffer(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server srv;
    struct conn cl;
    setup(loop, &srv, &cl);
    fill(loop, &cl, 1 << 20);
    RUN_UNTIL(loop, cl.npause == 1, 5.0);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0);
    CHECK_EQ_INT(ll_transport_is_closing(cl.t), 1);
    CHECK_EQ_INT(bufsize(cl.t), 0);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0); /* twice: nothing more */
    CHECK_EQ_INT(ll_transport_write(cl.t, "x", 1), LL_ECLOSED);
    RUN_UNTIL(loop, cl.nlost == 1, 1.0);
    spin(loop, 3);
    CHECK_LIFECYCLE(&cl, 0);
    CHECK_EQ_INT(cl.nresume, 0); /* no resume for a dropped buffer */
    CHECK_EQ_INT(ll_transport_resume_reading(srv.conns[0].t), 0);
    RUN_UNTIL(loop, srv.conns[0].nlost == 1, 5.0);
    CHECK_EQ_INT(srv.conns[0].bad_order, 0);
    CHECK(srv.conns[0].lost_code == 0 || srv.conns[0].lost_code == -ECONNRESET);
    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* ll_transport_write_async_size: the buffer's size after each write, as
 * ll_transport_get_write_buffer_size tells it; 1 once over the mark. */
static void test_write_async_size(void) {
    ll_loop loop = new_loop();
    struct server srv;
    struct conn cl;
    setup(loop, &srv, &cl);
    static char chunk[256 << 10];
    size_t n = 12345;
    /* The kernel takes a small write whole: nothing buffered. */
    CHECK_EQ_INT(ll_transport_write_async_size(cl.t, "hello", 5, &n), 0);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(ll_transport_write_async_size(cl.t, "!", 1, NULL), 0);
    /* Until the socket refuses: then the size is the buffer's. */
    int rc = 0;
    for (int i = 0; i < 4096 && n == 0; i++) {
        rc = ll_transport_write_async_size(cl.t, chunk, sizeof chunk, &n);
        CHECK(rc == 0 || rc == 1);
    }
    CHECK(n > 0);
    CHECK_EQ_INT(n, bufsize(cl.t));
    /* Over the high-water mark: 1, and the size grows by what is queued. */
    size_t before = n;
    rc = ll_transport_write_async_size(cl.t, chunk, sizeof chunk, &n);
    CHECK_EQ_INT(rc, 1);
    CHECK_EQ_INT(n, before + sizeof chunk);
    /* Bad input: the code, and 0 for the size. */
    n = 7;
    CHECK_EQ_INT(ll_transport_write_async_size(cl.t, NULL, 10, &n), LL_EINVAL);
    CHECK_EQ_INT(n, 0);
    n = 7;
    CHECK_EQ_INT(ll_transport_write_async_size(0xdead, "x", 1, &n), LL_EBADHANDLE);
    CHECK_EQ_INT(n, 0);
    /* The peer reads everything: the buffer drains to 0 again. */
    CHECK_EQ_INT(ll_transport_resume_reading(srv.conns[0].t), 0);
    RUN_UNTIL(loop, bufsize(cl.t) == 0, 10.0);
    CHECK_EQ_INT(ll_transport_write_async_size(cl.t, "x", 1, &n), 0);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0);
    n = 7;
    CHECK_EQ_INT(ll_transport_write_async_size(cl.t, "x", 1, &n), LL_ECLOSED);
    CHECK_EQ_INT(n, 0);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* ll_transport_write_async_packed: the same write as
 * ll_transport_write_async_size, its size and status in one result
 * ((size << 1) | status), or the negative code. */
static void test_write_async_packed(void) {
    ll_loop loop = new_loop();
    struct server srv;
    struct conn cl;
    setup(loop, &srv, &cl);
    static char chunk[256 << 10];
    CHECK(ll_transport_write_async_packed(cl.t, "hello", 5) == 0);
    int64_t r = 0;
    for (int i = 0; i < 4096 && r == 0; i++) {
        r = ll_transport_write_async_packed(cl.t, chunk, sizeof chunk);
        CHECK(r >= 0);
    }
    CHECK(r > 0);
    CHECK_EQ_INT((size_t)(r >> 1), bufsize(cl.t));
    /* Over the high-water mark: status 1, the size grown by the chunk. */
    int64_t before = r >> 1;
    r = ll_transport_write_async_packed(cl.t, chunk, sizeof chunk);
    CHECK_EQ_INT(r & 1, 1);
    CHECK(r >> 1 == before + (int64_t)sizeof chunk);
    CHECK((size_t)(r >> 1) == bufsize(cl.t));
    /* Bad input: the code itself. */
    CHECK(ll_transport_write_async_packed(cl.t, NULL, 10) == LL_EINVAL);
    CHECK(ll_transport_write_async_packed(0xdead, "x", 1) == LL_EBADHANDLE);
    CHECK(ll_transport_write_async_packed(0, "x", 1) == LL_EBADHANDLE);
    /* Drained: 0 again; after abort: LL_ECLOSED. */
    CHECK_EQ_INT(ll_transport_resume_reading(srv.conns[0].t), 0);
    RUN_UNTIL(loop, bufsize(cl.t) == 0, 10.0);
    CHECK(ll_transport_write_async_packed(cl.t, "x", 1) == 0);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0);
    CHECK(ll_transport_write_async_packed(cl.t, "x", 1) == LL_ECLOSED);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_write_async_size);
    RUN_TEST(test_write_async_packed);
    RUN_TEST(test_default_marks);
    RUN_TEST(test_custom_marks);
    RUN_TEST(test_abort_full_buffer);
    return CHECK_REPORT();
}
