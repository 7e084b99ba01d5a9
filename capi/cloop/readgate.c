/* SPDX-License-Identifier: MIT */
/* The read gate: after a delivery that ends an I/O iteration, the loop's
 * next I/O iterations run here while each is a poll whose every event is a
 * plain read of a stream transport with a C protocol, read once and
 * delivered (cloop.h lists when C hands back to Go; libloop/readgate.go
 * says when Go opens it). And its fd map. */
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <errno.h>
#include <sys/epoll.h>
#endif
#include "cloop.h"

/* The map holds a transport id's low 24 bits: its id-table slot (+1, never
 * 0), distinct among live ids, so it names the transport map's entry
 * (ll__tmap_get's home index is the same bits) in 4 bytes per fd, where
 * the id and slot pointer took 16 (an idle connection's whole user-space
 * cost is ~250-290 bytes). */
#define FDMAP_KEY(id) ((uint32_t)((id) & 0xFFFFFF))

void ll__fdmap_put(ll__pending *p, int32_t fd, uint64_t id) {
    if (fd < 0 || id == 0)
        return;
    if (fd >= p->fdmap_cap) {
        /* Doubling while small, then a quarter more: at 20,000 fds the map
         * is ~5 bytes per fd, not the ~6.5 doubling would leave. */
        int64_t cap = p->fdmap_cap ? p->fdmap_cap : 64;
        while (cap <= fd)
            cap = cap < 4096 ? cap * 2 : cap + cap / 4;
        uint32_t *m = realloc(p->fdmap, (size_t)cap * sizeof *m);
        if (m == NULL)
            return; /* the gate does not find it: Go reads it */
        memset(m + p->fdmap_cap, 0, (size_t)(cap - p->fdmap_cap) * sizeof *m);
        p->fdmap = m, p->fdmap_cap = cap;
    }
    p->fdmap[fd] = FDMAP_KEY(id);
}

void ll__fdmap_del(ll__pending *p, int32_t fd, uint64_t id) {
    if (fd >= 0 && fd < p->fdmap_cap && p->fdmap[fd] == FDMAP_KEY(id))
        p->fdmap[fd] = 0;
}

void ll__fdmap_free(ll__pending *p) {
    free(p->fdmap);
    p->fdmap = NULL;
    p->fdmap_cap = 0;
}

#ifdef __linux__
/* The gate's poll and reads are cloop.h's ll__poll_now and ll__read_now. */

typedef struct {
    uint64_t id;
    volatile ll__proto *proto;
    const ll__tentry *entry; /* id's entry in the transport map when found */
} gate_target;

/* Whether a transport's slot lets the gate read fd and deliver to it. */
static inline int gate_slot_ok(volatile ll__proto *s, int fd) {
    return s != NULL && s->fn != 0 && s->held == 0 && s->direct == LL__DIRECT_STREAM && s->fd == fd;
}

/* Whether fd's transport may be read and delivered to now (cloop.h): fills
 * t and returns 1, or 0. */
static inline int gate_target_of(const ll__pending *p, int fd, gate_target *t) {
    if (fd < 0 || fd >= p->fdmap_cap)
        return 0;
    uint32_t key = p->fdmap[fd];
    const ll__tentry *e = p->tmap;
    if (key == 0 || e == NULL)
        return 0;
    uint64_t mask = p->tmap_mask;
    for (uint64_t i = key & mask;; i = (i + 1) & mask) {
        if (e[i].id == 0)
            return 0;
        if (FDMAP_KEY(e[i].id) == key) {
            volatile ll__proto *s = e[i].proto;
            if (!gate_slot_ok(s, fd))
                return 0;
            t->id = e[i].id, t->proto = s, t->entry = &e[i];
            return 1;
        }
    }
}

/* Whether t, found for fd by gate_target_of before the poll's first
 * protocol ran, still names fd's transport and may be read now: its entry
 * in the map still holds its id (a transport retired since has left the
 * map, and the map's deletions and growth move or free entries, so any
 * change there fails this and the caller looks fd up again), and its
 * slot's flags, which Go keeps current at every pause, close or buffered
 * write, still allow it. One lookup per event instead of two: ~40
 * instructions an event (callgrind, W5's server). */
static inline int gate_target_still(const ll__pending *p, const ll__tentry *map, int fd, const gate_target *t) {
    return p->tmap == map && t->entry->id == t->id && gate_slot_ok(t->proto, fd);
}

/* Whether the next iteration's callbacks are still only the gate's: what
 * the last iteration's protocols may have changed. */
static inline int gate_may_poll(const ll__pending *p, const ll__read_gate *g, const ll__chain_view *v,
                                uint64_t changes0) {
    return g->iterations < g->max_iterations && p->withheld == 0 && p->len == 0 && p->ntimers == 0 && p->host_ready == 0 &&
           v->changes == changes0 && v->ready_len == 0;
}

/* What Go's iteration takes after its poll: a post, a timer due. */
static inline int gate_after_poll_work(const ll__pending *p, const ll__read_gate *g, const ll__chain_view *v) {
    return __atomic_load_n(&v->posted, __ATOMIC_ACQUIRE) != 0 || (p->postq != NULL && ll__postq_pending(p->postq)) ||
           ll__clock_now() > g->deadline;
}

