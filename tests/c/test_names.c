/* SPDX-License-Identifier: MIT */
/* ll_getaddrinfo: a lookup, a numeric one with the family given, and its
 * failures; ll_getnameinfo: numeric and named, its failures; lookups run
 * on a pool of their own, so a busy executor does not hold them up. */
#include <arpa/inet.h>
#include <stdatomic.h>
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

static void test_getnameinfo(void) {
    ll_loop loop = new_loop();
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(8080)};
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    ll_future f = 0;
    CHECK_EQ_INT(ll_getnameinfo(loop, &sin, sizeof sin, NI_NUMERICHOST | NI_NUMERICSERV, &f), 0);
    memset(&sin, 0xff, sizeof sin); /* the call copied it */
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    const char *host = (const char *)v;
    CHECK(strcmp(host, "127.0.0.1") == 0);
    CHECK(strcmp(host + strlen(host) + 1, "8080") == 0);
    ll_release(f); /* frees the names */

    /* IPv6 loopback by name: /etc/hosts or the resolver calls it something. */
    struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(22), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    CHECK_EQ_INT(ll_getnameinfo(loop, &s6, sizeof s6, NI_NUMERICSERV, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    host = (const char *)v;
    CHECK(strlen(host) > 0);
    CHECK(strcmp(host + strlen(host) + 1, "22") == 0);
    ll_release(f);

    /* Failures: an unknown family; bad arguments. */
    struct sockaddr_in bad = {.sin_family = 255};
    CHECK_EQ_INT(ll_getnameinfo(loop, &bad, sizeof bad, 0, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_EINVAL);
    ll_release(f);
    CHECK_EQ_INT(ll_getnameinfo(loop, NULL, 16, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_getnameinfo(loop, &sin, 0, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_getnameinfo(loop, &sin, 4096, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_getnameinfo(loop, &s6, sizeof s6, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_getnameinfo(0, &s6, sizeof s6, 0, &f), LL_EBADHANDLE);
    STILL_RUNS(loop);
    ll_release(loop);
}

static atomic_int release_work;

static uintptr_t blocking_work(void *arg, int *err) {
    (void)arg;
    (void)err;
    while (!atomic_load(&release_work))
        usleep(1000);
    return 0;
}

static void test_lookups_not_behind_executor(void) {
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_executor_workers(loop, 1), 0);
    ll_future busy[3], f = 0;
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_run_in_executor(loop, blocking_work, NULL, &busy[i]), 0);
    /* The executor's one worker is stuck; lookups still complete. */
    CHECK_EQ_INT(ll_getaddrinfo(loop, "127.0.0.1", NULL, 0, 0, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), 0);
    ll_release(f);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    CHECK_EQ_INT(ll_getnameinfo(loop, &sin, sizeof sin, NI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), 0);
    ll_release(f);
    CHECK_EQ_INT(ll_future_done(busy[0]), 0);
    atomic_store(&release_work, 1);
    RUN_UNTIL(loop, ll_future_done(busy[2]) == 1, 5.0);
    for (int i = 0; i < 3; i++)
        ll_release(busy[i]);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_getaddrinfo);
    RUN_TEST(test_getnameinfo);
    RUN_TEST(test_lookups_not_behind_executor);
    return CHECK_REPORT();
}
