/* SPDX-License-Identifier: MIT */
/* Faults that end one transport alone: refused, a name that does not
 * resolve, peer reset, writing to a vanished peer (EPIPE, the process
 * survives), ll_release from inside a callback, and EMFILE while accepting
 * (in a re-executed child with a low RLIMIT_NOFILE), and an unreachable
 * network (in a re-executed child in a network namespace of its own, whose
 * loopback is down: no packet leaves it). Each leaves the loop running and
 * no fd behind. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net_util.h"

/* A plain listening socket on 127.0.0.1 (the test plays the peer). */
static int raw_listener(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK_EQ_INT(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    CHECK_EQ_INT(listen(fd, 16), 0);
    socklen_t len = sizeof sin;
    getsockname(fd, (struct sockaddr *)&sin, &len);
    *port = ntohs(sin.sin_port);
    return fd;
}

/* A port on 127.0.0.1 nobody listens on: bound, then closed. */
static int free_port(void) {
    int port;
    int fd = raw_listener(&port);
    close(fd);
    return port;
}

static void test_refused_and_noname(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    int fds0 = count_fds();
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", free_port(), &c), -ECONNREFUSED);
    CHECK_EQ_INT(connect_tcp(loop, "::1", free_port(), &c), -ECONNREFUSED);
    /* "localhost" is tried on every address; the last failure is reported. */
    CHECK_EQ_INT(connect_tcp(loop, "localhost", free_port(), &c), -ECONNREFUSED);
    /* Not a valid DNS name: fails locally, without asking any server. */
    CHECK_EQ_INT(connect_tcp(loop, "no..such..host", 80, &c), LL_ENONAME);
    ll_server s = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "no..such..host", 0, 0, 0, conn_proto, &c, &s), LL_ENONAME);
    CHECK_EQ_INT(c.nev, 0);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* The peer sets SO_LINGER 0 and closes: a reset. */
static void test_peer_reset(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    int port, lfd = raw_listener(&port);
    struct conn c, other;
    conn_init(&c);
    conn_init(&other);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &c), 0);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &other), 0);
    int peer = accept(lfd, NULL, NULL);
    int peer2 = accept(lfd, NULL, NULL);
    CHECK(peer >= 0 && peer2 >= 0);
    struct linger lg = {1, 0};
    CHECK_EQ_INT(setsockopt(peer, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    close(peer);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&c, -ECONNRESET);
    /* The other connection is untouched. */
    CHECK_EQ_INT(write(peer2, "ok", 2), 2);
    RUN_UNTIL(loop, other.nbytes == 2, 5.0);
    CHECK_EQ_INT(other.nlost, 0);
    ll_transport_close(other.t);
    RUN_UNTIL(loop, other.nlost == 1, 5.0);
    close(peer2);
    close(lfd);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* Writes after the peer's reset, before the loop runs again: the first one
 * meets the reset (the transport ends), the later ones find it lost. None
 * is an error of the call: a write error ends the transport with
 * LL_CONNECTION_LOST, and writes after a loss the host did not cause are
 * dropped with 0 (asyncio's write counts them and returns); LL_ECLOSED is
 * for after the host's own close or abort. The binding API
 * (ll_transport_write_async*) tells a binding LL_ECLOSED, so it can count
 * them as asyncio does. */
static void test_write_after_reset(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    int port, lfd = raw_listener(&port);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &c), 0);
    int peer = accept(lfd, NULL, NULL);
    struct linger lg = {1, 0};
    CHECK_EQ_INT(setsockopt(peer, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    close(peer); /* RST */
    usleep(2000);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(ll_transport_write(c.t, "data", 4), 0);
    CHECK_EQ_INT(ll_transport_sendto(c.t, "data", 4, NULL, 0), 0);
    CHECK_EQ_INT(ll_transport_is_closing(c.t), 1);
    CHECK_EQ_INT(ll_transport_write_async(c.t, "data", 4), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_write_async_packed(c.t, "data", 4), LL_ECLOSED);
    /* Refusals that are not about the loss stay. */
    CHECK_EQ_INT(ll_transport_write(c.t, NULL, 4), LL_EINVAL);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK(c.lost_code == -ECONNRESET || c.lost_code == -EPIPE);
    CHECK_EQ_INT(c.bad_order, 0);
    CHECK_EQ_INT(c.nlost, 1);
    CHECK_EQ_INT(ll_transport_write(c.t, "x", 1), LL_EBADHANDLE);
    close(lfd);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* The host's own close or abort: later writes are LL_ECLOSED (the header's
 * contract), also once the peer has reset meanwhile. */
static void test_write_after_host_close(void) {
    ll_loop loop = new_loop();
    int port, lfd = raw_listener(&port);
    struct conn c, d;
    conn_init(&c);
    conn_init(&d);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &c), 0);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &d), 0);
    int p1 = accept(lfd, NULL, NULL), p2 = accept(lfd, NULL, NULL);
    CHECK_EQ_INT(ll_transport_abort(c.t), 0);
    CHECK_EQ_INT(ll_transport_write(c.t, "x", 1), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_close(d.t), 0);
    CHECK_EQ_INT(ll_transport_write(d.t, "x", 1), LL_ECLOSED);
    RUN_UNTIL(loop, c.nlost == 1 && d.nlost == 1, 5.0);
    CHECK_EQ_INT(c.lost_code, 0);
    CHECK_EQ_INT(d.lost_code, 0);
    close(p1);
    close(p2);
    close(lfd);
    ll_release(loop);
}

