/* SPDX-License-Identifier: MIT */
/* timers.c — call_soon, call_later, call_at, cancel; equal deadlines keep
 * their scheduling order and a timer never runs early. */
#include <math.h>
#include <string.h>

#include "must.h"

static char order[16];
static double fired_at;

static void mark(ll_loop loop, void *arg) {
    strcat(order, arg);
    fired_at = ll_loop_time(loop);
}

static void stop(ll_loop loop, void *arg) {
    (void)arg;
    MUST(ll_loop_stop(loop));
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    double start = ll_loop_time(loop);

    ll_handle cancelled;
    MUST(ll_call_later(loop, 0.01, mark, "1", NULL));
    MUST(ll_call_later(loop, 0.01, mark, "2", NULL));  /* same deadline: after "1" */
    MUST(ll_call_later(loop, 0.005, mark, "X", &cancelled));
    MUST(ll_call_at(loop, start + 0.02, mark, "3", NULL));
    MUST(ll_call_soon(loop, mark, "0", NULL));        /* next iteration, before any timer */
    EXPECT(ll_timer_when(cancelled) >= start + 0.005);
    MUST(ll_handle_cancel(cancelled));
    EXPECT(ll_handle_cancelled(cancelled) == 1);
    MUST(ll_release(cancelled));                      /* our reference to the handle */

    MUST(ll_call_later(loop, 0.03, stop, NULL, NULL));
    MUST(ll_loop_run_forever(loop));
    EXPECT(strcmp(order, "0123") == 0);
    EXPECT(fired_at >= start + 0.02);                 /* never early */
    EXPECT(ll_call_later(loop, NAN, mark, "", NULL) == LL_EINVAL);
    MUST(ll_release(loop));
    printf("timers: ran %s in order\n", order);
    return 0;
}
