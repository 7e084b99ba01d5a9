/* SPDX-License-Identifier: MIT */
/*
 * cloop.h — the C side of libloop's runtime, and its contract with Go.
 * Internal: not installed, never part of the ABI (exports.map keeps every
 * ll__ symbol local).
 *
 * The loop is Go's (libloop/): its ready queue, timer heap, poller,
 * transports and futures, and every decision about what runs when. C keeps
 * only what lets a host's calls from inside the loop's thread (or while
 * the loop is idle) skip a crossing into Go (~115 ns each):
 *
 *   C owns, per loop, its record (ll__pending, record.c): the call_soon
 *   queue and the handle-less timers made from C (soon.c, timers.c), the
 *   handle timers' records (timerslab.c), the thread-safe post queue
 *   (postq.c), the callback form's file pool (fspool.c, on the core's
 *   terms), the transport map and each transport's protocol slot
 *   (tmap.c, ll__proto); and, per thread, which loop it runs and which
 *   loop's batch it is running (thread.c).
 *
 *   Go owns everything else, and these fields of C's memory, which only Go
 *   writes: a protocol slot's fn/arg/direct/held (loopState's
 *   DirectChanged and ReadsChanged, told by the core),
 *   the record's chain terms, read gate terms and fd map, and step
 *   fields, the registry's open flag. Go reads what C writes for it in the
 *   record: withheld, the count of the delivery that just returned
 *   (deliver.c), and the read gate's outcome (readgate.c).
 *
 * While a runner runs a chain (chain.c), C reads the loop's state through
 * one struct Go keeps current, ll__chain_view: versioned, its layout
 * checked against Go's when capi compiles, never a pointer into Go's own
 * structures.
 *
 * They meet at three kinds of place, and only there:
 *   1. Go runs host code through the runners (batch.c, chain.c,
 *      deliver.c with readgate.c, postq_loop.c's ll__postq_run,
 *      udprecv.c's ll__udp_recv): one crossing for many
 *      callbacks, with this thread marked as running the loop's batch.
 *   2. Go takes what C queued at one door, capi/pending.go's enter, the
 *      only caller of flushPending: control comes back to Go from host
 *      code on the loop's thread only through it, when a runner returns
 *      (capi makes every runner call through runHost, which ends in
 *      enter) and when a host call enters Go (capi's id resolvers,
 *      getLoop and the like, end in enter). So Go has taken it before it
 *      next touches the ready queue or the timer heap. C asks for it early
 *      only when its timer queue is full (ll__flush_pending_go, also
 *      through enter).
 *   3. A public call whose fast path does not apply goes on into Go by one
 *      of the functions listed under "Go's side" below (capi's //export
 *      functions), which check ids and threads and decide.
 * C never decides what runs: it queues, makes a write's first send when
 * Go's direct flag says it may, and calls what Go handed it. There is one
 * write path, Go's Transport.Write: C's send (send.c) is only its first
 * try, and whatever the kernel did not take goes on into Write.
 */
#ifndef LIBLOOP_CLOOP_H
#define LIBLOOP_CLOOP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "libloop.h"
#include "forkguard.h"
#include "postq.h"
#include "timerslab.h"

/* One host callback in a dispatch batch; layout matches Go's
 * libloop.HostCall. fn == 0 marks a slot cancelled during the batch. */
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
 * handle timer, whose record's slot is arg (timerslab.h). Its layout is
 * libloop.HostTimer's (capi/layouts.go checks it): Go hands runs of the
 * array to the core in place. */
typedef struct ll__later {
    int64_t when;
    uintptr_t fn;
    uintptr_t arg;
} ll__later;

/* The loop's words that end a chain (libloop.ChainView): Go keeps them
 * current (they are its own counters), C reads them after each iteration
 * through this one struct and follows no other pointer into Go. Its
 * layout is versioned: capi/layouts.go fails to compile when Go's struct
 * and this one differ in version, size or an offset, and ll__run_chain
 * runs no chain on a view of another version. */
