/* SPDX-License-Identifier: MIT */
/* File descriptors: readers and writers on pipes and socketpairs, removal,
 * replacement, and the errors for closed fds and regular files. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static ll_loop new_loop(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    return loop;
}

/* The loop still runs a plain callback (after a failed call, say). */
static void flag_cb(ll_loop loop, void *arg) {
    (void)loop;
    *(int *)arg += 1;
}

static void check_still_runs(ll_loop loop) {
    int ran = 0;
    CHECK_EQ_INT(ll_call_soon(loop, flag_cb, &ran, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 1);
}

/* What an io callback saw. */
struct io_log {
    int calls;
    int fd;
    ll_loop loop;
    char buf[64];
    int nbuf;
    int do_read;   /* read what is available */
    int remove;    /* remove itself: 1 reader, 2 writer */
    const char *write_msg;
};

static void reader_cb(ll_loop loop, int fd, void *arg) {
    struct io_log *l = arg;
    l->calls++;
    l->fd = fd;
    l->loop = loop;
    if (l->do_read) {
        ssize_t n = read(fd, l->buf + l->nbuf, sizeof l->buf - 1 - (size_t)l->nbuf);
        if (n > 0)
            l->nbuf += (int)n;
        l->buf[l->nbuf] = '\0';
    }
    if (l->remove == 1)
        CHECK_EQ_INT(ll_remove_reader(loop, fd), 1);
}

static void writer_cb(ll_loop loop, int fd, void *arg) {
    struct io_log *l = arg;
    l->calls++;
    l->fd = fd;
    l->loop = loop;
    if (l->write_msg != NULL)
        CHECK_EQ_INT(write(fd, l->write_msg, strlen(l->write_msg)), (long long)strlen(l->write_msg));
    if (l->remove == 2)
        CHECK_EQ_INT(ll_remove_writer(loop, fd), 1);
}

static void test_pipe_reader(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct io_log r = {0};
    r.do_read = 1;
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &r), 0);

    /* Nothing to read: not called. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 0);

    CHECK_EQ_INT(write(p[1], "hello", 5), 5);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.fd, p[0]);
    CHECK_EQ_INT(r.loop, loop);
    CHECK_EQ_STR(r.buf, "hello");

    /* Drained: not called again. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 1);

    /* Level-triggered: while data stays unread, called every iteration. */
    r.do_read = 0;
    CHECK_EQ_INT(write(p[1], "x", 1), 1);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 4);

    /* LL_RUN_ONCE wakes up for readability. */
    r.do_read = 1;
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(r.calls, 5);
    CHECK_EQ_STR(r.buf, "hellox");

    /* remove returns 1, then 0; a removed reader is not called. */
    CHECK_EQ_INT(ll_remove_writer(loop, p[0]), 0);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 0);
    CHECK_EQ_INT(write(p[1], "y", 1), 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 5);

    /* Added again, it fires again. */
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &r), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 6);
    CHECK_EQ_STR(r.buf, "helloxy");

    /* EOF counts as readable; the reader removes itself from its callback. */
    r.remove = 1;
    CHECK_EQ_INT(close(p[1]), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 7);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.calls, 7);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 0);

    check_still_runs(loop);
    close(p[0]);
    ll_release(loop);
}

/* I/O callbacks queue after the callbacks already ready, before due timers. */
static int seq_log[8];
static int nseq;
static void seq_cb(ll_loop loop, void *arg) {
    (void)loop;
    seq_log[nseq++] = (int)(intptr_t)arg;
}
static void seq_io_cb(ll_loop loop, int fd, void *arg) {
    (void)loop;
    char c;
    CHECK_EQ_INT(read(fd, &c, 1), 1);
    seq_log[nseq++] = (int)(intptr_t)arg;
}

