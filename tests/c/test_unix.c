/* SPDX-License-Identifier: MIT */
/* Unix stream sockets: a path and an abstract "@name". */
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "net_util.h"

static int unix_listen(struct server *s, ll_loop loop, const char *path) {
    return ll_unix_listen(loop, path, 0, server_proto, s, &s->id);
}

static int unix_connect(ll_loop loop, const char *path, struct conn *c) {
    ll_future f = 0;
    struct connect_wait w = {c, 0, 0};
    int rc = ll_unix_connect(loop, path, conn_proto, c, &f);
    if (rc != 0)
        return rc;
    ll_future_add_done_callback(f, connect_done, &w);
    RUN_UNTIL(loop, w.done, 5.0);
    rc = ll_future_result(f, NULL);
    if (rc == 0)
        CHECK_EQ_INT(w.made_before, 1);
    ll_release(f);
    return rc;
}

/* Echo through a Unix server at path; half-close ends both sides. */
static void echo_over(ll_loop loop, const char *path) {
    struct server srv;
    server_init(&srv, 2);
    srv.tmpl.echo = 1;
    CHECK_EQ_INT(unix_listen(&srv, loop, path), 0);
    int port = -1;
    CHECK_EQ_INT(ll_server_port(srv.id, &port), 0);
    CHECK_EQ_INT(port, 0);
    struct sockaddr_un sun;
    uint32_t len = sizeof sun;
    CHECK_EQ_INT(ll_server_sockname(srv.id, 0, &sun, &len), 0);
    CHECK_EQ_INT(sun.sun_family, AF_UNIX);
    if (path[0] == '@')
        CHECK(sun.sun_path[0] == '\0' && memcmp(sun.sun_path + 1, path + 1, strlen(path) - 1) == 0);
    else
        CHECK_EQ_STR(sun.sun_path, path);

    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(unix_connect(loop, path, &c), 0);
    CHECK_EQ_INT(ll_transport_can_write_eof(c.t), 1);
    len = sizeof sun;
    CHECK_EQ_INT(ll_transport_peername(c.t, &sun, &len), 0);
    CHECK_EQ_INT(sun.sun_family, AF_UNIX);
    CHECK_EQ_INT(ll_transport_write(c.t, "over unix", 9), 0);
    RUN_UNTIL(loop, c.nbytes == 9, 5.0);
    CHECK(memcmp(c.buf, "over unix", 9) == 0);
    CHECK_EQ_INT(ll_transport_write_eof(c.t), 0);
    RUN_UNTIL(loop, c.nlost == 1 && srv.n == 1 && srv.conns[0].nlost == 1, 5.0);
    CHECK_LIFECYCLE(&c, 0);
    CHECK_LIFECYCLE(&srv.conns[0], 0);
    CHECK_EQ_INT(c.neof, 1);
    server_free(&srv, loop);
}

static void test_unix_path(void) {
    ll_loop loop = new_loop();
    char path[64];
    snprintf(path, sizeof path, "/tmp/ll-test-%d.sock", (int)getpid());
    unlink(path);
    int fds0 = count_fds();
    echo_over(loop, path);
    /* The released server left its socket file: a stale one is replaced. */
    struct stat st;
    CHECK_EQ_INT(stat(path, &st), 0);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(unix_connect(loop, path, &c), -ECONNREFUSED);
    echo_over(loop, path);
    unlink(path);
    CHECK_EQ_INT(unix_connect(loop, path, &c), -ENOENT);

    /* Any other file there is in use; a missing directory is ENOENT; a
     * path longer than sun_path is LL_EINVAL. */
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    close(fd);
    struct server srv;
    server_init(&srv, 1);
    CHECK_EQ_INT(unix_listen(&srv, loop, path), -EADDRINUSE);
    unlink(path);
    CHECK_EQ_INT(unix_listen(&srv, loop, "/nonexistent-dir-ll/x.sock"), -ENOENT);
    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    CHECK_EQ_INT(unix_listen(&srv, loop, longp), LL_EINVAL);
    CHECK_EQ_INT(ll_unix_connect(loop, longp, conn_proto, &c, &(ll_future){0}), LL_EINVAL);
    CHECK_EQ_INT(unix_listen(&srv, loop, ""), LL_EINVAL);
    srv.id = 0;
    server_free(&srv, loop);
    CHECK_EQ_INT(c.nev, 0);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_unix_abstract(void) {
    ll_loop loop = new_loop();
    char name[64];
    snprintf(name, sizeof name, "@ll-test-abstract-%d", (int)getpid());
    echo_over(loop, name);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_unix_path);
    RUN_TEST(test_unix_abstract);
    return CHECK_REPORT();
}
