/* SPDX-License-Identifier: MIT */
/* Internal: the callback form's file pool (fspool.c). Not installed;
 * included by cloop.h only, after the loop's record (ll__pending), which
 * these calls take. */
#ifndef LIBLOOP_FSPOOL_H
#define LIBLOOP_FSPOOL_H

/* ll_fs_read_cb and ll_fs_write_cb run their pread/pwrite on C threads
 * (no Go scheduler per job: a Go worker parks and wakes through the
 * runtime, ~2.5x libuv's context switches a 1 MiB read) and post each
 * outcome to the loop's post queue (postq.c), which the loop takes whole
 * per wake-up. The terms are the core's: Go opens the pool with the
 * core's bound (Loop.FSWorkers) and passes on every SetFSWorkers, and
 * closes it where the core closes its own file pool. The mechanism is the
 * core pool's: jobs start in FIFO order on at most max threads, started
 * on demand and kept idle; outcomes run in the order they were posted. */
typedef struct ll__fsjob {
    struct ll__fsjob *next; /* the queue, or the free list */
    struct ll__fspool *pool;
    /* What the job is (LL__FSJOB_*): a read or write called back (cb),
     * one whose future is the core's (core: capi's token for it), or
     * one of the core's own calls (core: its id), which the core runs
     * on the worker (ll__fs_run_go) and posts itself. */
    int32_t kind;
    /* A future's job: LL__FSJOB_QUEUED until a worker starts it or capi
     * withdraws it (a cancel), whichever comes first (compare-and-swap). */
    int32_t state;
    uint64_t core;
    void *buf;
    size_t len;
    int64_t off; /* -1: read(2)/write(2) at the file position */
    ll_fs_callback cb;
    void *arg;
    int32_t fd;
    int32_t write;
    int64_t result; /* byte count or -errno, set by the worker */
} ll__fsjob;

enum { LL__FSJOB_CB, LL__FSJOB_FUTURE, LL__FSJOB_GO };
enum { LL__FSJOB_QUEUED, LL__FSJOB_STARTED, LL__FSJOB_WITHDRAWN };

/* Jobs are carved from blocks that stay with the pool (a completion the
 * post queue drops at close is never freed by hand). */
#define LL__FSJOB_BLOCK 64
typedef struct ll__fsblock {
    struct ll__fsblock *next;
    ll__fsjob jobs[LL__FSJOB_BLOCK];
} ll__fsblock;

/* A worker spinning for a job before it parks (fs_worker): on its stack,
 * named by the pool's spinner while it spins. A submitter that finds it
 * claims it (claimed = 1, spinner = NULL, both under mu) instead of
 * waking a parked worker: no system call on either side. */
typedef struct ll__fsspinner {
    int32_t claimed;
} ll__fsspinner;

typedef struct ll__fspool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* idle workers wait here (the portable branch; Linux's: seq) */
    uint32_t seq;        /* Linux: the futex word idle workers sleep on, bumped per wake */
    pthread_cond_t gone; /* close waits here for the workers to leave */
    ll__fsjob *head, *tail; /* queued jobs, FIFO (mu) */
    uint64_t loop;          /* the loop served; 0 while closed (mu) */
    struct ll__postq *q;
    int32_t wakefd;             /* the loop's eventfd, or -1 (ll__postq_wakefd) */
    int32_t max, workers, idle; /* mu */
    int32_t waking;             /* idle workers signalled, not yet awake (mu) */
    ll__fsspinner *spinner;     /* the one worker spinning unclaimed, or NULL (mu) */
    /* Spins in a row that no job came to, and turns (a worker that ran a
     * job finding the queue empty) left without a spin (mu): fspool.c's
     * may_spin and fs_worker say when the pool stops spinning. */
    int32_t spin_misses;
    int32_t spin_skip;
    /* Jobs queued, running, or posted and not yet called back: they keep
     * the loop alive (capi's Outstanding). Dropped by the loop as it runs
     * the outcome (a post refused at close: by the worker; close clears
     * it), so a loop that ran every outcome never waits for one. */
    int64_t outstanding;
    /* The loop thread's: free jobs and the blocks they come from. */
    ll__fsjob *free;
    ll__fsblock *blocks;
    /* Core jobs the workers are done with (no outcome of ours to run on
     * the loop thread to free them): pushed by the workers, taken whole
     * by the loop thread when free runs out. */
    ll__fsjob *returned;
    /* The loop thread's: future jobs whose outcome the loop took, in
     * order, for capi to resolve their futures once the post batch has run
     * (finishFSFutures) and to put back on free. */
    ll__fsjob *finished, *finished_tail;
} ll__fspool;

/* The loop's wake-up fd for this thread's posts (postq.c), or -1 (the default: the
 * wake goes through Go, which knows whether the fd is still open). Set
 * only by a thread that the loop's close waits for before it closes the
 * fd (the file pool's workers, fspool.c): a post's wake then writes it
 * from C, with no crossing into Go from a thread Go does not know. */
extern LL_TLS LL__HIDDEN int ll__postq_wakefd;
/* Open p's pool for loop with at most max threads (the core's bound) and
 * wakefd (the core's WakeFD, open until the loop closes, which closes the
 * pool first):
 * 0, or -1 if there is no memory or no post queue (the core's pool serves
 * the calls then). Loop's thread, or the loop idle. */
int ll__fspool_open(ll__pending *p, uint64_t loop, int max, int wakefd);
/* The core's new bound; threads above it leave once idle. */
void ll__fspool_set_max(ll__pending *p, int max);
/* Withdraw the queued jobs (their callbacks never run), wait for the
 * started ones (their outcomes are dropped: the post queue is closed
 * first), and take every job back. The loop not running. */
void ll__fspool_close(ll__pending *p);
/* Queue the core's file job id (libloop's FSThreads) on an open pool,
 * behind the queued reads and writes: 0, or an LL_ error. Loop's thread. */
int ll__fspool_submit_go(ll__fspool *pool, uint64_t id);
/* Queue a read or write whose future is the core's (capi's token names
 * it): the job, or NULL (no memory, no thread). Loop's thread. */
ll__fsjob *ll__fspool_submit_future(ll__fspool *pool, int fd, void *buf, size_t len, int64_t off, int is_write,
                                    uint64_t token);
/* Queue a job on an open pool: 0, or an LL_ error. Loop's thread. */
int ll__fspool_submit(ll__fspool *pool, int fd, void *buf, size_t len, int64_t off, ll_fs_callback cb, void *arg,
                      int is_write);

#endif
