/* SPDX-License-Identifier: MIT */
/* ll_tcp_listen on every interface (host NULL) is all or nothing, as
 * asyncio's create_server: when any of its sockets cannot bind (the port
 * is taken on one family) the call fails with that error and leaves no
 * socket open; it never serves on half of them. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

/* A listening socket on addr (IPv4 or IPv6, v6only), no SO_REUSEADDR or
 * SO_REUSEPORT: whoever binds its port on the same family's wildcard gets
 * EADDRINUSE. Returns the fd and the port, or -1. */
static int occupy(int family, const char *addr, int *port) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        sin->sin_family = AF_INET;
        inet_pton(AF_INET, addr, &sin->sin_addr);
        len = sizeof *sin;
    } else {
        int on = 1;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        sin6->sin6_family = AF_INET6;
        inet_pton(AF_INET6, addr, &sin6->sin6_addr);
        len = sizeof *sin6;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    getsockname(fd, (struct sockaddr *)&ss, &len);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

static void listen_all_fails(int family, const char *addr) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    int port = 0;
    int fd = occupy(family, addr, &port);
    if (fd < 0) {
        printf("  no %s here: skipped\n", addr);
        check_passed++;
        ll_release(loop);
        return;
    }
    int fds0 = count_fds();
    for (int flags = 0; flags <= LL_REUSE_PORT; flags++) {
        ll_server s = 0;
        CHECK_EQ_INT(ll_tcp_listen(loop, NULL, port, 0, flags, conn_proto, &c, &s), -EADDRINUSE);
        CHECK_EQ_INT(s, 0);
        CHECK_EQ_INT(ll_tcp_listen(loop, "", port, 0, flags, conn_proto, &c, &s), -EADDRINUSE);
        CHECK_EQ_INT(s, 0);
        spin(loop, 2);
        CHECK_EQ_INT(count_fds(), fds0); /* nothing left open */
    }
    close(fd);
    /* Once the port is free, both families are served. */
    ll_server s = 0;
    int rc = ll_tcp_listen(loop, NULL, port, 0, 0, conn_proto, &c, &s);
    if (rc == -EADDRINUSE) { /* (someone else took the freed port meanwhile) */
        check_passed++;
    } else {
        CHECK_EQ_INT(rc, 0);
        CHECK(ll_server_num_sockets(s) >= 1);
        ll_release(s);
    }
    spin(loop, 2);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* 127.0.0.1:P is taken: the IPv4 wildcard cannot bind P, the IPv6 one
 * (v6only) could; the call fails as a whole. */
static void test_ipv4_taken(void) { listen_all_fails(AF_INET, "127.0.0.1"); }

/* [::1]:P is taken: the other way round. */
static void test_ipv6_taken(void) { listen_all_fails(AF_INET6, "::1"); }

/* port 0: every socket shares the port the first one got. */
static void test_any_port_shared(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    for (int i = 0; i < 20; i++) {
        ll_server s = 0;
        CHECK_EQ_INT(ll_tcp_listen(loop, NULL, 0, 0, 0, conn_proto, &c, &s), 0);
        int n = ll_server_num_sockets(s);
        CHECK(n >= 1);
        int port0 = -1;
        for (int k = 0; k < n; k++) {
            struct sockaddr_storage ss;
            uint32_t len = sizeof ss;
            CHECK_EQ_INT(ll_server_sockname(s, (size_t)k, &ss, &len), 0);
            int p = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                  : ((struct sockaddr_in6 *)&ss)->sin6_port);
            if (port0 < 0)
                port0 = p;
            CHECK_EQ_INT(p, port0);
        }
        ll_release(s);
    }
    spin(loop, 2);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_ipv4_taken);
    RUN_TEST(test_ipv6_taken);
    RUN_TEST(test_any_port_shared);
    return CHECK_REPORT();
}