#define LL__CHAIN_VIEW_VERSION 1
typedef struct ll__chain_view {
    uint32_t version;  /* LL__CHAIN_VIEW_VERSION */
    int32_t posted;    /* callbacks posted through Go, not yet taken (atomic) */
    uint64_t changes;  /* the loop's change counter: a move ends the chain */
    int64_t ready_len; /* Go's ready queue length: non-zero ends the chain */
} ll__chain_view;

/* A chain's terms and outcome (libloop.Chain, filled by Go). */
typedef struct ll__chain {
    int32_t epfd; /* -1: no fd watched, no poll */
    int32_t max_events;
    uintptr_t events; /* struct epoll_event[max_events], Go memory valid during the call */
    uintptr_t view;   /* const ll__chain_view *, Go memory valid during the call */
    int64_t max_iterations;
    int64_t iterations; /* out */
    int64_t calls;      /* out */
    int64_t polled;     /* out: events the last poll left in events, -1 none */
} ll__chain;
/* ---- The read gate (readgate.c; libloop/readgate.go) ----
 * After a delivery that ends an I/O iteration, C runs the loop's next I/O
 * iterations itself while each is only reads of plain stream transports
 * with a C protocol: poll, read(2) each ready socket once into the loop's
 * read buffer, call its protocol with LL_DATA_RECEIVED. Go decides that a
 * delivery may open the gate (libloop's gateTerms: the run goes on until
 * stopped, no hook is active, not debug mode, nothing ready or posted,
 * not stopping, the delivery is the flush callback's own (never one made
 * inside a callback) and the queue's last and holds only data events, the
 * selector is epoll, a lower bound of every timer's deadline is known)
 * and sets on = 1 for that one delivery call, with its terms; C only
 * checks that each next iteration is still of that kind and runs it. Its
 * poll is Go's (run.go): with timeout 0 first while tries run (try_first;
 * a try that finds nothing rests them for one poll, twice as many after
 * each further failure, up to 64, as Go's poll plan does), then one
 * that blocks until the first moment a timer may be due (deadline + 1) or
 * block_until (Go yields to its scheduler before blocking past that; 0:
 * never block, as while posts flow and Go's BeforeBlock lingers, or for a
 * delivery of more than one event: libloop's gateBlockEvents), in whole
 * milliseconds rounded up; never again in this gate after a poll that
 * returned more than one event (C sets block_until 0: a many-connection
 * server's gate hands back at its first empty poll); not when a post waits (the view's posted, or the
 * C queue, whose wake flag ll__postq_before_block arms first, as Go's
 * BeforeBlock does). The time such a poll took is idle_ns. It hands back
 * to Go, leaving the last poll's answer in events for Go's next iteration
 * (polled) when there was one:
 *   before a poll: max_iterations reached; an event withheld by the
 *     delivery; a call_soon or timer queued in C (len, ntimers); the view's
 *     changes moved (a handle or timer made through Go, ll_loop_stop, a
 *     hook added, an interest changed: a write buffered, a pause, a close,
 *     a transport or reader added) or its ready_len is not 0 (a close's or
 *     an emit's delivery queued, a future's callbacks);
 *   after a poll (what Go's iteration takes after its poll, and would run
 *     after the poll's I/O): a thread-safe post (the view's posted, the C
 *     post queue); a timer due (now > deadline); the poll found nothing
 *     (polled 0: it could not block, or its timeout ran out; Go's next
 *     iteration takes it as its early try) or failed;
 *   for the poll's events: one that is not EPOLLIN alone (EPOLLOUT of a
 *     write pending, EPOLLRDHUP/HUP/ERR of an end or error), or whose fd is
 *     not a transport whose slot has a C protocol (fn), reads delivered
 *     (held 0: not paused, closing, closed or holding withheld reads) and
 *     its write gate open for a stream (direct LL__DIRECT_STREAM: an
 *     open stream socket, nothing buffered, no TLS; so never a pipe, a
 *     datagram socket, whose flag is LL__DIRECT_DGRAM, a listener, the
 *     wakeup, signal or process fds, a reader of ll_add_reader): none of
 *     that poll is read;
 *   while reading a poll's events, which run in their order, each checked
 *     again just before its read (an earlier protocol may have paused,
 *     closed or rebound it): such a check failing, an end of stream (read
 *     0: Go's own read meets it again) or a read error (other than EAGAIN,
 *     EINTR: taken, so handed to Go, failed_id/failed_errno, which ends the
 *     transport as its read would) ends the gate there; the rest of that
 *     poll is polled again by Go (level-triggered, nothing lost).
 * So the callbacks run in the order Go's iterations would run them:
 * callbacks scheduled by one iteration run before the next iteration's
 * I/O, posts and due timers after the I/O of the poll that saw them. What
 * differs is only when bytes are read (each socket just before its
 * protocol is called, not all of a poll's first), which no protocol can
 * tell from data arriving a moment later. A public call from a gate's
 * protocol sees the loop as from Go's own delivery: it enters Go, which
 * takes C's queues first (ll_loop_next_timeout answers 0 once a callback
 * is queued, else the first timer's time). Go's pointers here (events,
 * view) are valid only during the call; C keeps none. */
