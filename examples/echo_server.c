/* SPDX-License-Identifier: MIT */
/* An echo server and its clients in one loop, from the header alone.
 *
 * The server listens on 127.0.0.1 (a free port), gives each connection its
 * own state with ll_transport_set_protocol, and echoes what it reads. Three
 * clients connect, send a few lines, check every byte comes back, then
 * half-close; the server answers EOF by closing, and the loop stops when
 * the last client's LL_CONNECTION_LOST arrives.
 *
 *   asyncio:  loop.create_server(Echo, '127.0.0.1', 0) / loop.create_connection
 *   libuv:    uv_tcp_bind + uv_listen + uv_accept + uv_read_start / uv_write
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libloop.h"

#define NCLIENTS 3
#define NLINES 5

/* ---- the server ---- */

struct conn {
    size_t echoed;
};

static int echo_conn(ll_loop loop, const ll_event *ev, void *arg) {
    struct conn *c = arg;
    (void)loop;
    switch (ev->kind) {
    case LL_DATA_RECEIVED:
        ll_transport_write(ev->transport, ev->data, ev->len);
        c->echoed += ev->len;
        break;
    case LL_EOF_RECEIVED:
        return 0; /* the client is done: close our side too */
    case LL_CONNECTION_LOST:
        printf("server: connection closed after echoing %zu bytes (code %d)\n", c->echoed, ev->code);
        free(c);
        break;
    }
    return 0;
}

/* The listener's protocol sees only LL_CONNECTION_MADE: it hands each new
 * connection a protocol and state of its own. */
static int on_accept(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_CONNECTION_MADE) {
        struct conn *c = calloc(1, sizeof *c);
        ll_transport_set_protocol(ev->transport, echo_conn, c);
    }
    return 0;
}

/* ---- the clients ---- */

struct client {
    int id;
    char sent[256];
    size_t nsent;
    char got[256];
    size_t ngot;
    int done;
};

static int clients_done;

static int client_proto(ll_loop loop, const ll_event *ev, void *arg) {
    struct client *cl = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        for (int i = 0; i < NLINES; i++) {
            char line[32];
            int n = snprintf(line, sizeof line, "client %d line %d\n", cl->id, i);
            memcpy(cl->sent + cl->nsent, line, (size_t)n);
            cl->nsent += (size_t)n;
            ll_transport_write(ev->transport, line, (size_t)n);
        }
        break;
    case LL_DATA_RECEIVED:
        memcpy(cl->got + cl->ngot, ev->data, ev->len);
        cl->ngot += ev->len;
        if (cl->ngot == cl->nsent)
            ll_transport_write_eof(ev->transport); /* all echoed: half-close */
        break;
    case LL_EOF_RECEIVED:
        return 0;
    case LL_CONNECTION_LOST:
        cl->done = 1;
        printf("client %d: %zu bytes sent, %zu echoed, %s\n", cl->id, cl->nsent, cl->ngot,
               cl->ngot == cl->nsent && memcmp(cl->sent, cl->got, cl->ngot) == 0 ? "all match" : "MISMATCH");
        if (++clients_done == NCLIENTS)
            ll_loop_stop(loop);
        break;
    }
    return 0;
}

int main(void) {
    ll_loop loop;
    ll_server server;
    int port, rc;
    if (ll_loop_new(&loop) != 0)
        return 1;
    rc = ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, on_accept, NULL, &server);
    if (rc != 0) {
        fprintf(stderr, "listen: %s\n", ll_strerror(rc));
        return 1;
    }
    ll_server_port(server, &port);
    printf("server: listening on 127.0.0.1:%d\n", port);

    struct client clients[NCLIENTS];
    memset(clients, 0, sizeof clients);
    for (int i = 0; i < NCLIENTS; i++) {
        ll_future connecting;
        clients[i].id = i;
        rc = ll_tcp_connect(loop, "127.0.0.1", port, client_proto, &clients[i], &connecting);
        if (rc != 0) {
            fprintf(stderr, "connect: %s\n", ll_strerror(rc));
            return 1;
        }
        ll_release(connecting); /* the protocol hears everything; the future is not needed */
    }
    ll_loop_run_forever(loop);

    int ok = 1;
    for (int i = 0; i < NCLIENTS; i++)
        ok &= clients[i].done && clients[i].ngot == clients[i].nsent;
    ll_release(server);
    /* Let the server's last LL_CONNECTION_LOST callbacks run before closing. */
    ll_loop_run_once(loop, LL_RUN_NOWAIT);
    ll_loop_run_once(loop, LL_RUN_NOWAIT);
    ll_release(loop);
    printf("echo: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
