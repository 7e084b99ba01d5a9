/* SPDX-License-Identifier: MIT */
/* The callback form's file pool (cloop.h, "The callback form's file
 * pool"): ll_fs_read_cb and ll_fs_write_cb, a C thread per running job.
 * A worker makes the system call and posts the outcome to the loop's post
 * queue; nothing here enters Go. The bound, the FIFO order and when the
 * pool opens and closes are the core's (capi/fs.go tells them). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
/* The portable branch, for systems with neither futexes nor an eventfd
 * (the BSDs, macOS): idle workers wait on a condition variable and a
 * post's wake-up goes through Go. LL__FSPOOL_PORTABLE builds it on Linux
 * too, so that it is compiled and tested there (`make test-fs-portable`,
 * part of `make test-c`). */
#if defined(__linux__) && !defined(LL__FSPOOL_PORTABLE)
#define FS_LINUX 1
#include <linux/futex.h>
#include <sys/syscall.h>
#else
#define FS_LINUX 0
#endif
#include "cloop.h"

/* Which branch this build has, readable in the library's bytes: the
 * portable build's recipe in the Makefile checks for it, so a define that
 * did not reach the compiler fails the build instead of testing the Linux
 * branch twice. */
#if FS_LINUX
__attribute__((used)) static const char fs_branch[] = "libloop file pool: futex branch";
#else
__attribute__((used)) static const char fs_branch[] = "libloop file pool: portable branch";
#endif

/* Where idle workers sleep. On Linux a futex word bumped by every wake
 * (as the core's workerPark): glibc's condition variable made the loop
 * thread itself wait in pthread_cond_signal (its group switch waits for
 * the old group's waiters) ~14% of a 4 KiB read's time at 16 in flight.
 * Elsewhere the condition variable. park_wait is called and returns
 * with mu held; park_prepare (mu held) makes a worker on its way to sleep
 * not sleep, park_wake wakes n sleepers after mu is released. */
#if FS_LINUX
static void park_wait(ll__fspool *pool) {
    uint32_t seen = __atomic_load_n(&pool->seq, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pool->mu);
    syscall(SYS_futex, &pool->seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
    pthread_mutex_lock(&pool->mu);
}
static void park_prepare(ll__fspool *pool) { __atomic_fetch_add(&pool->seq, 1, __ATOMIC_SEQ_CST); }
static void park_wake(ll__fspool *pool, int n) { syscall(SYS_futex, &pool->seq, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0); }
#else
static void park_wait(ll__fspool *pool) { pthread_cond_wait(&pool->work, &pool->mu); }
static void park_prepare(ll__fspool *pool) { (void)pool; }
static void park_wake(ll__fspool *pool, int n) {
    if (n == 1)
        pthread_cond_signal(&pool->work);
    else
        pthread_cond_broadcast(&pool->work);
}
#endif

/* How long a worker that ran a job spins for the next before it parks.
 * With one read in flight the next job comes when the loop thread has
 * woken for the outcome, run its callback and submitted: a parked worker
 * then costs the submitter a futex wake and the read a sleeping thread's
 * wake-up (~14 us on a Firecracker VM), a spinning one neither. Budgets of
 * a few tens of us catch the next read at 1 in flight (bench-fs); the
 * spin is burnt CPU when no job comes, bounded by this per job run. */
#ifndef LL__FSPOOL_SPIN_NS
#define LL__FSPOOL_SPIN_NS 50000
#endif
/* When the pool stops spinning. After LL__FSPOOL_SPIN_MISSES spins in a
 * row that no job came to, for LL__FSPOOL_SPIN_PROBE turns (a worker that
 * ran a job finding the queue empty) per further miss: an application
 * that reads once a millisecond would pay a spin per read for nothing.
 * After a spin during which another thread took the worker's CPU
 * (cpu_taken), for LL__FSPOOL_SPIN_BUSY turns: on a machine whose CPUs
 * are all taken a claimed spinner may wait a slice for its CPU, and
 * spinning workers, never asleep, lose the scheduler's preference for a
 * woken thread; and a spinner on the loop thread's own CPU keeps the loop
 * sleeping and woken per read (it lingers for an outcome the spinner it
 * claimed cannot produce). Under a load of 14 on 2 cores, bench-fs at
 * 4 KiB/16 fell from ~190,000 to 100,000-140,000 reads/s with a spinner
 * that kept trying. */
#define LL__FSPOOL_SPIN_MISSES 4
#define LL__FSPOOL_SPIN_PROBE 64
#define LL__FSPOOL_SPIN_BUSY 256

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spin until a submitter claims me or the budget is spent (mu not held).
 * Every 64 pauses (~1.6 us here) end in sched_yield, so that a spinner
 * sharing its CPU with the loop thread lets it run to submit the job the
 * spinner waits for. */
static void spin_wait(const ll__fsspinner *me) {
    int64_t until = mono_ns() + LL__FSPOOL_SPIN_NS;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (__atomic_load_n(&me->claimed, __ATOMIC_ACQUIRE))
                return;
            ll__postq_cpu_relax();
        }
        if (mono_ns() >= until)
            return;
        sched_yield();
    }
}

