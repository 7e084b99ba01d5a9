/* SPDX-License-Identifier: MIT */
/* embedding.md's example: a host's poll() loop drives libloop with
 * ll_loop_backend_fd, ll_loop_next_timeout and LL_RUN_NOWAIT, and a
 * prepare hook runs before each of libloop's polls. */
#include <poll.h>

#include "must.h"

static int fired, prepares;
static void on_timer(ll_loop loop, void *arg) { (void)loop, (void)arg, fired++; }
static void on_prepare(ll_loop loop, void *arg) { (void)loop, (void)arg, prepares++; }

int main(void) {
    ll_loop loop;
    ll_handle hook;
    MUST(ll_loop_new(&loop));
    EXPECT(ll_loop_next_timeout(loop) == -1); /* nothing scheduled */
    MUST(ll_call_later(loop, 0.05, on_timer, NULL, NULL));
    int ms = ll_loop_next_timeout(loop);
    EXPECT(ms > 0 && ms <= 50); /* rounded up: never early */
    MUST(ll_hook_add(loop, LL_HOOK_PREPARE, on_prepare, NULL, &hook));

    int bfd = ll_loop_backend_fd(loop), iterations = 0;
    MUST(bfd);
    while (!fired) {
        struct pollfd p = {.fd = bfd, .events = POLLIN}; /* and the host's own fds */
        EXPECT(poll(&p, 1, ll_loop_next_timeout(loop)) >= 0);
        MUST(ll_loop_run_once(loop, LL_RUN_NOWAIT));
        iterations++;
    }
    EXPECT(iterations <= 3);          /* slept until the timer, no spinning */
    EXPECT(prepares == iterations);   /* one prepare per iteration */
    MUST(ll_handle_cancel(hook));     /* a hook is a handle */
    MUST(ll_loop_run_once(loop, LL_RUN_NOWAIT));
    EXPECT(prepares == iterations);
    MUST(ll_release(hook));
    MUST(ll_release(loop));
    return 0;
}
