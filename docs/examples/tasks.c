/* SPDX-License-Identifier: MIT */
/* tasks.c — a future set by a timer, and a task (a step function) that
 * awaits it, sleeps, and returns; ll_run is asyncio.run. */
#include <stdint.h>

#include "must.h"

struct main_state {
    int step;        /* where the "coroutine" is: the code between two awaits */
    ll_future fut;
};

static void finish(ll_loop loop, void *arg) {
    (void)loop;
    MUST(ll_future_set_result(*(ll_future *)arg, 41, NULL));
}

static void main_step(ll_task task, void *arg) {
    struct main_state *s = arg;
    ll_loop loop;
    MUST(ll_future_get_loop(task, &loop));
    switch (s->step++) {
    case 0: /* fut = loop.create_future(); loop.call_later(0.01, ...); await fut */
        MUST(ll_future_new(loop, &s->fut));
        MUST(ll_call_later(loop, 0.01, finish, &s->fut, NULL));
        MUST(ll_task_await(task, s->fut));
        return;
    case 1: { /* value = fut.result(); await asyncio.sleep(0.01) */
        ll_future woke;
        MUST(ll_task_awaited(task, &woke));
        EXPECT(woke == s->fut);
        uintptr_t v;
        MUST(ll_future_result(s->fut, &v));
        EXPECT(v == 41);
        MUST(ll_release(s->fut));
        MUST(ll_task_sleep(task, 0.01));
        return;
    }
    default: /* return 42 */
        MUST(ll_task_return(task, 42, NULL));
    }
}

int main(void) {
    struct main_state s = {0};
    uintptr_t result = 0;
    MUST(ll_run(main_step, &s, &result));
    EXPECT(result == 42 && s.step == 3);
    printf("tasks: main returned %lu after %d steps\n", (unsigned long)result, s.step);
    return 0;
}
