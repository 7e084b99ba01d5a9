/*
 * libloop.h — the public C interface of libloop, an asyncio-style event loop.
 *
 * Introduction
 * ------------
 * A loop owns a queue of ready callbacks, a heap of timers and a selector
 * (epoll on Linux, kqueue on macOS/BSD). Each iteration ("run once") polls for
 * I/O, moves due timers to the ready queue and runs exactly the callbacks that
 * were ready when the iteration began, in FIFO order; callbacks added while it
 * runs wait for the next iteration. This is CPython asyncio's
 * BaseEventLoop._run_once, so code written against asyncio's ordering rules
 * behaves the same here.
 *
 * Objects are opaque 64-bit ids. Id 0 is never valid; a stale, forged or
 * wrong-kind id makes a function return LL_EBADHANDLE, never crash.
 *
 * Errors: every function that can fail returns int, >= 0 on success and < 0
 * on failure. System failures are -errno (-EBADF, -EPERM, ...). Library errors
 * are the LL_E* constants below (all <= -10000). ll_strerror() and
 * ll_err_name() describe any code and never return NULL.
 *
 * Threads: one thread runs a loop at a time. Only functions marked
 * "Thread-safe" may be called from other threads while it runs. With debug
 * mode on (ll_loop_set_debug), a non-thread-safe call from another thread
 * while the loop runs returns LL_EWRONGTHREAD (checked on Linux).
 *
 * Ownership: the void *arg given with a callback belongs to the host; the
 * library never dereferences it. Strings passed in are copied. Objects the
 * host creates (ll_loop_new, handles returned through an out pointer, ...)
 * hold one host reference, released with ll_release(); the loop keeps its own
 * references while it still needs an object.
 *
 * Forking: a process that has loaded libloop carries a Go runtime and must
 * not fork() without exec().
 */
#ifndef LIBLOOP_H
#define LIBLOOP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ----------------------------------------------------------- */

#define LL_VERSION_MAJOR 0
#define LL_VERSION_MINOR 1
#define LL_VERSION_PATCH 0
/** The header's version as MAJOR*10000 + MINOR*100 + PATCH. */
#define LL_VERSION (LL_VERSION_MAJOR * 10000 + LL_VERSION_MINOR * 100 + LL_VERSION_PATCH)

/** @return the library's version as MAJOR*10000 + MINOR*100 + PATCH. Thread-safe. */
int ll_version(void);
/** @return the library's version as "MAJOR.MINOR.PATCH" (static storage). Thread-safe. */
const char *ll_version_string(void);

/* ---- Ids and errors ---------------------------------------------------- */

/** Opaque object ids. 0 is never a valid id. */
typedef uint64_t ll_loop;
typedef uint64_t ll_handle;
typedef uint64_t ll_future;
typedef uint64_t ll_task;
typedef uint64_t ll_process;
typedef uint64_t ll_transport;
typedef uint64_t ll_server;

#define LL_EINVAL       (-10000) /**< bad argument (NULL callback, NaN delay, oversize value) */
#define LL_EBADHANDLE   (-10001) /**< id 0, stale, forged or of the wrong kind */
#define LL_ECLOSED      (-10002) /**< the loop is closed */
#define LL_ERUNNING     (-10003) /**< the loop (or another on this thread) is running / cannot while running */
#define LL_ESTATE       (-10004) /**< invalid state (asyncio's InvalidStateError) */
#define LL_ECANCELLED   (-10005) /**< cancelled */
#define LL_EWRONGTHREAD (-10006) /**< debug mode: called from a thread that does not run the loop */
#define LL_ESTOPPED     (-10007) /**< the loop stopped before the future completed */
#define LL_ETIMEDOUT    (-10008) /**< a timeout passed */
#define LL_ENOMEM       (-10009) /**< out of memory or of id space */

/** @return a description of any code (library, -errno, or unknown). Never NULL; static storage. Thread-safe. */
const char *ll_strerror(int code);
/** @return the code's name, e.g. "LL_EINVAL" or "EBADF"; "UNKNOWN" if none. Never NULL. Thread-safe. */
const char *ll_err_name(int code);

/**
 * Drop the host's reference to an object. A handle id becomes invalid (its
 * callback still runs unless cancelled). A loop is closed first (LL_ERUNNING
 * if it is running) and its id becomes invalid.
 * @return 0, or LL_EBADHANDLE for an unknown id, LL_ERUNNING.
 */
int ll_release(uint64_t id);

/* ---- Callback types ---------------------------------------------------- */

/** A callback run by the loop on its thread. */
typedef void (*ll_callback)(ll_loop loop, void *arg);
/** An fd watcher's callback: fd is ready for the direction it was added for. */
typedef void (*ll_io_callback)(ll_loop loop, int fd, void *arg);

/** What the loop reports to its exception handler (asyncio's context dict). */
typedef struct ll_error_context {
    const char *message; /**< what happened; valid only during the handler call */
    int code;            /**< the error code concerned, or 0 */
    ll_future future;    /**< the future concerned, or 0 */
    ll_task task;        /**< the task concerned, or 0 */
    ll_handle handle;    /**< the handle concerned, or 0 */
} ll_error_context;

/** An exception handler; ctx is valid only during the call. */
typedef void (*ll_exception_handler)(ll_loop loop, const ll_error_context *ctx, void *arg);

/* ---- Loop -------------------------------------------------------------- */

/** ll_loop_run_once modes. */
#define LL_RUN_ONCE   0 /**< block in poll until something is due, then run one iteration */
#define LL_RUN_NOWAIT 1 /**< run one iteration without blocking */