/* The most events a gate's poll may ask for: the gate keeps each one's
 * transport on its stack between the checks and the reads (the loop's
 * poll buffer holds 256; capi opens no gate for a larger one). */
#define LL__GATE_MAX_EVENTS 256
typedef struct ll__read_gate {
    int32_t on; /* 1 for the delivery call Go opened the gate for */
    int32_t epfd;
    uintptr_t events;   /* struct epoll_event[max_events], Go memory */
    int64_t max_events; /* at most LL__GATE_MAX_EVENTS */
    uintptr_t view;     /* const ll__chain_view *, Go memory */
    int64_t deadline;   /* loop ns: a timer may be due once now > deadline */
    int64_t block_until; /* loop ns: a poll may block until then (0: never block) */
    int32_t try_first;   /* 1: poll with timeout 0 before a poll that blocks */
    int64_t max_iterations;
    uintptr_t rbuf; /* the loop's read buffer (C memory) */
    int64_t rbuf_len;
    int64_t iterations;   /* out */
    int64_t events_out;   /* out: events delivered */
    int64_t polled;       /* out: -1, or events left in events for Go */
    uint64_t failed_id;   /* out: a read met failed_errno (0: none) */
    int64_t failed_errno; /* out */
    int64_t idle_ns;      /* out: time spent in polls that could block (Stats.Idle) */
} ll__read_gate;

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
     * into items (chain.c); swapped, never shrunk. */
    ll__soon *spare;
    int64_t spare_cap;
    ll__chain chain; /* the running chain's terms, filled by Go */
    /* While the loop is idle (not running), ll_call_soon(..., NULL) from
     * outside a batch queues here too, found by loop id in a small C
     * registry (record.c): loop_id names the loop (0: none), open is 1
     * while the loop is idle. Both read and written with __atomic. */
    uint64_t loop_id;
    int32_t open;
    int32_t registered;
    struct ll__pending *next_free; /* retired records are reused, never freed */
    ll__later *timers; /* handle-less timers, flushed every 4096 (timers.c) */
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
    /* How many events the last ll__deliver_events withheld (left with kind
     * 0, by ll__withhold or the sink): Go reads the kinds back only if any
     * was. Here, not a result: a cgo call with one costs its wrapper ~25
     * more instructions (_cgo_topofstack), an extra argument ~5. */
    int64_t withheld;
    /* The read gate (readgate.c): its terms and outcome, and the map from
     * fd to transport it reads through. */
    ll__read_gate gate;
    uint32_t *fdmap; /* fd -> the transport id's low 24 bits, 0: none */
    int64_t fdmap_cap;
    /* The callback form's file pool (fspool.c), made at the loop's first
     * ll_fs_read_cb / ll_fs_write_cb and kept with the record (NULL: none
     * yet, or no memory: the core's pool serves those calls). */
    struct ll__fspool *fspool;
    /* 1 once ll_loop_host_ready was called from a callback of the running
     * batch (hostready.c), until Go takes it at enter (Loop.HostReady):
     * like a call_soon queued here, it ends a chain and the read gate. */
    int64_t host_ready;
} ll__pending;

