/* SPDX-License-Identifier: MIT */
/* metrics.c — ll_loop_stats: counters rise by what the loop did, and
 * idle time against running time gives the event loop utilization. */
#include <stdint.h>

#include "must.h"

static void noop(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

static void stop(ll_loop loop, void *arg) {
    (void)arg;
    MUST(ll_loop_stop(loop));
}

static struct ll_loop_stats snapshot(ll_loop loop) {
    struct ll_loop_stats st = {.size = sizeof st}; /* the size first: the struct may grow */
    MUST(ll_loop_stats(loop, &st));
    return st;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    struct ll_loop_stats a = snapshot(loop);

    for (int i = 0; i < 100; i++)
        MUST(ll_call_soon(loop, noop, NULL, NULL));
    MUST(ll_call_later(loop, 0.05, stop, NULL, NULL)); /* then ~50 ms asleep in poll */
    struct ll_loop_stats queued = snapshot(loop);
    EXPECT(queued.ready == 100 && queued.timers == 1);
    MUST(ll_loop_run_forever(loop));

    struct ll_loop_stats b = snapshot(loop);
    uint64_t idle = b.idle_ns - a.idle_ns, busy = (b.running_ns - a.running_ns) - idle;
    double elu = (double)busy / (double)(busy + idle); /* Node's eventLoopUtilization */
    EXPECT(b.callbacks - a.callbacks == 101);          /* the 100 and the timer */
    EXPECT(idle >= 45000000 && elu < 0.5);
    printf("metrics: %llu iterations, %llu callbacks, idle %.1f ms, utilization %.3f\n",
           (unsigned long long)(b.iterations - a.iterations),
           (unsigned long long)(b.callbacks - a.callbacks), idle / 1e6, elu);
    MUST(ll_release(loop));
    return 0;
}