/* The peer closes; we keep our side open (EOF answered 1) and write until
 * the kernel says the peer is gone: EPIPE or ECONNRESET ends the
 * transport, never the process (SIGPIPE stays at its default). */
static void test_write_to_vanished_peer(void) {
    signal(SIGPIPE, SIG_DFL);
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    int port, lfd = raw_listener(&port);
    struct conn c;
    conn_init(&c);
    c.eof_answer = 1;
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &c), 0);
    int peer = accept(lfd, NULL, NULL);
    close(peer);
    RUN_UNTIL(loop, c.neof == 1, 5.0);
    static char chunk[4096];
    for (int i = 0; i < 1000 && c.nlost == 0; i++) {
        int rc = ll_transport_write(c.t, chunk, sizeof chunk);
        CHECK(rc == 0 || rc == LL_ECLOSED);
        spin(loop, 1);
    }
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK(c.lost_code == -EPIPE || c.lost_code == -ECONNRESET);
    CHECK_EQ_INT(c.bad_order, 0);
    CHECK_EQ_INT(ll_transport_write(c.t, "x", 1), LL_EBADHANDLE);
    close(lfd);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* ll_release of a transport from inside its own callback aborts it: one
 * LL_CONNECTION_LOST follows; inside LL_CONNECTION_LOST the id is still
 * valid, after it the id is stale. */
static int release_rc, release_in_lost_rc, close_in_lost_rc;
static int release_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (ev->kind == LL_DATA_RECEIVED)
        release_rc = ll_release(c->t);
    if (ev->kind == LL_CONNECTION_LOST) {
        close_in_lost_rc = ll_transport_close(c->t);
        release_in_lost_rc = ll_release(c->t);
    }
    return 0;
}

static void test_release_from_callback(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server srv;
    server_init(&srv, 1);
    srv.tmpl.hook = release_hook;
    server_listen(&srv, loop, 0);
    struct conn c;
    conn_init(&c);
    release_rc = release_in_lost_rc = close_in_lost_rc = 99;
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &c), 0);
    CHECK_EQ_INT(ll_transport_write(c.t, "bye", 3), 0);
    RUN_UNTIL(loop, srv.n == 1 && srv.conns[0].nlost == 1, 5.0);
    spin(loop, 3);
    CHECK_EQ_INT(release_rc, 0);
    CHECK_EQ_INT(close_in_lost_rc, 0);
    CHECK_EQ_INT(release_in_lost_rc, 0);
    CHECK_LIFECYCLE(&srv.conns[0], 0);
    CHECK_EQ_INT(ll_release(srv.conns[0].t), LL_EBADHANDLE);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_EQ_INT(c.bad_order, 0);
    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* ---- EMFILE on accept, in a child process ---- */

static int exc_count, exc_code;
static void exc_handler(ll_loop loop, const ll_error_context *ctx, void *arg) {
    (void)loop;
    (void)arg;
    exc_count++;
    exc_code = ctx->code;
}