/* A transport's protocol, in C memory so ll_transport_set_protocol takes
 * effect for the next event of a batch being delivered. */
typedef struct ll__proto {
    uintptr_t fn;
    uintptr_t arg;
    /* The write fast path: direct is LL__DIRECT_STREAM exactly while the
     * transport is an open stream socket with nothing buffered, no
     * sendfile, write_eof or TLS, LL__DIRECT_DGRAM while it is an open
     * datagram socket with nothing queued (libloop's DirectWritable, its
     * write gate: libloop/writegate.go, whose one transition tells every
     * change to capi's DirectChanged, turning it off before the core
     * buffers, queues or closes fd); so on the loop's thread
     * ll_transport_write* may make a write's first send on fd from C
     * whenever it is LL__DIRECT_STREAM, and ll_transport_sendto (and
     * ll_transport_write) a datagram's one sendto whenever it is
     * LL__DIRECT_DGRAM, and hand Go the rest (send.c, udpsend.c). */
    int32_t fd;
    int16_t direct; /* 0, LL__DIRECT_STREAM or LL__DIRECT_DGRAM */
    /* Read events (LL_DATA_RECEIVED, LL_DATAGRAM_RECEIVED, LL_EOF_RECEIVED)
     * are withheld while held is not 0: LL__HELD_STATE exactly while the
     * core's ReadsDelivered is false (paused, closing, closed, or older
     * reads withheld: libloop/withheld.go), kept by capi's ReadsChanged;
     * LL__HELD_BATCH from the moment C withholds one of the transport's
     * read events in a delivery until Go has taken it back, so that none of
     * its later read events overtakes it. */
    int16_t held;
} ll__proto;

/* The write gate's flag by the transport's kind: a stream's first try is a
 * send (send.c); a datagram transport's is one sendto (udpsend.c), whose
 * errors go to Go, never to a second try from C. */
#define LL__DIRECT_STREAM 1
#define LL__DIRECT_DGRAM 2

#define LL__HELD_STATE 1
#define LL__HELD_BATCH 2

/* initial-exec: a plain %fs-relative load instead of a __tls_get_addr call
 * on every ll_call_soon (the Go runtime in this library uses it too). */
#define LL_TLS __thread __attribute__((tls_model("initial-exec")))
#define LL__HIDDEN __attribute__((visibility("hidden")))

/* ---- The calling thread (thread.c) ---- */

/* The loop whose batch this thread is running (0 if none) and its record. */
typedef struct ll__batch_ctx {
    uint64_t loop;
    ll__pending *pending;
} ll__batch_ctx;
extern LL_TLS LL__HIDDEN ll__batch_ctx ll__batch;

/* Mark this thread as running loop's batch; returns the marking to restore
 * with ll__batch_leave (batches nest: a callback may run a nested loop's). */
static inline ll__batch_ctx ll__batch_enter(uint64_t loop, ll__pending *pending) {
    ll__batch_ctx saved = ll__batch;
    ll__batch.loop = loop;
    ll__batch.pending = pending;
    return saved;
}
static inline void ll__batch_leave(ll__batch_ctx saved) { ll__batch = saved; }

/* The loop that ll_loop_run_* (or ll_run) runs on the calling thread, 0 if
 * none: the wrong-thread check compares it with the loop a call concerns. */
