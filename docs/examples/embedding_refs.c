/* SPDX-License-Identifier: MIT */
/* embedding.md's references example: ll_loop_run(LL_RUN_DEFAULT) returns
 * when the last referenced thing is done; an unreferenced repeating timer
 * (a heartbeat) still ticks meanwhile but does not keep the loop;
 * ll_loop_walk lists what is left. */
#include "must.h"

static int ticks, done;
static void heartbeat(ll_loop loop, void *arg) { (void)loop, (void)arg, ticks++; }
static void work(ll_loop loop, void *arg) { (void)loop, (void)arg, done = 1; }

static int list(ll_loop loop, uint64_t id, int kind, void *arg) {
    (void)loop;
    printf("live: id %#llx, kind %d\n", (unsigned long long)id, kind);
    *(uint64_t *)arg = id;
    return 0; /* nonzero would stop the walk */
}

int main(void) {
    ll_loop loop;
    ll_handle beat;
    MUST(ll_loop_new(&loop));
    MUST(ll_timer_start(loop, 0.005, 0.005, heartbeat, NULL, &beat));
    MUST(ll_unref(beat));                   /* ticks, but keeps nothing alive */
    MUST(ll_call_later(loop, 0.05, work, NULL, NULL));
    EXPECT(ll_loop_run(loop, LL_RUN_DEFAULT) == 0); /* returns once work ran */
    EXPECT(done && ticks >= 5);

    uint64_t seen = 0;
    MUST(ll_loop_walk(loop, list, &seen));  /* the heartbeat is still armed */
    EXPECT(seen == beat);
    EXPECT(ll_has_ref(beat) == 0);
    MUST(ll_release(beat));                 /* a repeating timer's release stops it */
    MUST(ll_release(loop));
    return 0;
}