static int emfile_child(void) {
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_exception_handler(loop, exc_handler, NULL), 0);
    struct server srv;
    server_init(&srv, 4);
    srv.tmpl.echo = 1;
    server_listen(&srv, loop, 0);
    struct conn a, b;
    conn_init(&a);
    conn_init(&b);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &a), 0);
    RUN_UNTIL(loop, srv.n == 1, 5.0);

    /* Use every fd but one; the client socket of b takes that one, so the
     * server's accept fails with EMFILE. */
    int hog[4096], nhog = 0;
    for (;;) {
        int fd = dup(0);
        if (fd < 0) {
            CHECK_EQ_INT(errno, EMFILE);
            break;
        }
        hog[nhog++] = fd;
        if (nhog == 4096)
            break;
    }
    CHECK(nhog > 0 && nhog < 4096);
    close(hog[--nhog]);
    ll_future f = 0;
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", srv.port, conn_proto, &b, &f), 0);
    RUN_UNTIL(loop, b.nmade == 1 && exc_count >= 1, 5.0);
    CHECK_EQ_INT(exc_code, -EMFILE);
    CHECK_EQ_INT(srv.n, 1);
    /* The open connection is served meanwhile. */
    CHECK_EQ_INT(ll_transport_write(a.t, "still here", 10), 0);
    RUN_UNTIL(loop, a.nbytes == 10, 5.0);
    /* Free the fds: within the retry delay (1 s) b is accepted and echoed. */
    for (int i = 0; i < nhog; i++)
        close(hog[i]);
    CHECK_EQ_INT(ll_transport_write(b.t, "late", 4), 0);
    RUN_UNTIL(loop, srv.n == 2 && b.nbytes == 4, 5.0);
    CHECK(memcmp(b.buf, "late", 4) == 0);
    ll_release(f);
    ll_transport_close(a.t);
    ll_transport_close(b.t);
    RUN_UNTIL(loop, a.nlost && b.nlost, 5.0);
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
    return CHECK_REPORT();
}

/* Runs this binary again as `self mode` with RLIMIT_NOFILE nofile (0: as
 * is) and SIGPIPE at its default; returns the wait status. */
static int run_child(const char *mode, rlim_t nofile) {
    pid_t pid = fork();
    if (pid == 0) {
        if (strcmp(mode, "unreach-child") == 0 && unshare(CLONE_NEWNET) != 0)
            _exit(77); /* no CAP_SYS_ADMIN: the caller says it skipped */
        if (nofile) {
            struct rlimit rl;
            getrlimit(RLIMIT_NOFILE, &rl);
            /* The hard limit too: the Go runtime raises the soft limit to
             * the hard one when it starts. */
            rl.rlim_cur = rl.rlim_max = nofile;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        signal(SIGPIPE, SIG_DFL);
        char *argv[] = {"/proc/self/exe", (char *)mode, NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_emfile_on_accept(void) {
    int status = run_child("emfile-child", 64);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
}

/* A pipe's write end whose read end is closed: the write fails with EPIPE
 * and the process must survive with SIGPIPE at its default disposition. */
static int sigpipe_child(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    struct conn c;
    conn_init(&c);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, p[1], LL_PIPE_WRITE, conn_proto, &c, &t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    close(p[0]);
    CHECK_EQ_INT(ll_transport_write(t, "x", 1), 0); /* the error ends the transport */
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&c, -EPIPE);
    STILL_RUNS(loop);
    ll_release(loop);
    return CHECK_REPORT();
}

static void test_pipe_epipe_no_sigpipe_death(void) {
    int status = run_child("sigpipe-child", 0);
    if (WIFSIGNALED(status))
        fprintf(stderr, "child killed by signal %d (%s) writing to a broken pipe\n", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
}

/* In a network namespace of its own the loopback is down: connecting to
 * 127.0.0.1 fails with -ENETUNREACH, the future alone, the loop goes on. */
static int unreach_child(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", 80, &c), -ENETUNREACH);
    CHECK_EQ_INT(c.nev, 0);
    STILL_RUNS(loop);
    ll_release(loop);
    return CHECK_REPORT();
}

static void test_unreachable(void) {
    int status = run_child("unreach-child", 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        printf("test_unreachable: skipped (unshare(CLONE_NEWNET) needs root)\n");
        return;
    }
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "emfile-child") == 0)
        return emfile_child();
    if (argc > 1 && strcmp(argv[1], "sigpipe-child") == 0)
        return sigpipe_child();
    if (argc > 1 && strcmp(argv[1], "unreach-child") == 0)
        return unreach_child();
    RUN_TEST(test_refused_and_noname);
    RUN_TEST(test_peer_reset);
    RUN_TEST(test_write_after_reset);
    RUN_TEST(test_write_after_host_close);
    RUN_TEST(test_write_to_vanished_peer);
    RUN_TEST(test_release_from_callback);
    RUN_TEST(test_emfile_on_accept);
    RUN_TEST(test_pipe_epipe_no_sigpipe_death);
    RUN_TEST(test_unreachable);
    return CHECK_REPORT();
}
