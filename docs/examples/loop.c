/* SPDX-License-Identifier: MIT */
/* loop.c — one iteration runs exactly the callbacks that were ready when it
 * began; ll_loop_stop ends ll_loop_run_forever after the current iteration. */
#include <string.h>

#include "must.h"

static char order[16];

static void log_b(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    strcat(order, "b");
}

static void log_a(ll_loop loop, void *arg) {
    (void)arg;
    strcat(order, "a");
    MUST(ll_call_soon(loop, log_b, NULL, NULL)); /* waits for the next iteration */
}

static void stop(ll_loop loop, void *arg) {
    (void)arg;
    MUST(ll_loop_stop(loop));
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));

    MUST(ll_call_soon(loop, log_a, NULL, NULL));
    MUST(ll_loop_run_once(loop, LL_RUN_NOWAIT)); /* runs a; b is queued */
    EXPECT(strcmp(order, "a") == 0);
    MUST(ll_loop_run_once(loop, LL_RUN_NOWAIT)); /* runs b */
    EXPECT(strcmp(order, "ab") == 0);

    /* run_forever until a timer stops it; the clock is monotonic seconds. */
    double t0 = ll_loop_time(loop);
    MUST(ll_call_later(loop, 0.02, stop, NULL, NULL));
    MUST(ll_loop_run_forever(loop));
    double took = ll_loop_time(loop) - t0;
    EXPECT(took >= 0.02);
    EXPECT(ll_loop_is_running(loop) == 0);

    MUST(ll_loop_close(loop));                   /* drops whatever is pending */
    EXPECT(ll_loop_is_closed(loop) == 1);
    EXPECT(ll_call_soon(loop, log_a, NULL, NULL) == LL_ECLOSED);
    MUST(ll_release(loop));                      /* the id is now stale */
    EXPECT(ll_loop_is_closed(loop) == LL_EBADHANDLE);
    printf("loop: order %s, run_forever stopped after %.3f s\n", order, took);
    return 0;
}
