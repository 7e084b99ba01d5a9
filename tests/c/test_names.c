/* SPDX-License-Identifier: MIT */
/* ll_getaddrinfo: a lookup, a numeric one with the family given, and its
 * failures. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

static void test_getaddrinfo(void) {
    ll_loop loop = new_loop();
    ll_future f = 0;
    CHECK_EQ_INT(ll_getaddrinfo(loop, "localhost", "80", 0, SOCK_STREAM, 0, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    const struct addrinfo *ai = (const struct addrinfo *)v;
    int n = 0, ok = 1;
    for (; ai != NULL; ai = ai->ai_next, n++) {
        if (ai->ai_family == AF_INET)
            ok &= ntohs(((struct sockaddr_in *)ai->ai_addr)->sin_port) == 80;
        else if (ai->ai_family == AF_INET6)
            ok &= ntohs(((struct sockaddr_in6 *)ai->ai_addr)->sin6_port) == 80;
        else
            ok = 0;
        ok &= ai->ai_socktype == SOCK_STREAM;
    }
    CHECK(n >= 1);
    CHECK(ok);
    ll_release(f); /* frees the list */

    /* Numeric only, family given. */
    CHECK_EQ_INT(ll_getaddrinfo(loop, "::1", NULL, AF_INET6, SOCK_DGRAM, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    ai = (const struct addrinfo *)v;
    CHECK(ai != NULL && ai->ai_family == AF_INET6);
    ll_release(f);

    /* Failures (no name server is asked: numeric-only lookups). */
    CHECK_EQ_INT(ll_getaddrinfo(loop, "not-a-number", NULL, 0, 0, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_ENONAME);
    ll_release(f);
    CHECK_EQ_INT(ll_getaddrinfo(loop, "127.0.0.1", "no-such-service-ll", 0, SOCK_STREAM, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_EINVAL);
    ll_release(f);
    CHECK_EQ_INT(ll_getaddrinfo(loop, NULL, NULL, 0, 0, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_getaddrinfo(loop, "localhost", "80", 0, 0, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_getaddrinfo(0, "localhost", "80", 0, 0, 0, &f), LL_EBADHANDLE);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_getaddrinfo);
    return CHECK_REPORT();
}