static void test_io_after_ready(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    nseq = 0;
    CHECK_EQ_INT(ll_add_reader(loop, p[0], seq_io_cb, (void *)2), 0);
    CHECK_EQ_INT(write(p[1], "z", 1), 1);
    CHECK_EQ_INT(ll_call_later(loop, 0.0, seq_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, seq_cb, (void *)1, NULL), 0);
    usleep(1000); /* the timer is due */
    /* asyncio's order: what was ready, then I/O events, then due timers. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(nseq, 3);
    CHECK_EQ_INT(seq_log[0], 1);
    CHECK_EQ_INT(seq_log[1], 2);
    CHECK_EQ_INT(seq_log[2], 3);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

static void test_pipe_writer(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct io_log w = {0}, r = {0};
    w.write_msg = "ping";
    w.remove = 2;
    r.do_read = 1;
    CHECK_EQ_INT(ll_add_writer(loop, p[1], writer_cb, &w), 0);
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &r), 0);
    /* Iteration 1: the pipe is writable, the writer writes and removes itself. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(w.fd, p[1]);
    /* Iteration 2: the reader gets the bytes; the writer is gone. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_STR(r.buf, "ping");
    CHECK_EQ_INT(ll_remove_writer(loop, p[1]), 0);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    check_still_runs(loop);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

/* Adding a reader replaces the previous one for that fd. */
static void test_replace(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct io_log a = {0}, b = {0};
    a.do_read = b.do_read = 1;
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &a), 0);
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &b), 0);
    CHECK_EQ_INT(write(p[1], "q", 1), 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(a.calls, 0);
    CHECK_EQ_INT(b.calls, 1);
    /* One reader is registered, so one removal. */
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 0);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

/* Replacing a reader whose event is already queued in this iteration: the
 * old callback does not run (asyncio cancels the old handle). */
struct replacer {
    int fd;
    struct io_log *newer;
};
static void replace_cb(ll_loop loop, void *arg) {
    struct replacer *r = arg;
    CHECK_EQ_INT(ll_add_reader(loop, r->fd, reader_cb, r->newer), 0);
}

static void remove_cb(ll_loop loop, void *arg) {
    CHECK_EQ_INT(ll_remove_reader(loop, *(int *)arg), 1);
}

