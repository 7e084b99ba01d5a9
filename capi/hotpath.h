/* SPDX-License-Identifier: MIT */
/* Internal: the C side of libloop's hot paths. Not installed. */
#ifndef LIBLOOP_HOTPATH_H
#define LIBLOOP_HOTPATH_H

#include <pthread.h>
#include <stdint.h>
#include "libloop.h"
#include "timerslab.h"

/* One host callback in a dispatch batch; layout matches Go's
 * libloop.ForeignCall. fn == 0 marks a slot cancelled during the batch. */
/* const-qualified types, so cgo's export prototypes match libloop.h. */
typedef const char ll__cchar;
typedef const uint64_t ll__cid;
typedef const void ll__cvoid;
/* ll_tls_config_set_alpn's list: an array of constant string pointers. */
typedef const char *const ll__cstr;
typedef const ll_process_options ll__cprocess_options;
typedef const ll_spawn_extra ll__cspawn_extra;

typedef struct ll__call {
    uintptr_t fn;
    uintptr_t arg;
    uint64_t id;
    int32_t fd;
    int32_t kind; /* 0: fn(id, arg); 1: fn(id, fd, arg) */
} ll__call;

/* call_soon requests made from C during a batch, queued here without
 * entering Go; Go moves them to the ready queue, in order, before it next
 * touches that queue. */
typedef struct ll__soon {
    uintptr_t fn;
    uintptr_t arg;
} ll__soon;

/* A timer queued in C: its deadline in loop nanoseconds; fn 0 marks a
 * handle timer, whose record's slot is arg (timerslab.h). */
typedef struct ll__later {
    int64_t when;
    uintptr_t fn;
    uintptr_t arg;
} ll__later;

/* A chain's terms and outcome (libloop.Chain, filled by Go). */
typedef struct ll__chain {
    int32_t epfd; /* -1: no fd watched, no poll */
    int32_t max_events;
    uintptr_t events;  /* struct epoll_event[max_events], Go memory valid during the call */
    uintptr_t changes; /* const uint64_t *: the loop's change counter */
    uintptr_t ready_len; /* const int64_t *: Go's ready queue length */
    uintptr_t posted;    /* const int32_t *: Go-side posts waiting (atomic) */
    int64_t max_iterations;
    int64_t iterations; /* out */
    int64_t calls;      /* out */
    int64_t polled;     /* out: events the last poll left in events, -1 none */
} ll__chain;
struct ll__proto;
/* One entry of a loop's transport map (tmap.c): a transport id and its
 * protocol slot; id 0 marks an empty entry. */
typedef struct ll__tentry {
    uint64_t id;
    struct ll__proto *proto;
} ll__tentry;

typedef struct ll__pending {
    ll__soon *items;
    int64_t len;
    int64_t cap;
    /* The task whose step runs now (0 if none), and whether that step has
     * chosen its outcome; Go sets both around a step and sets step_decided
     * when an outcome call goes through Go. */
    uint64_t step_task;
    int64_t step_decided;
    /* The array a chain's iteration runs from while its callbacks queue
     * into items (hotpath.c, ll__run_chain); swapped, never shrunk. */
    ll__soon *spare;
    int64_t spare_cap;
    ll__chain chain; /* the running chain's terms, filled by Go */
    /* While the loop is idle (not running), ll_call_soon(..., NULL) from
     * outside a batch queues here too, found by loop id in a small C
     * registry (hotpath.c): loop_id names the loop (0: none), open is 1
     * while the loop is idle. Both read and written with __atomic. */
    uint64_t loop_id;
    int32_t open;
    int32_t registered;
    struct ll__pending *next_free; /* retired records are reused, never freed */
    ll__later *timers; /* handle-less timers, flushed every 4096 (softqueue.c) */
    int64_t ntimers;
    int64_t timers_cap;
    /* ll_call_soon_threadsafe's lock-free queue (postq.c), made with the
     * record and kept with it (NULL if memory ran out: the Go path). */
    struct ll__postq *postq;
    /* Records of the loop's handle timers (timerslab.h); an entry of
     * timers with fn 0 is one of them, its slot in arg. */
    ll__tslab slab;
    /* The loop's transports by id, for the write fast path (tmap.c):
     * open addressing, linear probing, tmap_mask + 1 entries (a power of
     * two), at most half full. Written by Go through tmap.c's functions on
     * the loop's thread (or while it is idle), read by C on that thread. */
    ll__tentry *tmap;
    uint64_t tmap_mask;
    uint64_t tmap_count;
} ll__pending;

/* initial-exec: a plain %fs-relative load instead of a __tls_get_addr call
 * on every ll_call_soon (the Go runtime in this library uses it too). */
#define LL_TLS __thread __attribute__((tls_model("initial-exec")))

/* The loop that ll_loop_run_* (or ll_run) runs on the calling thread, 0 if
 * none: the wrong-thread check compares it with the loop a call concerns.
 * Hidden: internal to the library, never a symbol of its ABI. */
extern LL_TLS __attribute__((visibility("hidden"))) uint64_t ll__thread_loop;
/* Set it (ll_run learns its loop's id only once Go has made the loop). */
void ll__set_thread_loop(uint64_t loop);

/* A pending entry with this fn is not a callback: it records that the
 * running step yielded (ll_task_yield answered in C). */
#define LL__YIELD_MARK ((uintptr_t)1)

/* Pointers travel as uintptr_t: they are C memory, and this spares the
 * cgo pointer checks on the hottest call. */