/* Whether another thread took this worker's CPU since the last call
 * (*seen: its count of involuntary switches then): a yield that ran
 * someone else, or a preemption, counts; a vCPU the host took away for a
 * while (steal time) does not. Where the count is not known, no. */
static int cpu_taken(long *seen) {
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    int taken = ru.ru_nivcsw != *seen;
    *seen = ru.ru_nivcsw;
    return taken;
#else
    (void)seen;
    return 0;
#endif
}

/* Whether a worker that ran a job and finds the queue empty spins (mu
 * held): one spinner at most (on a machine of few cores more would take
 * the CPU from the loop thread and the running jobs), and seldom once
 * spins keep missing. */
static int may_spin(ll__fspool *pool) {
    if (LL__FSPOOL_SPIN_NS <= 0 || pool->spinner != NULL || pool->loop == 0)
        return 0;
    if (pool->spin_skip > 0) {
        pool->spin_skip--;
        return 0;
    }
    return 1;
}

/* Count a spin's outcome (mu held): see LL__FSPOOL_SPIN_MISSES. */
static void spun(ll__fspool *pool, int claimed, int lost) {
    if (lost) {
        pool->spin_skip = LL__FSPOOL_SPIN_BUSY;
    } else if (claimed) {
        pool->spin_misses = 0;
    } else if (++pool->spin_misses >= LL__FSPOOL_SPIN_MISSES) {
        pool->spin_misses = LL__FSPOOL_SPIN_MISSES; /* each further miss skips again */
        pool->spin_skip = LL__FSPOOL_SPIN_PROBE;
    }
}

/* Hand the queue's newest job to an idle worker (mu held): the spinning
 * one if any, claimed here; else an idle one not yet signalled, returned
 * 1 to be woken after mu is released (park_wake); else 0, nobody. */
static int hand_to_idle(ll__fspool *pool, int *wake) {
    *wake = 0;
    if (pool->spinner != NULL) {
        __atomic_store_n(&pool->spinner->claimed, 1, __ATOMIC_RELEASE);
        pool->spinner = NULL;
        return 1;
    }
    if (pool->idle > pool->waking) {
        pool->waking++;
        park_prepare(pool);
        *wake = 1;
        return 1;
    }
    return 0;
}

/* Claim the spinner, if any, so that it re-checks the pool at once (mu
 * held): the pool closes or its bound changed. */
static void stop_spinner(ll__fspool *pool) {
    if (pool->spinner != NULL) {
        __atomic_store_n(&pool->spinner->claimed, 1, __ATOMIC_RELEASE);
        pool->spinner = NULL;
    }
}

/* A job's system call, repeated on EINTR (a signal landed on the worker;
 * pipes and FUSE may see it). */
static int64_t fs_run(const ll__fsjob *j) {
    for (;;) {
        ssize_t n;
        if (j->write)
            n = j->off < 0 ? write(j->fd, j->buf, j->len) : pwrite(j->fd, j->buf, j->len, (off_t)j->off);
        else
            n = j->off < 0 ? read(j->fd, j->buf, j->len) : pread(j->fd, j->buf, j->len, (off_t)j->off);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return -(int64_t)errno;
    }
}

/* The posted outcome, run on the loop thread: the job goes back to the
 * free list before the callback, which may submit the next one. */
