/* SPDX-License-Identifier: MIT */
/* ll_loop_host_ready without entering Go: a callback of the loop's running
 * batch (a protocol's data_received that resolves a future, whose
 * call_soon goes to the host's own queue) marks the loop's record, and Go
 * takes the mark at enter (capi/pending.go), before it next looks at
 * whether the host queue has work. A crossing into Go from a callback
 * costs ~2,000 instructions (crosscall2, cgocallback, exitsyscall and back:
 * callgrind, a request/response client calls it once per request), the
 * mark a load and a store. Anything else (another thread, the loop idle,
 * a bad id) goes through Go, which checks the id. */
#include "cloop.h"

static __attribute__((noinline)) int host_ready_go(ll_loop loop) {
    LL__FORK_GUARD();
    return ll__loop_host_ready_go(loop);
}

int ll_loop_host_ready(ll_loop loop) {
    ll__pending *p = ll__batch_queue(loop);
    if (p != NULL) {
        p->host_ready = 1;
        return 0;
    }
    return host_ready_go(loop);
}