/**
 * Create a loop. *out receives its id; release it with ll_release (or close
 * it with ll_loop_close and then release it).
 * @return 0, LL_EINVAL (out NULL), or -errno if the selector cannot be made.
 */
int ll_loop_new(ll_loop *out);

/**
 * Close the loop: drop every pending callback, timer and fd watcher and free
 * the selector. Idempotent. The id stays valid (ll_loop_is_closed) until released.
 * @return 0, LL_ERUNNING while it runs, LL_EBADHANDLE.
 */
int ll_loop_close(ll_loop loop);

/**
 * Run iterations on the calling thread until ll_loop_stop().
 * @return 0 once stopped; LL_ERUNNING if this loop (or any loop on this
 *         thread) is already running; LL_ECLOSED; LL_EBADHANDLE; -errno if
 *         the poll fails.
 */
int ll_loop_run_forever(ll_loop loop);

/**
 * Run one iteration. mode is LL_RUN_ONCE (block until I/O, a timer or a
 * thread-safe call is due) or LL_RUN_NOWAIT (never block).
 * @return 0, LL_EINVAL for an unknown mode, and as ll_loop_run_forever.
 */
int ll_loop_run_once(ll_loop loop, int mode);

/**
 * Make ll_loop_run_forever return once the current iteration has finished.
 * Called while the loop is not running, the next run_forever runs exactly
 * one iteration (as asyncio's stop()).
 * @return 0, LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_loop_stop(ll_loop loop);

/** @return 1 if running, 0 if not, LL_EBADHANDLE. */
int ll_loop_is_running(ll_loop loop);
/** @return 1 if closed, 0 if not, LL_EBADHANDLE. */
int ll_loop_is_closed(ll_loop loop);

/** @return the loop's monotonic clock in seconds; negative for a bad id. */
double ll_loop_time(ll_loop loop);

/**
 * Debug mode: callbacks slower than the slow-callback duration are reported
 * to the exception handler, and calls from a thread other than the one
 * running the loop return LL_EWRONGTHREAD.
 * @return 0, LL_EBADHANDLE.
 */
int ll_loop_set_debug(ll_loop loop, int enabled);
/** @return 1 if debug mode is on, 0 if off, LL_EBADHANDLE. */
int ll_loop_get_debug(ll_loop loop);

/**
 * Set the debug-mode threshold (seconds, default 0.1).
 * @return 0, LL_EINVAL (negative or NaN), LL_EBADHANDLE.
 */
int ll_loop_set_slow_callback_duration(ll_loop loop, double seconds);

/**
 * Install the exception handler (NULL restores the default, which writes one
 * line to stderr). It runs on the loop thread.
 * @return 0, LL_EBADHANDLE.
 */
int ll_loop_set_exception_handler(ll_loop loop, ll_exception_handler handler, void *arg);

/* ---- Callbacks and timers ---------------------------------------------- */

/**
 * Schedule cb(loop, arg) for the next iteration, after everything already
 * ready (FIFO). If out is not NULL it receives a handle id (release it with
 * ll_release); with out NULL no handle is made, which is the fastest path.
 * @return 0, LL_EINVAL (cb NULL), LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_call_soon(ll_loop loop, ll_callback cb, void *arg, ll_handle *out);

/**
 * Schedule cb after delay seconds. A timer never runs before its deadline;
 * equal deadlines run in scheduling order; a negative delay is due at once.
 * @return 0, LL_EINVAL (cb NULL, NaN or over ~100 years), LL_ECLOSED,
 *         LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_call_later(ll_loop loop, double delay, ll_callback cb, void *arg, ll_handle *out);

/** Schedule cb at loop time `when` (seconds, see ll_loop_time); as ll_call_later. */
int ll_call_at(ll_loop loop, double when, ll_callback cb, void *arg, ll_handle *out);

/**
 * Thread-safe. Schedule cb from any thread and wake the loop if it is
 * blocked in poll. Every posted callback runs exactly once, in post order.
 * @return 0, LL_EINVAL (cb NULL), LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_call_soon_threadsafe(ll_loop loop, ll_callback cb, void *arg);

/**
 * Thread-safe. Wake the loop from a blocking poll without scheduling anything.
 * @return 0, LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_loop_wakeup(ll_loop loop);

/**
 * Cancel a handle: its callback will not run. Cancelling twice or after it
 * ran does nothing.
 * @return 0, LL_EBADHANDLE.
 */
int ll_handle_cancel(ll_handle handle);

/** @return 1 if cancelled, 0 if not, LL_EBADHANDLE. */
int ll_handle_cancelled(ll_handle handle);

/** @return a timer handle's deadline in loop seconds; negative for a bad id or a non-timer handle. */
double ll_timer_when(ll_handle handle);

/* ---- File descriptors -------------------------------------------------- */

/**
 * Call cb(loop, fd, arg) every iteration while fd is readable
 * (level-triggered), replacing any reader already set for fd.
 * @return 0, -EBADF (closed or invalid fd), -EPERM (a regular file),
 *         LL_EINVAL (cb NULL), LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_add_reader(ll_loop loop, int fd, ll_io_callback cb, void *arg);

/** @return 1 if a reader was removed, 0 if none was set, or an error. Safe on a closed fd. */
int ll_remove_reader(ll_loop loop, int fd);

/** As ll_add_reader, for writability. */
int ll_add_writer(ll_loop loop, int fd, ll_io_callback cb, void *arg);

/** As ll_remove_reader, for the writer. */
int ll_remove_writer(ll_loop loop, int fd);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_H */
