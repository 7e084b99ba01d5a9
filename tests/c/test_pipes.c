/* SPDX-License-Identifier: MIT */
/* Adopting fds with ll_transport_open: a socketpair (stream and datagram),
 * a pipe's read end (data, EOF, then LOST) and write end (write,
 * write_eof, a reader that goes away), and the fds it refuses. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "net_util.h"

static void test_socketpair(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct conn c;
    conn_init(&c);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &c, &t), 0);
    CHECK_EQ_INT(c.nmade, 0); /* LL_CONNECTION_MADE comes in a later callback */
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_transport_fd(t), sv[0]);
    CHECK_EQ_INT(fcntl(sv[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    /* The fd is the transport's now: a second adoption is refused. */
    struct conn c2;
    conn_init(&c2);
    ll_transport t2 = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &c2, &t2), -EBUSY);
    CHECK_EQ_INT(write(sv[1], "in", 2), 2);
    RUN_UNTIL(loop, c.nbytes == 2, 5.0);
    CHECK_EQ_INT(ll_transport_write(t, "out", 3), 0);
    char buf[8] = {0};
    CHECK_EQ_INT(read(sv[1], buf, sizeof buf), 3);
    CHECK_EQ_STR(buf, "out");
    close(sv[1]);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_EQ_INT(c.neof, 1);
    CHECK_LIFECYCLE(&c, 0);
    /* The transport closed the fd it owned. */
    CHECK_EQ_INT(fcntl(sv[0], F_GETFD), -1);

    /* A datagram socketpair as LL_DATAGRAM; a stream socket is not one. */
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    conn_init(&c);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_DATAGRAM, conn_proto, &c, &t), 0);
    CHECK_EQ_INT(write(sv[1], "dg1", 3), 3);
    CHECK_EQ_INT(write(sv[1], "dg2", 3), 3);
    RUN_UNTIL(loop, c.ndgram == 2, 5.0);
    CHECK_EQ_INT(ll_transport_write(t, "back", 4), 0);
    CHECK_EQ_INT(read(sv[1], buf, sizeof buf), 4);
    ll_transport_close(t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&c, 0);
    close(sv[1]);
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_DATAGRAM, conn_proto, &c2, &t2), LL_EINVAL);
    close(sv[0]);
    close(sv[1]);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_pipe_read_end(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct conn c;
    conn_init(&c);
    c.eof_answer = 1; /* a read pipe closes at EOF whatever the answer */
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, p[0], LL_PIPE_READ, conn_proto, &c, &t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_transport_can_write_eof(t), 0);
    CHECK_EQ_INT(ll_transport_write(t, "x", 1), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_write_eof(t), LL_EINVAL);
    uint32_t len = 16;
    char sa[16];
    CHECK_EQ_INT(ll_transport_sockname(t, sa, &len), -ENOTSOCK);
    CHECK_EQ_INT(write(p[1], "piped", 5), 5);
    RUN_UNTIL(loop, c.nbytes == 5, 5.0);
    close(p[1]);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_EQ_INT(c.nev, 4); /* MADE DATA EOF LOST */
    CHECK_EQ_INT(c.kinds[2], LL_EOF_RECEIVED);
    CHECK_LIFECYCLE(&c, 0);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_pipe_write_end(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct conn c;
    conn_init(&c);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, p[1], LL_PIPE_WRITE, conn_proto, &c, &t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_transport_can_write_eof(t), 1);
    CHECK_EQ_INT(ll_transport_is_reading(t), 0);
    /* More than the pipe holds: buffered, flushed as the reader reads. */
    size_t big = 1 << 20, got = 0;
    char *data = malloc(big), *rb = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)(i % 251);
    CHECK_EQ_INT(ll_transport_write(t, data, big), 0);
    size_t pending = 0;
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(t, &pending), 0);
    CHECK(pending > 0);
    CHECK_EQ_INT(ll_transport_write_eof(t), 0); /* closes once flushed */
    CHECK_EQ_INT(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    double dl = now_s() + 5;
    for (;;) {
        ssize_t n = read(p[0], rb + got, big - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0 || now_s() > dl)
            break; /* EOF: the write end closed */
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    }
    CHECK_EQ_INT(got, big);
    CHECK(memcmp(rb, data, big) == 0);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&c, 0);
    close(p[0]);

    /* The reader goes away with nothing buffered: a clean end. */
    CHECK_EQ_INT(pipe(p), 0);
    conn_init(&c);
    CHECK_EQ_INT(ll_transport_open(loop, p[1], LL_PIPE_WRITE, conn_proto, &c, &t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    close(p[0]);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&c, 0);
    free(data);
    free(rb);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void nop_io(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    (void)arg;
}

/* What ll_transport_open refuses, leaving the fd to the host. */
static void test_open_refusals(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    ll_transport t = 0;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ll-test-file-%d", (int)getpid());
    int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    unlink(path);
    CHECK_EQ_INT(ll_transport_open(loop, fd, LL_STREAM, conn_proto, &c, &t), -EPERM);
    CHECK(fcntl(fd, F_GETFD) >= 0); /* not closed: still the host's */
    close(fd);
    CHECK_EQ_INT(ll_transport_open(loop, fd, LL_PIPE_READ, conn_proto, &c, &t), -EBADF);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_add_reader(loop, p[0], nop_io, NULL), 0);
    CHECK_EQ_INT(ll_transport_open(loop, p[0], LL_PIPE_READ, conn_proto, &c, &t), -EBUSY);
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    CHECK_EQ_INT(ll_transport_open(loop, p[0], 0, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_open(loop, p[0], 5, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_open(loop, p[0], LL_DATAGRAM, conn_proto, &c, &t), LL_EINVAL);
    CHECK(fcntl(p[0], F_GETFD) >= 0);
    close(p[0]);
    close(p[1]);
    spin(loop, 2);
    CHECK_EQ_INT(c.nev, 0);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_socketpair);
    RUN_TEST(test_pipe_read_end);
    RUN_TEST(test_pipe_write_end);
    RUN_TEST(test_open_refusals);
    return CHECK_REPORT();
}