extern LL_TLS LL__HIDDEN uint64_t ll__thread_loop;
/* Set it (ll_run learns its loop's id only once Go has made the loop). */
void ll__set_thread_loop(uint64_t loop);
/* A value naming this thread to Go, distinct among live threads. */
LL__HIDDEN uintptr_t ll__thread_token(void);
/* The record of the batch running on this thread if it is loop's, or NULL.
 * Inline: the timer calls ask it first, every call. */
static inline ll__pending *ll__batch_queue(uint64_t loop) {
    return loop != 0 && loop == ll__batch.loop ? ll__batch.pending : NULL;
}

/* A pending entry with this fn is not a callback: it records that the
 * running step yielded (ll_task_yield answered in C, soon.c). */
#define LL__YIELD_MARK ((uintptr_t)1)

/* ll_loop_run's modes reach Go's run entry as LL_RUN_* | LL__RUN_ALIVE
 * (run.c; capi/loops.go), apart from ll_loop_run_once's. */
#define LL__RUN_ALIVE 0x100

/* ---- Records (record.c) ---- */

ll__pending *ll__pending_new(void);
/* Register p as loop's idle queue / open or close it / retire it (the
 * record is kept for reuse: a late lookup never reads freed memory). */
void ll__pending_register(ll__pending *p, uint64_t loop);
void ll__pending_set_open(ll__pending *p, int open);
void ll__pending_retire(ll__pending *p);
/* The registry by loop id (record.c); a slot is written only by
 * register/retire, read by anyone. */
#define LL__REG_SIZE 64
LL__HIDDEN extern ll__pending *ll__registry[LL__REG_SIZE];
/* The queue of an idle loop, or NULL (running, closed, unknown, or left
 * out of the registry). Inline: it is on the path of every call_soon and
 * call_later made while the loop is idle, and a call costs more there
 * than the lookup. */
static inline ll__pending *ll__idle_queue(uint64_t loop) {
    ll__pending *p = __atomic_load_n(&ll__registry[loop % LL__REG_SIZE], __ATOMIC_ACQUIRE);
    if (p == NULL || __atomic_load_n(&p->loop_id, __ATOMIC_ACQUIRE) != loop ||
        !__atomic_load_n(&p->open, __ATOMIC_ACQUIRE))
        return NULL;
    return p;
}
/* A registered loop's record, running or idle, or NULL. */
LL__HIDDEN ll__pending *ll__loop_record(uint64_t loop);

#include "fspool.h" /* the callback form's file pool: records and calls */

/* ---- The loop clock (clock.c) ----
 * Inline: ll_call_later reads the clock once per timer, and a call out
 * cost ~6 instructions a timer on top of clock_gettime's own. */

/* The loop clock's base in CLOCK_MONOTONIC nanoseconds, from Go. */
void ll__set_clock_base(int64_t base);
extern LL__HIDDEN int64_t ll__clock_base;

