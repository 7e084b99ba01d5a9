/* SPDX-License-Identifier: MIT */
/* UDP socket options from C: each setter reaches the socket (read back with
 * getsockopt on ll_transport_fd), multicast membership delivers a group's
 * datagrams on loopback until left, source-specific membership, and bad
 * input gets codes while the loop keeps running. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

static int getopt_int(ll_transport t, int level, int opt) {
    int v = -1;
    socklen_t len = sizeof v;
    if (getsockopt(ll_transport_fd(t), level, opt, &v, &len) != 0)
        return -1000;
    return v;
}

static void test_options_reach_socket(void) {
    ll_loop loop = new_loop();
    struct conn a, b;
    conn_init(&a);
    conn_init(&b);
    ll_transport v4 = 0, v6 = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &a, &v4), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "::1", 0, NULL, 0, 0, conn_proto, &b, &v6), 0);

    CHECK_EQ_INT(ll_udp_set_broadcast(v4, 1), 0);
    CHECK_EQ_INT(getopt_int(v4, SOL_SOCKET, SO_BROADCAST), 1);
    CHECK_EQ_INT(ll_udp_set_broadcast(v4, 0), 0);
    CHECK_EQ_INT(getopt_int(v4, SOL_SOCKET, SO_BROADCAST), 0);
    CHECK_EQ_INT(ll_udp_set_ttl(v4, 17), 0);
    CHECK_EQ_INT(getopt_int(v4, IPPROTO_IP, IP_TTL), 17);
    CHECK_EQ_INT(ll_udp_set_ttl(v6, 18), 0);
    CHECK_EQ_INT(getopt_int(v6, IPPROTO_IPV6, IPV6_UNICAST_HOPS), 18);
    CHECK_EQ_INT(ll_udp_set_multicast_ttl(v4, 0), 0);
    CHECK_EQ_INT(getopt_int(v4, IPPROTO_IP, IP_MULTICAST_TTL), 0);
    CHECK_EQ_INT(ll_udp_set_multicast_ttl(v6, 5), 0);
    CHECK_EQ_INT(getopt_int(v6, IPPROTO_IPV6, IPV6_MULTICAST_HOPS), 5);
    CHECK_EQ_INT(ll_udp_set_multicast_loop(v4, 0), 0);
    CHECK_EQ_INT(getopt_int(v4, IPPROTO_IP, IP_MULTICAST_LOOP), 0);
    CHECK_EQ_INT(ll_udp_set_multicast_loop(v6, 0), 0);
    CHECK_EQ_INT(getopt_int(v6, IPPROTO_IPV6, IPV6_MULTICAST_LOOP), 0);
    CHECK_EQ_INT(ll_udp_set_multicast_interface(v4, "127.0.0.1"), 0);
    struct in_addr ifa;
    socklen_t ilen = sizeof ifa;
    CHECK_EQ_INT(getsockopt(ll_transport_fd(v4), IPPROTO_IP, IP_MULTICAST_IF, &ifa, &ilen), 0);
    CHECK_EQ_INT(ifa.s_addr, htonl(INADDR_LOOPBACK));
    CHECK_EQ_INT(ll_udp_set_multicast_interface(v6, "::%lo"), 0);
    CHECK(getopt_int(v6, IPPROTO_IPV6, IPV6_MULTICAST_IF) > 0);
    CHECK_EQ_INT(ll_udp_set_multicast_interface(v4, NULL), 0); /* the kernel's choice again */

    ll_transport_close(v4);
    ll_transport_close(v6);
    RUN_UNTIL(loop, a.nlost && b.nlost, 5.0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_bad_input(void) {
    ll_loop loop = new_loop();
    struct conn a, s;
    conn_init(&a);
    conn_init(&s);
    ll_transport v4 = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &a, &v4), 0);
    CHECK_EQ_INT(ll_udp_set_ttl(v4, 33), 0);
    CHECK_EQ_INT(ll_udp_set_ttl(v4, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_ttl(v4, 256), LL_EINVAL);
    CHECK_EQ_INT(getopt_int(v4, IPPROTO_IP, IP_TTL), 33); /* refused calls change nothing */
    CHECK_EQ_INT(ll_udp_set_multicast_ttl(v4, -1), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_multicast_interface(v4, "not an address"), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_multicast_interface(v4, "::1"), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_membership(v4, NULL, NULL, LL_JOIN), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_membership(v4, "10.0.0.1", NULL, LL_JOIN), LL_EINVAL); /* not a group */
    CHECK_EQ_INT(ll_udp_set_membership(v4, "ff12::1", NULL, LL_JOIN), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_membership(v4, "239.1.1.1", NULL, 7), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_membership(v4, "239.1.1.9", "127.0.0.1", LL_LEAVE), -EADDRNOTAVAIL);
    CHECK_EQ_INT(ll_udp_set_source_membership(v4, "232.1.1.1", NULL, NULL, LL_JOIN), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_source_membership(v4, "232.1.1.1", NULL, "239.1.1.1", LL_JOIN), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_set_broadcast(0, 1), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_udp_set_ttl(loop, 5), LL_EBADHANDLE); /* a loop's id is not a transport's */

    /* A stream transport has no UDP options. */
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ll_transport st = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &s, &st), 0);
    CHECK_EQ_INT(ll_udp_set_broadcast(st, 1), LL_EINVAL);
    ll_transport_close(st);
    close(sv[1]);

    /* After close: LL_ECLOSED while the id lives, LL_EBADHANDLE after release. */
    ll_transport_close(v4);
    CHECK_EQ_INT(ll_udp_set_ttl(v4, 5), LL_ECLOSED);
    RUN_UNTIL(loop, a.nlost && s.nlost, 5.0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static struct sockaddr_in group_addr(const char *group, int port) {
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    inet_pton(AF_INET, group, &sin.sin_addr);
    return sin;
}

static void test_membership_delivers(void) {
    ll_loop loop = new_loop();
    struct conn m, snd;
    conn_init(&m);
    conn_init(&snd);
    ll_transport member = 0, sender = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "0.0.0.0", 0, NULL, 0, 0, conn_proto, &m, &member), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &snd, &sender), 0);
    struct sockaddr_in me;
    uint32_t mlen = sizeof me;
    CHECK_EQ_INT(ll_transport_sockname(member, &me, &mlen), 0);
    int port = ntohs(me.sin_port);
    CHECK_EQ_INT(ll_udp_set_multicast_interface(sender, "127.0.0.1"), 0);

    CHECK_EQ_INT(ll_udp_set_membership(member, "239.255.78.1", "127.0.0.1", LL_JOIN), 0);
    CHECK_EQ_INT(ll_udp_set_membership(member, "239.255.78.1", "127.0.0.1", LL_JOIN), -EADDRINUSE);
    struct sockaddr_in g = group_addr("239.255.78.1", port);
    CHECK_EQ_INT(ll_transport_sendto(sender, "hello", 5, &g, sizeof g), 0);
    RUN_UNTIL(loop, m.ndgram == 1, 5.0);
    CHECK(memcmp(m.buf, "hello", 5) == 0);
    CHECK_EQ_INT(ll_udp_set_membership(member, "239.255.78.1", "127.0.0.1", LL_LEAVE), 0);

    /* Source-specific: joined for 127.0.0.1's datagrams. */
    CHECK_EQ_INT(ll_udp_set_source_membership(member, "232.1.2.4", "127.0.0.1", "127.0.0.1", LL_JOIN), 0);
    struct sockaddr_in ssm = group_addr("232.1.2.4", port);
    CHECK_EQ_INT(ll_transport_sendto(sender, "ssm", 3, &ssm, sizeof ssm), 0);
    RUN_UNTIL(loop, m.ndgram == 2, 5.0);
    CHECK(memcmp(m.buf + 5, "ssm", 3) == 0);
    CHECK_EQ_INT(ll_udp_set_source_membership(member, "232.1.2.4", "127.0.0.1", "127.0.0.1", LL_LEAVE), 0);

    ll_transport_close(member);
    ll_transport_close(sender);
    RUN_UNTIL(loop, m.nlost && snd.nlost, 5.0);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_options_reach_socket);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_membership_delivers);
    return CHECK_REPORT();
}
