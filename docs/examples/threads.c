/* SPDX-License-Identifier: MIT */
/* threads.c — a worker thread hands results to a running loop with
 * ll_call_soon_threadsafe; a non-thread-safe call from it is refused with
 * LL_EWRONGTHREAD. Then: ids go stale once released. */
#include <pthread.h>
#include <stdint.h>

#include "must.h"

static ll_loop LOOP;
static int refused_rc, results;

static void on_result(ll_loop loop, void *arg) { /* loop thread */
    results += (int)(intptr_t)arg;
    if (results == 1 + 2 + 3)
        MUST(ll_loop_stop(loop));
}

static void *worker(void *arg) {
    (void)arg;
    refused_rc = ll_call_soon(LOOP, on_result, (void *)1, NULL); /* wrong thread: refused */
    for (intptr_t i = 1; i <= 3; i++)
        MUST(ll_call_soon_threadsafe(LOOP, on_result, (void *)i)); /* wakes the loop */
    return NULL;
}

static void start_worker(ll_loop loop, void *arg) {
    (void)loop;
    EXPECT(pthread_create(arg, NULL, worker, NULL) == 0);
}

int main(void) {
    pthread_t th;
    MUST(ll_loop_new(&LOOP));
    MUST(ll_call_soon(LOOP, start_worker, &th, NULL));
    MUST(ll_loop_run_forever(LOOP));
    pthread_join(th, NULL);
    EXPECT(refused_rc == LL_EWRONGTHREAD && results == 6);

    /* Lifetimes: a handle id lives until released, then it is stale. */
    ll_handle h;
    MUST(ll_call_later(LOOP, 10, on_result, NULL, &h));
    EXPECT(ll_handle_cancelled(h) == 0);
    MUST(ll_release(h));                        /* the timer still runs unless cancelled */
    EXPECT(ll_handle_cancel(h) == LL_EBADHANDLE);
    EXPECT(ll_release(h) == LL_EBADHANDLE);     /* never released twice */
    MUST(ll_release(LOOP));                     /* closes the loop first */
    EXPECT(ll_loop_is_running(LOOP) == LL_EBADHANDLE);
    printf("threads: worker's call_soon refused (%s), results %d\n", ll_err_name(refused_rc), results);
    return 0;
}