static void test_replace_or_remove_while_queued(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(write(p[1], "abc", 3), 3);

    struct io_log old = {0}, newer = {0};
    struct replacer rep = {p[0], &newer};
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &old), 0);
    /* The io event is queued after this ready callback, which replaces it. */
    CHECK_EQ_INT(ll_call_soon(loop, replace_cb, &rep, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(old.calls, 0);
    CHECK_EQ_INT(newer.calls, 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(old.calls, 0);
    CHECK_EQ_INT(newer.calls, 1);

    /* Same with removal: the queued event does not run. */
    CHECK_EQ_INT(ll_call_soon(loop, remove_cb, &p[0], NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(newer.calls, 1);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 0);
    check_still_runs(loop);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

/* A socketpair: reader and writer on the same fd, removed independently. */
static void test_socketpair(void) {
    ll_loop loop = new_loop();
    int s[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    struct io_log r0 = {0}, w0 = {0}, r1 = {0};
    r0.do_read = r1.do_read = 1;
    w0.write_msg = "hi";
    w0.remove = 2;
    CHECK_EQ_INT(ll_add_reader(loop, s[0], reader_cb, &r0), 0);
    CHECK_EQ_INT(ll_add_writer(loop, s[0], writer_cb, &w0), 0);
    CHECK_EQ_INT(ll_add_reader(loop, s[1], reader_cb, &r1), 0);

    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(w0.calls, 1);
    CHECK_EQ_INT(r0.calls, 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r1.calls, 1);
    CHECK_EQ_STR(r1.buf, "hi");
    CHECK_EQ_INT(w0.calls, 1); /* the writer removed itself; the reader stayed */

    /* The reader on s[0] survived the writer's removal. */
    CHECK_EQ_INT(write(s[1], "yo", 2), 2);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r0.calls, 1);
    CHECK_EQ_STR(r0.buf, "yo");

    /* Removing the reader leaves a newly added writer working. */
    w0.remove = 0;
    w0.write_msg = NULL;
    CHECK_EQ_INT(ll_add_writer(loop, s[0], writer_cb, &w0), 0);
    CHECK_EQ_INT(ll_remove_reader(loop, s[0]), 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(w0.calls, 2);
    CHECK_EQ_INT(ll_remove_writer(loop, s[0]), 1);
    CHECK_EQ_INT(ll_remove_writer(loop, s[0]), 0);
    CHECK_EQ_INT(ll_remove_reader(loop, s[1]), 1);

    /* Peer closed: the reader sees EOF (read returns 0). */
    r0.calls = 0;
    r0.nbuf = 0;
    CHECK_EQ_INT(ll_add_reader(loop, s[0], reader_cb, &r0), 0);
    close(s[1]);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r0.calls, 1);
    CHECK_EQ_INT(r0.nbuf, 0);
    CHECK_EQ_INT(ll_remove_reader(loop, s[0]), 1);
    close(s[0]);
    check_still_runs(loop);
    ll_release(loop);
}

static void test_bad_fds(void) {
    ll_loop loop = new_loop();
    struct io_log l = {0};
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    close(p[0]);
    close(p[1]);

    /* A closed fd: -EBADF, the loop goes on. */
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &l), -EBADF);
    check_still_runs(loop);
    CHECK_EQ_INT(ll_add_writer(loop, p[1], writer_cb, &l), -EBADF);
    check_still_runs(loop);
    /* A failed add leaves nothing registered. */
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 0);
    CHECK_EQ_INT(ll_remove_writer(loop, p[1]), 0);

    /* Negative and never-opened fds. */
    CHECK_EQ_INT(ll_add_reader(loop, -1, reader_cb, &l), -EBADF);
    CHECK_EQ_INT(ll_add_writer(loop, -5, writer_cb, &l), -EBADF);
    CHECK_EQ_INT(ll_add_reader(loop, 1000000, reader_cb, &l), -EBADF);
    CHECK_EQ_INT(ll_add_reader(loop, 0x7fffffff, reader_cb, &l), -EBADF);
    CHECK_EQ_INT(ll_remove_reader(loop, -1), 0);
    CHECK_EQ_INT(ll_remove_writer(loop, 1000000), 0);
    check_still_runs(loop);

    /* A regular file cannot be watched by epoll: -EPERM. */
    char path[] = "/tmp/libloop_test_fd_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK_EQ_INT(ll_add_reader(loop, fd, reader_cb, &l), -EPERM);
    check_still_runs(loop);
    CHECK_EQ_INT(ll_add_writer(loop, fd, writer_cb, &l), -EPERM);
    check_still_runs(loop);
    CHECK_EQ_INT(ll_remove_reader(loop, fd), 0);
    CHECK_EQ_INT(l.calls, 0);
    close(fd);

    /* NULL callback. */
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_add_reader(loop, p[0], NULL, &l), LL_EINVAL);
    CHECK_EQ_INT(ll_add_writer(loop, p[1], NULL, &l), LL_EINVAL);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 0);
    CHECK_EQ_INT(ll_remove_writer(loop, p[1]), 0);
    check_still_runs(loop);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

/* An fd closed while still registered: removing it is safe (returns 1),
 * and the loop goes on; its number, reused by a new pipe, can be watched. */
