/* SPDX-License-Identifier: MIT */
/* executor.c — blocking work on the loop's thread pool: ll_run_in_executor
 * gives a future; ll_queue_work (libuv's uv_queue_work) calls back instead. */
#include <stdint.h>
#include <unistd.h>

#include "must.h"

static uintptr_t slow_square(void *arg, int *err) {
    (void)err;                          /* set *err non-zero to fail the future */
    usleep(10000);                      /* blocking: fine on a worker thread */
    uintptr_t x = (uintptr_t)arg;
    return x * x;
}

struct job {
    int input, output, done;
};

static void work(void *arg) {           /* worker thread */
    struct job *j = arg;
    j->output = j->input + 1;
}

static void after(ll_loop loop, void *arg) { /* loop thread */
    (void)loop;
    ((struct job *)arg)->done = 1;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    MUST(ll_loop_set_executor_workers(loop, 2));

    ll_future fut;
    MUST(ll_run_in_executor(loop, slow_square, (void *)(uintptr_t)12, &fut));
    struct job j = {.input = 6};
    MUST(ll_queue_work(loop, work, after, &j));

    MUST(ll_loop_run_until_complete(loop, fut));
    uintptr_t v;
    MUST(ll_future_result(fut, &v));
    EXPECT(v == 144);
    while (!j.done)
        MUST(ll_loop_run_once(loop, LL_RUN_ONCE));
    EXPECT(j.output == 7);

    ll_future down;                     /* loop.shutdown_default_executor() */
    MUST(ll_loop_shutdown_default_executor(loop, &down));
    MUST(ll_loop_run_until_complete(loop, down));
    ll_future refused = 0;
    EXPECT(ll_run_in_executor(loop, slow_square, NULL, &refused) == LL_ESTATE);
    MUST(ll_release(down));
    MUST(ll_release(fut));
    MUST(ll_release(loop));
    printf("executor: 12*12 = %lu, queue_work gave %d\n", (unsigned long)v, j.output);
    return 0;
}
