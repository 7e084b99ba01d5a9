/* SPDX-License-Identifier: MIT */
/* names.c — both directions of name resolution, without blocking the
 * loop: ll_getaddrinfo turns "127.0.0.1" and port "8080" into addresses,
 * ll_getnameinfo turns the first one back into "127.0.0.1" and "8080".
 * Numeric flags keep it off the network so the example runs anywhere. */
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include "must.h"

static void wait_done(ll_loop loop, ll_future f) {
    while (ll_future_done(f) == 0)
        MUST(ll_loop_run_once(loop, LL_RUN_ONCE));
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));

    ll_future fa;
    MUST(ll_getaddrinfo(loop, "127.0.0.1", "8080", AF_INET, SOCK_STREAM, AI_NUMERICHOST | AI_NUMERICSERV, &fa));
    wait_done(loop, fa);
    uintptr_t v;
    MUST(ll_future_result(fa, &v));
    const struct addrinfo *ai = (const struct addrinfo *)v; /* the future's until released */

    ll_future fn;
    MUST(ll_getnameinfo(loop, ai->ai_addr, ai->ai_addrlen, NI_NUMERICHOST | NI_NUMERICSERV, &fn));
    MUST(ll_release(fa)); /* getnameinfo copied the address */
    wait_done(loop, fn);
    MUST(ll_future_result(fn, &v));
    const char *host = (const char *)v, *service = host + strlen(host) + 1;
    EXPECT(strcmp(host, "127.0.0.1") == 0 && strcmp(service, "8080") == 0);
    printf("%s port %s\n", host, service);
    MUST(ll_release(fn));
    MUST(ll_loop_close(loop));
    return 0;
}