static void test_closed_while_registered(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct io_log r = {0};
    r.do_read = 1;
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &r), 0);
    int old_fd = p[0];
    close(p[0]);
    close(p[1]);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    check_still_runs(loop);
    CHECK_EQ_INT(ll_remove_reader(loop, old_fd), 1);
    CHECK_EQ_INT(ll_remove_reader(loop, old_fd), 0);

    /* Close without removing, then the number is reused. */
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &r), 0);
    int reused = p[0];
    close(p[0]);
    close(p[1]);
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(p[0], reused); /* lowest free number */
    struct io_log r2 = {0};
    r2.do_read = 1;
    CHECK_EQ_INT(ll_add_reader(loop, p[0], reader_cb, &r2), 0);
    CHECK_EQ_INT(write(p[1], "n", 1), 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r2.calls, 1);
    CHECK_EQ_STR(r2.buf, "n");
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    close(p[0]);
    close(p[1]);
    check_still_runs(loop);
    ll_release(loop);
}

/* Closing the loop drops its watchers: the fd can be watched by another loop. */
static void test_close_drops_watchers(void) {
    ll_loop a = new_loop(), b = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct io_log ra = {0}, rb = {0};
    rb.do_read = 1;
    CHECK_EQ_INT(ll_add_reader(a, p[0], reader_cb, &ra), 0);
    CHECK_EQ_INT(ll_add_reader(b, p[0], reader_cb, &rb), 0);
    CHECK_EQ_INT(ll_loop_close(a), 0);
    CHECK_EQ_INT(ll_add_reader(a, p[0], reader_cb, &ra), LL_ECLOSED);
    CHECK_EQ_INT(write(p[1], "k", 1), 1);
    CHECK_EQ_INT(ll_loop_run_once(b, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ra.calls, 0);
    CHECK_EQ_INT(rb.calls, 1);
    ll_release(a);
    ll_release(b);
    close(p[0]);
    close(p[1]);
}

static int data_seen(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    if (ev->kind == LL_DATA_RECEIVED)
        *(size_t *)arg += ev->len;
    return 0;
}

static void io_cb(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    (void)arg;
}

/* An fd a transport or a server owns cannot be watched by hand: -EBUSY
 * (asyncio: "File descriptor ... is used by transport"), the owner keeps
 * its registration, and remove finds no reader or writer to remove. */
static void test_owned_fd_is_busy(void) {
    ll_loop loop = new_loop();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    size_t got = 0;
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, data_seen, &got, &t), 0);
    CHECK_EQ_INT(ll_add_reader(loop, sv[0], io_cb, NULL), -EBUSY);
    CHECK_EQ_INT(ll_add_writer(loop, sv[0], io_cb, NULL), -EBUSY);
    CHECK_EQ_INT(ll_remove_reader(loop, sv[0]), 0);
    CHECK_EQ_INT(ll_remove_writer(loop, sv[0]), 0);
    CHECK_EQ_INT(write(sv[1], "abc", 3), 3);
    for (int i = 0; i < 100 && got < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(got, 3);

    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr sa = {.sa_family = AF_UNIX};
    CHECK_EQ_INT(bind(ls, &sa, sizeof(sa_family_t)), 0); /* autobind: an abstract name */
    CHECK_EQ_INT(listen(ls, 1), 0);
    ll_server srv = 0;
    CHECK_EQ_INT(ll_server_open(loop, ls, data_seen, &got, &srv), 0);
    CHECK_EQ_INT(ll_add_reader(loop, ls, io_cb, NULL), -EBUSY);
    CHECK_EQ_INT(ll_add_writer(loop, ls, io_cb, NULL), -EBUSY);
    ll_release(srv);
    ll_transport_abort(t);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    close(sv[1]);
    check_still_runs(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_pipe_reader);
    RUN_TEST(test_io_after_ready);
    RUN_TEST(test_pipe_writer);
    RUN_TEST(test_replace);
    RUN_TEST(test_replace_or_remove_while_queued);
    RUN_TEST(test_socketpair);
    RUN_TEST(test_bad_fds);
    RUN_TEST(test_closed_while_registered);
    RUN_TEST(test_close_drops_watchers);
    RUN_TEST(test_owned_fd_is_busy);
    return CHECK_REPORT();
}
