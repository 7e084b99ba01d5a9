/* SPDX-License-Identifier: MIT */
/* transports.c — a TCP echo server and a client on 127.0.0.1: the client
 * writes "ping", then sends a file with ll_transport_sendfile, and closes
 * once everything came back. Then one UDP datagram round trip. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "must.h"

#define FILE_BYTES 100000

/* Server side: every connection echoes what it receives. */
static int echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED)
        MUST(ll_transport_write(ev->transport, ev->data, ev->len));
    return 0; /* LL_EOF_RECEIVED: close our side too */
}

struct client {
    int file_fd;
    size_t received;
    ll_future sent; /* the sendfile's future: bytes sent */
    int lost_code;
};

static int client(ll_loop loop, const ll_event *ev, void *arg) {
    struct client *c = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        MUST(ll_transport_write(ev->transport, "ping", 4));
        MUST(ll_transport_sendfile(ev->transport, c->file_fd, 0, 0, &c->sent));
        break;
    case LL_DATA_RECEIVED:
        c->received += ev->len;
        if (c->received == 4 + FILE_BYTES)
            MUST(ll_transport_close(ev->transport));
        break;
    case LL_CONNECTION_LOST:
        c->lost_code = ev->code;
        MUST(ll_loop_stop(loop));
        break;
    }
    return 0;
}

/* UDP: the server answers each datagram to its sender. */
static int udp_echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATAGRAM_RECEIVED)
        MUST(ll_transport_sendto(ev->transport, ev->data, ev->len, ev->addr, ev->addrlen));
    return 0;
}

static int udp_client(ll_loop loop, const ll_event *ev, void *arg) {
    if (ev->kind == LL_DATAGRAM_RECEIVED) {
        snprintf(arg, 16, "%.*s", (int)ev->len, (const char *)ev->data);
        MUST(ll_loop_stop(loop));
    }
    return 0;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));

    char path[] = "/tmp/libloop-docs-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    unlink(path);
    static char block[FILE_BYTES];
    memset(block, 'x', sizeof block);
    EXPECT(write(fd, block, sizeof block) == FILE_BYTES);

    ll_server server;
    int port;
    MUST(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, echo, NULL, &server));
    MUST(ll_server_port(server, &port));
    struct client c = {.file_fd = fd, .lost_code = 1};
    ll_future connecting;
    MUST(ll_tcp_connect(loop, "127.0.0.1", port, client, &c, &connecting));
    MUST(ll_loop_run_forever(loop));
    EXPECT(c.received == 4 + FILE_BYTES && c.lost_code == 0);
    uintptr_t sent;
    MUST(ll_future_result(c.sent, &sent));
    EXPECT(sent == FILE_BYTES);
    MUST(ll_release(c.sent));
    MUST(ll_release(connecting));
    MUST(ll_release(server)); /* closes the listening socket */
    close(fd);

    /* UDP: a server bound to a free port, a client connected to it. */
    ll_transport us, uc;
    MUST(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, udp_echo, NULL, &us));
    struct sockaddr_storage addr;
    uint32_t len = sizeof addr;
    MUST(ll_transport_sockname(us, &addr, &len));
    char host[] = "127.0.0.1", got[16] = "";
    int uport = ntohs(((struct sockaddr_in *)&addr)->sin_port);
    MUST(ll_udp_open(loop, NULL, 0, host, uport, 0, udp_client, got, &uc));
    MUST(ll_transport_sendto(uc, "hi", 2, NULL, 0));
    MUST(ll_loop_run_forever(loop));
    EXPECT(strcmp(got, "hi") == 0);
    MUST(ll_release(loop)); /* closes both UDP transports */
    printf("transports: %zu bytes echoed over TCP (%lu by sendfile), UDP said %s\n",
           c.received, (unsigned long)sent, got);
    return 0;
}