/* The gate's tries (timeout-0 polls before one that may block), as Go's
 * poll plan makes them (libloop/pollplan.go): only if tries ran when the
 * gate opened (try_first); a try that finds nothing rests them for one
 * poll, twice as many after each further failure (up to 64), one that
 * finds something ends the rest. Under load a peer's answer is often
 * there after the loop's own work, and a try spares the sleep a blocking
 * poll would take; where tries keep failing (a quiet peer in another
 * process), nearly every poll blocks at once. */
typedef struct {
    int on;             /* tries ran when the gate opened */
    int rest, rest_len; /* polls left in the rest, the rest's length */
} gate_tries;

/* The gate's poll, as Go's iteration makes it (libloop/run.go): a try
 * first (gate_tries), then, if that found nothing or tries rest, one that
 * blocks until the first moment a timer may be due or the loop owes the
 * Go scheduler a turn (block_until: Go yields before it blocks past that,
 * libloop/yield.go), unless the loop must not block: a post waiting (the
 * view's, or the C queue's, whose wake protocol is armed here as Go's
 * BeforeBlock arms it). The time a poll that could block took counts as
 * idle (Stats.Idle). The event count, 0 (nothing: Go's next iteration
 * takes it as its early try), or -errno. */
static long gate_poll(ll__pending *p, ll__read_gate *g, const ll__chain_view *v, gate_tries *tr) {
    long got;
    int tried = 0;
    if (g->block_until == 0 || (tr->on && tr->rest == 0)) {
        got = ll__poll_now((int)g->epfd, (void *)g->events, (int)g->max_events);
        if (got != 0 || g->block_until == 0) {
            tr->rest_len = 0;
            return got;
        }
        tried = 1;
        tr->rest_len = tr->rest_len == 0 ? 1 : (tr->rest_len < 32 ? 2 * tr->rest_len : 64);
        tr->rest = tr->rest_len;
    } else if (tr->rest > 0) {
        tr->rest--;
    }
    int64_t now = ll__clock_now();
    int64_t end = g->block_until;
    if (g->deadline < end)
        end = g->deadline + 1; /* the first moment a timer may be due */
    if (now >= end || __atomic_load_n(&v->posted, __ATOMIC_ACQUIRE) != 0 ||
        (p->postq != NULL && ll__postq_before_block(p->postq)))
        return tried ? 0 : ll__poll_now((int)g->epfd, (void *)g->events, (int)g->max_events);
    /* Whole milliseconds, rounded up as Go's msTimeout, so that no timer
     * is seen early; end - now is at most block_until's slice. */
    int64_t ms = (end - now + 999999) / 1000000;
    got = ll__poll_wait((int)g->epfd, (void *)g->events, (int)g->max_events, ms > 86400000 ? 86400000 : (int)ms);
    g->idle_ns += ll__clock_now() - now;
    return got;
}

void ll__gate_run(uint64_t loop, ll__pending *p, uint64_t changes0) {
    ll__read_gate *g = &p->gate;
    const ll__chain_view *v = (const ll__chain_view *)g->view;
    g->on = 0;
    g->iterations = g->events_out = 0;
    g->polled = -1;
    g->failed_id = 0;
    g->idle_ns = 0;
    if (v->version != LL__CHAIN_VIEW_VERSION)
        return;
    struct epoll_event *evs = (struct epoll_event *)g->events;
    /* Each event's transport, found before the poll's first read. */
    gate_target ts[LL__GATE_MAX_EVENTS];
    if (g->max_events > LL__GATE_MAX_EVENTS)
        return;
    gate_tries tries = {.on = g->try_first != 0};
    while (gate_may_poll(p, g, v, changes0)) {
        long got = gate_poll(p, g, v, &tries);
        if (got <= 0) {
            g->polled = got == 0 ? 0 : -1;
            return;
        }
        if (got > 1)
            g->block_until = 0; /* more than one connection's answer: never block (cloop.h) */
        if (gate_after_poll_work(p, g, v)) {
            g->polled = got; /* Go's iteration runs this I/O, then that work */
            return;
        }
        const ll__tentry *map = p->tmap;
        for (long i = 0; i < got; i++)
            if (evs[i].events != EPOLLIN || !gate_target_of(p, evs[i].data.fd, &ts[i])) {
                g->polled = got;
                return;
            }
        for (long i = 0; i < got; i++) {
            int fd = evs[i].data.fd;
            gate_target t = ts[i];
            if (!gate_target_still(p, map, fd, &t) && !gate_target_of(p, fd, &t)) {
                g->iterations++; /* what ran counts; Go polls the rest again */
                return;
            }
            long r = ll__read_now(fd, (void *)g->rbuf, (size_t)g->rbuf_len);
            if (r <= 0) {
                if (r == -EAGAIN || r == -EINTR)
                    continue;
                if (r < 0)
                    g->failed_id = t.id, g->failed_errno = -r;
                g->iterations++;
                return;
            }
            ll_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = LL_DATA_RECEIVED;
            ev.fd = -1;
            ev.transport = t.id;
            ev.data = (void *)g->rbuf;
            ev.len = (size_t)r;
            ev.arg = (void *)t.proto->arg;
            ((ll_protocol_fn)t.proto->fn)(loop, &ev, ev.arg);
            g->events_out++;
        }
        g->iterations++;
    }
}
#else
void ll__gate_run(uint64_t loop, ll__pending *p, uint64_t changes0) {
    (void)loop;
    p->gate.on = 0;
    p->gate.iterations = p->gate.events_out = 0;
    p->gate.polled = -1;
    p->gate.failed_id = 0;
    p->gate.idle_ns = 0;
}
#endif
