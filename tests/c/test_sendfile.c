/* SPDX-License-Identifier: MIT */
/* ll_transport_sendfile: a whole file, a range, errors, a transport that
 * ends first. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

#define FILE_SIZE (3u << 20)

static int temp_file(unsigned char **content) {
    char path[] = "/tmp/ll-sendfile-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    unsigned char *c = malloc(FILE_SIZE);
    for (size_t i = 0; i < FILE_SIZE; i++)
        c[i] = (unsigned char)((i * 131) ^ (i >> 9));
    CHECK_EQ_INT(write(fd, c, FILE_SIZE), FILE_SIZE);
    *content = c;
    return fd;
}

/* Waits for a future and returns its value (or -1 and the code in *code). */
static long long await_future(ll_loop loop, ll_future f, int *code) {
    RUN_UNTIL(loop, ll_future_done(f) == 1, 10.0);
    uintptr_t v = 0;
    *code = ll_future_result(f, &v);
    ll_release(f);
    return *code == 0 ? (long long)v : -1;
}

static void test_sendfile(void) {
    ll_loop loop = new_loop();
    unsigned char *content;
    int fd = temp_file(&content);
    int fds0 = count_fds();
    struct server srv;
    server_init(&srv, 2);
    server_listen(&srv, loop, 0);
    struct conn cl;
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);

    /* Header, the whole file, trailer: in that order on the wire. */
    CHECK_EQ_INT(ll_transport_write(cl.t, "HDR", 3), 0);
    ll_future f = 0, f2 = 0;
    int code = 0;
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), 0);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f2), LL_ESTATE); /* one at a time */
    CHECK_EQ_INT(ll_transport_write(cl.t, "TRL", 3), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), FILE_SIZE);
    uint32_t want = fnv(fnv(fnv(FNV_INIT, "HDR", 3), content, FILE_SIZE), "TRL", 3);
    RUN_UNTIL(loop, srv.n == 1 && srv.conns[0].nbytes == FILE_SIZE + 6, 10.0);
    CHECK_EQ_INT(srv.conns[0].hash, want);

    /* A range: count bytes from offset. */
    struct conn *sc = &srv.conns[0];
    sc->nbytes = 0;
    sc->nbuf = 0;
    sc->hash = FNV_INIT;
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 100, 1000, &f), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), 1000);
    RUN_UNTIL(loop, sc->nbytes == 1000, 5.0);
    CHECK(memcmp(sc->buf, content + 100, 1000) == 0);
    /* Past the end: what there is. */
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, FILE_SIZE - 10, 1000, &f), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), 10);

    /* Bad arguments. */
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, -1, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, -5, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, -1, 0, 0, &f), -EBADF);
    CHECK_EQ_INT(ll_transport_sendfile(0, fd, 0, 0, &f), LL_EBADHANDLE);

    /* The transport ends first: the future fails with LL_ECLOSED. */
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), 0);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), -1);
    CHECK_EQ_INT(code, LL_ECLOSED);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);

    /* After write_eof: LL_ESTATE. */
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    CHECK_EQ_INT(ll_transport_write_eof(cl.t), 0);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), LL_ESTATE);
    ll_transport_close(cl.t);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), LL_EBADHANDLE);

    /* Datagram and read-pipe transports cannot send a file. */
    struct conn u;
    conn_init(&u);
    ll_transport ut = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &u, &ut), 0);
    CHECK_EQ_INT(ll_transport_sendfile(ut, fd, 0, 0, &f), LL_EINVAL);
    ll_transport_close(ut);
    RUN_UNTIL(loop, u.nlost == 1, 5.0);

    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    close(fd);
    free(content);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_sendfile);
    return CHECK_REPORT();
}
