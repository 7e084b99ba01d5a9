/* SPDX-License-Identifier: MIT */
/* The calls that run a loop on the calling thread, and those that must
 * know which thread calls them (release, close): they mark the thread
 * (ll__thread_loop, thread.c) and go on into Go with the thread's token. */
#include "cloop.h"

/* The run entry points refuse to nest: asyncio forbids running a loop while
 * another runs on the same thread, and so do we. A fork child is refused
 * first: forked by a callback, it still has this thread's marker set.
 * until != 0: run until the future fut is done (mode unused). */
static int run_guarded(ll_loop loop, int mode, int until, ll_future fut) {
    LL__FORK_GUARD();
    if (ll__thread_loop != 0)
        return LL_ERUNNING;
    ll__thread_loop = loop;
    int rc = until ? ll__run_until_complete_go(loop, fut, ll__thread_token())
                   : ll__loop_run_go(loop, mode, ll__thread_token());
    ll__thread_loop = 0;
    return rc;
}

int ll_loop_run_forever(ll_loop loop) { return run_guarded(loop, -1, 0, 0); }

int ll_loop_run_once(ll_loop loop, int mode) {
    if (mode != LL_RUN_ONCE && mode != LL_RUN_NOWAIT)
        return LL_EINVAL;
    return run_guarded(loop, mode, 0, 0);
}

int ll_loop_run(ll_loop loop, int mode) {
    if (mode != LL_RUN_DEFAULT && mode != LL_RUN_ONCE && mode != LL_RUN_NOWAIT)
        return LL_EINVAL;
    return run_guarded(loop, mode | LL__RUN_ALIVE, 0, 0);
}

int ll_loop_run_until_complete(ll_loop loop, ll_future fut) { return run_guarded(loop, 0, 1, fut); }

int ll_run(ll_step_fn main_step, void *arg, uintptr_t *result) {
    /* It makes a loop: the same check as ll_loop_new's (forkguard.c). */
    if (ll__forked_child())
        return LL_EFORKED;
    if (ll__thread_loop != 0)
        return LL_ERUNNING;
    /* No id yet; any non-zero marks "running". Go sets the id once the
     * loop exists, before any of its callbacks can run. */
    ll__thread_loop = (uint64_t)-1;
    int rc = ll__run_go((uintptr_t)main_step, (uintptr_t)arg, result, ll__thread_token());
    ll__thread_loop = 0;
    return rc;
}

/* Thread-safe calls that must know which thread calls them. A handle
 * timer's id released from a callback of its own loop is released in C:
 * this thread runs the loop, so no other may act on it (the gate would
 * refuse them), and ll__ts_release's mutex decides between racing calls. */
int ll_release(uint64_t id) {
    /* First: the C path below takes a mutex that a thread gone in a fork
     * child may have held. */
    LL__FORK_GUARD();
    if ((id & LL__TS_ID_BIT) && ll__batch.loop != 0 && ll__ts_owner(id) == ll__batch.loop)
        return ll__ts_release(id);
    return ll__release_go(id, ll__thread_token());
}

int ll_loop_close(ll_loop loop) {
    LL__FORK_GUARD();
    return ll__loop_close_go(loop, ll__thread_token());
}

