/* SPDX-License-Identifier: MIT */
/*
 * libloop/stats.h — loop metrics (included by libloop.h; do not include it
 * alone).
 */
#ifndef LIBLOOP_STATS_H
#define LIBLOOP_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Metrics ------------------------------------------------------------ */

/**
 * A loop's metrics (libuv's uv_metrics_info and uv_metrics_idle_time, plus
 * current counts), filled by ll_loop_stats. Named like struct stat: the
 * function and the struct share a name, so write `struct ll_loop_stats`.
 * The struct can only grow at its end: set size to sizeof(struct
 * ll_loop_stats) before the call; the library fills the fields that fit.
 * Totals count from ll_loop_new and never reset; take two snapshots and
 * subtract for an interval.
 */
struct ll_loop_stats {
    uint64_t size;       /**< in: sizeof the caller's struct; out: bytes the library filled */
    uint64_t iterations; /**< iterations run */
    uint64_t events;     /**< I/O readiness events the poll reported (one per fd per poll; the wakeup fd not counted) */
    uint64_t callbacks;  /**< callbacks run from the ready queue: call_soon, timers, fd watchers, task steps, done callbacks
                              (not a host queue's own, see ll_loop_set_host_queue) */
    uint64_t idle_ns;    /**< time blocked in a poll that could block */
    uint64_t running_ns; /**< time inside ll_loop_run_forever, _run_until_complete, ll_run and blocking
                              ll_loop_run_once calls (not LL_RUN_NOWAIT ones), a run in progress included;
                              idle_ns is part of it, running_ns - idle_ns is the time busy */
    uint64_t ready;      /**< callbacks waiting in the ready queue now (ll_call_soon_threadsafe's once the loop took them) */
    uint64_t timers;     /**< timers scheduled and not cancelled */
    uint64_t fds;        /**< fds watched: readers, writers, transports, servers, child pidfds */
    uint64_t tasks;      /**< tasks not yet done */
};

/** The size of the first version of struct ll_loop_stats (the smallest size accepted). */
#define LL_LOOP_STATS_V1_SIZE 80

/**
 * Fill *out with loop's metrics. Call it from the loop's thread (a callback)
 * or while the loop is not running. Counting costs no clock read per
 * callback: a pair per blocking poll and per run.
 * @return 0, LL_EINVAL (out NULL, or out->size below LL_LOOP_STATS_V1_SIZE),
 *         LL_EBADHANDLE, LL_EWRONGTHREAD (another thread runs the loop;
 *         post a callback with ll_call_soon_threadsafe and read them there).
 *         A closed loop still reports its totals.
 */
int ll_loop_stats(ll_loop loop, struct ll_loop_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_STATS_H */
