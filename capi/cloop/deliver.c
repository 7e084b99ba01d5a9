/* SPDX-License-Identifier: MIT */
/* Delivering a batch of transport events to their protocols in one
 * crossing, withholding the read events of a transport an earlier event
 * paused, closed or aborted (ll__withhold, cloop.h). */
#include "cloop.h"

void ll__deliver_events(uint64_t loop, uintptr_t events_addr, uintptr_t protos_addr, int n, uintptr_t pending_addr,
                        uintptr_t batch_fn, uintptr_t batch_arg) {
    ll_event *evs = (ll_event *)events_addr;
    ll__proto *const *protos = (ll__proto *const *)protos_addr;
    ll__batch_ctx saved = ll__batch_enter(loop, (ll__pending *)pending_addr);
    int i = 0;
    while (i < n) {
        /* An earlier event may have paused, closed or aborted this one's
         * transport: then it gets no read event (ll__withhold). */
        if (ll__withhold(&evs[i], protos[i])) {
            i++;
            continue;
        }
        /* Read the protocol now: an earlier event may have changed it. */
        volatile ll__proto *p = protos[i];
        uintptr_t fn = p ? p->fn : 0;
        if (fn != 0) {
            evs[i].arg = (void *)p->arg;
            evs[i].result = ((ll_protocol_fn)fn)(loop, &evs[i], (void *)p->arg);
            i++;
            continue;
        }
        /* A run for the batch sink: it ends before an event withheld now;
         * the sink itself withholds (kind 0) what its own calls stop. */
        int j = i;
        while (j < n && (protos[j] == NULL || ((volatile ll__proto *)protos[j])->fn == 0)) {
            if (j > i && ll__is_read_event(evs[j].kind) && protos[j] != NULL &&
                ((volatile ll__proto *)protos[j])->held != 0)
                break;
            evs[j].arg = protos[j] ? (void *)((volatile ll__proto *)protos[j])->arg : NULL;
            j++;
        }
        if (batch_fn != 0)
            ((ll_event_batch_fn)batch_fn)(loop, &evs[i], (size_t)(j - i), (void *)batch_arg);
        for (int k = i; k < j; k++)
            if (evs[k].kind == 0 && protos[k] != NULL)
                ((volatile ll__proto *)protos[k])->held |= LL__HELD_BATCH;
        i = j;
    }
    ll__batch_leave(saved);
}

ll__proto *ll__delivering_slot(uint64_t t) {
    const ll__pending *p = ll__batch.pending;
    return p != NULL && t != 0 ? ll__tmap_get(p, t) : NULL;
}
