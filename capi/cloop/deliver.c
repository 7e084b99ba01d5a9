/* SPDX-License-Identifier: MIT */
/* Delivering a batch of transport events to their protocols in one
 * crossing, withholding the read events of a transport an earlier event
 * paused, closed or aborted (ll__withhold, cloop.h); and, for a batch sink
 * doing the same inside its array, ll_event_withhold (public). */
#include "cloop.h"

/* The run of events a batch sink on this thread holds now, with their
 * protocol slots (ll__deliver_events sets it around the sink's call): the
 * events ll_event_withhold may act on. An event's slot is found by its
 * place in the run, so every transport is covered (no map lookup, which
 * could miss one the transport map had no room for). */
typedef struct {
    ll_event *first;
    ll__proto *const *protos;
    size_t n;
} sink_run;
static LL_TLS sink_run tls_sink_run;

void ll__deliver_events(uint64_t loop, uintptr_t events_addr, uintptr_t protos_addr, int n, uintptr_t pending_addr,
                        uintptr_t batch_fn, uintptr_t batch_arg) {
    ll_event *evs = (ll_event *)events_addr;
    ll__proto *const *protos = (ll__proto *const *)protos_addr;
    ll__batch_ctx saved = ll__batch_enter(loop, (ll__pending *)pending_addr);
    /* The gate's baseline: what this delivery's callbacks change (a handle
     * made, a HostReady through Go) must end it, as what later ones do. */
    const ll__read_gate *gate = &((ll__pending *)pending_addr)->gate;
    uint64_t changes0 = 0;
    if (gate->on && gate->view != 0 && ((const ll__chain_view *)gate->view)->version == LL__CHAIN_VIEW_VERSION)
        changes0 = ((const ll__chain_view *)gate->view)->changes;
    int i = 0, withheld = 0;
    while (i < n) {
        /* An earlier event may have paused, closed or aborted this one's
         * transport: then it gets no read event (ll__withhold). */
        if (ll__withhold(&evs[i], protos[i])) {
            withheld++;
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
        if (batch_fn != 0) {
            sink_run saved_run = tls_sink_run;
            tls_sink_run = (sink_run){&evs[i], &protos[i], (size_t)(j - i)};
            ((ll_event_batch_fn)batch_fn)(loop, &evs[i], (size_t)(j - i), (void *)batch_arg);
            tls_sink_run = saved_run;
        }
        for (int k = i; k < j; k++)
            if (evs[k].kind == 0) {
                withheld++;
                if (protos[k] != NULL)
                    ((volatile ll__proto *)protos[k])->held |= LL__HELD_BATCH;
            }
        i = j;
    }
    ((ll__pending *)pending_addr)->withheld = withheld;
    if (((ll__pending *)pending_addr)->gate.on)
        ll__gate_run(loop, (ll__pending *)pending_addr, changes0); /* still this batch's thread marking */
    ll__batch_leave(saved);
}

int ll_event_withhold(ll_event *ev) {
    const sink_run r = tls_sink_run;
    uintptr_t at = (uintptr_t)ev, first = (uintptr_t)r.first;
    if (ev == NULL || at < first || (at - first) % sizeof *ev != 0 ||
        (at - first) / sizeof *ev >= r.n)
        return LL_EINVAL;
    if (ev->kind == 0)
        return 1;
    return ll__withhold(ev, r.protos[(at - first) / sizeof *ev]);
}
