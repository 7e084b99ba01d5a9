/* SPDX-License-Identifier: MIT */
/* udp.c — multicast on loopback: a member joins 239.255.80.1 on 127.0.0.1,
 * a sender picks 127.0.0.1 as its multicast interface and sends one
 * datagram to the group; the member hears it, leaves, and both close. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "must.h"

struct member {
    char got[64];
    int ngot;
};

static int on_member(ll_loop loop, const ll_event *ev, void *arg) {
    struct member *m = arg;
    if (ev->kind == LL_DATAGRAM_RECEIVED && ev->len < sizeof m->got) {
        memcpy(m->got, ev->data, ev->len);
        m->ngot++;
        MUST(ll_loop_stop(loop));
    }
    return 0;
}

static int quiet(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop, (void)ev, (void)arg;
    return 0;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    struct member m = {0};
    ll_transport member, sender;
    MUST(ll_udp_open(loop, "0.0.0.0", 0, NULL, 0, 0, on_member, &m, &member));
    MUST(ll_udp_set_membership(member, "239.255.80.1", "127.0.0.1", LL_JOIN));

    MUST(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, quiet, NULL, &sender));
    MUST(ll_udp_set_multicast_interface(sender, "127.0.0.1"));
    MUST(ll_udp_set_multicast_ttl(sender, 1)); /* stay on this network */

    struct sockaddr_in me;
    uint32_t len = sizeof me;
    MUST(ll_transport_sockname(member, &me, &len));
    struct sockaddr_in group = {.sin_family = AF_INET, .sin_port = me.sin_port};
    inet_pton(AF_INET, "239.255.80.1", &group.sin_addr);
    MUST(ll_transport_sendto(sender, "hello, group", 12, &group, sizeof group));
    MUST(ll_loop_run_forever(loop));
    EXPECT(m.ngot == 1 && strcmp(m.got, "hello, group") == 0);
    printf("member heard: %s\n", m.got);

    MUST(ll_udp_set_membership(member, "239.255.80.1", "127.0.0.1", LL_LEAVE));
    MUST(ll_transport_close(member));
    MUST(ll_transport_close(sender));
    MUST(ll_loop_close(loop));
    return 0;
}