static void fs_done(ll_loop loop, void *arg) {
    ll__fsjob *j = arg;
    ll_fs_callback cb = j->cb;
    void *cbarg = j->arg;
    int result = (int)j->result;
    j->next = j->pool->free;
    j->pool->free = j;
    __atomic_fetch_sub(&j->pool->outstanding, 1, __ATOMIC_SEQ_CST);
    cb(loop, result, cbarg);
}

/* A future job's posted outcome, on the loop thread: kept, in order, for
 * capi to resolve the future once the batch has run (no crossing into
 * Go per outcome). */
static void fs_finished(ll_loop loop, void *arg) {
    (void)loop;
    ll__fsjob *j = arg;
    ll__fspool *pool = j->pool;
    j->next = NULL;
    if (pool->finished_tail != NULL)
        pool->finished_tail->next = j;
    else
        pool->finished = j;
    pool->finished_tail = j;
}

static void *fs_worker(void *arg) {
    ll__fspool *pool = arg;
    int ran = 0;        /* a job since this worker last spun: it may spin */
    long switches = 0;  /* its involuntary switches when it last looked (cpu_taken) */
#ifdef __linux__
    /* Named for top -H and for the tests, which find the pool's threads
     * by this name in /proc (test_fs_spin.c). */
    prctl(PR_SET_NAME, "ll-fs", 0, 0, 0);
#endif
    /* A spin counts the switches since the last one (or since here): a job
     * preempted meanwhile tells of a busy machine as well. */
    (void)cpu_taken(&switches);
    pthread_mutex_lock(&pool->mu);
    ll__postq_wakefd = pool->wakefd; /* set at open, before this thread started */
    for (;;) {
        /* Above a lowered bound, or closed with nothing queued: leave. The
         * check and the count's drop share one hold of mu, so only the
         * surplus leaves. */
        if (pool->workers > pool->max || (pool->head == NULL && pool->loop == 0))
            break;
        if (pool->head == NULL && ran && may_spin(pool)) {
            /* A claimed spinner has a job queued for it (or a close, or a
             * new bound, to see); an unclaimed one withdraws and parks.
             * Claims are made under mu: read under it, me.claimed is
             * final. */
            ll__fsspinner me = {0};
            pool->spinner = &me;
            ran = 0;
            pthread_mutex_unlock(&pool->mu);
            spin_wait(&me);
            int lost = cpu_taken(&switches);
            pthread_mutex_lock(&pool->mu);
            if (!me.claimed)
                pool->spinner = NULL;
            spun(pool, me.claimed, lost);
            continue;
        }
        if (pool->head == NULL) {
            pool->idle++;
            park_wait(pool);
            pool->idle--;
            if (pool->waking > 0)
                pool->waking--; /* this wake-up (or a spurious one) has come */
            continue;
        }
        ll__fsjob *j = pool->head;
        ran = 1;
        pool->head = j->next;
        if (pool->head == NULL)
            pool->tail = NULL;
        uint64_t loop = pool->loop;
        ll__postq *q = pool->q;
        pthread_mutex_unlock(&pool->mu);
        if (j->kind == LL__FSJOB_GO) {
            /* The core's call: it runs and posts it; the job comes back
             * through returned (the loop thread owns free). */
            ll__fs_run_go(loop, j->core);
            ll__fsjob *top = __atomic_load_n(&pool->returned, __ATOMIC_RELAXED);
            do
                j->next = top;
            while (!__atomic_compare_exchange_n(&pool->returned, &top, j, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
            pthread_mutex_lock(&pool->mu);
            continue;
        }
        if (j->kind == LL__FSJOB_CB) {
            j->result = fs_run(j);
            /* A closed queue refuses the post: the job is taken back at
             * close. A posted job stays outstanding until fs_done runs
             * it: dropped here, after the post, the loop could take and
             * run the post first, see the job still out, and block with
             * nobody to wake it. */
            if (ll__postq_push(q, loop, (uintptr_t)fs_done, (uintptr_t)j) != 0)
                __atomic_fetch_sub(&pool->outstanding, 1, __ATOMIC_SEQ_CST);
        } else {
            /* A future's: withdrawn by a cancel, it does not run, but its
             * outcome still comes back (the job is freed there). */
            int32_t queued = LL__FSJOB_QUEUED;
            if (__atomic_compare_exchange_n(&j->state, &queued, LL__FSJOB_STARTED, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                j->result = fs_run(j);
            else
                j->result = -ECANCELED;
            (void)ll__postq_push(q, loop, (uintptr_t)fs_finished, (uintptr_t)j); /* refused: closed */
        }
        pthread_mutex_lock(&pool->mu);
    }
    pool->workers--;
    /* Leaving with jobs queued (a lowered bound), this may be the worker
     * signalled or claimed for them: pass the wake-up on. */
    int wake;
    if (pool->head != NULL && hand_to_idle(pool, &wake) && wake)
        park_wake(pool, 1);
    if (pool->workers == 0)
        pthread_cond_broadcast(&pool->gone);
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

int ll__fspool_open(ll__pending *p, uint64_t loop, int max, int wakefd) {
    if (p->postq == NULL)
        return -1;
    ll__fspool *pool = p->fspool;
    if (pool == NULL) {
        pool = calloc(1, sizeof *pool);
        if (pool == NULL)
            return -1;
        pthread_mutex_init(&pool->mu, NULL);
        pthread_cond_init(&pool->work, NULL);
        pthread_cond_init(&pool->gone, NULL);
        p->fspool = pool;
    }
    pthread_mutex_lock(&pool->mu);
    pool->q = p->postq;
    pool->max = max;
    /* The portable branch wakes through Go, as where the loop has no
     * eventfd (kqueue: the core's WakeFD is -1). */
    pool->wakefd = FS_LINUX ? wakefd : -1;
    pool->waking = 0; /* no worker: the last close saw them all leave */
    pool->spin_misses = pool->spin_skip = 0;
    __atomic_store_n(&pool->loop, loop, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pool->mu);
    return 0;
}

void ll__fspool_set_max(ll__pending *p, int max) {
    ll__fspool *pool = p->fspool;
    if (pool == NULL)
        return;
    pthread_mutex_lock(&pool->mu);
    pool->max = max;
    stop_spinner(pool);
    pool->waking = pool->idle;
    park_prepare(pool);
    park_wake(pool, INT_MAX); /* those above the bound leave */
    pthread_mutex_unlock(&pool->mu);
}

void ll__fspool_close(ll__pending *p) {
    ll__fspool *pool = p->fspool;
    if (pool == NULL)
        return;
    pthread_mutex_lock(&pool->mu);
    __atomic_store_n(&pool->loop, 0, __ATOMIC_RELEASE);
    pool->head = pool->tail = NULL; /* withdrawn: taken back below */
    stop_spinner(pool);
    pool->waking = pool->idle;
    park_prepare(pool);
    park_wake(pool, INT_MAX);
    while (pool->workers > 0)
        pthread_cond_wait(&pool->gone, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    /* No worker is left and the post queue dropped what it held: every
     * job is free again, and none is outstanding. */
    __atomic_store_n(&pool->outstanding, 0, __ATOMIC_SEQ_CST);
    pool->free = pool->returned = pool->finished = pool->finished_tail = NULL;
    for (ll__fsblock *b = pool->blocks; b != NULL; b = b->next)
        for (int i = 0; i < LL__FSJOB_BLOCK; i++) {
            b->jobs[i].next = pool->free;
            pool->free = &b->jobs[i];
        }
}

/* A free job, from a new block if none is left (loop thread). */
static ll__fsjob *fs_job(ll__fspool *pool) {
    if (pool->free == NULL)
        pool->free = __atomic_exchange_n(&pool->returned, NULL, __ATOMIC_ACQUIRE);
    if (pool->free == NULL) {
        ll__fsblock *b = calloc(1, sizeof *b);
        if (b == NULL)
            return NULL;
        b->next = pool->blocks;
        pool->blocks = b;
        for (int i = 0; i < LL__FSJOB_BLOCK; i++) {
            b->jobs[i].next = pool->free;
            pool->free = &b->jobs[i];
        }
    }
    ll__fsjob *j = pool->free;
    pool->free = j->next;
    return j;
}

/* Queue j (taken from free) and see that a thread will run it: 0, or
 * LL_ENOMEM with j back on free when there is no thread to run it. */
static int fs_queue(ll__fspool *pool, ll__fsjob *j) {
    pthread_mutex_lock(&pool->mu);
    if (pool->tail != NULL)
        pool->tail->next = j;
    else
        pool->head = j;
    pool->tail = j;
    int rc = 0, wake = 0;
    /* As libuv's uv_cond_signal per request: a few slow jobs in flight
     * start at once. Counted: a spinner claimed or an idle worker
     * already signalled is no worker for this job, which then makes a
     * thread if the bound allows (the core pool's rule). */
    if (!hand_to_idle(pool, &wake) && pool->workers < pool->max) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, fs_worker, pool) == 0)
            pool->workers++;
        else if (pool->workers == 0)
            rc = LL_ENOMEM; /* no thread to run it: refused, not queued */
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        pool->head = pool->tail = NULL; /* j was the only job: no worker means none queued */
        j->next = pool->free;
        pool->free = j;
    }
    pthread_mutex_unlock(&pool->mu);
    /* Signalled after the unlock: woken under it, the worker would find
     * mu held and sleep again on it. It re-checks the queue under mu, and
     * it is counted idle until it does, so no signal is lost. */
    if (wake)
        park_wake(pool, 1);
    return rc;
}

int ll__fspool_submit(ll__fspool *pool, int fd, void *buf, size_t len, int64_t off, ll_fs_callback cb, void *arg,
                      int is_write) {
    ll__fsjob *j = fs_job(pool);
    if (j == NULL)
        return LL_ENOMEM;
    *j = (ll__fsjob){.kind = LL__FSJOB_CB,
                     .buf = buf,
                     .len = len,
                     .off = off,
                     .cb = cb,
                     .arg = arg,
                     .fd = fd,
                     .write = is_write,
                     .pool = pool};
    __atomic_fetch_add(&pool->outstanding, 1, __ATOMIC_SEQ_CST);
    int rc = fs_queue(pool, j);
    if (rc != 0)
        __atomic_fetch_sub(&pool->outstanding, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* The core counts its own jobs as pending (they keep the loop alive there),
 * so they are not outstanding here. */
int ll__fspool_submit_go(ll__fspool *pool, uint64_t id) {
    ll__fsjob *j = fs_job(pool);
    if (j == NULL)
        return LL_ENOMEM;
    *j = (ll__fsjob){.kind = LL__FSJOB_GO, .core = id, .pool = pool};
    return fs_queue(pool, j);
}

ll__fsjob *ll__fspool_submit_future(ll__fspool *pool, int fd, void *buf, size_t len, int64_t off, int is_write,
                                    uint64_t token) {
    ll__fsjob *j = fs_job(pool);
    if (j == NULL)
        return NULL;
    *j = (ll__fsjob){.kind = LL__FSJOB_FUTURE,
                     .core = token,
                     .buf = buf,
                     .len = len,
                     .off = off,
                     .fd = fd,
                     .write = is_write,
                     .pool = pool};
    return fs_queue(pool, j) == 0 ? j : NULL;
}

/* The C path: on the thread running loop, with its pool open, the job is
 * queued here; otherwise (the loop idle, a first call, bad input) Go's
 * path checks, answers and opens the pool. */
static int fs_io(ll_loop loop, int fd, void *buf, size_t len, int64_t off, ll_fs_callback cb, void *arg, int is_write) {
    if (loop != 0 && loop == ll__thread_loop && buf != NULL && cb != NULL && len <= LL_FS_MAX_IO && off >= -1) {
        const ll__pending *p = loop == ll__batch.loop ? ll__batch.pending : ll__loop_record(loop);
        ll__fspool *pool = p != NULL ? p->fspool : NULL;
        if (pool != NULL && __atomic_load_n(&pool->loop, __ATOMIC_ACQUIRE) == loop)
            return ll__fspool_submit(pool, fd, buf, len, off, cb, arg, is_write);
    }
    return ll__fs_io_go(loop, fd, buf, len, off, cb, arg, is_write);
}

int ll_fs_read_cb(ll_loop loop, int fd, void *buf, size_t len, int64_t offset, ll_fs_callback cb, void *arg) {
    LL__FORK_GUARD();
    return fs_io(loop, fd, buf, len, offset, cb, arg, 0);
}

int ll_fs_write_cb(ll_loop loop, int fd, const void *buf, size_t len, int64_t offset, ll_fs_callback cb, void *arg) {
    LL__FORK_GUARD();
    return fs_io(loop, fd, (void *)buf, len, offset, cb, arg, 1);
}
