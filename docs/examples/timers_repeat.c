/* SPDX-License-Identifier: MIT */
/* timers_repeat.c — a repeating timer (ll_timer_start): it runs every
 * 10 ms, never early, until its callback stops it; ll_timer_again starts
 * it again, repeat seconds from now. */
#include "must.h"

static ll_handle tick;
static int ticks;
static double start, last;

static void on_tick(ll_loop loop, void *arg) {
    (void)arg;
    last = ll_loop_time(loop) - start;
    EXPECT(last >= 0.02 + 0.01 * ticks); /* first after 20 ms, then every 10 */
    if (++ticks == 3) {
        MUST(ll_handle_cancel(tick)); /* stop it */
        MUST(ll_loop_stop(loop));
    }
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    start = ll_loop_time(loop);
    MUST(ll_timer_start(loop, 0.02, 0.01, on_tick, NULL, &tick));
    MUST(ll_loop_run_forever(loop));
    EXPECT(ticks == 3 && ll_handle_cancelled(tick) == 1);

    MUST(ll_timer_set_repeat(tick, 5));
    MUST(ll_timer_again(tick)); /* running again, 5 s from now */
    EXPECT(ll_timer_when(tick) - ll_loop_time(loop) > 4.9);
    MUST(ll_release(tick)); /* released: stopped for good */
    EXPECT(ll_loop_next_timeout(loop) == -1);
    MUST(ll_release(loop));
    return 0;
}