void ll__run_batch(uint64_t loop, uintptr_t calls, int n, uintptr_t pending);
void ll__run_chain(uint64_t loop, uintptr_t calls, int n, uintptr_t pending);
void ll__run_soon_array(uint64_t loop, uintptr_t items, int64_t n, uintptr_t pending);
ll__call *ll__alloc_calls(int n);
/* Run n due handle timers (timerslab.h) in order, as a batch of loop. */
void ll__ts_fire_many(uint64_t loop, const uint32_t *slots, int64_t n, ll__pending *pending);
ll__pending *ll__pending_new(void);
/* Register p as loop's idle queue / open or close it / retire it (the
 * record is kept for reuse: a late lookup never reads freed memory). */
void ll__pending_register(ll__pending *p, uint64_t loop);
void ll__pending_set_open(ll__pending *p, int open);
void ll__pending_retire(ll__pending *p);
/* The queue of an idle loop (softqueue.c) / of the batch running on this
 * thread (hotpath.c), or NULL. Hidden: not part of the ABI. */
__attribute__((visibility("hidden"))) ll__pending *ll__idle_queue(uint64_t loop);
__attribute__((visibility("hidden"))) ll__pending *ll__batch_queue(uint64_t loop);
/* A registered loop's record, running or idle, or NULL (softqueue.c). */
__attribute__((visibility("hidden"))) ll__pending *ll__loop_record(uint64_t loop);
/* The loop clock's base in CLOCK_MONOTONIC nanoseconds, from Go. */
void ll__set_clock_base(int64_t base);
int64_t ll__clock_raw(void);
void ll__call_exception_handler(uintptr_t fn, uint64_t loop, ll_error_context *ctx, uintptr_t arg);



void ll__call_free(uintptr_t fn, uintptr_t value);
uintptr_t ll__call_work(uintptr_t fn, uintptr_t arg, int *err);
void ll__call_queued_work(uintptr_t fn, uintptr_t arg);
int ll__call_host_run(uintptr_t fn, uint64_t loop, uintptr_t arg);

/* A transport's protocol, in C memory so ll_transport_set_protocol takes
 * effect for the next event of a batch being delivered. */
typedef struct ll__proto {
    uintptr_t fn;
    uintptr_t arg;
    /* The write fast path: direct is 1 exactly while the transport is an
     * open stream socket with nothing buffered, no sendfile, write_eof or
     * TLS (libloop's DirectWritable). The core keeps it at every change
     * (its direct hook, capi/events.go), turning it off before it buffers
     * or closes fd; so on the loop's thread ll_transport_write* may send
     * on fd from C whenever it is 1. */
    int32_t fd;
    int16_t direct;
    /* Read events (LL_DATA_RECEIVED, LL_DATAGRAM_RECEIVED, LL_EOF_RECEIVED)
     * are withheld while held is not 0: LL__HELD_STATE exactly while the
     * core's ReadsDelivered is false (paused, closing, closed, or older
     * reads withheld: libloop/withheld.go), kept by its read hook;
     * LL__HELD_BATCH from the moment C withholds one of the transport's
     * read events in a delivery until Go has taken it back, so that none of
     * its later read events overtakes it. */
    int16_t held;
} ll__proto;

#define LL__HELD_STATE 1
#define LL__HELD_BATCH 2

static inline int ll__is_read_event(int kind) {
    return kind == LL_DATA_RECEIVED || kind == LL_DATAGRAM_RECEIVED || kind == LL_EOF_RECEIVED;
}

/* Withhold ev if it is a read event its transport (slot p) must not get
 * now: its kind becomes 0, which tells Go it was not delivered. Returns 1
 * if withheld. */
static inline int ll__withhold(ll_event *ev, ll__proto *p) {
    if (p == NULL || !ll__is_read_event(ev->kind) || ((volatile ll__proto *)p)->held == 0)
        return 0;
    ev->kind = 0;
    ((volatile ll__proto *)p)->held |= LL__HELD_BATCH;
    return 1;
}

/* The protocol slot of transport t of the loop whose events this thread is
 * delivering (ll__deliver_events), or NULL: for a batch sink in the
 * library (pyhot.c) that checks each event as it goes. */
__attribute__((visibility("hidden"))) ll__proto *ll__delivering_slot(uint64_t t);

/* The loop's transport map (tmap.c). put: 0, or -1 if memory ran out (the
 * transport then takes the Go path); del: no-op for an absent id; free:
 * drops the map (the loop's end). */
int ll__tmap_put(ll__pending *p, uint64_t id, ll__proto *proto);
void ll__tmap_del(ll__pending *p, uint64_t id);
void ll__tmap_free(ll__pending *p);

/* id's protocol slot in p's map, or NULL. A transport id's low 24 bits
 * are its id-table slot (capi/ids.go), distinct among live ids: the home
 * index needs no other hash. */
static inline ll__proto *ll__tmap_get(const ll__pending *p, uint64_t id) {
    const ll__tentry *e = p->tmap;
    if (e == NULL)
        return NULL;
    uint64_t mask = p->tmap_mask;
    for (uint64_t i = id & mask;; i = (i + 1) & mask) {
        if (e[i].id == id)
            return e[i].proto;
        if (e[i].id == 0)
            return NULL;
    }
}

/* Deliver n events: each to its protocol, runs of protocol-less events to
 * the batch sink (batch_fn may be 0). One crossing for all of them. */
void ll__deliver_events(uint64_t loop, uintptr_t events, uintptr_t protos, int n, uintptr_t pending,
                        uintptr_t batch_fn, uintptr_t batch_arg);
#endif