/* CLOCK_MONOTONIC (Go's nanotime) in nanoseconds. */
static inline int64_t ll__clock_raw(void) {
    struct timespec ts;
#ifdef __APPLE__
    clock_gettime(CLOCK_UPTIME_RAW, &ts); /* Go's nanotime there: mach_absolute_time */
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The loop's "now" in nanoseconds, as Go's Loop.Time computes it. */
static inline int64_t ll__clock_now(void) {
    return ll__clock_raw() - __atomic_load_n(&ll__clock_base, __ATOMIC_ACQUIRE);
}

#ifdef __linux__
#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
/* The runners' own system calls, made here rather than through libc on
 * x86-64: a call returns with the CPU's return predictions flushed
 * (Spectre/SRSO mitigations), so each frame it returns through costs
 * ~6 ns, and libc's epoll_wait, read and send are cancellation points
 * (~15 ns more; an ll_transport_write that sent all took 117 instructions
 * through libc's send, 52 with ll__send_now: callgrind, W5's server).
 * ll__sys6 is the one raw call; each wrapper returns the count, or
 * -errno. */
static inline long ll__sys6(long nr, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#else
    long ret = syscall(nr, a, b, c, d, e, f);
    return ret < 0 ? -errno : ret;
#endif
}
#ifndef SYS_epoll_wait
#define SYS_epoll_wait SYS_epoll_pwait /* its mask argument is left NULL */
#endif

/* epoll_wait(epfd, events, max, 0): the event count, or -errno. */
static inline long ll__poll_now(int epfd, void *events, int max) {
    return ll__sys6(SYS_epoll_wait, epfd, (long)events, max, 0, 0, 0);
}

/* epoll_wait(epfd, events, max, ms): the event count, or -errno (the
 * read gate's poll that may block). */
static inline long ll__poll_wait(int epfd, void *events, int max, int ms) {
    return ll__sys6(SYS_epoll_wait, epfd, (long)events, max, ms, 0, 0);
}

/* read(fd, buf, len): the byte count, or -errno. */
static inline long ll__read_now(int fd, void *buf, size_t len) {
    return ll__sys6(SYS_read, fd, (long)buf, (long)len, 0, 0, 0);
}

/* send(fd, buf, len, MSG_NOSIGNAL), as sendto with no address: the byte
 * count, or -errno (the write fast path, send.c). */
static inline long ll__send_now(int fd, const void *buf, size_t len) {
    return ll__sys6(SYS_sendto, fd, (long)buf, (long)len, MSG_NOSIGNAL, 0, 0);
}
#endif

/* ---- Runners (batch.c, chain.c, deliver.c): Go runs host code ---- */

/* Pointers travel as uintptr_t: they are C memory, and this spares the
 * cgo pointer checks on the hottest call. */
void ll__run_batch(uint64_t loop, uintptr_t calls, int n, uintptr_t pending);
void ll__run_chain(uint64_t loop, uintptr_t calls, int n, uintptr_t pending);
void ll__run_soon_array(uint64_t loop, uintptr_t items, int64_t n, uintptr_t pending);
ll__call *ll__alloc_calls(int n);
/* Run n due handle timers (timerslab.h) in order, as a batch of loop. */
void ll__ts_fire_many(uint64_t loop, const uint32_t *slots, int64_t n, ll__pending *pending);
/* Deliver n events: each to its protocol, runs of protocol-less events to
 * the batch sink (batch_fn may be 0). One crossing for all of them. Sets
 * pending's withheld. */
void ll__deliver_events(uint64_t loop, uintptr_t events, uintptr_t protos, int n, uintptr_t pending,
                        uintptr_t batch_fn, uintptr_t batch_arg);

/* After a delivery, while p->gate.on: the read gate's iterations.
 * changes0 is the view's change counter from before that delivery, so a
 * change its callbacks made ends the gate too. */
void ll__gate_run(uint64_t loop, ll__pending *p, uint64_t changes0);
/* The gate's fd map: Go puts a transport's fd when it gets its id and
 * deletes it when the id ends (delete: only if fd still names id). */
void ll__fdmap_put(ll__pending *p, int32_t fd, uint64_t id);
void ll__fdmap_del(ll__pending *p, int32_t fd, uint64_t id);
void ll__fdmap_free(ll__pending *p);

/* ---- Host function pointers Go calls (hostcall.c) ---- */

void ll__call_exception_handler(uintptr_t fn, uint64_t loop, ll_error_context *ctx, uintptr_t arg);
void ll__call_free(uintptr_t fn, uintptr_t value);
uintptr_t ll__call_work(uintptr_t fn, uintptr_t arg, int *err);
void ll__call_queued_work(uintptr_t fn, uintptr_t arg);
int ll__call_host_run(uintptr_t fn, uint64_t loop, uintptr_t arg);

/* ---- Transports (tmap.c, deliver.c) ---- */

static inline int ll__is_read_event(int kind) {
    return kind == LL_DATA_RECEIVED || kind == LL_DATAGRAM_RECEIVED || kind == LL_EOF_RECEIVED;
}

/* Withhold ev if it is a read event its transport (slot p) must not get
 * now: its kind becomes 0, which tells Go it was not delivered. Returns 1
 * if withheld. */
static inline int ll__withhold(ll_event *ev, ll__proto *p) {
    /* held first: it is almost always 0, so the usual cost is one load. */
    if (p == NULL || ((volatile ll__proto *)p)->held == 0 || !ll__is_read_event(ev->kind))
        return 0;
    ev->kind = 0;
    ((volatile ll__proto *)p)->held |= LL__HELD_BATCH;
    return 1;
}

/* The loop's transport map. put: 0, or -1 if memory ran out (the
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

/* The protocol slot of transport t if this thread runs t's loop, else NULL
 * (another thread, no loop running here, an unknown or ended id): the
 * write fast paths' lookup (send.c, udpsend.c), valid at any time on the
 * loop's thread. The slot's direct flag is exact there (ll__proto), and Go
 * runs nothing of this loop on another thread meanwhile. */
static inline ll__proto *ll__direct_slot(uint64_t t) {
    uint64_t loop = ll__thread_loop;
    if (loop == 0 || t == 0)
        return NULL;
    const ll__pending *p = loop == ll__batch.loop ? ll__batch.pending : ll__loop_record(loop);
    return p != NULL ? ll__tmap_get(p, t) : NULL;
}

/* A datagram's one sendto on slot p of transport t, whose flag is
 * LL__DIRECT_DGRAM (udpsend.c): 0 when sent; else what Go's path gives
 * (queued on a would-block; any other error reported as error_received). */
LL__HIDDEN int ll__udp_send_direct(uint64_t t, const ll__proto *p, const void *data, size_t len, const void *addr,
                                   uint32_t addrlen);

/* ---- Go's side: capi's //export functions that C calls ----
 * Each is the slow path of a public call, behind the same checks as a call
 * that never had a fast path. Declared here with the types cgo gives their
 * prototypes (capi's _cgo_export.h repeats them: they must agree). */
int ll__call_soon_go(uint64_t caller, uint64_t id, uintptr_t cb, uintptr_t arg, uint64_t *out);
int ll__call_later_go(uint64_t caller, uint64_t id, double delay, ll_callback cb, void *arg, uint64_t *out);
int ll__call_at_go(uint64_t caller, uint64_t id, double when, ll_callback cb, void *arg, uint64_t *out);
int ll__call_soon_threadsafe_go(uint64_t id, ll_callback cb, void *arg);
int ll__fs_io_go(uint64_t loop, int fd, void *buf, size_t n, int64_t offset, ll_fs_callback cb, void *arg, int write);
void ll__fs_run_go(uint64_t loop, uint64_t job);
int ll__loop_host_ready_go(uint64_t id);
int ll__handle_cancel_go(uint64_t caller, uint64_t id);
int ll__task_yield_go(uint64_t task);
int ll__task_sleep_go(uint64_t task, double delay);
int ll__loop_new(uint64_t *out);
int ll__loop_run_go(uint64_t id, int mode, uintptr_t tok);
int ll__run_until_complete_go(uint64_t loop, uint64_t fut, uintptr_t tok);
int ll__run_go(uintptr_t step, uintptr_t arg, uintptr_t *result, uintptr_t tok);
int ll__loop_close_go(uint64_t id, uintptr_t tok);
int ll__release_go(uint64_t id, uintptr_t tok);
int ll__transport_write_go(uint64_t id, void *data, size_t n);
int ll__transport_write_async_size_go(uint64_t id, const void *data, size_t n, size_t *buffered);
int ll__transport_sendto_go(uint64_t id, const void *data, size_t n, const void *addr, uint32_t addrlen);
int ll__udp_send_failed_go(uint64_t id, int errnum);
int ll__udp_sendmany_go(uint64_t id, const ll_datagram *d, size_t n, int flags);
/* Take the loop's C-side queues into Go now (its timer queue is full). */
void ll__flush_pending_go(uint64_t id);

#endif
